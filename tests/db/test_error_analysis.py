"""Error analysis in the store: failing queries, seeded samples, detector suggestions, analyst tags."""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Passage, Query
from db.error_analysis import (
    category_distribution,
    collection_term_frequencies,
    failing_queries,
    list_tags,
    query_categories,
    sample_error_pairs,
    set_tag_status,
    suggest_tags,
    tag_pair,
)
from db.importer import import_collection, save_run
from db.queries import NotFound

PASSAGES = [
    Passage("e1", "The Eiffel Tower is in Paris.", title="Eiffel Tower", doc_id="E", position=0),
    Passage("e2", "It is 330 metres tall.", title="Eiffel Tower", doc_id="E", position=1),
    Passage("a1", "Apple revenue in 2017 was large.", title="Apple", doc_id="A", position=0),
    Passage("a2", "Apple revenue in 2016 was larger.", title="Apple", doc_id="A", position=1),
    Passage("x1", "Paris has many parks.", title="Parks", doc_id="X", position=0),
]
QUERIES = [
    Query("q1", "Eiffel Tower height"),
    Query("q2", "apple revenue 2016"),
    Query("q3", "paris parks"),
    Query("q4", "something else"),
]
RUN = {
    "q1": {"e2": 3.0, "e1": 2.0, "x1": 1.0, "ghost": 0.5},  # ghost: a passage the store lacks
    "q2": {"a1": 2.0, "a2": 1.0},
    "q3": {"a1": 2.0, "x1": 2.0, "e1": 1.0},  # tie: x1 ranks above a1 (doc id descending)
    "q5": {"x1": 1.0},  # not judged
}
QRELS = {
    "q1": {"e2": 0, "e1": 1, "ghost": 2},
    "q2": {"a2": 3, "a1": 0},
    "q3": {"x1": 2},
    "q4": {"e1": 2},  # judged but missing from the run
}


@pytest.fixture
def world(store):
    source = CollectionSource(passages=lambda: iter(PASSAGES), queries=lambda: iter(QUERIES), qrels=lambda: iter(()))
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_run(s, "c", "bm25", RUN, allow_unknown_ids=True)  # RUN retrieves passages the store lacks, on purpose
    return store


def test_failing_queries_exact():
    assert failing_queries(QRELS, RUN, k=2) == ["q1", "q4"]
    assert failing_queries(QRELS, RUN, k=1) == ["q1", "q2", "q4"]
    assert failing_queries(QRELS, RUN, k=4) == ["q4"]
    assert failing_queries(QRELS, RUN, k=2, level=1) == ["q4"]
    assert failing_queries(QRELS, RUN, k=1, level=3) == ["q1", "q2", "q3", "q4"]
    # at level 3 only q2 has a relevant passage at all: the others cannot be answered by any run
    assert failing_queries(QRELS, RUN, k=1, level=3, answerable_only=True) == ["q2"]
    assert failing_queries(QRELS, RUN, k=2, answerable_only=True) == ["q1", "q4"]
    with pytest.raises(ValueError):
        failing_queries(QRELS, RUN, k=0)


def test_sample_exact_for_small_case(world):
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=4)
    assert pairs == []  # only q4 fails at k=4, and it is not in the run: no pairs
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=2)
    assert pairs == [
        {
            "query_id": "q1",
            "query": "Eiffel Tower height",
            "answers": None,
            "doc_id": "e2",
            "rank": 1,
            "score": 3.0,
            "label": 0,
            "text": "It is 330 metres tall.",
            "title": "Eiffel Tower",
            "document": "E",
            "position": 1,
        },
        {
            "query_id": "q1",
            "query": "Eiffel Tower height",
            "answers": None,
            "doc_id": "e1",
            "rank": 2,
            "score": 2.0,
            "label": 1,
            "text": "The Eiffel Tower is in Paris.",
            "title": "Eiffel Tower",
            "document": "E",
            "position": 0,
        },
    ]


def test_sample_lists_passages_the_store_lacks(world):
    qrels = {"q1": {"nothing": 2}}
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels=qrels, k=4)
    assert [(p["doc_id"], p["rank"], p["label"]) for p in pairs] == [
        ("e2", 1, None),
        ("e1", 2, None),
        ("x1", 3, None),
        ("ghost", 4, None),
    ]
    assert pairs[3] == {
        "query_id": "q1",
        "query": "Eiffel Tower height",
        "answers": None,
        "doc_id": "ghost",
        "rank": 4,
        "score": 0.5,
        "label": None,
        "text": None,
        "title": None,
        "document": None,
        "position": None,
    }


def test_sample_is_seeded(world):
    with world.read() as s:
        a = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1, n=2, seed=0)
        b = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1, n=2, seed=0)
        c = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1, n=2, seed=1)
        everything = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1, n=100, seed=3)
        none = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1, n=0)
    assert a == b
    # random.Random(0).sample(["q1", "q2", "q4"], 2) == ["q2", "q4"]; seed 1 gives ["q1", "q4"]
    assert [(p["query_id"], p["doc_id"]) for p in a] == [("q2", "a1")]
    assert [(p["query_id"], p["doc_id"]) for p in c] == [("q1", "e2")]
    assert [(p["query_id"], p["doc_id"]) for p in everything] == [("q1", "e2"), ("q2", "a1")]
    assert none == []


def test_sample_unknown_run(world):
    with world.read() as s, pytest.raises(NotFound):
        sample_error_pairs(s, "c", "nope", qrels=QRELS)


def _auto(store):
    with store.read() as s:
        return {(t["query_id"], t["doc_id"], t["category"]) for t in list_tags(s, "c") if t["source"] == "auto"}


def test_suggest_tags_numeral_and_coreference(world):
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1)
    assert [(p["query_id"], p["doc_id"]) for p in pairs] == [("q1", "e2"), ("q2", "a1")]
    with world.write() as s:
        stored = suggest_tags(s, "c", "bm25", pairs, language="en")
    tags = _auto(world)
    assert stored == 6
    assert tags == {
        ("q1", "e2", "coreference"),  # "It ..." with the title in the earlier chunk e1
        ("q1", "e2", "false_negative"),  # rank 1, label 0
        ("q1", "e2", "main_topic"),  # "Eiffel Tower" only in the title
        ("q2", "a1", "false_negative"),
        ("q2", "a1", "numeral_mismatch"),  # 2016 vs 2017
        ("q2", "a1", "term_overlap"),  # shares "apple revenue", labelled 0
    }
    with world.read() as s:
        listed = list_tags(s, "c", status="suggested")
    assert {t["status"] for t in listed} == {"suggested"} and {t["run"] for t in listed} == {"bm25"}
    numeral = next(t for t in listed if t["category"] == "numeral_mismatch")
    assert numeral["evidence"] == {
        "category": "numeral_mismatch",
        "evidence": {"query": ["2016"], "passage": ["2017"]},
        "spans": [[17, 21]],
        "detector": "numerals",  # the detector that made it (issue 22: the page names it)
    }
    coref = next(t for t in listed if t["category"] == "coreference")
    # the antecedent is the earlier chunk of the same document, which names the title
    assert coref["evidence"]["evidence"]["reference"] == "It"
    assert coref["evidence"]["evidence"]["antecedent_chunk"] == 0
    assert coref["evidence"]["evidence"]["antecedent"] == "The Eiffel Tower is in Paris."
    assert coref["evidence"]["evidence"]["matched"][0] == "Eiffel Tower"

    # idempotent: nothing new, even after a suggestion was rejected
    with world.write() as s:
        set_tag_status(s, numeral["id"], "rejected")
        assert suggest_tags(s, "c", "bm25", pairs, language="en") == 0
    assert _auto(world) == tags


def test_suggest_tags_without_earlier_chunk_has_no_coreference(world):
    # e1 is the first chunk of its document and does not open with a reference
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels={"q1": {"e2": 1}}, k=2)
    assert [(p["doc_id"], p["label"]) for p in pairs] == [("e2", 1), ("e1", None)]
    with world.write() as s:
        suggest_tags(s, "c", None, pairs)
    tags = _auto(world)
    assert ("q1", "e2", "coreference") in tags
    assert ("q1", "e2", "false_negative") not in tags  # labelled 1 (on topic): not a false-negative candidate
    assert ("q1", "e1", "false_negative") in tags  # unjudged at rank 2
    assert ("q1", "e1", "coreference") not in tags


def test_suggest_tags_skips_missing_passages(world):
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels={"q1": {"nothing": 2}}, k=4)
    with world.write() as s:
        suggest_tags(s, "c", "bm25", pairs)
    assert not any(d == "ghost" for _, d, _ in _auto(world))


def test_collection_term_frequencies(world):
    with world.read() as s:
        tf = collection_term_frequencies(s, "c")
    assert tf["eiffel"] == 1 + 2 + 1  # query, two titles, one passage
    assert tf["paris"] == 1 + 2
    assert "2016" not in tf


def test_analyst_tags_status_and_distribution(world):
    with world.write() as s:
        t1 = tag_pair(s, "c", "q1", "e2", "coreference", run_name="bm25", note="It = the tower")
        t2 = tag_pair(s, "c", "q1", "e1", "main_topic")
        t3 = tag_pair(s, "c", "q2", "a1", "numeral_mismatch")
        t4 = tag_pair(s, "c", "q2", "a1", "numeral_mismatch")  # a second analyst, same pair: counts once
        t5 = tag_pair(s, "c", "q4", "e1", "my_category", extra_categories=["my_category"])
        with pytest.raises(ValueError):
            tag_pair(s, "c", "q1", "e1", "not_a_category")
        with pytest.raises(ValueError):
            tag_pair(s, "c", "", "e1", "other")
        with pytest.raises(NotFound):
            tag_pair(s, "c", "q1", "e1", "other", run_name="nope")
        set_tag_status(s, t2, "rejected")
        with pytest.raises(ValueError):
            set_tag_status(s, t1, "maybe")
        with pytest.raises(NotFound):
            set_tag_status(s, 9999, "confirmed")
    with world.read() as s:
        tags = list_tags(s, "c")
        confirmed = list_tags(s, "c", status="confirmed")
        rejected = list_tags(s, "c", status="rejected")
        dist = category_distribution(s, "c")
        dist_all = category_distribution(s, "c", statuses=("confirmed", "rejected"))
        per_query = query_categories(s, "c")
    assert [t["id"] for t in tags] == [t1, t2, t3, t4, t5]
    assert {
        k: tags[0][k] for k in ("query_id", "doc_id", "run", "category", "status", "source", "evidence", "user_id")
    } == {
        "query_id": "q1",
        "doc_id": "e2",
        "run": "bm25",
        "category": "coreference",
        "status": "confirmed",
        "source": "analyst",
        "evidence": {"note": "It = the tower"},
        "user_id": None,
    }
    assert [t["id"] for t in confirmed] == [t1, t3, t4, t5]
    assert [t["id"] for t in rejected] == [t2]
    assert dist == {"coreference": 1, "my_category": 1, "numeral_mismatch": 1}
    assert dist_all == {"coreference": 1, "main_topic": 1, "my_category": 1, "numeral_mismatch": 1}
    assert per_query == {"q1": {"coreference"}, "q2": {"numeral_mismatch"}, "q4": {"my_category"}}


def test_confirming_a_suggestion_feeds_query_categories(world):
    with world.read() as s:
        pairs = sample_error_pairs(s, "c", "bm25", qrels=QRELS, k=1)
    with world.write() as s:
        suggest_tags(s, "c", "bm25", pairs, language="en")
    with world.read() as s:
        assert query_categories(s, "c") == {}
        assert category_distribution(s, "c") == {}
        numeral = list_tags(s, "c", category="numeral_mismatch")
    assert [(t["query_id"], t["doc_id"]) for t in numeral] == [("q2", "a1")]
    with world.write() as s:
        set_tag_status(s, numeral[0]["id"], "confirmed")
    with world.read() as s:
        assert query_categories(s, "c") == {"q2": {"numeral_mismatch"}}
        assert category_distribution(s, "c") == {"numeral_mismatch": 1}
        assert list_tags(s, "c", query_id="q2", status="confirmed")[0]["source"] == "auto"


def test_earlier_chunks_are_the_passages_before_the_position(world):
    from db.error_analysis import earlier_chunks

    with world.read() as s:
        assert earlier_chunks(s, "c", "E", 1) == [(0, "The Eiffel Tower is in Paris.")]
        assert earlier_chunks(s, "c", "E", 0) == []
        assert earlier_chunks(s, "c", "A", 5) == [
            (0, "Apple revenue in 2017 was large."),
            (1, "Apple revenue in 2016 was larger."),
        ]


def test_false_negative_suggestions_need_the_answer_when_the_query_has_one(store):
    source = CollectionSource(
        passages=lambda: iter(
            [
                Passage("p1", "The tower is 330 metres tall."),
                Passage("p2", "The tower is in Paris."),
                Passage("p3", "Gustave Eiffel built it."),
            ]
        ),
        queries=lambda: iter([Query("q", "How tall is the Eiffel Tower?", answers=[["330 m", "330 metres"]])]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="ans", format="t", location="m")
        save_run(s, "ans", "r", {"q": {"p1": 3.0, "p2": 2.0, "p3": 1.0}})
    with store.read() as s:
        pairs = sample_error_pairs(s, "ans", "r", qrels={"q": {"p3": 0}}, k=3, level=1)
    assert [p["answers"] for p in pairs] == [[["330 m", "330 metres"]]] * 3
    with store.write() as s:
        suggest_tags(s, "ans", "r", pairs)
    with store.read() as s:
        negatives = list_tags(s, "ans", category="false_negative")
    assert [(t["doc_id"], t["evidence"]["evidence"]["answer"]) for t in negatives] == [
        ("p1", "330 m")
    ]  # the first answer found
