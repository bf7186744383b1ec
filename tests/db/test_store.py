"""The store: migrations match the models, SQLite settings, append-only judgments."""

from __future__ import annotations

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import insert, select, text, update
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.exc import DatabaseError

from db.engine import Store, default_url, sqlite_url
from db.models import Base, Collection, Judgment, PassageRecord, QueryRecord, User


def _is_inline_fk_reflection_gap(item) -> bool:
    # Migrations 0002 and 0003 add pool_entries.duplicate_of and assignments.package_id
    # with inline column constraints
    # (SQLite cannot ALTER in a table-level one); SQLAlchemy's SQLite reflection does
    # not read ON DELETE from inline constraints, so it reports a spurious remove/add.
    # The real action is checked in test_duplicate_of_is_cleared_when_its_entry_goes.
    fk = item[1] if item[0] in ("add_fk", "remove_fk") else None
    return fk is not None and [c.name for c in fk.columns] in (["duplicate_of"], ["package_id"])


@pytest.mark.slow
def test_migration_creates_exactly_the_models_schema(store):
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
    assert [item for item in diff if not _is_inline_fk_reflection_gap(item)] == []


def test_duplicate_of_is_cleared_when_its_entry_goes(store):
    with store.write() as s:
        cid = s.execute(
            text("insert into collections (name, description, created_at) values ('c', '', '2026-01-01') returning id")
        ).scalar_one()
        qid = s.execute(
            text("insert into queries (collection_id, ext_id, text, split) values (:c, 'q', 'q', 'test') returning id"),
            {"c": cid},
        ).scalar_one()
        pids = [
            s.execute(
                text("insert into passages (collection_id, ext_id, title, text) values (:c, :e, '', 't') returning id"),
                {"c": cid, "e": e},
            ).scalar_one()
            for e in "ab"
        ]
        pool = s.execute(
            text(
                "insert into pools (collection_id, name, method, params, created_at) values (:c, 'p', 'depth', '{}', '2026-01-01') returning id"
            ),
            {"c": cid},
        ).scalar_one()
        keep = s.execute(
            text(
                "insert into pool_entries (pool_id, query_id, passage_id, selected) values (:p, :q, :d, true) returning id"
            ),
            {"p": pool, "q": qid, "d": pids[0]},
        ).scalar_one()
        s.execute(
            text(
                "insert into pool_entries (pool_id, query_id, passage_id, selected, duplicate_of) values (:p, :q, :d, false, :k)"
            ),
            {"p": pool, "q": qid, "d": pids[1], "k": keep},
        )
        s.execute(text("delete from pool_entries where id = :k"), {"k": keep})
    with store.read() as s:
        assert s.execute(text("select duplicate_of from pool_entries")).all() == [(None,)]


def _head() -> str:
    from alembic.script import ScriptDirectory

    from db.migrate import alembic_config

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request, tmp_path):
    """The URL of an empty database (no schema), SQLite and PostgreSQL."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "s.db")
    return request.getfixturevalue("pg_databases").create(migrated=False)  # dropped at the end of the session


@pytest.mark.slow
def test_upgrade_is_idempotent_and_records_head(empty_url):
    url = empty_url
    Store(url).dispose()
    again = Store(url)
    with again.read() as s:
        assert s.execute(text("select version_num from alembic_version")).scalar_one() == _head()
    again.dispose()


def test_sqlite_connection_settings(store):
    if store.engine.dialect.name != "sqlite":
        pytest.skip("PRAGMAs are SQLite's connection settings")
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
        p = PassageRecord(collection_id=c.id, ext_id="d1", text="t")
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


def _judgment_ids(store):
    with store.read() as s:
        return s.execute(text("select id, assignment_id, query_id, passage_id, user_id, grade from judgments")).one()


def _with_assignment(store):
    """A judgment made through an assignment: (judgment id, assignment id, query id, passage id, user id)."""
    cid, uid = _judgment(store)
    with store.write() as s:
        q, p = s.execute(text("select query_id, passage_id from judgments")).one()
        aid = s.execute(
            text(
                "insert into assignments (query_id, passage_id, user_id, package, order_index, purpose, "
                "created_at) values (:q, :p, :u, 'pk', 0, 'label', '2026-01-01') returning id"
            ),
            {"q": q, "p": p, "u": uid},
        ).scalar_one()
        s.execute(insert(Judgment).values(assignment_id=aid, query_id=q, passage_id=p, user_id=uid, grade=1))
    return cid, aid, q, p, uid


@pytest.mark.parametrize(
    "statement",
    [
        "insert or replace into judgments (id, query_id, passage_id, user_id, action, grade, note, created_at) "
        "select id, query_id, passage_id, user_id, action, 0, note, created_at from judgments",
        "replace into judgments (id, query_id, passage_id, user_id, action, grade, note, created_at) "
        "select id, query_id, passage_id, user_id, action, 0, note, created_at from judgments",
    ],
)
def test_sqlite_replace_cannot_rewrite_a_judgment(store, statement):
    if store.engine.dialect.name != "sqlite":
        pytest.skip("REPLACE is SQLite syntax; PostgreSQL's upsert is tested below")
    _judgment(store)
    before = _judgment_ids(store)
    with pytest.raises(DatabaseError, match="append-only"):
        with store.write() as s:
            s.execute(text(statement))
    assert _judgment_ids(store) == before


def test_upsert_cannot_rewrite_a_judgment(store):
    _judgment(store)
    before = _judgment_ids(store)
    with pytest.raises(DatabaseError, match="append-only"):
        with store.write() as s:
            s.execute(
                text(
                    "insert into judgments (id, query_id, passage_id, user_id, action, grade, note, created_at) "
                    "select id, query_id, passage_id, user_id, action, 0, note, created_at from judgments where true "
                    "on conflict (id) do update set grade = excluded.grade"
                )
            )
    assert _judgment_ids(store) == before


@pytest.mark.parametrize(
    "table,column",
    [("users", "user_id"), ("assignments", "assignment_id"), ("queries", "query_id"), ("passages", "passage_id")],
)
def test_a_parent_with_judgments_cannot_be_deleted(store, table, column):
    _cid, aid, q, p, uid = _with_assignment(store)
    target = {"users": uid, "assignments": aid, "queries": q, "passages": p}[table]
    with store.read() as s:
        before = s.execute(text("select count(*) from judgments")).scalar_one()
    with pytest.raises(DatabaseError):
        with store.write() as s:
            s.execute(text(f"delete from {table} where id = :id"), {"id": target})
    with store.read() as s:
        assert s.execute(text("select count(*) from judgments")).scalar_one() == before == 2
        assert s.execute(text(f"select count(*) from {table} where id = :id"), {"id": target}).scalar_one() == 1


def test_a_collection_with_judgments_cannot_be_deleted(store):
    cid, *_ = _with_assignment(store)
    with pytest.raises(DatabaseError):
        with store.write() as s:
            s.execute(text("delete from collections where id = :id"), {"id": cid})
    with store.read() as s:
        assert s.execute(text("select count(*) from judgments")).scalar_one() == 2
        assert s.scalar(select(PassageRecord.id)) is not None


def test_sqlite_guards_hold_without_the_foreign_keys_pragma(store):
    """The sqlite3 shell opens connections with foreign keys off: the triggers still refuse."""
    if store.engine.dialect.name != "sqlite":
        pytest.skip("PostgreSQL always enforces its foreign keys")
    import sqlite3

    _cid, aid, q, p, uid = _with_assignment(store)
    conn = sqlite3.connect(store.engine.url.database, isolation_level=None)
    assert conn.execute("pragma foreign_keys").fetchone() == (0,)
    for sql in (
        "delete from users",
        "delete from assignments",
        "delete from queries",
        "delete from passages",
        "delete from judgments",
        "replace into judgments (id, query_id, passage_id, user_id, action, grade, "
        "note, created_at) select id, query_id, passage_id, user_id, action, 0, note, created_at from judgments",
    ):
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute(sql)
    assert conn.execute("select count(*), sum(grade) from judgments").fetchone() == (2, 3)
    conn.close()


@pytest.mark.slow
def test_a_write_transaction_waits_for_the_one_before_it(store):
    """Writers are serialised at BEGIN on both stores (SQLite's BEGIN IMMEDIATE, PostgreSQL's advisory lock),
    so a write that reads before it writes never decides on what another writer has not committed yet."""
    import threading

    order: list[str] = []
    first_holds = threading.Event()

    def second():
        first_holds.wait(timeout=30)
        with store.write() as s:
            s.execute(text("select count(*) from users")).scalar_one()  # the transaction begins here
            order.append("second reads")

    worker = threading.Thread(target=second)
    worker.start()
    with store.write() as s:
        s.execute(text("select count(*) from users")).scalar_one()
        first_holds.set()
        worker.join(timeout=1.0)  # the second writer must still be waiting at BEGIN
        order.append("first commits")
    worker.join(timeout=30)
    assert order == ["first commits", "second reads"]
    with store.read() as s, store.read() as t:  # readers never wait
        assert s.execute(text("select 1")).scalar_one() == t.execute(text("select 1")).scalar_one() == 1


@pytest.mark.slow
def test_migration_0004_downgrades_and_upgrades_again(store_url):
    """0004 down and up again leaves exactly the models' schema, append-only included, on both dialects
    (its PostgreSQL branch renames the judgments foreign keys and redefines the append-only function)."""
    from alembic import command

    from db.migrate import alembic_config

    store = Store(store_url)  # a copy of the template migrated to the head: what migrating an empty store gives
    try:
        command.downgrade(alembic_config(store.engine), "0003")
        with store.engine.connect() as conn:
            tables = set(sa_inspect(conn).get_table_names())
            fks = {fk["name"]: fk["options"].get("ondelete") for fk in sa_inspect(conn).get_foreign_keys("judgments")}
        assert "auth_sessions" not in tables and "login_throttle" not in tables
        if store.engine.dialect.name == "postgresql":  # 0003's names and actions are back
            assert fks == {
                "judgments_assignment_id_fkey": "SET NULL",
                "judgments_query_id_fkey": "CASCADE",
                "judgments_passage_id_fkey": "CASCADE",
                "judgments_user_id_fkey": "CASCADE",
            }
        command.upgrade(alembic_config(store.engine), "head")
        with store.engine.connect() as conn:
            diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
            fks = {fk["name"]: fk["options"].get("ondelete") for fk in sa_inspect(conn).get_foreign_keys("judgments")}
        assert [item for item in diff if not _is_inline_fk_reflection_gap(item)] == []
        if store.engine.dialect.name == "postgresql":
            assert fks == {
                f"fk_judgments_{c}": "RESTRICT" for c in ("assignment_id", "query_id", "passage_id", "user_id")
            }
        _judgment(store)
        with pytest.raises(DatabaseError, match="append-only"):
            with store.write() as s:
                s.execute(text("delete from judgments"))
    finally:
        store.dispose()


def test_a_writer_waiting_past_the_busy_timeout_fails_instead_of_hanging(store_url, monkeypatch):
    """A second writer behind one that never finishes gets an error after the busy timeout, on both stores."""
    import time

    from sqlalchemy.exc import OperationalError

    import db.engine

    monkeypatch.setattr(db.engine, "BUSY_TIMEOUT_MS", 300)
    store = Store(store_url)
    try:
        with store.write() as holder:
            holder.execute(text("select count(*) from users")).scalar_one()  # holds the write lock from here
            started = time.monotonic()
            with pytest.raises(OperationalError, match="locked|lock timeout"):
                with store.write() as waiter:
                    waiter.execute(text("select count(*) from users")).scalar_one()
            assert 0.25 < time.monotonic() - started < 10
    finally:
        store.dispose()


@pytest.mark.slow  # three processes migrate at once
def test_processes_opening_one_empty_store_at_once_all_get_the_schema(empty_url):
    """Two app servers started together on a new database: both migrate it, one after the other, no error."""
    from tests.db.forked import run_forked
    from tests.db.processes import PRELOAD

    servers = run_forked("tests.db.processes:open_store", [[empty_url]] * 3, preload=PRELOAD["open_store"], timeout=120)
    assert [(s.exitcode, s.error) for s in servers] == [(0, "")] * 3
    assert len({s.pid for s in servers}) == 3
    store = Store(empty_url, upgrade=False)
    with store.read() as s:
        assert s.execute(text("select version_num from alembic_version")).scalars().all() == [_head()]
    store.dispose()
