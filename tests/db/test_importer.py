"""Importing into the store: all or nothing, refuse or merge re-imports, locate conflicts.

Every test runs through both entry points: the staged import (validated outside the write lock, written in
short transactions, :func:`db.importer.import_source`) and the in-transaction one (:func:`import_collection`).
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.errors import FormatError
from core.types import Passage, QrelEntry, Query, RunEntry
from db.importer import ImportConflict
from db.models import Collection, PassageRecord, QrelsEntry, QueryRecord, RunEntryRecord
from db.queries import (
    corpus_statistics,
    iter_passages,
    iter_queries,
    list_collections,
    split_statistics,
    stored_qrels,
    stored_run,
)
from tests.db.import_helpers import import_through, memory_source

PASSAGES = [
    Passage("d1", "Paris is the capital of France.", title="Paris", doc_id="D", position=0, origin="c.jsonl:1"),
    Passage("d2", "It lies on the Seine.", title="Paris", doc_id="D", position=1, origin="c.jsonl:2"),
    Passage("<dbpedia:Arènes>", "西安是陕西省的省会。", origin="c.jsonl:3"),
]
QUERIES = [
    Query("q1", "capital of france", split="test", origin="q.jsonl:1"),
    Query("q2", "西安在哪个省", split="train", answers=["陕西", ["陕西省", "陕"]], origin="q.jsonl:2"),
]
QRELS = [
    QrelEntry("q1", "d1", 3),
    QrelEntry("q1", "d2", 1),
    QrelEntry("q2", "<dbpedia:Arènes>", 2),
    QrelEntry("q2", "d9", -1),
]
RUN = [RunEntry("q1", "d2", 1.5), RunEntry("q1", "d1", 1.5), RunEntry("q2", "d1", 0.25)]


@pytest.fixture(params=["staged", "transaction"])
def load(request, store):
    """``load(source, **kwargs)``: import through one of the two entry points."""

    def run(source, **kwargs):
        # QRELS judges d9, outside the corpus (TREC practice); refusing unknown ids is tested in test_unknown_ids.py
        kwargs.setdefault("allow_unknown_ids", True)
        return import_through(request.param, store, source, **kwargs)

    return run


def _counts(store):
    with store.read() as s:
        return tuple(
            s.scalar(select(func.count()).select_from(t))
            for t in (Collection, PassageRecord, QueryRecord, QrelsEntry, RunEntryRecord)
        )


def test_import_round_trips_every_field(store, load):
    summary = load(memory_source(PASSAGES, QUERIES, QRELS, {"bm25": RUN}), name="c", format="test", location="mem")
    assert summary.as_dict() == {
        "collection": "c",
        "passages_added": 3,
        "passages_skipped": 0,
        "queries_added": 2,
        "queries_skipped": 0,
        "qrels_added": 4,
        "qrels_skipped": 0,
        "qrels_version": "imported",
        "runs": {"bm25": 3},
        "relevance_level": 2,
        "unknown_query_ids": 0,
        "unknown_passage_ids": 1,
        "notes": ["kept unknown ids (allowed) in the qrels and runs: 1 passage id ('d9')"],
    }
    with store.read() as s:
        assert list(iter_passages(s, "c")) == [
            Passage("d1", "Paris is the capital of France.", title="Paris", doc_id="D", position=0, language="en"),
            Passage("d2", "It lies on the Seine.", title="Paris", doc_id="D", position=1, language="en"),
            Passage("<dbpedia:Arènes>", "西安是陕西省的省会。", language="zh"),
        ]
        assert list(iter_queries(s, "c")) == [
            Query("q1", "capital of france", split="test", language="en"),
            Query("q2", "西安在哪个省", split="train", language="zh", answers=["陕西", ["陕西省", "陕"]]),
        ]
        assert stored_qrels(s, "c") == {"q1": {"d1": 3, "d2": 1}, "q2": {"<dbpedia:Arènes>": 2, "d9": -1}}
        assert stored_run(s, "c", "bm25") == {"q1": {"d2": 1.5, "d1": 1.5}, "q2": {"d1": 0.25}}
        [info] = list_collections(s)
        assert (info.name, info.language, info.passages, info.queries, info.runs, info.qrels_versions) == (
            "c",
            "mixed",
            3,
            2,
            ["bm25"],
            ["imported"],
        )


@pytest.mark.slow
def test_statistics_per_split(store, load):
    load(memory_source(PASSAGES, QUERIES, QRELS), name="c", format="t", location="m")
    with store.read() as s:
        train, test = split_statistics(s, "c", level=1)
        corpus = corpus_statistics(s, "c")
    assert (train.split, train.queries, train.judged_pairs, train.relevant_pairs, train.relevant_passages) == (
        "train",
        1,
        2,
        1,
        1,
    )
    assert train.avg_query_chars == len("西安在哪个省")
    assert train.avg_relevant_passage_chars == len("西安是陕西省的省会。")
    assert (test.judged_pairs, test.relevant_pairs, test.avg_relevant_per_query) == (2, 2, 2.0)
    assert test.avg_relevant_passage_chars == (len(PASSAGES[0].text) + len(PASSAGES[1].text)) / 2
    assert corpus["passages"] == 3 and corpus["documents"] == 1


def test_reimport_is_refused_and_leaves_store_unchanged(store, load):
    load(memory_source(PASSAGES, QUERIES, QRELS), name="c", format="t", location="m")
    before = _counts(store)
    with pytest.raises(ImportConflict, match="already exists"):
        load(memory_source(PASSAGES), name="c", format="t", location="m")
    assert _counts(store) == before


def test_merge_adds_new_and_skips_identical(store, load):
    load(memory_source(PASSAGES[:2], QUERIES[:1], QRELS[:1]), name="c", format="t", location="m")
    summary = load(memory_source(PASSAGES, QUERIES, QRELS), name="c", format="t", location="m", mode="merge")
    assert (
        summary.passages_added,
        summary.passages_skipped,
        summary.queries_added,
        summary.qrels_added,
        summary.qrels_skipped,
    ) == (1, 2, 1, 3, 1)
    assert _counts(store)[1:4] == (3, 2, 4)


def test_merge_refuses_a_changed_passage_naming_its_line(store, load):
    load(memory_source(PASSAGES), name="c", format="t", location="m")
    changed = [Passage("d2", "It lies on the Loire.", title="Paris", doc_id="D", position=1, origin="new.jsonl:7")]
    before = _counts(store)
    with pytest.raises(FormatError) as err:
        load(memory_source(changed), name="c", format="t", location="m", mode="merge")
    assert (err.value.path, err.value.line) == ("new.jsonl", 7)
    assert "different text" in err.value.message
    assert _counts(store) == before


def test_merge_refuses_a_changed_grade(store, load):
    load(memory_source(PASSAGES, QUERIES, QRELS), name="c", format="t", location="m")
    with pytest.raises(FormatError, match="already has grade 3"):
        load(
            memory_source(qrels=[QrelEntry("q1", "d1", 0, origin="q.txt:4")]),
            name="c",
            format="t",
            location="m",
            mode="merge",
        )


def test_duplicate_in_stream_is_located_and_nothing_is_kept(store, load):
    dup = PASSAGES + [Passage("d1", "again", origin="c.jsonl:9")]
    with pytest.raises(FormatError) as err:
        load(memory_source(dup, QUERIES), name="c", format="t", location="m")
    assert (err.value.path, err.value.line) == ("c.jsonl", 9)
    assert "first at c.jsonl:1" in err.value.message
    assert _counts(store) == (0, 0, 0, 0, 0)


def test_a_late_error_rolls_back_everything(store, load):
    def broken():
        yield from PASSAGES
        raise FormatError("c.jsonl", 4, "invalid JSON")

    source = memory_source(queries=QUERIES)
    source.passages = broken
    with pytest.raises(FormatError, match="c.jsonl:4: invalid JSON"):
        load(source, name="c", format="t", location="m")
    assert _counts(store) == (0, 0, 0, 0, 0)


def test_run_name_clash_is_refused(store, load):
    load(memory_source(runs={"bm25": RUN}), name="c", format="t", location="m")
    with pytest.raises(ImportConflict, match="run 'bm25' already exists"):
        load(memory_source(runs={"bm25": RUN}), name="c", format="t", location="m", mode="merge")
