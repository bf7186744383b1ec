"""The in-transaction import (:func:`import_collection`): small in-memory sources, the caller's write transaction."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from core.lang import detect_language
from core.types import CollectionSource, Passage, QrelEntry, Query, RunEntry
from db.importer.common import (
    PASSAGE_FIELDS,
    QUERY_FIELDS,
    ImportConflict,
    ImportRequest,
    ImportSummary,
    Progress,
    check_level_of_existing,
    chunks,
    duplicates_named,
    error_at,
    in_progress,
    level_for_grades,
    majority_language,
    referenced_ids,
    unknown_in_session,
    unknown_outcome,
)
from db.models import Collection, PassageRecord, QrelsEntry, QrelsVersion, QueryRecord, RunEntryRecord, RunRecord


def import_collection(
    session: Session,
    source: CollectionSource,
    *,
    name: str,
    format: str,
    location: str,
    mode: str = "create",
    qrels_name: str = "imported",
    progress: Progress | None = None,
    allow_unknown_ids: bool = False,
    level: int | None = None,
) -> ImportSummary:
    """Import ``source`` into the collection ``name``; returns the :class:`ImportSummary` of what was added and skipped.

    Parameters
    ----------
    session : Session
        A session inside a write transaction owned by the caller.
    source : CollectionSource
        Streams produced by a reader in :mod:`core.formats`.
    name, format, location, mode, qrels_name, allow_unknown_ids, level
        See :class:`db.importer.common.ImportRequest`.
    progress : callable, optional
        Called as ``progress(part, n)`` after each chunk of ``n`` records.

    Raises
    ------
    FormatError
        A record that is malformed, duplicated, or conflicts with the store; a qrels or run entry naming an id
        the collection lacks.
    ImportConflict
        The collection (or a run of the same name) already exists and the mode does not allow adding to it.
    ValueError
        A name :func:`core.names.check_name` refuses, a bad ``level``.
    """
    request = ImportRequest(name, format, location, mode, qrels_name, allow_unknown_ids, level)
    request.check(source.runs)
    tick = progress or (lambda _part, _n: None)
    collection, created = _open_collection(session, source, request)
    summary = ImportSummary(collection=name)
    summary.passages_added, summary.passages_skipped = _insert_records(
        session, collection.id, source.passages, _PASSAGES, mode, tick
    )
    summary.queries_added, summary.queries_skipped = _insert_records(
        session, collection.id, source.queries, _QUERIES, mode, tick
    )
    version_id = _import_qrels(session, collection.id, source, qrels_name, summary, tick)
    for run_name, stream in source.runs.items():
        summary.runs[run_name] = import_run(session, collection.id, run_name, stream, tick)
    summary.notes.extend(source.notes)  # after the streams: readers add notes while they are read
    if summary.qrels_added or summary.qrels_skipped or summary.runs:
        references = referenced_ids([source.qrels(), *(stream() for stream in source.runs.values())])
        unknown = unknown_in_session(session, collection.id, references)
        unknown_outcome(unknown, summary, allow=allow_unknown_ids, what="the qrels and runs")
    _finish_collection(session, collection, summary, request, created=created, version_id=version_id)
    return summary


def _open_collection(session: Session, source: CollectionSource, request: ImportRequest) -> tuple[Collection, bool]:
    """The collection to import into and whether this import created it; refuses what ``mode`` does not allow."""
    name = request.name
    collection = session.scalar(select(Collection).where(Collection.name == name))
    if collection is not None and collection.status != "ready":
        raise in_progress(f"collection {name!r}")
    if collection is not None and request.mode == "create":
        raise ImportConflict(
            f"collection {name!r} already exists; import with --merge to add to it, or choose another name"
        )
    if collection is not None:
        check_level_of_existing(name, collection.relevance_level, request.level)
        return collection, False
    collection = Collection(name=name, language=source.language, description=source.description)
    session.add(collection)
    session.flush()
    return collection, True


def _finish_collection(
    session: Session,
    collection: Collection,
    summary: ImportSummary,
    request: ImportRequest,
    *,
    created: bool,
    version_id: int | None,
) -> None:
    """Set a created collection's relevance level (from its qrels unless ``level`` is given), fill in an unknown
    language, and record the import in the history."""
    if created:
        level = request.level
        if level is None:
            count, highest = (
                (0, None)
                if version_id is None
                else session.execute(
                    select(func.count(), func.max(QrelsEntry.grade)).where(QrelsEntry.version_id == version_id)
                ).one()
            )
            level = level_for_grades(count, highest)
        collection.relevance_level = level
    summary.relevance_level = collection.relevance_level
    if collection.language is None:
        collection.language = collection_language(session, collection.id)
    session.add(request.history_row(collection.id, summary))
    session.flush()


@dataclass(frozen=True)
class _RecordKind:
    """How the records of one stream (passages or queries) become rows, and which fields a merge compares."""

    table: type[PassageRecord] | type[QueryRecord]
    to_row: Callable[[int, Any], dict[str, Any]]
    compared: tuple[str, ...]
    what: str


def _passage_row(collection_id: int, p: Passage) -> dict[str, Any]:
    return {
        "collection_id": collection_id,
        "ext_id": p.id,
        "doc_id": p.doc_id,
        "position": p.position,
        "title": p.title or "",
        "text": p.text,
        "language": p.language or detect_language(p.text[:400] or p.title),
    }


def _query_row(collection_id: int, q: Query) -> dict[str, Any]:
    return {
        "collection_id": collection_id,
        "ext_id": q.id,
        "text": q.text,
        "split": q.split,
        "type": q.type,
        "domain": q.domain,
        "language": q.language or detect_language(q.text[:400]),
        "translation": q.translation,
        "answers": q.answers,
    }


_PASSAGES = _RecordKind(PassageRecord, _passage_row, PASSAGE_FIELDS, "passage")
_QUERIES = _RecordKind(QueryRecord, _query_row, QUERY_FIELDS, "query")


def _insert_records(
    session: Session,
    collection_id: int,
    stream: Callable[[], Iterator[Any]],
    kind: _RecordKind,
    mode: str,
    tick: Progress,
) -> tuple[int, int]:
    """Insert a stream's records in chunks; returns ``(added, skipped)`` (a merge skips identical stored ones)."""
    table, what = kind.table, kind.what
    added = skipped = 0
    with duplicates_named(stream, lambda r: r.id, f"{what} id"):
        for chunk in chunks(stream()):
            rows = [kind.to_row(collection_id, record) for record in chunk]
            if mode == "merge":
                rows = _drop_existing(session, collection_id, table, chunk, rows, kind.compared, what)
                skipped += len(chunk) - len(rows)
            if rows:
                session.execute(insert(table), rows)
            added += len(rows)
            tick(what, len(chunk))
    return added, skipped


def _drop_existing(session, collection_id, table, chunk, rows, compared, what):
    """Keep the rows that are new; identical ones are skipped, different ones are an error."""
    existing = {
        row.ext_id: row
        for row in session.scalars(
            select(table).where(table.collection_id == collection_id, table.ext_id.in_([r.id for r in chunk]))
        )
    }
    if not existing:
        return rows
    kept = []
    for record, row in zip(chunk, rows):
        stored = existing.get(record.id)
        if stored is None:
            kept.append(row)
            continue
        changed = [
            f
            for f in compared
            if getattr(stored, f) != row[f] and not (f == "title" and not row[f] and not stored.title)
        ]
        if changed:
            raise error_at(
                record.origin,
                f"{what} id {record.id!r} already exists in the collection with a different {', '.join(changed)}",
            )
    return kept


def _import_qrels(session, collection_id, source, qrels_name, summary, tick) -> int | None:
    stream: Callable[[], Iterator[QrelEntry]] = source.qrels
    iterator = stream()
    first = next(iterator, None)
    if first is None:
        return None
    version = session.scalar(
        select(QrelsVersion).where(QrelsVersion.collection_id == collection_id, QrelsVersion.name == qrels_name)
    )
    existing: dict[tuple[str, str], int] = {}
    if version is None:
        version = QrelsVersion(collection_id=collection_id, name=qrels_name, source="import")
        session.add(version)
        session.flush()
    else:
        if version.status != "ready":
            raise in_progress(f"qrels version {qrels_name!r}")
        if version.source != "import":
            raise ImportConflict(f"qrels version {qrels_name!r} holds frozen labels; import into another version")
        existing = {
            (q, d): g
            for q, d, g in session.execute(
                select(QrelsEntry.query_id, QrelsEntry.doc_id, QrelsEntry.grade).where(
                    QrelsEntry.version_id == version.id
                )
            )
        }
    summary.qrels_version = qrels_name

    def entries() -> Iterator[QrelEntry]:
        yield first
        yield from iterator

    with duplicates_named(stream, lambda e: (e.query_id, e.doc_id), "qrels entry"):
        for chunk in chunks(entries()):
            rows = []
            for e in chunk:
                stored = existing.get((e.query_id, e.doc_id))
                if stored is None:
                    rows.append(
                        {"version_id": version.id, "query_id": e.query_id, "doc_id": e.doc_id, "grade": e.grade}
                    )
                elif stored != e.grade:
                    raise error_at(
                        e.origin,
                        f"qrels entry ({e.query_id!r}, {e.doc_id!r}) already has grade {stored} in version "
                        f"{qrels_name!r}, this file says {e.grade}",
                    )
                else:
                    summary.qrels_skipped += 1
            if rows:
                session.execute(insert(QrelsEntry), rows)
            summary.qrels_added += len(rows)
            tick("qrels", len(chunk))
    return version.id


def import_run(
    session: Session,
    collection_id: int,
    run_name: str,
    stream: Callable[[], Iterator[RunEntry]],
    tick: Progress,
    *,
    source: str = "import",
    params: dict[str, Any] | None = None,
) -> int:
    """Store a run and its entries in the caller's transaction.

    Parameters
    ----------
    session : Session
        The caller's session; an error rolls back with its transaction.
    collection_id : int
        The collection's row id.
    run_name : str
        The new run's name; a run of that name in the collection is refused.
    stream : callable
        Returns a fresh iterator of the run's entries (read again to name a duplicate's line).
    tick : callable
        ``tick(stage, n)`` after each chunk.
    source : str
        What made the run, as recorded (``"import"``, ``"retriever"``, ...).
    params : dict, optional
        The parameters that made it, recorded with it.

    Returns
    -------
    int
        The entries stored.

    Raises
    ------
    ImportConflict
        The collection already has a run of that name.
    FormatError
        A (query, passage) pair repeats, naming the line.
    """
    clash = session.scalar(
        select(RunRecord.id).where(RunRecord.collection_id == collection_id, RunRecord.name == run_name)
    )
    if clash is not None:
        raise ImportConflict(f"run {run_name!r} already exists in this collection; import it under another name")
    run = RunRecord(collection_id=collection_id, name=run_name, source=source, params=params or {})
    session.add(run)
    session.flush()
    count = 0
    with duplicates_named(stream, lambda e: (e.query_id, e.doc_id), "run entry"):
        for chunk in chunks(stream()):
            session.execute(
                insert(RunEntryRecord),
                [{"run_id": run.id, "query_id": e.query_id, "doc_id": e.doc_id, "score": e.score} for e in chunk],
            )
            count += len(chunk)
            tick(f"run {run_name}", len(chunk))
    return count


def collection_language(session: Session, collection_id: int) -> str | None:
    """The language of nine passages in ten (of queries when there are no passages), else "mixed"."""
    counts = dict(
        session.execute(
            select(PassageRecord.language, func.count())
            .where(PassageRecord.collection_id == collection_id)
            .group_by(PassageRecord.language)
        ).all()
    )
    if not counts:
        counts = dict(
            session.execute(
                select(QueryRecord.language, func.count())
                .where(QueryRecord.collection_id == collection_id)
                .group_by(QueryRecord.language)
            ).all()
        )
    return majority_language(counts)
