"""Shared set-up of the importer tests: an in-memory source, the import tables' row counts, both entry points."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.types import CollectionSource, Passage, QrelEntry, Query, RunEntry
from db.engine import Store
from db.importer import ImportSummary, import_collection, import_source
from db.models import (
    Collection,
    ImportRecord,
    PassageRecord,
    QrelsEntry,
    QrelsVersion,
    QueryRecord,
    RunEntryRecord,
    RunRecord,
)

IMPORT_TABLES = (
    Collection,
    PassageRecord,
    QueryRecord,
    QrelsVersion,
    QrelsEntry,
    RunRecord,
    RunEntryRecord,
    ImportRecord,
)
"""Every table an import writes to."""

T = TypeVar("T")


def memory_source(
    passages: Iterable[Passage] = (),
    queries: Iterable[Query] = (),
    qrels: Iterable[QrelEntry] = (),
    runs: Mapping[str, Iterable[RunEntry]] | None = None,
    *,
    language: str | None = None,
    notes: list[str] | None = None,
) -> CollectionSource:
    """A source whose streams replay the given records (each call starts again, as a reader's does)."""
    return CollectionSource(
        passages=_replay(passages),
        queries=_replay(queries),
        qrels=_replay(qrels),
        runs={name: _replay(entries) for name, entries in (runs or {}).items()},
        language=language,
        notes=notes if notes is not None else [],
    )


def _replay(records: Iterable[T]) -> Callable[[], Iterator[T]]:
    """A stream over ``records``, started again at each call."""
    return lambda: iter(list(records))


def import_table_counts(store: Store) -> dict[str, int]:
    """``{table name: rows}`` of :data:`IMPORT_TABLES`: what a refused import must leave unchanged."""
    with store.read() as s:
        return {t.__tablename__: s.scalar(select(func.count()).select_from(t)) for t in IMPORT_TABLES}


def import_through(entry: str, store: Store, source: CollectionSource, **kwargs: Any) -> ImportSummary:
    """Import with ``entry`` ``"staged"`` (:func:`import_source`) or ``"transaction"`` (:func:`import_collection`)."""
    if entry == "staged":
        return import_source(store, source, **kwargs)
    with store.write() as s:
        return import_collection(s, source, **kwargs)


def import_one_of_each(session: Session, name: str = "c") -> None:
    """Import collection ``name``: passage d1, query q1, the qrel (q1, d1, 1) and run bm25 ranking d1 for q1."""
    import_collection(
        session,
        memory_source(
            [Passage("d1", "x")],
            [Query("q1", "y")],
            [QrelEntry("q1", "d1", 1)],
            {"bm25": [RunEntry("q1", "d1", 1.0)]},
        ),
        name=name,
        format="t",
        location="m",
    )
