"""Load a :class:`core.types.CollectionSource` into the store.

Two ways in:

:func:`import_path` / :func:`import_source` (the CLI, the app's import jobs)
    Never hold the write lock while reading.  The whole input is parsed and
    validated first, streamed into a private staging file (a temporary SQLite
    database, so the input never has to fit in memory); every strict reader's
    ``file:line`` error, every duplicate and every merge conflict is found
    there, before the store is touched.  The rows are then written in short
    write transactions (chunks sized to take ~50 ms each) into containers
    (collection, runs, qrels version) created with ``status='importing'``,
    which every reader ignores; one last short transaction flips them to
    ``ready`` and records the import.  Other writers (annotators) wait at
    most one chunk.  A crash leaves only invisible containers whose
    ``staged_at`` heartbeat stops; :func:`drop_stale_imports`, called when a
    store is opened, deletes them in chunks.

:func:`import_collection` (small in-memory sources: the demo, tests)
    Runs in the caller's transaction (``with store.write() as session:``);
    an exception rolls everything back.

Either way a failed import leaves the store exactly as it was, a re-import
into an existing collection is refused unless ``mode="merge"``, and a merge
adds what is new, skips what is identical, and refuses (naming
``file:line``) any record whose id already exists with different content.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import Engine, delete, func, insert, or_, select, tuple_, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.errors import FormatError
from core.lang import detect_language
from core.names import check_name
from core.types import CollectionSource, Passage, QrelEntry, Query, Run, RunEntry
from db.models import (
    Collection,
    ImportRecord,
    Passage as PassageRow,
    QrelsEntry,
    QrelsVersion,
    QueryRecord,
    RunEntryRecord,
    RunRecord,
    utcnow,
)

if TYPE_CHECKING:
    from db.engine import Store

CHUNK = 5_000
MODES = ("create", "merge")

T = TypeVar("T")
Progress = Callable[[str, int], None]


class ImportConflict(ValueError):
    """The import would overwrite or duplicate something already in the store."""


@dataclass
class ImportSummary:
    collection: str
    passages_added: int = 0
    passages_skipped: int = 0
    queries_added: int = 0
    queries_skipped: int = 0
    qrels_added: int = 0
    qrels_skipped: int = 0
    qrels_version: str | None = None
    runs: dict[str, int] = field(default_factory=dict)
    relevance_level: int | None = None
    """The collection's relevance level: set by this import when it created the collection, else the stored one."""
    unknown_query_ids: int = 0
    """Distinct query ids in the qrels and runs that the collection lacks (kept: ``allow_unknown_ids``)."""
    unknown_passage_ids: int = 0
    """Distinct passage ids in the qrels and runs that the collection lacks (kept: ``allow_unknown_ids``)."""
    notes: list[str] = field(default_factory=list)
    """What the reader accepted but the user should hear about, and what the importer could not check."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "passages_added": self.passages_added,
            "passages_skipped": self.passages_skipped,
            "queries_added": self.queries_added,
            "queries_skipped": self.queries_skipped,
            "qrels_added": self.qrels_added,
            "qrels_skipped": self.qrels_skipped,
            "qrels_version": self.qrels_version,
            "runs": dict(self.runs),
            "relevance_level": self.relevance_level,
            "unknown_query_ids": self.unknown_query_ids,
            "unknown_passage_ids": self.unknown_passage_ids,
            "notes": list(self.notes),
        }


# --------------------------------------------------------------------------- names, ids and the relevance level

BINARY_LEVEL, GRADED_LEVEL = 1, 2
"""The relevance level an import gives a new collection: 1 when its qrels have grades and none above 1 (TREC-style
binary qrels), else 2 (the 4-level scale: "partly satisfies" and above count as relevant)."""

UNKNOWN_EXAMPLES = 5
"""How many unknown ids an error or a note names."""

# A run named after a file that is only an extension (".trec", "runs/.run.gz"): its name says nothing.
_EXTENSION_ONLY = re.compile(r"\.(trec|run|txt|tsv|jsonl?|gz)", re.IGNORECASE)


def check_run_name(name: object) -> str:
    """:func:`core.names.check_name` for a run, which also refuses a name that is only a file extension.

    Run names default to their file's name without its extension, so a file
    named ``.trec`` would otherwise give a run named ``.trec``: refused, with a
    message asking for a name.
    """
    check_name(name, "run name")
    if _EXTENSION_ONLY.fullmatch(name):  # type: ignore[arg-type]
        raise ValueError(
            f"run name {name!r} is only a file extension (its file has no name before the extension); "
            "rename the file or give the run a name (--run-name)"
        )
    return name  # type: ignore[return-value]


def _check_names(name: str, qrels_name: str, run_names: Iterable[str], level: int | None) -> None:
    check_name(name, "collection name")
    check_name(qrels_name, "qrels version name")
    for run_name in run_names:
        check_run_name(run_name)
    if level is not None:
        from db.queries import check_relevance_level

        check_relevance_level(level, "level")


def _named_run(source: CollectionSource, run_name: str | None) -> CollectionSource:
    """``source`` with its single run renamed ``run_name`` (the source itself is not changed)."""
    if run_name is None:
        return source
    if len(source.runs) != 1:
        raise ValueError(f"run_name names the run of a single-run file; this input has {len(source.runs)} runs")
    # the notes list is shared, not copied: the reader fills it while the streams are read
    return dataclasses.replace(source, runs={run_name: next(iter(source.runs.values()))})


def level_for_grades(count: int, highest: int | None) -> int:
    """The relevance level for a new collection whose imported qrels have ``count`` entries, the highest grade ``highest``."""
    return BINARY_LEVEL if count and highest is not None and highest <= BINARY_LEVEL else GRADED_LEVEL


@dataclass
class UnknownIds:
    """Ids in the qrels and runs that the collection lacks, of one kind (query or passage)."""

    kind: str
    count: int = 0
    examples: list[tuple[str, str | None]] = field(default_factory=list)  # (id, file:line of its first use)
    checked: bool = True  # False: the collection holds none of this kind, so there was nothing to check against

    def add(self, candidates: list[tuple[str, str | None]], known: set[str]) -> None:
        for ext_id, origin in candidates:
            if ext_id not in known:
                self.count += 1
                if len(self.examples) < UNKNOWN_EXAMPLES:
                    self.examples.append((ext_id, origin))

    def describe(self) -> str:
        ids = ", ".join(repr(i) for i, _ in self.examples) + (", ..." if self.count > len(self.examples) else "")
        return f"{self.count} {self.kind} id{'s' if self.count != 1 else ''} ({ids})"


_IMPORT_HINT = ("nothing was imported: correct the ids, or import with unknown ids allowed (--allow-unknown-ids; "
                "TREC qrels may judge documents outside the corpus)")
_RUN_HINT = "nothing was stored: correct the ids, or store the run with allow_unknown_ids=True"


def _unknown_outcome(unknown: list[UnknownIds], summary: ImportSummary, *, allow: bool, what: str,
                     origin_known: bool = True, hint: str = _IMPORT_HINT) -> None:
    """Refuse (default) or record in ``summary`` the unknown ids found; note kinds that could not be checked."""
    found = [u for u in unknown if u.count]
    if found and not allow:
        first = found[0].examples[0]
        listing = "; ".join(u.describe() for u in found)
        message = (
            f"{found[0].kind} id {first[0]!r} is not in collection {summary.collection!r} (unknown in {what}: {listing}); "
            + hint
        )
        raise _error_at(first[1], message) if origin_known and first[1] else ValueError(message)
    for u in unknown:
        if u.kind == "query":
            summary.unknown_query_ids = u.count
        else:
            summary.unknown_passage_ids = u.count
    if found:
        summary.notes.append(f"kept unknown ids (allowed) in {what}: " + "; ".join(u.describe() for u in found))
    for u in unknown:
        if not u.checked:
            summary.notes.append(
                f"{u.kind} ids in {what} were not checked: the collection holds no "
                f"{'queries' if u.kind == 'query' else 'passages'}"
            )


def _known_in_store(session: Session, collection_id: int, model, ids: list[str]) -> set[str]:
    return set(session.scalars(select(model.ext_id).where(model.collection_id == collection_id, model.ext_id.in_(ids))))


def _has_rows(session: Session, collection_id: int | None, model) -> bool:
    if collection_id is None:
        return False
    return session.scalar(select(model.id).where(model.collection_id == collection_id).limit(1)) is not None


def _unknown_in_session(session: Session, collection_id: int, references: dict[str, dict[str, str | None]]) -> list[UnknownIds]:
    """The referenced ids (``{"query": {id: origin}, "passage": {...}}``, in order of first use) the collection lacks."""
    result = []
    for kind, model in (("query", QueryRecord), ("passage", PassageRow)):
        unknown = UnknownIds(kind)
        if not _has_rows(session, collection_id, model):
            unknown.checked = False
        else:
            items = list(references[kind].items())
            for start in range(0, len(items), CHECK_ROWS):
                chunk = items[start:start + CHECK_ROWS]
                unknown.add(chunk, _known_in_store(session, collection_id, model, [i for i, _ in chunk]))
        result.append(unknown)
    return result


def _references(streams: Iterable[Iterable[Any]]) -> dict[str, dict[str, str | None]]:
    """The query and passage ids that qrels or run entries name, each with the origin of its first use."""
    refs: dict[str, dict[str, str | None]] = {"query": {}, "passage": {}}
    for stream in streams:
        for e in stream:
            refs["query"].setdefault(e.query_id, e.origin)
            refs["passage"].setdefault(e.doc_id, e.origin)
    return refs


def _chunks(items: Iterable[T], size: int = CHUNK) -> Iterator[list[T]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _error_at(origin: str | None, message: str) -> FormatError:
    if origin and ":" in origin:
        # "file:line" or "file:line detail" (qa-jsonl marks its positive_wrong passages that way)
        path, _, where = origin.rpartition(":")
        line, _, detail = where.partition(" ")
        if line.isdigit():
            return FormatError(path, int(line), f"{message} ({detail})" if detail else message)
    return FormatError(origin or "<input>", None, message)


def _first_duplicate(records: Iterable[Any], key: Callable[[Any], Any], what: str) -> FormatError | None:
    """Re-read a stream to name the line of the first repeated key (only on the error path)."""
    first_seen: dict[Any, str | None] = {}
    for record in records:
        k = key(record)
        if k in first_seen:
            return _error_at(record.origin, f"duplicate {what} {k!r} (first at {first_seen[k]})")
        first_seen[k] = record.origin
    return None


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
    """Import ``source`` into the collection ``name``.

    Parameters
    ----------
    session : Session
        A session inside a write transaction owned by the caller.
    source : CollectionSource
        Streams produced by a reader in :mod:`core.formats`.
    name : str
        Collection name.
    format, location : str
        Recorded in the import history.
    mode : {"create", "merge"}
        ``create`` refuses an existing collection; ``merge`` adds to it.
    qrels_name : str
        The qrels version that receives the source's judgments.
    progress : callable, optional
        Called as ``progress(part, n)`` after each chunk of ``n`` records.
    allow_unknown_ids, level
        As in :func:`import_source`.

    Returns
    -------
    ImportSummary

    Raises
    ------
    FormatError
        A record that is malformed, duplicated, or conflicts with the store;
        a qrels or run entry naming an id the collection lacks.
    ImportConflict
        The collection (or a run of the same name) already exists and the
        mode does not allow adding to it.
    ValueError
        A name :func:`core.names.check_name` refuses, a bad ``level``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    _check_names(name, qrels_name, source.runs, level)
    tick = progress or (lambda _part, _n: None)
    collection = session.scalar(select(Collection).where(Collection.name == name))
    if collection is not None and collection.status != "ready":
        raise _in_progress(f"collection {name!r}")
    if collection is not None and mode == "create":
        raise ImportConflict(
            f"collection {name!r} already exists; import with --merge to add to it, or choose another name"
        )
    if collection is not None:
        _check_level_of_existing(name, collection.relevance_level, level)
    created = collection is None
    if created:
        collection = Collection(name=name, language=source.language, description=source.description)
        session.add(collection)
        session.flush()
    summary = ImportSummary(collection=name)

    _import_passages(session, collection.id, source, mode, summary, tick)
    _import_queries(session, collection.id, source, mode, summary, tick)
    version_id = _import_qrels(session, collection.id, source, qrels_name, summary, tick)
    for run_name, stream in source.runs.items():
        summary.runs[run_name] = _import_run(session, collection.id, run_name, stream, tick)
    summary.notes.extend(source.notes)  # after the streams: readers add notes while they are read
    if summary.qrels_added or summary.qrels_skipped or summary.runs:
        references = _references([source.qrels(), *(stream() for stream in source.runs.values())])
        _unknown_outcome(_unknown_in_session(session, collection.id, references), summary,
                         allow=allow_unknown_ids, what="the qrels and runs")
    if created:
        if level is None:
            count, highest = (0, None) if version_id is None else session.execute(
                select(func.count(), func.max(QrelsEntry.grade)).where(QrelsEntry.version_id == version_id)
            ).one()
            level = level_for_grades(count, highest)
        collection.relevance_level = level
    summary.relevance_level = collection.relevance_level
    if collection.language is None:
        collection.language = _collection_language(session, collection.id)
    session.add(
        ImportRecord(collection_id=collection.id, format=format, source=location, mode=mode, counts=summary.as_dict())
    )
    session.flush()
    return summary


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


_PASSAGE_FIELDS = ("doc_id", "position", "title", "text")
_QUERY_FIELDS = ("text", "split", "type", "domain", "translation", "answers")


def _insert_records(
    session: Session,
    collection_id: int,
    stream: Callable[[], Iterator[Any]],
    *,
    table: type[PassageRow] | type[QueryRecord],
    to_row: Callable[[int, Any], dict[str, Any]],
    compared: tuple[str, ...],
    what: str,
    mode: str,
    tick: Progress,
) -> tuple[int, int]:
    added = skipped = 0
    try:
        for chunk in _chunks(stream()):
            rows = [to_row(collection_id, record) for record in chunk]
            if mode == "merge":
                rows = _drop_existing(session, collection_id, table, chunk, rows, compared, what)
                skipped += len(chunk) - len(rows)
            if rows:
                session.execute(insert(table), rows)
            added += len(rows)
            tick(what, len(chunk))
    except IntegrityError:
        duplicate = _first_duplicate(stream(), lambda r: r.id, f"{what} id")
        if duplicate is not None:
            raise duplicate from None
        raise
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
        changed = [f for f in compared if getattr(stored, f) != row[f] and not (f == "title" and not row[f] and not stored.title)]
        if changed:
            raise _error_at(
                record.origin,
                f"{what} id {record.id!r} already exists in the collection with a different {', '.join(changed)}",
            )
    return kept


def _import_passages(session, collection_id, source, mode, summary, tick) -> None:
    summary.passages_added, summary.passages_skipped = _insert_records(
        session, collection_id, source.passages, table=PassageRow, to_row=_passage_row,
        compared=_PASSAGE_FIELDS, what="passage", mode=mode, tick=tick,
    )


def _import_queries(session, collection_id, source, mode, summary, tick) -> None:
    summary.queries_added, summary.queries_skipped = _insert_records(
        session, collection_id, source.queries, table=QueryRecord, to_row=_query_row,
        compared=_QUERY_FIELDS, what="query", mode=mode, tick=tick,
    )


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
            raise _in_progress(f"qrels version {qrels_name!r}")
        if version.source != "import":
            raise ImportConflict(f"qrels version {qrels_name!r} holds frozen labels; import into another version")
        existing = {
            (q, d): g
            for q, d, g in session.execute(
                select(QrelsEntry.query_id, QrelsEntry.doc_id, QrelsEntry.grade).where(QrelsEntry.version_id == version.id)
            )
        }
    summary.qrels_version = qrels_name

    def entries() -> Iterator[QrelEntry]:
        yield first
        yield from iterator

    try:
        for chunk in _chunks(entries()):
            rows = []
            for e in chunk:
                stored = existing.get((e.query_id, e.doc_id))
                if stored is None:
                    rows.append({"version_id": version.id, "query_id": e.query_id, "doc_id": e.doc_id, "grade": e.grade})
                elif stored != e.grade:
                    raise _error_at(
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
    except IntegrityError:
        duplicate = _first_duplicate(stream(), lambda e: (e.query_id, e.doc_id), "qrels entry")
        if duplicate is not None:
            raise duplicate from None
        raise
    return version.id


def _check_level_of_existing(name: str, stored: int, level: int | None) -> None:
    """An explicit level applies to a collection the import creates; an existing one keeps its own."""
    if level is not None and level != stored:
        raise ValueError(
            f"level {level} given, but collection {name!r} exists with relevance level {stored}: the level is set "
            "when an import creates a collection; change it with `pooljudge level` or in the app"
        )


def _import_run(
    session, collection_id, run_name: str, stream: Callable[[], Iterator[RunEntry]], tick,
    *, source: str = "import", params: dict[str, Any] | None = None,
) -> int:
    clash = session.scalar(
        select(RunRecord.id).where(RunRecord.collection_id == collection_id, RunRecord.name == run_name)
    )
    if clash is not None:
        raise ImportConflict(f"run {run_name!r} already exists in this collection; import it under another name")
    run = RunRecord(collection_id=collection_id, name=run_name, source=source, params=params or {})
    session.add(run)
    session.flush()
    count = 0
    try:
        for chunk in _chunks(stream()):
            session.execute(
                insert(RunEntryRecord),
                [{"run_id": run.id, "query_id": e.query_id, "doc_id": e.doc_id, "score": e.score} for e in chunk],
            )
            count += len(chunk)
            tick(f"run {run_name}", len(chunk))
    except IntegrityError:
        duplicate = _first_duplicate(stream(), lambda e: (e.query_id, e.doc_id), "run entry")
        if duplicate is not None:
            raise duplicate from None
        raise
    return count


def _collection_language(session: Session, collection_id: int) -> str | None:
    """The language of nine passages in ten (of queries when there are no passages), else "mixed"."""
    counts = dict(
        session.execute(
            select(PassageRow.language, func.count()).where(PassageRow.collection_id == collection_id).group_by(PassageRow.language)
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
    return _majority_language(counts)


def _majority_language(counts: dict[str | None, int]) -> str | None:
    counts.pop(None, None)
    if not counts:
        return None
    # A Chinese news corpus quotes the odd English snippet: call a collection by
    # its language when that covers nine passages in ten, "mixed" otherwise.
    language, top = max(counts.items(), key=lambda item: item[1])
    return language if top >= 0.9 * sum(counts.values()) else "mixed"


def save_run(
    session: Session, collection: str, name: str, run: Run, *, source: str = "retriever",
    params: dict[str, Any] | None = None, allow_unknown_ids: bool = False,
) -> int:
    """Store a run produced in this process (e.g. by a retriever); refuses an existing run name.

    Refuses (``ValueError``) a bad run name (:func:`check_run_name`) and, unless ``allow_unknown_ids``,
    a run naming query or passage ids the collection lacks.  Returns the number of entries stored.
    """
    from db.queries import collection_id

    check_run_name(name)
    cid = collection_id(session, collection)
    _check_run_ids(run, collection, name, allow_unknown_ids,
                   lambda kind, model, ids: _known_in_store(session, cid, model, ids),
                   lambda model: _has_rows(session, cid, model))
    entries = lambda: (RunEntry(q, d, s) for q, docs in run.items() for d, s in docs.items())  # noqa: E731
    return _import_run(session, cid, name, entries, lambda _part, _n: None, source=source, params=params)


def _check_run_ids(run: Run, collection: str, name: str, allow: bool, known, has_rows) -> None:
    """Refuse a run held in memory that names ids the collection lacks (:func:`save_run`, :func:`store_run`)."""
    if allow:
        return
    refs = {"query": dict.fromkeys(run), "passage": dict.fromkeys(d for docs in run.values() for d in docs)}
    found = []
    for kind, model in (("query", QueryRecord), ("passage", PassageRow)):
        unknown = UnknownIds(kind)
        if has_rows(model):
            items = list(refs[kind].items())
            for start in range(0, len(items), CHECK_ROWS):
                chunk = items[start:start + CHECK_ROWS]
                unknown.add(chunk, known(kind, model, [i for i, _ in chunk]))
        found.append(unknown)
    _unknown_outcome(found, ImportSummary(collection=collection), allow=False, what=f"run {name!r}", origin_known=False,
                     hint=_RUN_HINT)


# =========================================================================== staged imports

StagedProgress = Callable[[str, int, "int | None"], None]
"""``progress(stage, done, total)``: stage is ``"reading"``, ``"checking"`` or ``"writing"``; total is known
only while writing."""

STALE_IMPORT_AFTER = timedelta(minutes=5)
"""A container still ``importing`` whose heartbeat is older than this is a crashed import's leftover."""
STALE_ENV = "POOLJUDGE_IMPORT_STALE_SECONDS"
"""Overrides :data:`STALE_IMPORT_AFTER` (seconds) for :func:`drop_stale_imports` at store open."""
TARGET_TRANSACTION_SECONDS = 0.05
"""Each write transaction of an import aims at this duration: another writer waits at most about that long."""
MIN_ROWS, START_ROWS, MAX_ROWS = 100, 2_000, 20_000
PAUSE_FRACTION = 1.0
"""After each write transaction the import leaves the lock free for this share of the time it held it."""
MIN_PAUSE_SECONDS = 0.01
CHECK_ROWS = 2_000
_SCAN_DEPTH = 3


class ImportInProgress(ImportConflict):
    """The name is held by an import that has not finished (or crashed less than a few minutes ago)."""


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
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
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
        store, read_source(format, path), name=name, format=format, location=os.fspath(path), mode=mode,
        qrels_name=qrels_name, progress=progress, staging_dir=staging_dir, allow_unknown_ids=allow_unknown_ids,
        level=level, run_name=run_name,
    )


@dataclass
class _Plan:
    """What the store already holds for this import, read before the input is."""

    collection_id: int | None = None  # an existing, ready collection (merge)
    language: str | None = None
    relevance_level: int | None = None
    version_id: int | None = None  # an existing qrels version to merge into
    version_source: str | None = None


@dataclass
class _Owned:
    """The containers this import created (``importing`` until the flip): dropped again on failure."""

    collection: int | None = None
    version: int | None = None
    runs: dict[str, int] = field(default_factory=dict)


@dataclass
class _Counts:
    passages: int = 0
    queries: int = 0
    qrels: int = 0
    runs: dict[str, int] = field(default_factory=dict)


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
    name : str
        Collection name.
    format, location : str
        Recorded in the import history.
    mode : {"create", "merge"}
        ``create`` refuses an existing collection; ``merge`` adds to it.
    qrels_name : str
        The qrels version that receives the source's judgments.
    progress : callable, optional
        ``progress(stage, done, total)`` (see :data:`StagedProgress`).
    staging_dir : path, optional
        Where the temporary staging database goes (default: the system's temporary folder).
    chunk_rows : int, optional
        A fixed number of rows per write transaction instead of the adaptive ~50 ms chunks.
    allow_unknown_ids : bool
        Accept qrels and run entries naming query or passage ids that neither the input nor the collection
        holds (TREC qrels may judge documents outside the corpus); they are counted in the summary.  By default
        they are refused.  A kind of id the collection holds none of (a collection of qrels and runs only,
        kept for evaluation) is not checked; the summary notes it.
    level : int, optional
        The relevance level of a collection this import creates (binary measures count grade >= level as
        relevant).  Default: 1 when the imported qrels have grades and none above 1 (TREC-style binary),
        else 2.  An existing collection keeps its level; a different ``level`` is refused.
    run_name : str, optional
        The name of the run of a single-run input (a ``trec-run`` or ``json-run`` file), instead of the one
        derived from its file name.

    Returns
    -------
    ImportSummary

    Raises
    ------
    FormatError
        A record that is malformed, duplicated, or conflicts with the store; a qrels or run entry naming an
        unknown id (the first one's ``file:line``, with the counts); nothing was written.
    ImportConflict
        The collection (or a run of the same name) already exists and the mode does not allow adding to
        it; :class:`ImportInProgress` when an unfinished import holds the name.
    ValueError
        A name :func:`core.names.check_name` refuses (:func:`check_run_name` for runs), a bad ``level``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    if run_name is not None:
        check_run_name(run_name)
    source = _named_run(source, run_name)
    _check_names(name, qrels_name, source.runs, level)
    tick = progress or (lambda _stage, _done, _total: None)
    with store.read() as session:
        plan = _plan(session, name, mode, qrels_name, list(source.runs))
    if plan.collection_id is not None:
        _check_level_of_existing(name, plan.relevance_level, level)
    summary = ImportSummary(collection=name)
    owned = _Owned()
    # The names are taken before the input is read: a second import of the same name (a double click on
    # the Import button) is refused at once, not after reading everything.  Until the flip the
    # containers are invisible, and a validation error drops them again.
    _reserve(store, source, plan, owned, name=name, mode=mode, qrels_name=qrels_name)
    try:
        beating = _beating(store, owned, tick)
        with _Staging(staging_dir) as staging:
            counts = _stage_source(staging, source, beating)
            if counts.qrels and plan.version_source not in (None, "import"):
                raise ImportConflict(f"qrels version {qrels_name!r} holds frozen labels; import into another version")
            summary.passages_skipped, summary.queries_skipped, summary.qrels_skipped = (
                _check_against_store(store, staging, plan, qrels_name, beating)
                if plan.collection_id is not None else (0, 0, 0)
            )
            summary.passages_added = counts.passages - summary.passages_skipped
            summary.queries_added = counts.queries - summary.queries_skipped
            summary.qrels_added = counts.qrels - summary.qrels_skipped
            summary.qrels_version = qrels_name if counts.qrels else None
            summary.runs = dict(counts.runs)
            summary.notes.extend(source.notes)  # after the streams: readers add notes while they are read
            if counts.qrels or counts.runs:
                _unknown_outcome(_staged_unknown(store, staging, plan, beating), summary,
                                 allow=allow_unknown_ids, what="the qrels and runs")
            if plan.collection_id is None:
                summary.relevance_level = level if level is not None else level_for_grades(
                    *staging.db.execute("SELECT count(*), max(grade) FROM qrels").fetchone())
            else:
                summary.relevance_level = plan.relevance_level
            _write_staged(store, staging, source, plan, owned, summary, tick, chunk_rows,
                          format=format, location=location, mode=mode, qrels_name=qrels_name)
    except BaseException:
        _drop_owned(_writer(store.engine), owned)
        raise
    return summary


HEARTBEAT_SECONDS = 15.0
"""While the input is read, the reserved containers' heartbeat is refreshed this often (one tiny write)."""


def _beating(store: Store, owned: _Owned, tick: StagedProgress) -> StagedProgress:
    """``tick`` that also keeps the reserved containers fresh while the input is read and checked."""
    last = [time.monotonic()]

    def progress(stage: str, done: int, total: int | None) -> None:
        if time.monotonic() - last[0] >= HEARTBEAT_SECONDS:
            with store.write() as session:
                _heartbeat(session, owned)
            last[0] = time.monotonic()
        tick(stage, done, total)

    return progress


def _reserve(store: Store, source: CollectionSource, plan: _Plan, owned: _Owned, *, name: str, mode: str,
             qrels_name: str) -> None:
    """Create the new collection (when there is none) and the runs, all ``importing``, in one short transaction."""
    try:
        with store.write() as session:
            now = utcnow()
            cid = plan.collection_id
            if cid is None:
                cid = session.execute(
                    insert(Collection).values(name=name, language=source.language, description=source.description,
                                              status="importing", staged_at=now)
                ).inserted_primary_key[0]
            runs = {
                run_name: session.execute(
                    insert(RunRecord).values(collection_id=cid, name=run_name, source="import", params={},
                                             status="importing", staged_at=now)
                ).inserted_primary_key[0]
                for run_name in source.runs
            }
    except IntegrityError:
        # Another import took one of the names since they were checked: say which holder it is.
        with store.read() as session:
            _plan(session, name, mode, qrels_name, list(source.runs))
        raise ImportConflict(f"collection {name!r} changed while this import was starting; run it again") from None
    if plan.collection_id is None:
        owned.collection = cid
    owned.runs.update(runs)


def _in_progress(what: str) -> ImportInProgress:
    minutes = int(STALE_IMPORT_AFTER.total_seconds() // 60)
    return ImportInProgress(
        f"an import of {what} is in progress (or crashed less than {minutes} minutes ago: its leftovers are "
        "removed the next time the store is opened after that); wait for it to finish or choose another name"
    )


def _plan(session: Session, name: str, mode: str, qrels_name: str, run_names: list[str]) -> _Plan:
    row = session.execute(
        select(Collection.id, Collection.status, Collection.language, Collection.relevance_level)
        .where(Collection.name == name)
    ).first()
    if row is not None and row.status != "ready":
        raise _in_progress(f"collection {name!r}")
    if row is not None and mode == "create":
        raise ImportConflict(
            f"collection {name!r} already exists; import with --merge to add to it, or choose another name"
        )
    if row is None:
        return _Plan()
    plan = _Plan(collection_id=row.id, language=row.language, relevance_level=row.relevance_level)
    version = session.execute(
        select(QrelsVersion.id, QrelsVersion.source, QrelsVersion.status)
        .where(QrelsVersion.collection_id == row.id, QrelsVersion.name == qrels_name)
    ).first()
    if version is not None:
        if version.status != "ready":
            raise _in_progress(f"qrels version {qrels_name!r}")
        plan.version_id, plan.version_source = version.id, version.source
    for run_name in run_names:
        status = session.scalar(select(RunRecord.status).where(RunRecord.collection_id == row.id, RunRecord.name == run_name))
        if status == "ready":
            raise ImportConflict(f"run {run_name!r} already exists in this collection; import it under another name")
        if status is not None:
            raise _in_progress(f"run {run_name!r}")
    return plan


# --------------------------------------------------------------------------- the staging file

_STAGING_SCHEMA = """
CREATE TABLE passages (ext_id TEXT PRIMARY KEY, doc_id TEXT, position INTEGER, title TEXT, text TEXT,
                       language TEXT, origin TEXT, skip INTEGER NOT NULL DEFAULT 0);
CREATE TABLE queries (ext_id TEXT PRIMARY KEY, text TEXT, split TEXT, type TEXT, domain TEXT, language TEXT,
                      translation TEXT, answers TEXT, origin TEXT, skip INTEGER NOT NULL DEFAULT 0);
CREATE TABLE qrels (query_id TEXT, doc_id TEXT, grade INTEGER, origin TEXT, skip INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (query_id, doc_id));
CREATE TABLE run_entries (run INTEGER, query_id TEXT, doc_id TEXT, score REAL, origin TEXT,
                          PRIMARY KEY (run, query_id, doc_id));
"""


class _Staging:
    """A throw-away SQLite file holding the validated input; its primary keys find duplicates.

    It is private to this process (no WAL, no journal, no fsync): losing it in
    a crash loses nothing, and it is deleted when the import ends either way.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="pooljudge-import-", suffix=".sqlite", dir=directory)
        os.close(fd)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _STAGING_SCHEMA)

    def __enter__(self) -> _Staging:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.db.close()
        for suffix in ("", "-journal"):
            try:
                os.unlink(self.path + suffix)
            except FileNotFoundError:
                pass

    def count(self, table: str, where: str = "skip = 0", params: tuple = ()) -> int:
        return self.db.execute(f"SELECT count(*) FROM {table} WHERE {where}", params).fetchone()[0]


def _stage_source(staging: _Staging, source: CollectionSource, tick: StagedProgress) -> _Counts:
    """Read every stream into the staging file: all parse errors and duplicates surface here."""
    read = [0]

    def stage(table: str, columns: int, stream, to_row, key, what) -> int:
        sql = f"INSERT INTO {table} VALUES ({', '.join('?' * columns)})"
        n = 0
        staging.db.execute("BEGIN")
        try:
            for chunk in _chunks(stream()):
                staging.db.executemany(sql, [to_row(record) for record in chunk])
                n += len(chunk)
                read[0] += len(chunk)
                tick("reading", read[0], None)
        except sqlite3.IntegrityError:
            staging.db.execute("ROLLBACK")
            duplicate = _first_duplicate(stream(), key, what)
            if duplicate is not None:
                raise duplicate from None
            raise
        except BaseException:
            staging.db.execute("ROLLBACK")
            raise
        staging.db.execute("COMMIT")
        return n

    counts = _Counts()
    counts.passages = stage("passages", 8, source.passages, _staged_passage, lambda r: r.id, "passage id")
    counts.queries = stage("queries", 10, source.queries, _staged_query, lambda r: r.id, "query id")
    counts.qrels = stage("qrels", 5, source.qrels, _staged_qrel, lambda e: (e.query_id, e.doc_id), "qrels entry")
    for index, (run_name, stream) in enumerate(source.runs.items()):
        counts.runs[run_name] = stage(
            "run_entries", 5, stream, lambda e, i=index: (i, e.query_id, e.doc_id, e.score, e.origin),
            lambda e: (e.query_id, e.doc_id), "run entry",
        )
    return counts


def _staged_passage(p: Passage) -> tuple:
    return (p.id, p.doc_id, p.position, p.title or "", p.text, p.language or detect_language(p.text[:400] or p.title),
            p.origin, 0)


def _staged_query(q: Query) -> tuple:
    answers = None if q.answers is None else json.dumps(q.answers, ensure_ascii=False)
    return (q.id, q.text, q.split, q.type, q.domain, q.language or detect_language(q.text[:400]), q.translation,
            answers, q.origin, 0)


def _staged_qrel(e: QrelEntry) -> tuple:
    return (e.query_id, e.doc_id, e.grade, e.origin, 0)


def _check_against_store(store: Store, staging: _Staging, plan: _Plan, qrels_name: str, tick: StagedProgress) -> tuple[int, int, int]:
    """Merge: mark records identical to stored ones as skipped, refuse changed ones; read transactions only.

    Returns the numbers of passages, queries and qrels entries skipped.
    """
    done = [0]

    def check(table: str, model, fields: tuple[str, ...], what: str, decode=None) -> int:
        skipped = 0
        last = 0
        while rows := staging.db.execute(
            f"SELECT rowid, ext_id, origin, {', '.join(fields)} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (last, CHECK_ROWS),
        ).fetchall():
            last = rows[-1][0]
            with store.read() as session:
                stored = {
                    r[0]: r[1:]
                    for r in session.execute(
                        select(model.ext_id, *(getattr(model, f) for f in fields))
                        .where(model.collection_id == plan.collection_id, model.ext_id.in_([r[1] for r in rows]))
                    )
                }
            same = []
            for rowid, ext_id, origin, *values in rows:
                old = stored.get(ext_id)
                if old is None:
                    continue
                if decode is not None:
                    values = decode(values)
                changed = [f for f, new, was in zip(fields, values, old)
                           if new != was and not (f == "title" and not new and not was)]
                if changed:
                    raise _error_at(
                        origin, f"{what} id {ext_id!r} already exists in the collection with a different {', '.join(changed)}"
                    )
                same.append((rowid,))
            staging.db.executemany(f"UPDATE {table} SET skip = 1 WHERE rowid = ?", same)
            skipped += len(same)
            done[0] += len(rows)
            tick("checking", done[0], None)
        return skipped

    def decode_answers(values: list) -> list:
        values[-1] = None if values[-1] is None else json.loads(values[-1])
        return values

    passages = check("passages", PassageRow, _PASSAGE_FIELDS, "passage")
    queries = check("queries", QueryRecord, _QUERY_FIELDS, "query", decode_answers)
    qrels = 0
    if plan.version_id is not None and staging.count("qrels", "1"):
        with store.read() as session:
            existing = {
                (q, d): g
                for q, d, g in session.execute(
                    select(QrelsEntry.query_id, QrelsEntry.doc_id, QrelsEntry.grade).where(QrelsEntry.version_id == plan.version_id)
                )
            }
        same = []
        for rowid, query_id, doc_id, grade, origin in staging.db.execute(
            "SELECT rowid, query_id, doc_id, grade, origin FROM qrels ORDER BY rowid"
        ):
            stored = existing.get((query_id, doc_id))
            if stored is None:
                continue
            if stored != grade:
                raise _error_at(
                    origin, f"qrels entry ({query_id!r}, {doc_id!r}) already has grade {stored} in version "
                    f"{qrels_name!r}, this file says {grade}"
                )
            same.append((rowid,))
        staging.db.executemany("UPDATE qrels SET skip = 1 WHERE rowid = ?", same)
        qrels = len(same)
    return passages, queries, qrels


def _staged_unknown(store: Store, staging: _Staging, plan: _Plan, tick: StagedProgress) -> list[UnknownIds]:
    """The ids the staged qrels and runs name that neither the staged input nor the stored collection holds.

    Counted per kind, distinct, with the origin of each id's first use; the stored collection is asked in
    read transactions of :data:`CHECK_ROWS` ids each.
    """
    result = []
    done = 0
    for kind, column, table, model in (("query", "query_id", "queries", QueryRecord),
                                       ("passage", "doc_id", "passages", PassageRow)):
        unknown = UnknownIds(kind)
        result.append(unknown)
        staged_any = staging.db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
        with store.read() as session:
            stored_any = _has_rows(session, plan.collection_id, model)
        if not (staged_any or stored_any):
            unknown.checked = False
            continue
        refs = f"temp.refs_{table}"
        staging.db.execute(f"DROP TABLE IF EXISTS {refs}")
        staging.db.execute(f"CREATE TABLE {refs} (id TEXT PRIMARY KEY, origin TEXT)")
        for referring in ("qrels", "run_entries"):
            # rowid order, first insert wins: each id keeps the origin of its first use
            staging.db.execute(
                f"INSERT OR IGNORE INTO {refs} SELECT {column}, origin FROM {referring} "
                f"WHERE {column} NOT IN (SELECT ext_id FROM {table}) ORDER BY rowid"
            )
        cursor = staging.db.execute(f"SELECT id, origin FROM {refs} ORDER BY rowid")
        while rows := cursor.fetchmany(CHECK_ROWS):
            known: set[str] = set()
            if stored_any:
                with store.read() as session:
                    known = _known_in_store(session, plan.collection_id, model, [r[0] for r in rows])
            unknown.add(rows, known)
            done += len(rows)
            tick("checking", done, None)
        staging.db.execute(f"DROP TABLE {refs}")
    return result


# --------------------------------------------------------------------------- writing in short transactions


class _Chunker:
    """Rows per write transaction, adapted so that each one takes about :data:`TARGET_TRANSACTION_SECONDS`."""

    def __init__(self, fixed: int | None = None) -> None:
        self.fixed = fixed
        self.size = fixed or START_ROWS

    def took(self, rows: int, seconds: float) -> None:
        if self.fixed:
            return
        wanted = rows * TARGET_TRANSACTION_SECONDS / max(seconds, 1e-4)
        self.size = int(min(MAX_ROWS, max(MIN_ROWS, (self.size + wanted) / 2)))


def _yield_lock(held: float) -> None:
    """Leave the write lock free for about as long as the import just held it.

    SQLite queues nobody: a writer that found the lock taken polls it again
    after a back-off growing to 100 ms, so an import that took the lock back
    right after each commit would keep winning and starve it for seconds.  A
    pause as long as the transaction (jittered, so no poller stays in phase
    with the chunks) gives every waiter the lock within a few polls, for about
    half the write throughput.
    """
    time.sleep(max(held, MIN_PAUSE_SECONDS) * PAUSE_FRACTION * random.uniform(0.5, 1.5))


def _heartbeat(session: Session, owned: _Owned) -> None:
    """Refresh ``staged_at`` of this import's containers: a live import never looks like a crashed one.

    Raises ImportConflict when one of them is gone: an import stalled for longer than the staleness
    window was taken for a crashed one and its containers were removed.
    """
    now = utcnow()
    found = expected = 0
    if owned.collection is not None:
        expected += 1
        found += session.execute(update(Collection).where(Collection.id == owned.collection).values(staged_at=now)).rowcount
    if owned.version is not None:
        expected += 1
        found += session.execute(update(QrelsVersion).where(QrelsVersion.id == owned.version).values(staged_at=now)).rowcount
    if owned.runs:
        expected += len(owned.runs)
        found += session.execute(
            update(RunRecord).where(RunRecord.id.in_(list(owned.runs.values()))).values(staged_at=now)
        ).rowcount
    if found != expected:
        raise ImportConflict(
            "this import stalled for longer than the staleness window and its staged rows were removed as a "
            "crashed import's; run it again"
        )


def _write_staged(store: Store, staging: _Staging, source: CollectionSource, plan: _Plan, owned: _Owned,
                  summary: ImportSummary, tick: StagedProgress, chunk_rows: int | None, *, format: str,
                  location: str, mode: str, qrels_name: str) -> None:
    total = summary.passages_added + summary.queries_added + summary.qrels_added + sum(summary.runs.values())
    done = [0]
    tick("writing", 0, total)
    if summary.qrels_version is not None and plan.version_id is None:
        with store.write() as session:
            owned.version = session.execute(
                insert(QrelsVersion).values(collection_id=owned.collection or plan.collection_id, name=qrels_name,
                                            source="import", status="importing", staged_at=utcnow())
            ).inserted_primary_key[0]
    cid = owned.collection or plan.collection_id
    vid = owned.version or plan.version_id
    chunker = _Chunker(chunk_rows)
    # (staging table, the condition on its rows and its parameters, target model, {target column: constant},
    # the staged columns copied, named as in the target)
    parts: list[tuple[str, str, tuple, Any, dict[str, Any], tuple[str, ...]]] = [
        ("passages", "skip = 0", (), PassageRow, {"collection_id": cid},
         ("ext_id", "doc_id", "position", "title", "text", "language")),
        ("queries", "skip = 0", (), QueryRecord, {"collection_id": cid},
         ("ext_id", "text", "split", "type", "domain", "language", "translation", "answers")),
    ]
    if vid is not None:
        parts.append(("qrels", "skip = 0", (), QrelsEntry, {"version_id": vid}, ("query_id", "doc_id", "grade")))
    for index, run_name in enumerate(source.runs):
        parts.append(("run_entries", "run = ?", (index,), RunEntryRecord, {"run_id": owned.runs[run_name]},
                      ("query_id", "doc_id", "score")))
    fast = store.engine.dialect.name == "sqlite"
    try:
        # Passages and queries merged into a ready collection become visible chunk by chunk (there is no
        # per-row status to hide them behind).  They were all validated before the first chunk, so a merge
        # stopped half-way is completed by running it again (what is written is then identical, so skipped);
        # one transaction for them all would hold the write lock for the whole merge, which is what this
        # module exists to avoid.
        with (_SqliteCopier(store.engine, staging) if fast else _GenericCopier(store, staging)) as copier:
            for table, where, params, model, constants, columns in parts:
                last = 0
                top = staging.db.execute(f"SELECT coalesce(max(rowid), 0) FROM {table}").fetchone()[0]
                while last < top:
                    upto = min(top, last + chunker.size)
                    rows, held = copier.copy(table, where, params, (last, upto), model, constants, columns, owned)
                    last = upto
                    chunker.took(max(rows, 1), held)
                    _yield_lock(held)
                    done[0] += rows
                    tick("writing", done[0], total)
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
            language = _collection_language(session, cid)
    with store.write() as session:
        _flip(session, owned, cid, language, level=summary.relevance_level)
        session.add(ImportRecord(collection_id=cid, format=format, source=location, mode=mode, counts=summary.as_dict()))


class _GenericCopier:
    """Any SQLAlchemy dialect: read a chunk from the staging file, insert it with one executemany."""

    def __init__(self, store, staging: _Staging) -> None:
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
            _heartbeat(session, owned)
            started = time.perf_counter()
            session.execute(insert(model), payload)
        return len(rows), time.perf_counter() - started


class _SqliteCopier:
    """SQLite: attach the staging file to one store connection and copy each chunk with INSERT ... SELECT.

    No row passes through Python, so each transaction (and the lock) is held
    for a fraction of the generic path's time.  The connection is discarded
    afterwards rather than returned to the pool with the file still attached.
    """

    def __init__(self, engine: Engine, staging: _Staging) -> None:
        from db.engine import session_factory

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
            _heartbeat(self.connection, owned)
            started = time.perf_counter()
            inserted = self.connection.exec_driver_sql(sql, (*constants.values(), *params, *span)).rowcount
        return inserted, time.perf_counter() - started


def _flip(session: Session, owned: _Owned, cid: int, language: str | None, *, level: int | None = None) -> None:
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
        session.execute(update(Collection).where(Collection.id == cid, Collection.language.is_(None)).values(language=language))
    if owned.version is not None:
        session.execute(update(QrelsVersion).where(QrelsVersion.id == owned.version).values(**ready))
    if owned.runs:
        session.execute(update(RunRecord).where(RunRecord.id.in_(list(owned.runs.values()))).values(**ready))


def _staged_language(staging: _Staging) -> str | None:
    counts = dict(staging.db.execute("SELECT language, count(*) FROM passages GROUP BY language").fetchall())
    if not counts:
        counts = dict(staging.db.execute("SELECT language, count(*) FROM queries GROUP BY language").fetchall())
    return _majority_language(counts)


# --------------------------------------------------------------------------- removing staged containers


def _delete_in_chunks(write, statement: Callable[[int], Any], chunk: int | None) -> None:
    """Run ``statement(n)`` (deleting at most n rows) in its own transaction until it deletes nothing."""
    chunker = _Chunker(chunk)
    while True:
        started = time.perf_counter()
        with write.begin() as session:
            deleted = session.execute(statement(chunker.size)).rowcount
        chunker.took(max(deleted, 1), time.perf_counter() - started)
        if not deleted:
            return


def _drop_run(write, run_id: int, chunk: int | None) -> None:
    e = RunEntryRecord
    _delete_in_chunks(write, lambda n: delete(e).where(
        e.run_id == run_id,
        tuple_(e.query_id, e.doc_id).in_(select(e.query_id, e.doc_id).where(e.run_id == run_id).limit(n)),
    ), chunk)
    with write.begin() as session:
        session.execute(delete(RunRecord).where(RunRecord.id == run_id))


def _drop_version(write, version_id: int, chunk: int | None) -> None:
    e = QrelsEntry
    _delete_in_chunks(write, lambda n: delete(e).where(
        e.version_id == version_id,
        tuple_(e.query_id, e.doc_id).in_(select(e.query_id, e.doc_id).where(e.version_id == version_id).limit(n)),
    ), chunk)
    with write.begin() as session:
        session.execute(delete(QrelsVersion).where(QrelsVersion.id == version_id))


def _drop_collection(write, collection_id: int, chunk: int | None) -> None:
    with write.begin() as session:
        runs = list(session.scalars(select(RunRecord.id).where(RunRecord.collection_id == collection_id)))
        versions = list(session.scalars(select(QrelsVersion.id).where(QrelsVersion.collection_id == collection_id)))
    for run_id in runs:
        _drop_run(write, run_id, chunk)
    for version_id in versions:
        _drop_version(write, version_id, chunk)
    for model in (PassageRow, QueryRecord):
        _delete_in_chunks(write, lambda n, m=model: delete(m).where(
            m.id.in_(select(m.id).where(m.collection_id == collection_id).limit(n))
        ), chunk)
    with write.begin() as session:
        # deleting the row itself cascades only into what is left: nothing big
        session.execute(delete(Collection).where(Collection.id == collection_id))


def _writer(engine: Engine):
    from db.engine import session_factory

    return session_factory(engine, write=True)


def _drop_owned(write, owned: _Owned, chunk: int | None = None) -> None:
    """Best effort: whatever cannot be dropped now stays invisible and goes at a later store open."""
    try:
        _drop_owned_now(write, owned, chunk)
    except Exception:  # noqa: BLE001 - the import's own error is the one to report
        pass


def _drop_owned_now(write, owned: _Owned, chunk: int | None) -> None:
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

    Called whenever a store is opened; it reads three small tables and takes
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
    from db.engine import session_factory

    cutoff = utcnow() - (stale_after if stale_after is not None else _stale_after_default())
    write = _writer(engine)
    with session_factory(engine).begin() as session:
        def stale(model):
            return select(model.id).where(model.status != "ready", or_(model.staged_at.is_(None), model.staged_at < cutoff))

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


def store_run(
    store: Store, collection: str, name: str, run: Run, *, source: str = "retriever",
    params: dict[str, Any] | None = None, chunk_rows: int | None = None, allow_unknown_ids: bool = False,
    publish: bool = True,
) -> int:
    """:func:`save_run` without holding the write lock: the run is written in short transactions, invisible
    (``importing``) until one final flip, so a large retriever run never blocks annotators.

    ``publish=False`` leaves it ``importing``: the caller flips it together with what it belongs to (a
    pool, :func:`pooljudge.pipeline.run_pool_job`) or removes it with :func:`drop_staged_runs`.

    Refuses a bad run name (:func:`check_run_name`), a run name that exists (or is being imported) and, unless
    ``allow_unknown_ids``, a run naming query or passage ids the collection lacks (a retriever's run never
    does).  Returns the number of entries stored.
    """
    from db.queries import collection_id

    check_run_name(name)
    with store.read() as session:
        cid = collection_id(session, collection)
        status = session.scalar(select(RunRecord.status).where(RunRecord.collection_id == cid, RunRecord.name == name))
    if status == "ready":
        raise ImportConflict(f"run {name!r} already exists in this collection; import it under another name")
    if status is not None:
        raise _in_progress(f"run {name!r}")

    def known(_kind, model, ids):
        with store.read() as session:  # one short read per chunk of ids
            return _known_in_store(session, cid, model, ids)

    def has_rows(model):
        with store.read() as session:
            return _has_rows(session, cid, model)

    _check_run_ids(run, collection, name, allow_unknown_ids, known, has_rows)
    owned = _Owned()
    try:
        with store.write() as session:
            owned.runs[name] = session.execute(
                insert(RunRecord).values(collection_id=cid, name=name, source=source, params=params or {},
                                         status="importing", staged_at=utcnow())
            ).inserted_primary_key[0]
    except IntegrityError:
        raise _in_progress(f"run {name!r}") from None
    rid = owned.runs[name]
    entries = ({"run_id": rid, "query_id": q, "doc_id": d, "score": s} for q, docs in run.items() for d, s in docs.items())
    chunker = _Chunker(chunk_rows)
    count = 0
    try:
        while chunk := list(islice(entries, chunker.size)):
            with store.write() as session:
                _heartbeat(session, owned)
                started = time.perf_counter()
                session.execute(insert(RunEntryRecord), chunk)
            held = time.perf_counter() - started
            chunker.took(len(chunk), held)
            _yield_lock(held)
            count += len(chunk)
        if publish:
            with store.write() as session:
                _flip(session, owned, cid, None)
    except BaseException:
        _drop_owned(_writer(store.engine), owned)
        raise
    return count


def drop_staged_runs(store: Store, run_ids: Iterable[int]) -> None:
    """Remove runs :func:`store_run` left ``importing`` (``publish=False``) for a job that failed; best effort."""
    _drop_owned(_writer(store.engine), _Owned(runs={str(i): i for i in run_ids}))
