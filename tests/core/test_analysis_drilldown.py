"""core.analysis.ranked_with_labels / missed_relevant: a query's ranking exactly as the measures count it."""

from __future__ import annotations

import pytest

from core.analysis import RankedDoc, missed_relevant, ranked_with_labels
from core.metrics import evaluate

SCORES = {"d1": 0.5, "d2": 0.9, "d3": 0.5, "d4": 0.1, "d5": 0.7}
JUDGED = {"d1": 3, "d3": 0, "d4": 2, "d5": 1, "d9": 2}


def test_ranked_with_labels_trec_order_ties_by_doc_id_descending_and_grades():
    assert ranked_with_labels(SCORES, JUDGED) == [
        RankedDoc(1, "d2", 0.9, None),
        RankedDoc(2, "d5", 0.7, 1),
        RankedDoc(3, "d3", 0.5, 0),  # tie with d1: the larger id first, as trec_eval
        RankedDoc(4, "d1", 0.5, 3),
        RankedDoc(5, "d4", 0.1, 2),
    ]
    assert [r.doc_id for r in ranked_with_labels(SCORES, JUDGED, 2)] == ["d2", "d5"]
    assert ranked_with_labels({}, JUDGED, 10) == []
    with pytest.raises(ValueError, match="k must be"):
        ranked_with_labels(SCORES, JUDGED, 0)


def test_ranks_agree_with_the_measures_including_single_precision_ties():
    # 0.1 and 0.1 + 1e-9 are the same 32-bit float: trec_eval ties them and puts "b" (larger id) first
    scores = {"a": 0.1 + 1e-9, "b": 0.1, "c": 0.05}
    ranked = ranked_with_labels(scores, {})
    assert [r.doc_id for r in ranked] == ["b", "a", "c"]
    for doc in scores:  # RR of a query whose only relevant passage is `doc` is 1 / (its rank here)
        rr = evaluate({"q": {doc: 1}}, {"q": scores}, ["RR"], level=1)["RR"]["q"]
        assert rr == pytest.approx(1 / next(r.rank for r in ranked if r.doc_id == doc))


def test_missed_relevant_lists_relevant_outside_the_top_k_with_their_run_rank():
    # top 2 = d2, d5; relevant at level 2: d1 (rank 4), d4 (rank 5), d9 (not retrieved)
    assert missed_relevant(SCORES, JUDGED, 2, level=2) == [
        RankedDoc(4, "d1", 0.5, 3),
        RankedDoc(5, "d4", 0.1, 2),
        RankedDoc(None, "d9", None, 2),
    ]
    # level 1 also makes d5 relevant, but it is inside the top 2
    assert [r.doc_id for r in missed_relevant(SCORES, JUDGED, 2, level=1)] == ["d1", "d4", "d9"]
    assert [r.doc_id for r in missed_relevant(SCORES, JUDGED, 4, level=2)] == ["d4", "d9"]
    assert missed_relevant(SCORES, JUDGED, 5, level=3) == []
    assert missed_relevant({}, {"x": 1, "y": 2}, 3, level=1) == [
        RankedDoc(None, "y", None, 2),
        RankedDoc(None, "x", None, 1),
    ]
