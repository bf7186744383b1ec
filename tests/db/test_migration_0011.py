"""Migration 0011: the lexicon_names table appears on upgrade and goes on downgrade; 0010's guards stay."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from db.migrate import alembic_config
from tests.db.migration_helpers import add_collection_with_a_passage, store_at


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at_0010(request, tmp_path):
    yield from store_at(request, tmp_path, "0010")


INSERT = text(
    "insert into lexicon_names (collection_id, name, name_key, kind, created_at) "
    "values (:c, :n, :k, 'plan', '2026-01-01')"
)


@pytest.mark.slow
def test_upgrade_creates_the_table_and_downgrade_drops_it(store_at_0010):
    engine = store_at_0010.engine
    assert "lexicon_names" not in inspect(engine).get_table_names()
    cid = add_collection_with_a_passage(engine)
    command.upgrade(alembic_config(engine), "head")
    insp = inspect(engine)
    columns = {c["name"]: c for c in insp.get_columns("lexicon_names")}
    assert sorted(columns) == sorted(["id", "collection_id", "name", "name_key", "kind", "created_by", "created_at"])
    assert [c for c in columns if columns[c]["nullable"]] == ["created_by"]
    assert [u["column_names"] for u in insp.get_unique_constraints("lexicon_names")] == [["collection_id", "name_key"]]
    [fk] = insp.get_foreign_keys("lexicon_names")
    assert (fk["referred_table"], fk["options"].get("ondelete", "").upper()) == ("collections", "CASCADE")
    with engine.begin() as s:
        s.execute(INSERT, {"c": cid, "n": "Zorblax", "k": "zorblax"})
    with pytest.raises(IntegrityError):  # UNIQUE(collection_id, name_key)
        with engine.begin() as s:
            s.execute(INSERT, {"c": cid, "n": "ZORBLAX", "k": "zorblax"})
    # 0010's guard on collections still refuses a REPLACE through the unique name
    with pytest.raises(IntegrityError):
        with engine.begin() as s:
            s.execute(text("insert into collections (name, description, created_at) values ('c', '', '2026-01-02')"))
    command.downgrade(alembic_config(engine), "0010")
    assert "lexicon_names" not in inspect(engine).get_table_names()
    with engine.connect() as s:
        assert s.execute(text("select count(*) from collections")).scalar_one() == 1
    command.upgrade(alembic_config(engine), "head")
    with engine.connect() as s:
        assert s.execute(text("select count(*) from lexicon_names")).scalar_one() == 0
