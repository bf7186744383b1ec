"""The store: migrations match the models, SQLite settings, append-only judgments."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, select, text, update
from sqlalchemy.exc import DatabaseError

from db.engine import Store, default_url, sqlite_url
from db.models import Base, Collection, Judgment, Passage, QueryRecord, User


def test_migration_creates_exactly_the_models_schema(store):
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert diff == []


def test_upgrade_is_idempotent_and_records_head(tmp_path):
    url = sqlite_url(tmp_path / "s.db")
    Store(url).dispose()
    again = Store(url)
    with again.read() as s:
        assert s.execute(text("select version_num from alembic_version")).scalar_one() == "0001"
    again.dispose()


def test_sqlite_connection_settings(store):
    with store.read() as s:
        assert s.execute(text("pragma journal_mode")).scalar_one() == "wal"
        assert s.execute(text("pragma foreign_keys")).scalar_one() == 1
        assert s.execute(text("pragma busy_timeout")).scalar_one() == 60000


def test_env_selects_the_store(monkeypatch, tmp_path):
    monkeypatch.delenv("POOLJUDGE_DB_URL", raising=False)
    monkeypatch.setenv("POOLJUDGE_DB", str(tmp_path / "x" / "p.db"))
    assert default_url() == f"sqlite:///{tmp_path / 'x' / 'p.db'}"
    monkeypatch.setenv("POOLJUDGE_DB_URL", "postgresql+psycopg://u@h/db")
    assert default_url() == "postgresql+psycopg://u@h/db"


def _judgment(store):
    with store.write() as s:
        c = Collection(name="c")
        s.add(c)
        s.flush()
        p = Passage(collection_id=c.id, ext_id="d1", text="t")
        q = QueryRecord(collection_id=c.id, ext_id="q1", text="q")
        u = User(username="ann", password_hash="x", role="annotator")
        s.add_all([p, q, u])
        s.flush()
        s.execute(insert(Judgment).values(query_id=q.id, passage_id=p.id, user_id=u.id, grade=2))
        return c.id, u.id


def test_judgments_cannot_be_updated_or_deleted(store):
    _judgment(store)
    with pytest.raises(DatabaseError, match="append-only"):
        with store.write() as s:
            s.execute(update(Judgment).values(grade=3))
    with pytest.raises(DatabaseError, match="append-only"):
        with store.write() as s:
            s.execute(text("delete from judgments"))
    with store.read() as s:
        assert s.scalars(select(Judgment.grade)).all() == [2]


def test_deleting_a_collection_cascades_through_judgments(store):
    cid, _ = _judgment(store)
    with store.write() as s:
        s.execute(text("delete from collections where id = :id"), {"id": cid})
    with store.read() as s:
        assert s.scalar(select(Judgment.id)) is None
        assert s.scalar(select(Passage.id)) is None
