"""What both import paths share: the summary, the errors, names and the relevance level, unknown ids, chunks."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from itertools import islice
from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.errors import FormatError
from core.names import check_name
from core.types import CollectionSource
from db.models import ImportRecord, PassageRecord, QueryRecord
from db.queries import check_relevance_level

CHUNK = 5_000
MODES = ("create", "merge")

T = TypeVar("T")
Progress = Callable[[str, int], None]


StagedProgress = Callable[[str, int, "int | None"], None]
"""``progress(stage, done, total)``: stage is ``"reading"``, ``"checking"`` or ``"writing"``; total is known
only while writing."""

STALE_IMPORT_AFTER = timedelta(minutes=5)
"""A container still ``importing`` whose heartbeat is older than this is a crashed import's leftover."""
STALE_ENV = "POOLJUDGE_IMPORT_STALE_SECONDS"
"""Overrides :data:`STALE_IMPORT_AFTER` (seconds) for :func:`drop_stale_imports` at store open."""


CHECK_ROWS = 2_000


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
        """Every field as JSON-ready data (the import history's counts; a job stores it through :mod:`db.json_codec`)."""
        return asdict(self)


@dataclass(frozen=True)
class ImportRequest:
    """What an import was asked to do: the parameters both import paths share.

    Attributes
    ----------
    name : str
        The collection to import into.
    format, location : str
        Recorded in the import history.
    mode : {"create", "merge"}
        ``create`` refuses an existing collection; ``merge`` adds to it.
    qrels_name : str
        The qrels version that receives the source's judgments.
    allow_unknown_ids : bool
        Accept qrels and run entries naming query or passage ids that neither the input nor the collection holds
        (TREC qrels may judge documents outside the corpus); they are counted in the summary.  By default they are
        refused.  A kind of id the collection holds none of (a collection of qrels and runs only, kept for
        evaluation) is not checked; the summary notes it.
    level : int, optional
        The relevance level of a collection this import creates (binary measures count grade >= level as relevant).
        Default: 1 when the imported qrels have grades and none above 1 (TREC-style binary), else 2.  An existing
        collection keeps its level; a different ``level`` is refused.
    """

    name: str
    format: str
    location: str
    mode: str = "create"
    qrels_name: str = "imported"
    allow_unknown_ids: bool = False
    level: int | None = None

    def history_row(self, collection_id: int, summary: ImportSummary) -> ImportRecord:
        """The row that records this import, with its counts, in the import history."""
        return ImportRecord(
            collection_id=collection_id,
            format=self.format,
            source=self.location,
            mode=self.mode,
            counts=summary.as_dict(),
        )

    def check(self, run_names: Iterable[str]) -> None:
        """Refuse an unknown mode, a name :func:`core.names.check_name` refuses, a bad ``level``."""
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        _check_names(self.name, self.qrels_name, run_names, self.level)


class ImportInProgress(ImportConflict):
    """The name is held by an import that has not finished (or crashed less than a few minutes ago)."""


def in_progress(what: str) -> ImportInProgress:
    """The error for a name an unfinished import holds.

    Parameters
    ----------
    what : str
        The held thing as the message names it (``"collection 'x'"``, ``"run 'bm25'"``).

    Returns
    -------
    ImportInProgress
        To raise; it says how long a crashed import's leftovers block the name.
    """
    minutes = int(STALE_IMPORT_AFTER.total_seconds() // 60)
    return ImportInProgress(
        f"an import of {what} is in progress (or crashed less than {minutes} minutes ago: its leftovers are "
        "removed the next time the store is opened after that); wait for it to finish or choose another name"
    )


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
    name = check_name(name, "run name")
    if _EXTENSION_ONLY.fullmatch(name):
        raise ValueError(
            f"run name {name!r} is only a file extension (its file has no name before the extension); "
            "rename the file or give the run a name (--run-name)"
        )
    return name


def _check_names(name: str, qrels_name: str, run_names: Iterable[str], level: int | None) -> None:
    check_name(name, "collection name")
    check_name(qrels_name, "qrels version name")
    for run_name in run_names:
        check_run_name(run_name)
    if level is not None:
        check_relevance_level(level, "level")


def named_run(source: CollectionSource, run_name: str | None) -> CollectionSource:
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


_IMPORT_HINT = (
    "nothing was imported: correct the ids, or import with unknown ids allowed (--allow-unknown-ids; "
    "TREC qrels may judge documents outside the corpus)"
)
RUN_HINT = "nothing was stored: correct the ids, or store the run with allow_unknown_ids=True"


def unknown_outcome(
    unknown: list[UnknownIds],
    summary: ImportSummary,
    *,
    allow: bool,
    what: str,
    origin_known: bool = True,
    hint: str = _IMPORT_HINT,
) -> None:
    """Refuse (default) or record in ``summary`` the unknown ids found; note kinds that could not be checked."""
    found = [u for u in unknown if u.count]
    if found and not allow:
        first = found[0].examples[0]
        listing = "; ".join(u.describe() for u in found)
        message = (
            f"{found[0].kind} id {first[0]!r} is not in collection {summary.collection!r} (unknown in {what}: {listing}); "
            + hint
        )
        raise error_at(first[1], message) if origin_known and first[1] else ValueError(message)
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


def known_in_store(
    session: Session, collection_id: int, model: type[QueryRecord] | type[PassageRecord], ids: list[str]
) -> set[str]:
    """Which of ``ids`` the collection holds as ``model`` rows (queries or passages).

    Parameters
    ----------
    session : Session
        The session to read in.
    collection_id : int
        The collection's row id.
    model : type
        :class:`~db.models.QueryRecord` or :class:`~db.models.PassageRecord`.
    ids : list of str
        External ids to look up; callers pass at most :data:`CHECK_ROWS` at a time.

    Returns
    -------
    set of str
        The ids found.
    """
    return set(session.scalars(select(model.ext_id).where(model.collection_id == collection_id, model.ext_id.in_(ids))))


def collection_has_rows(
    session: Session, collection_id: int | None, model: type[QueryRecord] | type[PassageRecord]
) -> bool:
    """Whether the collection holds any ``model`` row (unknown ids of a kind it holds none of go unchecked).

    Parameters
    ----------
    session : Session
        The session to read in.
    collection_id : int or None
        The collection's row id; ``None`` (a collection not created yet) holds nothing.
    model : type
        :class:`~db.models.QueryRecord` or :class:`~db.models.PassageRecord`.

    Returns
    -------
    bool
    """
    if collection_id is None:
        return False
    return session.scalar(select(model.id).where(model.collection_id == collection_id).limit(1)) is not None


def unknown_in_session(
    session: Session, collection_id: int, references: dict[str, dict[str, str | None]]
) -> list[UnknownIds]:
    """The referenced ids (``{"query": {id: origin}, "passage": {...}}``, in order of first use) the collection lacks."""
    result = []
    for kind, model in (("query", QueryRecord), ("passage", PassageRecord)):
        unknown = UnknownIds(kind)
        if not collection_has_rows(session, collection_id, model):
            unknown.checked = False
        else:
            items = list(references[kind].items())
            for start in range(0, len(items), CHECK_ROWS):
                chunk = items[start : start + CHECK_ROWS]
                unknown.add(chunk, known_in_store(session, collection_id, model, [i for i, _ in chunk]))
        result.append(unknown)
    return result


def referenced_ids(streams: Iterable[Iterable[Any]]) -> dict[str, dict[str, str | None]]:
    """The query and passage ids that qrels or run entries name, each with the origin of its first use."""
    refs: dict[str, dict[str, str | None]] = {"query": {}, "passage": {}}
    for stream in streams:
        for e in stream:
            refs["query"].setdefault(e.query_id, e.origin)
            refs["passage"].setdefault(e.doc_id, e.origin)
    return refs


def chunks(items: Iterable[T], size: int = CHUNK) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last one shorter), read lazily.

    Parameters
    ----------
    items : iterable
        Any iterable, a stream read once included.
    size : int
        Items per list.

    Yields
    ------
    list
        The next at most ``size`` items.
    """
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def error_at(origin: str | None, message: str) -> FormatError:
    """The :class:`~core.errors.FormatError` for a record read at ``origin``.

    Parameters
    ----------
    origin : str or None
        The record's ``"file:line"`` (optionally followed by a space and a detail), or ``None``.
    message : str
        What is wrong.

    Returns
    -------
    FormatError
        Naming the file and line when ``origin`` has them, else ``origin`` (or ``<input>``) alone.
    """
    if origin and ":" in origin:
        # "file:line" or "file:line detail" (qa-jsonl marks its positive_wrong passages that way)
        path, _, where = origin.rpartition(":")
        line, _, detail = where.partition(" ")
        if line.isdigit():
            return FormatError(path, int(line), f"{message} ({detail})" if detail else message)
    return FormatError(origin or "<input>", None, message)


def first_duplicate(records: Iterable[Any], key: Callable[[Any], Any], what: str) -> FormatError | None:
    """Re-read a stream to name the line of the first repeated key (only on the error path)."""
    first_seen: dict[Any, str | None] = {}
    for record in records:
        k = key(record)
        if k in first_seen:
            return error_at(record.origin, f"duplicate {what} {k!r} (first at {first_seen[k]})")
        first_seen[k] = record.origin
    return None


@contextmanager
def duplicates_named(records: Callable[[], Iterable[Any]], key: Callable[[Any], Any], what: str) -> Iterator[None]:
    """Turn a unique-constraint violation while ``records`` are inserted into the error naming the first repeat.

    The stream is re-read only then; a violation the stream itself does not explain is raised unchanged.
    """
    try:
        yield
    except IntegrityError:
        duplicate = first_duplicate(records(), key, what)
        if duplicate is not None:
            raise duplicate from None
        raise


def check_level_of_existing(name: str, stored: int, level: int | None) -> None:
    """An explicit level applies to a collection the import creates; an existing one keeps its own."""
    if level is not None and level != stored:
        raise ValueError(
            f"level {level} given, but collection {name!r} exists with relevance level {stored}: the level is set "
            "when an import creates a collection; change it with `pooljudge level` or in the app"
        )


PASSAGE_FIELDS = ("doc_id", "position", "title", "text")
QUERY_FIELDS = ("text", "split", "type", "domain", "translation", "answers")


def majority_language(counts: dict[str | None, int]) -> str | None:
    """A collection's language from the counts of its records' languages.

    Parameters
    ----------
    counts : dict
        ``{language or None: records}``; the ``None`` entry (no language) is removed from it.

    Returns
    -------
    str or None
        The language of nine records in ten, ``"mixed"`` when none reaches that, ``None`` when no record has one.
    """
    counts.pop(None, None)
    if not counts:
        return None
    # A Chinese news corpus quotes the odd English snippet: call a collection by
    # its language when that covers nine passages in ten, "mixed" otherwise.
    language, top = max(counts.items(), key=lambda item: item[1])
    return language if top >= 0.9 * sum(counts.values()) else "mixed"


@dataclass
class Plan:
    """What the store already holds for this import, read before the input is."""

    collection_id: int | None = None  # an existing, ready collection (merge)
    language: str | None = None
    relevance_level: int | None = None
    version_id: int | None = None  # an existing qrels version to merge into
    version_source: str | None = None


@dataclass
class Owned:
    """The containers this import created (``importing`` until the flip): dropped again on failure."""

    collection: int | None = None
    version: int | None = None
    runs: dict[str, int] = field(default_factory=dict)
