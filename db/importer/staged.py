"""The staged import (:func:`import_path`, :func:`import_source`): validate first, then write in short transactions."""

from __future__ import annotations

import os
import stat
import time
from typing import TYPE_CHECKING

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.errors import FormatError
from core.types import CollectionSource
from db.importer.cleanup import drop_owned, writer
from db.importer.common import (
    MODES,
    ImportConflict,
    ImportRequest,
    ImportSummary,
    Owned,
    Plan,
    StagedProgress,
    check_level_of_existing,
    check_run_name,
    in_progress,
    level_for_grades,
    named_run,
    unknown_outcome,
)
from db.importer.staging import Staging, check_against_store, stage_source, staged_unknown
from db.importer.writing import heartbeat, write_staged
from db.models import Collection, QrelsVersion, RunRecord, utcnow

if TYPE_CHECKING:
    from db.engine import Store

_SCAN_DEPTH = 3


def check_regular_input(path: str | os.PathLike[str]) -> None:
    """Refuse, before anything is opened, an input that is not a regular file (a FIFO, a socket, a device).

    A FIFO with no writer would block the import forever.  A folder is fine
    (the folder formats: beir, dapr, ...), but the files in it (up to three
    levels down) must be regular too.  A path that does not exist is left to
    the reader, which names what it expected.

    Raises
    ------
    FormatError
        Naming the offending file.
    """
    name = os.fspath(path)
    try:
        mode = os.stat(name).st_mode
    except OSError:  # missing, a symlink loop, a broken link: the reader says which
        return
    if stat.S_ISDIR(mode):
        root_depth = name.rstrip(os.sep).count(os.sep)
        for folder, subfolders, files in os.walk(name):
            if folder.rstrip(os.sep).count(os.sep) - root_depth >= _SCAN_DEPTH:
                subfolders[:] = []
            for entry in files:
                child = os.path.join(folder, entry)
                try:
                    child_mode = os.stat(child).st_mode
                except OSError:  # a dangling link: the reader reports it if it needs the file
                    continue
                if not stat.S_ISREG(child_mode) and not stat.S_ISDIR(child_mode):
                    raise FormatError(child, None, f"not a regular file ({_kind(child_mode)}); refusing to read it")
        return
    if not stat.S_ISREG(mode):
        raise FormatError(name, None, f"not a regular file ({_kind(mode)}); refusing to read it")


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return what
    return "not a file"


def import_path(
    store: Store,
    format: str,
    path: str | os.PathLike[str],
    *,
    name: str,
    mode: str = "create",
    qrels_name: str = "imported",
    progress: StagedProgress | None = None,
    staging_dir: str | os.PathLike[str] | None = None,
    allow_unknown_ids: bool = False,
    level: int | None = None,
    run_name: str | None = None,
) -> ImportSummary:
    """Import the file or folder ``path`` in ``format`` into the collection ``name``, without blocking other writers.

    The call the CLI and the app's import jobs make (and the one to use from
    a script or a benchmark): ``import_path(Store(url), "msmarco", "collection.tsv", name="c")``.
    A non-regular input is refused before anything is read; then see
    :func:`import_source` (``allow_unknown_ids``, ``level``, ``run_name``).
    """
    from core.formats import read_source

    check_regular_input(path)
    return import_source(
        store,
        read_source(format, path, merge=mode == "merge"),
        name=name,
        format=format,
        location=os.fspath(path),
        mode=mode,
        qrels_name=qrels_name,
        progress=progress,
        staging_dir=staging_dir,
        allow_unknown_ids=allow_unknown_ids,
        level=level,
        run_name=run_name,
    )


def import_source(
    store: Store,
    source: CollectionSource,
    *,
    name: str,
    format: str,
    location: str,
    mode: str = "create",
    qrels_name: str = "imported",
    progress: StagedProgress | None = None,
    staging_dir: str | os.PathLike[str] | None = None,
    chunk_rows: int | None = None,
    allow_unknown_ids: bool = False,
    level: int | None = None,
    run_name: str | None = None,
) -> ImportSummary:
    """Import ``source`` into the collection ``name``: validate everything first, then write in short transactions.

    Parameters
    ----------
    store : db.engine.Store
        The store; the import opens its own short transactions.
    source : CollectionSource
        Streams produced by a reader in :mod:`core.formats`.
    name, format, location, mode, qrels_name, allow_unknown_ids, level
        See :class:`db.importer.common.ImportRequest`.
    progress : callable, optional
        ``progress(stage, done, total)`` (see :data:`StagedProgress`).
    staging_dir : path, optional
        Where the temporary staging database goes (default: the system's temporary folder).
    chunk_rows : int, optional
        A fixed number of rows per write transaction instead of the adaptive ~50 ms chunks.
    run_name : str, optional
        The name of the run of a single-run input (a ``trec-run`` or ``json-run`` file), not its file's name.

    Raises
    ------
    FormatError
        A record that is malformed, duplicated, or conflicts with the store; a qrels or run entry naming an
        unknown id (the first one's ``file:line``, with the counts); nothing was written.
    ImportConflict
        The collection (or a run of the same name) exists and the mode does not allow adding to it;
        :class:`ImportInProgress` when an unfinished import holds the name.
    ValueError
        A name :func:`core.names.check_name` refuses (:func:`check_run_name` for runs), a bad ``level``.
    """
    request = ImportRequest(name, format, location, mode, qrels_name, allow_unknown_ids, level)
    source, plan = _prepare(store, source, request, run_name)
    tick = progress or (lambda _stage, _done, _total: None)
    # Names are taken before the input is read: a second import of the same name (a double click on Import) is
    # refused at once.  Until the flip the containers are invisible, and a validation error drops them again.
    owned = _reserve(store, source, plan, request)
    try:
        with Staging(staging_dir) as staging:
            summary = _validate(store, staging, source, plan, _beating(store, owned, tick), request)
            write_staged(store, staging, source, plan, owned, summary, tick, chunk_rows, request)
    except BaseException:
        drop_owned(writer(store.engine), owned)
        raise
    return summary


def _prepare(
    store: Store, source: CollectionSource, request: ImportRequest, run_name: str | None
) -> tuple[CollectionSource, Plan]:
    """Check the names and the mode and read what the store holds, before anything is reserved or read.

    Returns ``source`` with its run renamed ``run_name`` (when given) and the plan.
    """
    if request.mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {request.mode!r}")
    if run_name is not None:
        check_run_name(run_name)
    source = named_run(source, run_name)
    request.check(source.runs)
    with store.read() as session:
        plan = _plan(session, request, list(source.runs))
    if plan.collection_id is not None and plan.relevance_level is not None:
        check_level_of_existing(request.name, plan.relevance_level, request.level)
    return source, plan


def _validate(
    store: Store,
    staging: Staging,
    source: CollectionSource,
    plan: Plan,
    beating: StagedProgress,
    request: ImportRequest,
) -> ImportSummary:
    """Read the input into ``staging`` and check it there and against the store; return the summary of the counts.

    Raises on the first problem (nothing is written to the store here).
    """
    summary = ImportSummary(collection=request.name)
    counts = stage_source(staging, source, beating)
    if counts.qrels and plan.version_source not in (None, "import"):
        raise ImportConflict(f"qrels version {request.qrels_name!r} holds frozen labels; import into another version")
    summary.passages_skipped, summary.queries_skipped, summary.qrels_skipped = (
        check_against_store(store, staging, plan, request.qrels_name, beating)
        if plan.collection_id is not None
        else (0, 0, 0)
    )
    summary.passages_added = counts.passages - summary.passages_skipped
    summary.queries_added = counts.queries - summary.queries_skipped
    summary.qrels_added = counts.qrels - summary.qrels_skipped
    summary.qrels_version = request.qrels_name if counts.qrels else None
    summary.runs = dict(counts.runs)
    summary.notes.extend(source.notes)  # after the streams: readers add notes while they are read
    if counts.qrels or counts.runs:
        unknown = staged_unknown(store, staging, plan, beating)
        unknown_outcome(unknown, summary, allow=request.allow_unknown_ids, what="the qrels and runs")
    if plan.collection_id is None:
        summary.relevance_level = (
            request.level
            if request.level is not None
            else level_for_grades(*staging.db.execute("SELECT count(*), max(grade) FROM qrels").fetchone())
        )
    else:
        summary.relevance_level = plan.relevance_level
    return summary


HEARTBEAT_SECONDS = 15.0
"""While the input is read, the reserved containers' heartbeat is refreshed this often (one tiny write)."""


def _beating(store: Store, owned: Owned, tick: StagedProgress) -> StagedProgress:
    """``tick`` that also keeps the reserved containers fresh while the input is read and checked."""
    last = [time.monotonic()]

    def progress(stage: str, done: int, total: int | None) -> None:
        if time.monotonic() - last[0] >= HEARTBEAT_SECONDS:
            with store.write() as session:
                heartbeat(session, owned)
            last[0] = time.monotonic()
        tick(stage, done, total)

    return progress


def _reserve(store: Store, source: CollectionSource, plan: Plan, request: ImportRequest) -> Owned:
    """Create the new collection (when there is none) and the runs, all ``importing``, in one short transaction.

    Returns what this import created (and drops again on failure).
    """
    owned = Owned()
    try:
        with store.write() as session:
            now = utcnow()
            cid = plan.collection_id
            if cid is None:
                cid = session.execute(
                    insert(Collection).values(
                        name=request.name,
                        language=source.language,
                        description=source.description,
                        status="importing",
                        staged_at=now,
                    )
                ).inserted_primary_key[0]
            runs = {
                run_name: session.execute(
                    insert(RunRecord).values(
                        collection_id=cid, name=run_name, source="import", params={}, status="importing", staged_at=now
                    )
                ).inserted_primary_key[0]
                for run_name in source.runs
            }
    except IntegrityError:
        # Another import took one of the names since they were checked: say which holder it is.
        with store.read() as session:
            _plan(session, request, list(source.runs))
        raise ImportConflict(
            f"collection {request.name!r} changed while this import was starting; run it again"
        ) from None
    if plan.collection_id is None:
        owned.collection = cid
    owned.runs.update(runs)
    return owned


def _plan(session: Session, request: ImportRequest, run_names: list[str]) -> Plan:
    """What the store holds for ``request``; refuses a name held by an unfinished import or one ``mode`` forbids."""
    name, mode, qrels_name = request.name, request.mode, request.qrels_name
    row = session.execute(
        select(Collection.id, Collection.status, Collection.language, Collection.relevance_level).where(
            Collection.name == name
        )
    ).first()
    if row is not None and row.status != "ready":
        raise in_progress(f"collection {name!r}")
    if row is not None and mode == "create":
        raise ImportConflict(
            f"collection {name!r} already exists; import with --merge to add to it, or choose another name"
        )
    if row is None:
        return Plan()
    plan = Plan(collection_id=row.id, language=row.language, relevance_level=row.relevance_level)
    version = session.execute(
        select(QrelsVersion.id, QrelsVersion.source, QrelsVersion.status).where(
            QrelsVersion.collection_id == row.id, QrelsVersion.name == qrels_name
        )
    ).first()
    if version is not None:
        if version.status != "ready":
            raise in_progress(f"qrels version {qrels_name!r}")
        plan.version_id, plan.version_source = version.id, version.source
    for run_name in run_names:
        status = session.scalar(
            select(RunRecord.status).where(RunRecord.collection_id == row.id, RunRecord.name == run_name)
        )
        if status == "ready":
            raise ImportConflict(f"run {run_name!r} already exists in this collection; import it under another name")
        if status is not None:
            raise in_progress(f"run {run_name!r}")
    return plan
