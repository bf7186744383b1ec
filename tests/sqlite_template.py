"""SQLite stores built once per test session and copied per test, as tests/pgcluster.py does on PostgreSQL.

Migrating a new SQLite store runs every Alembic migration (a few hundred milliseconds on a loaded
machine); copying a migrated file takes about a millisecond.  Under pytest-xdist each worker builds
its own templates in its own temporary folder.
"""

from __future__ import annotations

import atexit
import functools
import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from contextlib import closing
from pathlib import Path


def snapshot(source: Path, target: Path) -> Path:
    """``target``: one self-contained file holding everything committed to the SQLite store at ``source``.

    SQLite's backup API reads the write-ahead log too, so the copy is complete even while a connection
    to ``source`` is still open (a plain file copy would miss what only the WAL holds).
    """
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)
    return target


def migrated(target: Path) -> Path:
    """A new SQLite store at the newest schema, written to ``target`` (migrated beside it, then snapshotted)."""
    from db.engine import Store, sqlite_url

    build = target.with_name(f"{target.stem}-build.db")
    store = Store(sqlite_url(build))
    store.dispose()
    return snapshot(build, target)


def copy_store(template: Path, target: Path) -> Path:
    """``target``: a private copy of the store file ``template`` (the tests' fresh store)."""
    shutil.copyfile(template, target)
    return target


@functools.cache
def template() -> Path:
    """This process's migrated template (built on first use, removed when the process exits)."""
    folder = Path(tempfile.mkdtemp(prefix="pooljudge-template-"))
    atexit.register(shutil.rmtree, folder, True)
    return migrated(folder / "migrated.db")


def seed_template(template: Path, folder: Path, seed: Callable[[str], object]) -> Path:
    """A store file in ``folder``: a copy of ``template`` after ``seed(url)`` wrote into it, snapshotted.

    A module whose tests all start from the same imported data builds it once with this and copies the
    result per test (:func:`copy_store`), instead of importing it again into every test's store.
    """
    from db.engine import sqlite_url

    build = copy_store(template, folder / "seed-build.db")
    seed(sqlite_url(build))
    return snapshot(build, folder / "seeded.db")


def fresh_sqlite(target: Path) -> Path:
    """``target``: a new SQLite store at the newest schema, copied from this process's template."""
    return copy_store(template(), target)
