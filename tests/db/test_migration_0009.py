"""Migration 0009: the error_categories table appears on upgrade and goes on downgrade; other tables are untouched."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from db.engine import Store, sqlite_url
from db.migrate import alembic_config


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at_0008(request, tmp_path):
    url = sqlite_url(tmp_path / "s.db") if request.param == "sqlite" else \
        request.getfixturevalue("pg_databases").create(migrated=False)
    store = Store(url)
    command.downgrade(alembic_config(store.engine), "0008")
    yield store
    store.dispose()


INSERT = text("insert into error_categories (collection_id, key, name, description, created_at) "
              "values (:c, :k, 'N', '', '2026-01-01')")


def test_upgrade_creates_the_table_with_its_constraints_and_downgrade_drops_it(store_at_0008):
    engine = store_at_0008.engine
    assert "error_categories" not in inspect(engine).get_table_names()
    with engine.begin() as s:
        cid = s.execute(text("insert into collections (name, description, created_at) "
                             "values ('c', '', '2026-01-01') returning id")).scalar_one()
        s.execute(text("insert into passages (collection_id, ext_id, title, text) values (:c, 'p', '', 't')"), {"c": cid})
    command.upgrade(alembic_config(engine), "head")
    insp = inspect(engine)
    columns = {c["name"]: c for c in insp.get_columns("error_categories")}
    assert sorted(columns) == sorted(["id", "collection_id", "key", "name", "description", "created_by", "created_at"])
    assert [c for c in columns if columns[c]["nullable"]] == ["created_by"]
    assert [u["column_names"] for u in insp.get_unique_constraints("error_categories")] == [["collection_id", "key"]]
    [fk] = insp.get_foreign_keys("error_categories")
    assert (fk["referred_table"], fk["options"].get("ondelete", "").upper()) == ("collections", "CASCADE")
    with engine.begin() as s:
        s.execute(INSERT, {"c": cid, "k": "k_1"})
    with pytest.raises(IntegrityError):  # UNIQUE(collection_id, key)
        with engine.begin() as s:
            s.execute(INSERT, {"c": cid, "k": "k_1"})
    command.downgrade(alembic_config(engine), "0008")
    assert "error_categories" not in inspect(engine).get_table_names()
    with engine.connect() as s:
        assert [s.execute(text(f"select count(*) from {t}")).scalar_one() for t in ("collections", "passages")] == [1, 1]
    command.upgrade(alembic_config(engine), "head")  # and up again, empty
    with engine.connect() as s:
        assert s.execute(text("select count(*) from error_categories")).scalar_one() == 0
