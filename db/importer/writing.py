"""Writing staged rows into the store in short transactions, and the flip that makes them visible."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, insert, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.types import CollectionSource
from db.engine import session_factory
from db.importer.collection import collection_language
from db.importer.common import (
    ImportConflict,
    ImportRequest,
    ImportSummary,
    Owned,
    Plan,
    StagedProgress,
    majority_language,
)
from db.importer.staging import Staging
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

if TYPE_CHECKING:
    from db.engine import Store

TARGET_TRANSACTION_SECONDS = 0.05
"""Each write transaction of an import aims at this duration: another writer waits at most about that long."""
MIN_ROWS, START_ROWS, MAX_ROWS = 100, 2_000, 20_000
PAUSE_FRACTION = 1.0
"""After each write transaction the import leaves the lock free for this share of the time it held it."""
MIN_PAUSE_SECONDS = 0.01


class Chunker:
    """Rows per write transaction, adapted so that each one takes about :data:`TARGET_TRANSACTION_SECONDS`."""

    def __init__(self, fixed: int | None = None) -> None:
        self.fixed = fixed
        self.size = fixed or START_ROWS

    def took(self, rows: int, seconds: float) -> None:
        if self.fixed:
            return
        wanted = rows * TARGET_TRANSACTION_SECONDS / max(seconds, 1e-4)
        self.size = int(min(MAX_ROWS, max(MIN_ROWS, (self.size + wanted) / 2)))


def yield_lock(held: float) -> None:
    """Leave the write lock free for about as long as the import just held it.

    SQLite queues nobody: a writer that found the lock taken polls it again
    after a back-off growing to 100 ms, so an import that took the lock back
    right after each commit would keep winning and starve it for seconds.  A
    pause as long as the transaction (jittered, so no poller stays in phase
    with the chunks) gives every waiter the lock within a few polls, for about
    half the write throughput.
    """
    time.sleep(max(held, MIN_PAUSE_SECONDS) * PAUSE_FRACTION * random.uniform(0.5, 1.5))


def heartbeat(session: Session, owned: Owned) -> None:
    """Refresh ``staged_at`` of this import's containers: a live import never looks like a crashed one.

    Raises ImportConflict when one of them is gone: an import stalled for longer than the staleness
    window was taken for a crashed one and its containers were removed.
    """
    now = utcnow()
    found = expected = 0
    if owned.collection is not None:
        expected += 1
        found += rowcount(session, update(Collection).where(Collection.id == owned.collection).values(staged_at=now))
    if owned.version is not None:
        expected += 1
        found += rowcount(session, update(QrelsVersion).where(QrelsVersion.id == owned.version).values(staged_at=now))
    if owned.runs:
        expected += len(owned.runs)
        found += rowcount(
            session, update(RunRecord).where(RunRecord.id.in_(list(owned.runs.values()))).values(staged_at=now)
        )
    if found != expected:
        raise ImportConflict(
            "this import stalled for longer than the staleness window and its staged rows were removed as a "
            "crashed import's; run it again"
        )


_Part = tuple[str, str, tuple, Any, dict[str, Any], tuple[str, ...]]
"""A part of a staged import to copy: (staging table, the condition on its rows and its parameters, target model,
{target column: constant}, the staged columns copied, named as in the target)."""


def write_staged(
    store: Store,
    staging: Staging,
    source: CollectionSource,
    plan: Plan,
    owned: Owned,
    summary: ImportSummary,
    tick: StagedProgress,
    chunk_rows: int | None,
    request: ImportRequest,
) -> None:
    """Copy the validated rows from ``staging`` into the containers, then flip them visible and record the import."""
    total = summary.passages_added + summary.queries_added + summary.qrels_added + sum(summary.runs.values())
    tick("writing", 0, total)
    cid = owned.collection or plan.collection_id
    assert cid is not None  # an import either merges into an existing collection or has reserved a new one
    if summary.qrels_version is not None and plan.version_id is None:
        owned.version = _reserve_version(store, cid, request.qrels_name)
    vid = owned.version or plan.version_id
    try:
        # Passages and queries merged into a ready collection become visible chunk by chunk (there is no
        # per-row status to hide them behind).  They were all validated before the first chunk, so a merge
        # stopped half-way is completed by running it again (what is written is then identical, so skipped);
        # one transaction for them all would hold the write lock for the whole merge, which is what this
        # module exists to avoid.
        _copy_parts(store, staging, _copied_parts(source, owned, cid, vid), owned, Chunker(chunk_rows), tick, total)
    except IntegrityError as exc:
        raise ImportConflict(
            f"collection {summary.collection!r} received the same records from another import while this one was "
            "writing; "
            "run this merge again (what is already stored is then skipped)"
        ) from exc
    language = None
    if owned.collection is not None:
        language = source.language or _staged_language(staging)
    elif plan.language is None:  # a merge into a collection whose language was never known
        with store.read() as session:
            language = collection_language(session, cid)
    with store.write() as session:
        flip(session, owned, cid, language, level=summary.relevance_level)
        session.add(request.history_row(cid, summary))


def _reserve_version(store: Store, cid: int, qrels_name: str) -> int:
    """Create the qrels version the import writes into, ``importing`` (invisible) until the flip; returns its id."""
    with store.write() as session:
        version_id: int = session.execute(
            insert(QrelsVersion).values(
                collection_id=cid, name=qrels_name, source="import", status="importing", staged_at=utcnow()
            )
        ).inserted_primary_key[0]
    return version_id


def _copy_parts(
    store: Store,
    staging: Staging,
    parts: list[_Part],
    owned: Owned,
    chunker: Chunker,
    tick: StagedProgress,
    total: int,
) -> None:
    """Copy each part in chunks of rowids, one write transaction per chunk, leaving the lock free in between."""
    done = 0
    fast = store.engine.dialect.name == "sqlite"
    with _SqliteCopier(store.engine, staging) if fast else _GenericCopier(store, staging) as copier:
        for table, where, params, model, constants, columns in parts:
            # The part's own rowid span: the runs share one staging table, each staged as one block.
            last, top = staging.db.execute(
                f"SELECT coalesce(min(rowid) - 1, 0), coalesce(max(rowid), 0) FROM {table} WHERE {where}", params
            ).fetchone()
            while last < top:
                upto = min(top, last + chunker.size)
                rows, held = copier.copy(table, where, params, (last, upto), model, constants, columns, owned)
                last = upto
                chunker.took(max(rows, 1), held)
                yield_lock(held)
                done += rows
                tick("writing", done, total)


def _copied_parts(source: CollectionSource, owned: Owned, cid: int, vid: int | None) -> list[_Part]:
    """What :func:`write_staged` copies, in order: passages, queries, qrels (when there is a version), each run."""
    parts: list[_Part] = [
        (
            "passages",
            "skip = 0",
            (),
            PassageRecord,
            {"collection_id": cid},
            ("ext_id", "doc_id", "position", "title", "text", "language"),
        ),
        (
            "queries",
            "skip = 0",
            (),
            QueryRecord,
            {"collection_id": cid},
            ("ext_id", "text", "split", "type", "domain", "language", "translation", "answers"),
        ),
    ]
    if vid is not None:
        parts.append(("qrels", "skip = 0", (), QrelsEntry, {"version_id": vid}, ("query_id", "doc_id", "grade")))
    for index, run_name in enumerate(source.runs):
        parts.append(
            (
                "run_entries",
                "run = ?",
                (index,),
                RunEntryRecord,
                {"run_id": owned.runs[run_name]},
                ("query_id", "doc_id", "score"),
            )
        )
    return parts


class _GenericCopier:
    """Any SQLAlchemy dialect: read a chunk from the staging file, insert it with one executemany."""

    def __init__(self, store, staging: Staging) -> None:
        self.store, self.staging = store, staging

    def __enter__(self) -> _GenericCopier:
        return self

    def __exit__(self, *_exc: Any) -> None:
        pass

    def copy(self, table, where, params, span, model, constants, columns, owned) -> tuple[int, float]:
        rows = self.staging.db.execute(
            f"SELECT {', '.join(columns)} FROM {table} WHERE {where} AND rowid > ? AND rowid <= ? ORDER BY rowid",
            (*params, *span),
        ).fetchall()
        if not rows:
            return 0, 0.0
        answers = columns.index("answers") if "answers" in columns else None
        payload = []
        for row in rows:
            values = dict(constants, **dict(zip(columns, row)))
            if answers is not None and row[answers] is not None:
                values["answers"] = json.loads(row[answers])
            payload.append(values)
        with self.store.write() as session:
            heartbeat(session, owned)
            started = time.perf_counter()
            session.execute(insert(model), payload)
        return len(rows), time.perf_counter() - started


class _SqliteCopier:
    """SQLite: attach the staging file to one store connection and copy each chunk with INSERT ... SELECT.

    No row passes through Python, so each transaction (and the lock) is held
    for a fraction of the generic path's time.  The connection is discarded
    afterwards rather than returned to the pool with the file still attached.
    """

    def __init__(self, engine: Engine, staging: Staging) -> None:
        # the write factory's bind carries the option that makes its transactions BEGIN IMMEDIATE
        self.connection = session_factory(engine, write=True).kw["bind"].connect()
        self.connection.connection.driver_connection.execute("ATTACH DATABASE ? AS staging", (staging.path,))

    def __enter__(self) -> _SqliteCopier:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.connection.invalidate()
        self.connection.close()

    def copy(self, table, where, params, span, model, constants, columns, owned) -> tuple[int, float]:
        names = [*constants, *columns]
        sql = (
            f"INSERT INTO main.{model.__tablename__} ({', '.join(names)}) "
            f"SELECT {', '.join('?' * len(constants))}, {', '.join(columns)} FROM staging.{table} "
            f"WHERE {where} AND rowid > ? AND rowid <= ? ORDER BY rowid"
        )
        with self.connection.begin():
            heartbeat(self.connection, owned)
            started = time.perf_counter()
            inserted = self.connection.exec_driver_sql(sql, (*constants.values(), *params, *span)).rowcount
        return inserted, time.perf_counter() - started


def flip(session: Session, owned: Owned, cid: int, language: str | None, *, level: int | None = None) -> None:
    """The one short transaction that makes everything this import wrote visible at once.

    ``level``: the relevance level of the collection this import created (ignored for an existing one).
    """
    ready = {"status": "ready", "staged_at": None}
    if owned.collection is not None:
        extra = {} if level is None else {"relevance_level": level}
        session.execute(
            update(Collection).where(Collection.id == owned.collection).values(**ready, language=language, **extra)
        )
    elif language is not None:
        session.execute(
            update(Collection).where(Collection.id == cid, Collection.language.is_(None)).values(language=language)
        )
    if owned.version is not None:
        session.execute(update(QrelsVersion).where(QrelsVersion.id == owned.version).values(**ready))
    if owned.runs:
        publish_runs(session, owned.runs.values())


def publish_runs(session: Session, run_ids: Iterable[int]) -> None:
    """Show staged runs (``ready``, no heartbeat): an import's own at its flip, or a pooling job's with its pool."""
    session.execute(update(RunRecord).where(RunRecord.id.in_(list(run_ids))).values(status="ready", staged_at=None))


def _staged_language(staging: Staging) -> str | None:
    counts = dict(staging.db.execute("SELECT language, count(*) FROM passages GROUP BY language").fetchall())
    if not counts:
        counts = dict(staging.db.execute("SELECT language, count(*) FROM queries GROUP BY language").fetchall())
    return majority_language(counts)
