"""db.version_summary: each qrels version's origin and size, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer import import_collection
from db.queries import NotFound
from db.resolution import freeze_qrels
from db.version_summary import version_summaries


def _collection(store, name: str, judged: int) -> None:
    passages = [Passage(f"d{i}", f"text {i}") for i in range(judged)]
    source = CollectionSource(
        passages=lambda: iter(passages),
        queries=lambda: iter([Query("q1", "a query", split="test")]),
        qrels=lambda: iter([QrelEntry("q1", p.id, i % 4) for i, p in enumerate(passages)]),
    )
    with store.write() as s:
        import_collection(s, source, name=name, format="test", location="mem")


def test_versions_with_origin_and_judgments_oldest_first(store):
    _collection(store, "big", 7)
    _collection(store, "other", 3)  # its entries are not counted for "big"
    with store.write() as s:
        assert freeze_qrels(s, "big", "pool-labels") == 0  # nobody labelled: an empty snapshot
    with store.read() as s:
        found = version_summaries(s, "big")
        other = version_summaries(s, "other")
    assert [(v.name, v.source, v.judgments) for v in found.values()] == [
        ("imported", "import", 7),
        ("pool-labels", "frozen", 0),
    ]
    assert found["imported"].created_at <= found["pool-labels"].created_at
    assert [(v.name, v.judgments) for v in other.values()] == [("imported", 3)]


def test_an_unknown_collection_is_named(store):
    with store.read() as s, pytest.raises(NotFound, match="no collection named 'nope'"):
        version_summaries(s, "nope")
