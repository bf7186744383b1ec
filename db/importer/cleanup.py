"""Removing staged containers: a failed import's own, and those a crashed import left (:func:`drop_stale_imports`)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from typing import Any

from sqlalchemy import Engine, delete, or_, select, tuple_
from sqlalchemy.orm import InstrumentedAttribute, Session, sessionmaker

from db.engine import session_factory
from db.importer.common import STALE_ENV, STALE_IMPORT_AFTER, Owned
from db.importer.writing import Chunker
from db.models import (
    Collection,
    PassageRecord,
    QrelsEntry,
    QrelsVersion,
    QueryRecord,
    RunEntryRecord,
    RunRecord,
    utcnow,
)
from db.rowcount import rowcount


def _delete_in_chunks(write: sessionmaker[Session], statement: Callable[[int], Any], chunk: int | None) -> None:
    """Run ``statement(n)`` (deleting at most n rows) in its own transaction until it deletes nothing."""
    chunker = Chunker(chunk)
    while True:
        started = time.perf_counter()
        with write.begin() as session:
            deleted = rowcount(session, statement(chunker.size))
        chunker.took(max(deleted, 1), time.perf_counter() - started)
        if not deleted:
            return


def _drop_with_entries(
    write: sessionmaker[Session],
    container: type[RunRecord] | type[QrelsVersion],
    entries: type[RunEntryRecord] | type[QrelsEntry],
    parent: InstrumentedAttribute[int],
    container_id: int,
    chunk: int | None,
) -> None:
    """Delete a run's or a qrels version's entries in chunks (``parent`` is their column naming it), then the row."""

    def some_entries(n: int) -> Any:
        pairs = select(entries.query_id, entries.doc_id).where(parent == container_id).limit(n)
        return delete(entries).where(parent == container_id, tuple_(entries.query_id, entries.doc_id).in_(pairs))

    _delete_in_chunks(write, some_entries, chunk)
    with write.begin() as session:
        session.execute(delete(container).where(container.id == container_id))


def _drop_run(write: sessionmaker[Session], run_id: int, chunk: int | None) -> None:
    _drop_with_entries(write, RunRecord, RunEntryRecord, RunEntryRecord.run_id, run_id, chunk)


def _drop_version(write: sessionmaker[Session], version_id: int, chunk: int | None) -> None:
    _drop_with_entries(write, QrelsVersion, QrelsEntry, QrelsEntry.version_id, version_id, chunk)


def _drop_collection(write: sessionmaker[Session], collection_id: int, chunk: int | None) -> None:
    with write.begin() as session:
        runs = list(session.scalars(select(RunRecord.id).where(RunRecord.collection_id == collection_id)))
        versions = list(session.scalars(select(QrelsVersion.id).where(QrelsVersion.collection_id == collection_id)))
    for run_id in runs:
        _drop_run(write, run_id, chunk)
    for version_id in versions:
        _drop_version(write, version_id, chunk)
    for model in (PassageRecord, QueryRecord):
        _delete_in_chunks(write, partial(_some_records, model, collection_id), chunk)
    with write.begin() as session:
        # deleting the row itself cascades only into what is left: nothing big
        session.execute(delete(Collection).where(Collection.id == collection_id))


def _some_records(model: type[PassageRecord] | type[QueryRecord], collection_id: int, n: int) -> Any:
    """A DELETE of at most ``n`` of a collection's passages or queries."""
    return delete(model).where(model.id.in_(select(model.id).where(model.collection_id == collection_id).limit(n)))


def writer(engine: Engine) -> sessionmaker[Session]:
    """The session factory the importer's short write transactions use on ``engine``.

    Parameters
    ----------
    engine : Engine
        The store's engine.

    Returns
    -------
    sessionmaker
        Sessions that take the write lock when they begin.
    """
    return session_factory(engine, write=True)


def drop_owned(write: sessionmaker[Session], owned: Owned, chunk: int | None = None) -> None:
    """Best effort: whatever cannot be dropped now stays invisible and goes at a later store open."""
    try:
        _drop_owned_now(write, owned, chunk)
    except Exception:  # noqa: BLE001 - the import's own error is the one to report
        pass


def _drop_owned_now(write: sessionmaker[Session], owned: Owned, chunk: int | None) -> None:
    if owned.collection is not None:
        _drop_collection(write, owned.collection, chunk)
        return
    for run_id in owned.runs.values():
        _drop_run(write, run_id, chunk)
    if owned.version is not None:
        _drop_version(write, owned.version, chunk)


def _stale_after_default() -> timedelta:
    seconds = os.environ.get(STALE_ENV)
    return timedelta(seconds=float(seconds)) if seconds else STALE_IMPORT_AFTER


def drop_stale_imports(engine: Engine, *, stale_after: timedelta | None = None, chunk: int | None = None) -> int:
    """Delete what crashed imports left: containers still ``importing`` whose heartbeat is older than ``stale_after``.

    Called whenever the app or the CLI opens a store (:func:`db.opening.open_store`); it reads three small tables and takes
    the write lock only when there is something to delete, then deletes in
    short chunks (a half-imported collection can hold millions of rows).

    Parameters
    ----------
    engine : Engine
        The store's engine.
    stale_after : timedelta, optional
        Default :data:`STALE_IMPORT_AFTER`, or ``$POOLJUDGE_IMPORT_STALE_SECONDS``.
    chunk : int, optional
        Rows per delete transaction (default: adaptive, ~50 ms each).

    Returns
    -------
    int
        The number of containers (collections, runs, qrels versions) removed.
    """
    cutoff = utcnow() - (stale_after if stale_after is not None else _stale_after_default())
    write = writer(engine)
    with session_factory(engine).begin() as session:

        def stale(model):
            return select(model.id).where(
                model.status != "ready", or_(model.staged_at.is_(None), model.staged_at < cutoff)
            )

        collections = list(session.scalars(stale(Collection)))
        # runs and versions of a stale collection go with it
        runs = list(session.scalars(stale(RunRecord).where(RunRecord.collection_id.not_in(collections))))
        versions = list(session.scalars(stale(QrelsVersion).where(QrelsVersion.collection_id.not_in(collections))))
    for collection_id in collections:
        _drop_collection(write, collection_id, chunk)
    for run_id in runs:
        _drop_run(write, run_id, chunk)
    for version_id in versions:
        _drop_version(write, version_id, chunk)
    return len(collections) + len(runs) + len(versions)
