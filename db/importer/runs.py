"""Storing a run held in memory: in the caller's transaction (:func:`save_run`) or in short ones (:func:`store_run`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from itertools import islice
from typing import TYPE_CHECKING, Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.types import Run, RunEntry
from db.importer.cleanup import drop_owned, writer
from db.importer.collection import import_run
from db.importer.common import (
    CHECK_ROWS,
    RUN_HINT,
    ImportConflict,
    ImportSummary,
    Owned,
    UnknownIds,
    check_run_name,
    collection_has_rows,
    in_progress,
    known_in_store,
    unknown_outcome,
)
from db.importer.writing import Chunker, flip, heartbeat, publish_runs, yield_lock
from db.models import PassageRecord, QueryRecord, RunEntryRecord, RunRecord, utcnow
from db.queries import collection_id

if TYPE_CHECKING:
    from db.engine import Store


def save_run(
    session: Session,
    collection: str,
    name: str,
    run: Run,
    *,
    source: str = "retriever",
    params: dict[str, Any] | None = None,
    allow_unknown_ids: bool = False,
) -> int:
    """Store a run produced in this process (e.g. by a retriever); refuses an existing run name.

    Refuses (``ValueError``) a bad run name (:func:`check_run_name`) and, unless ``allow_unknown_ids``,
    a run naming query or passage ids the collection lacks.  Returns the number of entries stored.
    """
    check_run_name(name)
    cid = collection_id(session, collection)
    _check_run_ids(
        run,
        collection,
        name,
        allow_unknown_ids,
        lambda kind, model, ids: known_in_store(session, cid, model, ids),
        lambda model: collection_has_rows(session, cid, model),
    )
    entries = lambda: (RunEntry(q, d, s) for q, docs in run.items() for d, s in docs.items())  # noqa: E731
    return import_run(session, cid, name, entries, lambda _part, _n: None, source=source, params=params)


_IdModel = type[QueryRecord] | type[PassageRecord]
_Known = Callable[[str, _IdModel, list[str]], set[str]]
"""``known(kind, model, ids)``: which of ``ids`` the collection holds."""
_HasRows = Callable[[_IdModel], bool]
"""``has_rows(model)``: whether the collection holds any row of ``model``."""


def _check_run_ids(run: Run, collection: str, name: str, allow: bool, known: _Known, has_rows: _HasRows) -> None:
    """Refuse a run held in memory that names ids the collection lacks (:func:`save_run`, :func:`store_run`)."""
    if allow:
        return
    refs = {"query": dict.fromkeys(run), "passage": dict.fromkeys(d for docs in run.values() for d in docs)}
    found = []
    for kind, model in (("query", QueryRecord), ("passage", PassageRecord)):
        unknown = UnknownIds(kind)
        if has_rows(model):
            items = list(refs[kind].items())
            for start in range(0, len(items), CHECK_ROWS):
                chunk = items[start : start + CHECK_ROWS]
                unknown.add(chunk, known(kind, model, [i for i, _ in chunk]))
        found.append(unknown)
    unknown_outcome(
        found,
        ImportSummary(collection=collection),
        allow=False,
        what=f"run {name!r}",
        origin_known=False,
        hint=RUN_HINT,
    )


def store_run(
    store: Store,
    collection: str,
    name: str,
    run: Run,
    *,
    source: str = "retriever",
    params: dict[str, Any] | None = None,
    chunk_rows: int | None = None,
    allow_unknown_ids: bool = False,
    publish: bool = True,
) -> int:
    """:func:`save_run` without holding the write lock: the run is written in short transactions, invisible
    (``importing``) until one final flip, so a large retriever run never blocks annotators.

    ``publish=False`` leaves it ``importing``: the caller flips it together with what it belongs to (a
    pool, :func:`pooljudge.pool_job.run_pool_job`) or removes it with :func:`drop_staged_runs`.

    Refuses a bad run name (:func:`check_run_name`), a run name that exists (or is being imported) and, unless
    ``allow_unknown_ids``, a run naming query or passage ids the collection lacks (a retriever's run never
    does).  Returns the number of entries stored.
    """
    owned, cid, count = _stage(store, collection, name, run, source, params, chunk_rows, allow_unknown_ids)
    if publish:
        try:
            with store.write() as session:
                flip(session, owned, cid, None)
        except BaseException:
            drop_owned(writer(store.engine), owned)
            raise
    return count


def stage_run(store: Store, collection: str, name: str, run: Run, *, params: dict[str, Any] | None = None) -> int:
    """Store a retriever's run invisible (``importing``) as :func:`store_run` does; returns its id.

    For a job that stores several runs and shows them with what they belong to (a pool,
    :func:`pooljudge.pool_job.run_pool_job`): it keeps the runs it staged alive with
    :func:`refresh_staged_runs`, then shows them with :func:`publish_staged_runs` or removes them
    with :func:`drop_staged_runs`.

    Parameters
    ----------
    store : Store
        The store.
    collection, name : str
        A ready collection's name and the new run's name (refused as by :func:`store_run`).
    run : Run
        The run.
    params : dict, optional
        The run's configuration (a retriever's spec, ``k``, ...).

    Returns
    -------
    int
        The new run's id.
    """
    owned, _cid, _count = _stage(store, collection, name, run, "retriever", params, None, False)
    return owned.runs[name]


def refresh_staged_runs(store: Store, run_ids: Iterable[int]) -> None:
    """Refresh the heartbeat of runs :func:`stage_run` stored, so that a job's long work after them (the next
    run) never makes them look like a crashed import's leftovers (:func:`drop_stale_imports`).

    Parameters
    ----------
    store : Store
        The store.
    run_ids : iterable of int
        The staged runs' ids.

    Raises
    ------
    ImportConflict
        When one of them is gone: the job stalled for longer than the staleness window and its runs
        were removed as a crashed import's.
    """
    with store.write() as session:
        heartbeat(session, Owned(runs={str(i): i for i in run_ids}))


def publish_staged_runs(session: Session, run_ids: Iterable[int]) -> None:
    """Make runs :func:`stage_run` stored visible (``ready``), in the caller's transaction.

    Parameters
    ----------
    session : Session
        The caller's write transaction: the runs become visible with what else it writes, or not at all.
    run_ids : iterable of int
        The staged runs' ids.
    """
    publish_runs(session, run_ids)


def _stage(
    store: Store,
    collection: str,
    name: str,
    run: Run,
    source: str,
    params: dict[str, Any] | None,
    chunk_rows: int | None,
    allow_unknown_ids: bool,
) -> tuple[Owned, int, int]:
    """Write ``run`` invisible in short transactions; ``(what was created, collection id, entries written)``."""
    check_run_name(name)
    cid = _free_run_name(store, collection, name)
    _check_run_ids(run, collection, name, allow_unknown_ids, *_short_read_lookups(store, cid))
    owned = _reserve_run(store, cid, name, source, params or {})
    try:
        count = _write_run_entries(store, owned, owned.runs[name], run, chunk_rows)
    except BaseException:
        drop_owned(writer(store.engine), owned)
        raise
    return owned, cid, count


def _free_run_name(store: Store, collection: str, name: str) -> int:
    """The id of ``collection``; refuses a run name that is taken there (or held by an unfinished import)."""
    with store.read() as session:
        cid = collection_id(session, collection)
        status = session.scalar(select(RunRecord.status).where(RunRecord.collection_id == cid, RunRecord.name == name))
    if status == "ready":
        raise ImportConflict(f"run {name!r} already exists in this collection; import it under another name")
    if status is not None:
        raise in_progress(f"run {name!r}")
    return cid


def _short_read_lookups(store: Store, cid: int) -> tuple[_Known, _HasRows]:
    """The ``known`` and ``has_rows`` of :func:`_check_run_ids`, each answered in its own short read."""

    def known(_kind: str, model: _IdModel, ids: list[str]) -> set[str]:
        with store.read() as session:  # one short read per chunk of ids
            return known_in_store(session, cid, model, ids)

    def has_rows(model: _IdModel) -> bool:
        with store.read() as session:
            return collection_has_rows(session, cid, model)

    return known, has_rows


def _reserve_run(store: Store, cid: int, name: str, source: str, params: dict[str, Any]) -> Owned:
    """Create the run, ``importing`` (invisible) until the flip; refuses a name another import took meanwhile."""
    owned = Owned()
    try:
        with store.write() as session:
            owned.runs[name] = session.execute(
                insert(RunRecord).values(
                    collection_id=cid, name=name, source=source, params=params, status="importing", staged_at=utcnow()
                )
            ).inserted_primary_key[0]
    except IntegrityError:
        raise in_progress(f"run {name!r}") from None
    return owned


def _write_run_entries(store: Store, owned: Owned, rid: int, run: Run, chunk_rows: int | None) -> int:
    """Insert the entries of ``run`` into the staged run ``rid`` in short write transactions; returns how many."""
    entries = (
        {"run_id": rid, "query_id": q, "doc_id": d, "score": s} for q, docs in run.items() for d, s in docs.items()
    )
    chunker = Chunker(chunk_rows)
    count = 0
    while chunk := list(islice(entries, chunker.size)):
        with store.write() as session:
            heartbeat(session, owned)
            started = time.perf_counter()
            session.execute(insert(RunEntryRecord), chunk)
        held = time.perf_counter() - started
        chunker.took(len(chunk), held)
        yield_lock(held)
        count += len(chunk)
    return count


def drop_staged_runs(store: Store, run_ids: Iterable[int]) -> None:
    """Remove runs :func:`store_run` left ``importing`` (``publish=False``) for a job that failed; best effort."""
    drop_owned(writer(store.engine), Owned(runs={str(i): i for i in run_ids}))
