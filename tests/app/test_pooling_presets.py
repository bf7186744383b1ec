"""The Pooling page's ready-made dense retrievers name the model the collection's language gets."""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Passage, Query
from db.importer import import_collection
from tests.app.apptest import VIEWS, open_as_admin

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def add_collection(store, name: str, language: str) -> None:
    with store.write() as session:
        import_collection(
            session,
            CollectionSource(
                passages=lambda: iter([Passage("d0", "passage zero"), Passage("d1", "passage one")]),
                queries=lambda: iter([Query("q1", "query one")]),
                qrels=lambda: iter(()),
                language=language,
            ),
            name=name,
            format="test",
            location="mem",
        )


def test_dense_presets_follow_the_collection_language(db):
    add_collection(db, "chinese", "zh")
    add_collection(db, "english", "en")
    at = open_as_admin(db, VIEWS / "pooling.py")
    picker = next(m for m in at.multiselect if m.label == "New retrievers to run")
    assert at.selectbox(key="pooling_collection").value == "chinese"
    assert [o for o in picker.options if o.startswith(("Dense", "Hybrid"))] == [
        "Dense: multilingual-e5-small (packaged, offline)",
        "Hybrid: BM25 + multilingual-e5-small, reciprocal rank fusion",
    ]
    at.selectbox(key="pooling_collection").set_value("english").run()
    picker = next(m for m in at.multiselect if m.label == "New retrievers to run")
    assert "Dense: all-MiniLM-L6-v2 (packaged, offline)" in picker.options


def test_the_demo_pools_its_e5_run_by_default(db, monkeypatch):
    """First start's demo (a mixed collection): the page offers e5 as its dense preset and pools its stored e5 run."""
    from db.jobs import list_jobs
    from pooljudge.seed import DEMO_NAME, ensure_demo
    from tests.app.apptest import record_launches

    launched = record_launches(monkeypatch)
    assert ensure_demo(db)
    at = open_as_admin(db, VIEWS / "pooling.py")
    assert at.selectbox(key="pooling_collection").value == DEMO_NAME
    picker = next(m for m in at.multiselect if m.label == "New retrievers to run")
    assert "Dense: multilingual-e5-small (packaged, offline)" in picker.options
    stored = next(m for m in at.multiselect if m.label == "Stored runs to pool")
    assert sorted(stored.value) == ["bm25", "bm25-bigram", "e5", "minilm"]
    at.text_input[0].set_value("demo-pool")
    at.button[0].click().run()
    assert not at.exception and not at.error
    with db.read() as s:
        [params] = [j.params for j in list_jobs(s, kind="pool")]
    assert (params["collection"], sorted(params["runs"])) == (DEMO_NAME, ["bm25", "bm25-bigram", "e5", "minilm"])
    assert len(launched) == 1
