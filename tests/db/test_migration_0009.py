"""Migration 0009: the error_categories table appears on upgrade and goes on downgrade; other tables are untouched."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from db.migrate import alembic_config
from tests.db.migration_helpers import add_collection_with_a_passage, store_at


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at_0008(request, tmp_path):
    yield from store_at(request, tmp_path, "0008")


INSERT = text(
    "insert into error_categories (collection_id, key, name, description, created_at) "
    "values (:c, :k, 'N', '', '2026-01-01')"
)


@pytest.mark.slow
def test_upgrade_creates_the_table_with_its_constraints_and_downgrade_drops_it(store_at_0008):
    engine = store_at_0008.engine
    assert "error_categories" not in inspect(engine).get_table_names()
    cid = add_collection_with_a_passage(engine)
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
        assert [s.execute(text(f"select count(*) from {t}")).scalar_one() for t in ("collections", "passages")] == [
            1,
            1,
        ]
    command.upgrade(alembic_config(engine), "head")  # and up again, empty
    with engine.connect() as s:
        assert s.execute(text("select count(*) from error_categories")).scalar_one() == 0
