"""db.queries.passages_by_id: a small select of passages by external id, scoped to one collection."""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Passage, Query
from db.importer import import_collection
from db.queries import NotFound, passages_by_id


def _collection(store, name, passages):
    source = CollectionSource(
        passages=lambda: iter(passages),
        queries=lambda: iter([Query("q1", "query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name=name, format="t", location="m")


def test_passages_by_id_returns_only_the_asked_passages_of_that_collection(store):
    _collection(
        store,
        "a",
        [
            Passage("d1", "one", title="T1", doc_id="D", position=0, language="en"),
            Passage("d2", "two <b>", doc_id="D", position=1),
            Passage("d3", "three"),
        ],
    )
    _collection(store, "b", [Passage("d1", "other collection"), Passage("d9", "nine")])
    with store.read() as s:
        found = passages_by_id(s, "a", ["d2", "d1", "d2", "d9", "missing"])
        assert passages_by_id(s, "a", []) == {}
        chunked = passages_by_id(s, "a", ["d3", "d2", "d1"], chunk=1)
        with pytest.raises(NotFound):
            passages_by_id(s, "nope", ["d1"])
    assert found == {
        "d1": Passage("d1", "one", title="T1", doc_id="D", position=0, language="en"),
        "d2": Passage("d2", "two <b>", title="", doc_id="D", position=1, language="en"),  # detected at import
    }
    assert sorted(chunked) == ["d1", "d2", "d3"] and chunked["d3"].text == "three"


def test_passage_lengths_and_document_layout(store):
    from db.queries import document_layout, passage_lengths

    _collection(
        store,
        "a",
        [
            Passage("d1", "one", doc_id="D", position=0),
            Passage("d2", "中文字符", doc_id="D", position=2),
            Passage("e1", "eee", doc_id="E", position=0),
            Passage("e2", "e", doc_id="E", position=1),
            Passage("f", "free-standing"),
        ],
    )
    _collection(store, "b", [Passage("d1", "other", doc_id="D", position=7)])
    with store.read() as s:
        assert sorted(passage_lengths(s, "a")) == [1, 3, 3, 4, 13]  # characters, not bytes
        layout = document_layout(s, "a", ["d2", "f", "missing"], chunk=1)
    # every passage of D (the document of d2), f alone, nothing of E or of collection b; no text loaded
    assert sorted((p.id, p.doc_id, p.position, p.text) for p in layout) == [
        ("d1", "D", 0, ""),
        ("d2", "D", 2, ""),
        ("f", None, None, ""),
    ]
