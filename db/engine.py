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

import fcntl
import os
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.exc import OperationalError
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
        engine = create_engine(
            url, echo=echo, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000, "factory": _QueuedWriterConnection}
        )
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


class _QueuedWriterConnection(sqlite3.Connection):
    """A SQLite connection whose write transactions first take an OS file lock beside the database.

    SQLite's own busy handler makes a waiting writer sleep and retry (up to 100 ms between tries),
    without any order: under 40 writers on 2 cores the unlucky ones waited 17 s while others went
    first again and again.  A blocked ``flock`` is woken by the kernel the moment the lock is
    released, so waits stay close to (writers ahead) x (time a write holds the lock).  The lock is
    released right after COMMIT or ROLLBACK, and by the kernel if the process dies.  BEGIN IMMEDIATE
    still follows, so writers that do not use this class (the sqlite3 shell) are still excluded by SQLite's own lock.
    """

    _lock_fd: int | None = None

    def take_write_lock(self, timeout: float) -> None:
        database = self.execute("PRAGMA database_list").fetchone()[2]
        if not database:  # in-memory or temporary database: one connection, nothing to queue for
            return
        fd = os.open(f"{database}-writelock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not _wait_for_flock(fd, timeout):
                raise sqlite3.OperationalError(
                    f"database is locked (waited {timeout:g} s for the write lock)"
                ) from None
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd

    def _release_write_lock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock

    def commit(self) -> None:
        try:
            super().commit()
        finally:
            self._release_write_lock()

    def rollback(self) -> None:
        try:
            super().rollback()
        finally:
            self._release_write_lock()

    def close(self) -> None:
        try:
            super().close()
        finally:
            self._release_write_lock()


def _wait_for_flock(fd: int, timeout: float) -> bool:
    """Block on ``flock(fd)`` for at most ``timeout`` seconds; True once it is held.

    ``flock`` itself has no timeout, so a helper thread blocks on it; a caller that gives up marks
    the attempt abandoned and the helper closes the descriptor (releasing the lock) once it gets it.
    """
    acquired = threading.Event()
    abandoned = threading.Event()
    guard = threading.Lock()

    def block() -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with guard:
            if abandoned.is_set():
                os.close(fd)
            else:
                acquired.set()

    threading.Thread(target=block, daemon=True, name="pooljudge-write-lock").start()
    if acquired.wait(timeout):
        return True
    with guard:
        if acquired.is_set():
            return True
        abandoned.set()
    return False


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
        if immediate:
            dbapi = conn.connection.dbapi_connection
            if isinstance(dbapi, _QueuedWriterConnection):
                try:
                    dbapi.take_write_lock(BUSY_TIMEOUT_MS / 1000)
                except sqlite3.OperationalError as exc:  # reported like SQLite's own busy timeout
                    raise OperationalError("BEGIN IMMEDIATE", None, exc) from None
                try:
                    conn.exec_driver_sql("BEGIN IMMEDIATE")
                except BaseException:
                    dbapi._release_write_lock()
                    raise
                return
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")


def session_factory(engine: Engine, *, write: bool = False) -> sessionmaker[Session]:
    """A session factory; with ``write=True`` its transactions take the store's write lock at BEGIN.

    Callers own the transaction: ``with factory.begin() as session: ...``.
    """
    bind = engine.execution_options(**{_IMMEDIATE: True}) if write else engine
    return sessionmaker(bind=bind, expire_on_commit=False)


@contextmanager
def _migration_lock(engine: Engine):
    """Held across a whole upgrade of a SQLite file: Alembic commits after each migration there (no
    transactional DDL), so the write lock alone would let a second process read the version between
    two migrations and apply the next one twice.  PostgreSQL upgrades in one transaction."""
    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if not database or database == ":memory:":
        yield
        return
    fd = os.open(f"{database}-migratelock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


class Store:
    """The engine plus its two session factories, created once per process.

    ``read()`` transactions are deferred (many readers in parallel under WAL);
    ``write()`` transactions take the write lock when they begin.  What a crashed import left is dropped
    by :func:`db.opening.open_store`, the way the app and the CLI open a store.
    """

    def __init__(self, url: str | None = None, *, upgrade: bool = True) -> None:
        self.url = url or default_url()
        self.engine = make_engine(self.url)
        if upgrade:
            from db.migrate import upgrade_to_head

            # Under the write lock: processes opening a new store together (two app servers, the CLI)
            # migrate it one after the other, the later ones finding it at the head already.
            with _migration_lock(self.engine):
                upgrade_to_head(self.engine.execution_options(**{_IMMEDIATE: True}))
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
