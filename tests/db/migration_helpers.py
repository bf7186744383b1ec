"""Shared set-up of the migration tests: a store taken down to a revision, holding one collection."""

from __future__ import annotations

from collections.abc import Iterator

from alembic import command
from sqlalchemy import text

from db.engine import Store, sqlite_url
from db.migrate import alembic_config


def store_at(request, tmp_path, revision: str) -> Iterator[Store]:
    """A fresh store (the fixture's param: ``"sqlite"`` or ``"postgresql"``) downgraded to ``revision``."""
    url = (
        sqlite_url(tmp_path / "s.db")
        if request.param == "sqlite"
        else request.getfixturevalue("pg_databases").create(migrated=False)
    )
    store = Store(url)
    command.downgrade(alembic_config(store.engine), revision)
    yield store
    store.dispose()


def add_collection_with_a_passage(engine) -> int:
    """Insert collection ``c`` with passage ``p`` in raw SQL (valid at any revision); returns the collection id."""
    with engine.begin() as s:
        cid = s.execute(
            text("insert into collections (name, description, created_at) values ('c', '', '2026-01-01') returning id")
        ).scalar_one()
        s.execute(
            text("insert into passages (collection_id, ext_id, title, text) values (:c, 'p', '', 't')"), {"c": cid}
        )
    return cid
