"""Migration 0008: the trained_models table appears on upgrade and goes on downgrade; collections are untouched."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from db.migrate import alembic_config
from tests.db.migration_helpers import add_collection_with_a_passage, store_at


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at_0007(request, tmp_path):
    yield from store_at(request, tmp_path, "0007")


INSERT = text(
    "insert into trained_models (collection_id, name, kind, path, params, history, best, created_at) "
    "values (:c, :n, :k, '/m', '{}', '[]', '{}', '2026-01-01')"
)


@pytest.mark.slow
def test_upgrade_creates_the_table_with_its_constraints_and_downgrade_drops_it(store_at_0007):
    engine = store_at_0007.engine
    assert "trained_models" not in inspect(engine).get_table_names()
    cid = add_collection_with_a_passage(engine)
    command.upgrade(alembic_config(engine), "head")
    insp = inspect(engine)
    assert "trained_models" in insp.get_table_names()
    columns = {c["name"]: c for c in insp.get_columns("trained_models")}
    assert sorted(columns) == sorted(
        [
            "id",
            "collection_id",
            "name",
            "kind",
            "path",
            "base_model",
            "params",
            "history",
            "best",
            "created_at",
            "created_by",
            "job_id",
            "archived_at",
            "archived_by",
        ]
    )
    assert [c for c in columns if columns[c]["nullable"]] == [
        "base_model",
        "created_by",
        "job_id",
        "archived_at",
        "archived_by",
    ]
    indexes = {ix["name"]: ix["column_names"] for ix in insp.get_indexes("trained_models")}
    assert indexes["ix_trained_models_collection_id"] == ["collection_id"]  # PostgreSQL also lists the UNIQUE's
    with engine.begin() as s:
        s.execute(INSERT, {"c": cid, "n": "m", "k": "cross-encoder"})
    for name, kind in (("m", "dual-encoder"), ("other", "bm25")):  # UNIQUE(collection_id, name), CHECK kind
        with pytest.raises(IntegrityError):
            with engine.begin() as s:
                s.execute(INSERT, {"c": cid, "n": name, "k": kind})
    command.downgrade(alembic_config(engine), "0007")
    assert "trained_models" not in inspect(engine).get_table_names()
    with engine.connect() as s:
        assert [s.execute(text(f"select count(*) from {t}")).scalar_one() for t in ("collections", "passages")] == [
            1,
            1,
        ]
    command.upgrade(alembic_config(engine), "head")  # and up again, empty
    with engine.connect() as s:
        assert s.execute(text("select count(*) from trained_models")).scalar_one() == 0
