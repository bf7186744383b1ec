"""Shapes shared by every part of pooljudge (see DESIGN.md, "Shapes everyone shares").

ids are ``str`` everywhere.  ``Qrels`` and ``Run`` are the plain
dict-of-dict shape used by pytrec_eval, ranx and ir_measures.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

Qrels = dict[str, dict[str, int]]
"""``{query_id: {doc_id: grade}}``."""

Run = dict[str, dict[str, float]]
"""``{query_id: {doc_id: score}}``."""

SPLITS = ("train", "dev", "test")


@dataclass(slots=True)
class Passage:
    """One retrievable unit of a collection.

    ``doc_id`` is the document the passage came from and ``position`` its
    0-based order within that document (``None`` when the source has no
    document structure).  ``origin`` is ``"file:line"`` of the record in its
    source, used only in error messages.
    """

    id: str
    text: str
    title: str = ""
    doc_id: str | None = None
    position: int | None = None
    language: str | None = None
    origin: str | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class Query:
    """A query (topic).

    ``answers`` holds the reference answers when the source has them
    (DuReader, RGB); an element is either a string or a list of equivalent
    alternative strings, kept exactly as the source gave them.
    """

    id: str
    text: str
    split: str = "test"
    type: str | None = None
    domain: str | None = None
    language: str | None = None
    translation: str | None = None
    answers: list[Any] | None = None
    origin: str | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class QrelEntry:
    """One graded judgment ``(query, doc) -> grade`` from a qrels file."""

    query_id: str
    doc_id: str
    grade: int
    origin: str | None = field(default=None, compare=False, repr=False)


@dataclass(slots=True)
class RunEntry:
    """One retrieved ``(query, doc, score)``; the rank column of a run file is not kept."""

    query_id: str
    doc_id: str
    score: float
    origin: str | None = field(default=None, compare=False, repr=False)


@dataclass
class CollectionSource:
    """Everything a reader found in a source, as re-iterable streams.

    Each attribute is a zero-argument callable returning a fresh iterator, so
    the importer can stream a file of any size and, on an error, read it again
    to locate the offending line without ever holding the file in memory.

    ``runs`` maps a run name to its stream.  ``language`` is the collection's
    language when the format implies one (``"en"``, ``"zh"``) or ``None``.
    ``notes`` collects what a reader accepted but the user should hear about
    (unknown keys it ignored, one line each); streams are re-read, so a reader
    adds a note once, and the importer reads the notes after the streams.
    """

    passages: Callable[[], Iterator[Passage]]
    queries: Callable[[], Iterator[Query]]
    qrels: Callable[[], Iterator[QrelEntry]]
    runs: dict[str, Callable[[], Iterator[RunEntry]]] = field(default_factory=dict)
    language: str | None = None
    description: str = ""
    notes: list[str] = field(default_factory=list)


def empty_stream() -> Iterator[Any]:
    """An iterator with nothing in it (for sources lacking a part)."""
    return iter(())
