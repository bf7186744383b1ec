"""Migrations 0006 and 0007: the relevance level of existing collections, usernames unique regardless of case, archive columns; downgrades keep the data."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from db.engine import Store, sqlite_url
from db.migrate import alembic_config


@pytest.fixture(params=["sqlite", "postgresql"])
def store_at_0005(request, tmp_path):
    url = (
        sqlite_url(tmp_path / "s.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_databases").create(migrated=False)
    )
    store = Store(url)
    command.downgrade(alembic_config(store.engine), "0005")
    yield store
    store.dispose()


def _collection(s, name: str, grades: list[int]) -> None:
    cid = s.execute(
        text("insert into collections (name, description, created_at) values (:n, '', '2026-01-01') returning id"),
        {"n": name},
    ).scalar_one()
    if grades:
        vid = s.execute(
            text(
                "insert into qrels_versions (collection_id, name, source, note, created_at) "
                "values (:c, 'imported', 'import', '', '2026-01-01') returning id"
            ),
            {"c": cid},
        ).scalar_one()
        for i, grade in enumerate(grades):
            s.execute(
                text("insert into qrels_entries (version_id, query_id, doc_id, grade) values (:v, 'q', :d, :g)"),
                {"v": vid, "d": f"d{i}", "g": grade},
            )


@pytest.mark.slow
def test_existing_collections_get_level_1_when_binary_else_2(store_at_0005):
    with store_at_0005.engine.begin() as s:
        _collection(s, "binary", [0, 1, 1])
        _collection(s, "graded", [0, 1, 3])
        _collection(s, "unjudged", [])
    command.upgrade(alembic_config(store_at_0005.engine), "head")
    with store_at_0005.engine.connect() as s:
        levels = dict(s.execute(text("select name, relevance_level from collections")).all())
    assert levels == {"binary": 1, "graded": 2, "unjudged": 2}


def test_usernames_differing_only_in_case_are_refused_by_the_database(store_at_0005):
    command.upgrade(alembic_config(store_at_0005.engine), "head")
    insert = text(
        "insert into users (username, password_hash, role, active, created_at) "
        "values (:u, 'x', 'admin', true, '2026-01-01')"
    )
    with store_at_0005.engine.begin() as s:
        s.execute(insert, {"u": "admin0"})
    with pytest.raises(IntegrityError):
        with store_at_0005.engine.begin() as s:
            s.execute(insert, {"u": "ADMIN0"})


def test_upgrade_names_the_usernames_that_clash_in_case(store_at_0005):
    insert = text(
        "insert into users (username, password_hash, role, active, created_at) "
        "values (:u, 'x', 'admin', true, '2026-01-01')"
    )
    with store_at_0005.engine.begin() as s:
        s.execute(insert, {"u": "Ann"})
        s.execute(insert, {"u": "ann"})
    with pytest.raises(RuntimeError, match="ann"):
        command.upgrade(alembic_config(store_at_0005.engine), "head")


def test_downgrading_0006_keeps_the_collections_contents(store_at_0005):
    """Dropping the column must not rebuild collections: on SQLite that DROP TABLE cascades to every passage."""
    engine = store_at_0005.engine
    command.upgrade(alembic_config(engine), "head")
    with engine.begin() as s:
        _collection(s, "c", [0, 1])
        cid = s.execute(text("select id from collections where name = 'c'")).scalar_one()
        s.execute(
            text("insert into passages (collection_id, ext_id, title, text) values (:c, 'p', '', 't')"), {"c": cid}
        )
    command.downgrade(alembic_config(engine), "0005")
    with engine.connect() as s:
        counts = [
            s.execute(text(f"select count(*) from {t}")).scalar_one()
            for t in ("collections", "passages", "qrels_versions", "qrels_entries")
        ]
    assert counts == [1, 1, 1, 2]


def test_0007_upgrade_and_downgrade_keep_every_collections_contents(store_at_0005):
    """0007 adds archive columns to collections, pools, runs and qrels versions: in place, never a rebuild."""
    engine = store_at_0005.engine
    with engine.begin() as s:
        _collection(s, "c", [0, 1, 2])
        cid = s.execute(text("select id from collections where name = 'c'")).scalar_one()
        s.execute(
            text("insert into passages (collection_id, ext_id, title, text) values (:c, 'p', '', 't')"), {"c": cid}
        )
        s.execute(
            text(
                "insert into runs (collection_id, name, source, params, created_at) "
                "values (:c, 'r', 'import', '{}', '2026-01-01')"
            ),
            {"c": cid},
        )
    tables = ("collections", "passages", "runs", "qrels_versions", "qrels_entries")
    for target in ("head", "0005"):
        (command.upgrade if target == "head" else command.downgrade)(alembic_config(engine), target)
        with engine.connect() as s:
            counts = [s.execute(text(f"select count(*) from {t}")).scalar_one() for t in tables]
        assert counts == [1, 1, 1, 1, 3], target
