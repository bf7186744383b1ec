"""Engine and session factory for the pooljudge store.

The store is a SQLite file by default (``$POOLJUDGE_DB``, else
``~/.pooljudge/pooljudge.db``); teams point ``$POOLJUDGE_DB_URL`` at any
SQLAlchemy URL (PostgreSQL).  SQLite connections get WAL mode, foreign keys
and a busy timeout, and transactions are begun explicitly so that writers can
take the write lock up front (``BEGIN IMMEDIATE``) instead of failing with
"database is locked" when two deferred transactions both try to upgrade.

PostgreSQL write transactions take the same single write lock (a
transaction-scoped advisory lock, per database) as their first statement.
The write paths read, decide and write in one transaction (resolve a pair
from its standing labels, refuse a second label on an item, create a final
label once): under READ COMMITTED two of them at once would each decide on
what the other has not committed yet, and the later would fail on a unique
constraint or decide on stale labels.  Writes are short, readers never wait.
"""

from __future__ import annotations

import os
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

BUSY_TIMEOUT_MS = 60_000
_IMMEDIATE = "pooljudge_begin_immediate"
# The advisory lock key of pooljudge's write lock (any constant; advisory locks are per database).
PG_WRITE_LOCK = 0x706A_7772  # "pjwr"


def default_url() -> str:
    """The store URL from the environment: ``POOLJUDGE_DB_URL``, else the SQLite file ``POOLJUDGE_DB``."""
    url = os.environ.get("POOLJUDGE_DB_URL")
    if url:
        return url
    path = os.environ.get("POOLJUDGE_DB") or str(Path.home() / ".pooljudge" / "pooljudge.db")
    return sqlite_url(path)


def sqlite_url(path: str | os.PathLike[str]) -> str:
    """SQLAlchemy URL of a SQLite file, creating its folder."""
    path = Path(path).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def make_engine(url: str | None = None, *, echo: bool = False) -> Engine:
    """Create an engine for ``url`` (default: :func:`default_url`) with pooljudge's connection settings."""
    url = url or default_url()
    if url.startswith("sqlite"):
        engine = create_engine(url, echo=echo, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        _configure_sqlite(engine)
        return engine
    engine = create_engine(url, echo=echo, pool_pre_ping=True)
    if engine.dialect.name == "postgresql":
        _configure_postgresql(engine)
    return engine


def _configure_postgresql(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # pragma: no cover - exercised by every PostgreSQL test
        # A writer waits for the write lock as long as a SQLite writer waits (busy timeout), then fails
        # instead of hanging for ever (e.g. behind a transaction left open by a stuck process).
        autocommit = dbapi_connection.autocommit
        dbapi_connection.autocommit = True
        dbapi_connection.execute(f"SET lock_timeout = {int(BUSY_TIMEOUT_MS)}")
        dbapi_connection.autocommit = autocommit

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        if conn.get_execution_options().get(_IMMEDIATE, False):
            # Released by COMMIT or ROLLBACK; taken before the transaction reads anything, so
            # every later statement (READ COMMITTED) sees what the previous writer committed.
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({PG_WRITE_LOCK})")


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # pragma: no cover - exercised by every test
        # Let SQLAlchemy, not the sqlite3 module, decide when transactions begin.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        immediate = conn.get_execution_options().get(_IMMEDIATE, False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def session_factory(engine: Engine, *, write: bool = False) -> sessionmaker[Session]:
    """A session factory; with ``write=True`` its transactions take the store's write lock at BEGIN.

    Callers own the transaction: ``with factory.begin() as session: ...``.
    """
    bind = engine.execution_options(**{_IMMEDIATE: True}) if write else engine
    return sessionmaker(bind=bind, expire_on_commit=False)


class Store:
    """The engine plus its two session factories, created once per process.

    ``read()`` transactions are deferred (many readers in parallel under WAL);
    ``write()`` transactions take the write lock when they begin.
    """

    def __init__(self, url: str | None = None, *, upgrade: bool = True) -> None:
        self.url = url or default_url()
        self.engine = make_engine(self.url)
        if upgrade:
            from db.importer import drop_stale_imports
            from db.migrate import upgrade_to_head

            # Under the write lock: processes opening a new store together (two app servers, the CLI)
            # migrate it one after the other, the later ones finding it at the head already.
            upgrade_to_head(self.engine.execution_options(**{_IMMEDIATE: True}))
            drop_stale_imports(self.engine)  # what a crashed import staged goes at the next open
        self._read = session_factory(self.engine)
        self._write = session_factory(self.engine, write=True)

    def read(self):
        """A context manager yielding a session in a read transaction."""
        return self._read.begin()

    def write(self):
        """A context manager yielding a session in a write transaction (committed on success)."""
        return self._write.begin()

    def dispose(self) -> None:
        self.engine.dispose()
