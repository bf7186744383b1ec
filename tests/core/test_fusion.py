"""Tests for core.fusion (RRF, CombSUM, CombMNZ) and core.retrieval.hybrid.

Every expected score below is computed by hand in the comments; the runs
are built so that trec-order tie breaking (score desc, doc id desc) decides
some ranks.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from core.fusion import combmnz, combsum, fuse, min_max_normalise, rank_positions, rrf, trec_ranking
from core.retrieval.base import Hit, Retriever
from core.retrieval.hybrid import HybridRetriever
from core.types import Run
from tests.core.fake_retriever import FakeRetriever

# A ranks d1 > d2 > d3.
# B ranks d2 > d4 > d1: d4 and d1 tie at 0.5, doc id descending puts d4 first.
# C ranks d5 > d3: a tie at 10, d5 first.
# q2: A ranks a > b, B ranks b > a; q3 exists only in C.
A: Run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"a": 2.0, "b": 1.0}}
B: Run = {"q1": {"d2": 0.9, "d1": 0.5, "d4": 0.5}, "q2": {"b": 5.0, "a": 3.0}}
C: Run = {"q1": {"d3": 10.0, "d5": 10.0}, "q3": {"x": 1.0}}
RUNS = {"A": A, "B": B, "C": C}


def approx_run(expected: Run) -> Mapping[str, object]:
    return {q: pytest.approx(docs, rel=1e-12, abs=0) for q, docs in expected.items()}


def test_trec_ranking_and_rank_positions() -> None:
    assert trec_ranking(B["q1"]) == ["d2", "d4", "d1"]
    assert rank_positions(C["q1"]) == {"d5": 1, "d3": 2}
    assert rank_positions(A["q1"], depth=2) == {"d1": 1, "d2": 2}
    # doc id descending is code-point (= UTF-8 byte) order: "b" > "B" > "10" > "1"
    assert trec_ranking({"1": 0.0, "10": 0.0, "B": 0.0, "b": 0.0}) == ["b", "B", "10", "1"]


def test_min_max_normalise() -> None:
    run = {"q": {"a": 3.0, "b": -1.0, "c": 2.0}, "same": {"x": 7.0, "y": 7.0}, "one": {"z": -4.0}, "none": {}}
    assert min_max_normalise(run) == {
        "q": {"a": 1.0, "b": 0.0, "c": 0.75},
        "same": {"x": 1.0, "y": 1.0},  # all equal: every document normalises to 1.0
        "one": {"z": 1.0},
        "none": {},
    }
    with pytest.raises(ValueError, match="not finite"):
        min_max_normalise({"q": {"a": float("nan"), "b": 1.0}})


def test_rrf_hand_computed() -> None:
    # q1 ranks: A d1=1 d2=2 d3=3; B d2=1 d4=2 d1=3; C d5=1 d3=2.
    fused = rrf(RUNS)
    assert fused == approx_run(
        {
            "q1": {
                "d1": 1 / 61 + 1 / 63,
                "d2": 1 / 62 + 1 / 61,
                "d3": 1 / 63 + 1 / 62,
                "d4": 1 / 62,
                "d5": 1 / 61,
            },
            "q2": {"a": 1 / 61 + 1 / 62, "b": 1 / 62 + 1 / 61},
            "q3": {"x": 1 / 61},
        }
    )
    assert list(fused["q1"]) == ["d2", "d1", "d3", "d5", "d4"]
    # a and b tie exactly (1/61 + 1/62 each): doc id descending puts b first.
    assert fused["q2"]["a"] == fused["q2"]["b"]
    assert list(fused["q2"]) == ["b", "a"]
    assert list(fused) == ["q1", "q2", "q3"]


def test_rrf_does_not_depend_on_run_order() -> None:
    forward = rrf([A, B, C])
    backward = rrf([C, B, A])
    assert forward == backward
    assert list(forward["q1"]) == list(backward["q1"])


def test_rrf_k_weights_depth() -> None:
    # k = 0: plain reciprocal ranks.
    assert rrf([A, B], k=0)["q1"] == pytest.approx({"d1": 1 + 1 / 3, "d2": 1 / 2 + 1, "d3": 1 / 3, "d4": 1 / 2})
    # weighted: B counts double, C not at all (its documents are not added).
    w = rrf(RUNS, weights={"A": 1.0, "B": 2.0, "C": 0.0})
    assert w["q1"] == pytest.approx({"d1": 1 / 61 + 2 / 63, "d2": 1 / 62 + 2 / 61, "d3": 1 / 63, "d4": 2 / 62})
    assert list(w["q1"]) == ["d2", "d1", "d4", "d3"]
    assert w["q3"] == {}
    # depth 1: only each run's first document.
    assert rrf(RUNS, depth=1)["q1"] == pytest.approx({"d1": 1 / 61, "d2": 1 / 61, "d5": 1 / 61})
    assert list(rrf(RUNS, depth=1)["q1"]) == ["d5", "d2", "d1"]


def test_combsum_hand_computed() -> None:
    # normalised q1: A d1=1 d2=0.5 d3=0; B d2=1 d1=0 d4=0; C d3=1 d5=1 (all equal -> 1.0)
    fused = combsum(RUNS)
    assert fused == approx_run(
        {
            "q1": {"d1": 1.0, "d2": 1.5, "d3": 1.0, "d4": 0.0, "d5": 1.0},
            "q2": {"a": 1.0, "b": 1.0},
            "q3": {"x": 1.0},
        }
    )
    assert list(fused["q1"]) == ["d2", "d5", "d3", "d1", "d4"]  # d5, d3, d1 tie at 1.0
    assert list(fused["q2"]) == ["b", "a"]


def test_combmnz_hand_computed() -> None:
    # CombSUM times the number of runs that retrieved the document:
    # d1 2*1.0, d2 2*1.5, d3 2*1.0, d4 1*0.0, d5 1*1.0
    fused = combmnz(RUNS)
    assert fused["q1"] == pytest.approx({"d1": 2.0, "d2": 3.0, "d3": 2.0, "d4": 0.0, "d5": 1.0})
    assert list(fused["q1"]) == ["d2", "d3", "d1", "d5", "d4"]
    assert fused["q2"] == pytest.approx({"a": 2.0, "b": 2.0})


def test_weighted_combsum_and_combmnz() -> None:
    weights = {"A": 2.0, "B": 1.0, "C": 0.5}
    # d1 2*1 + 0, d2 2*0.5 + 1, d3 0 + 0.5*1, d4 0, d5 0.5*1
    ws = combsum(RUNS, weights=weights)
    assert ws["q1"] == pytest.approx({"d1": 2.0, "d2": 2.0, "d3": 0.5, "d4": 0.0, "d5": 0.5})
    assert list(ws["q1"]) == ["d2", "d1", "d5", "d3", "d4"]
    # weights by position, same thing
    assert combsum([A, B, C], weights=[2.0, 1.0, 0.5])["q1"] == pytest.approx(ws["q1"])
    wm = combmnz(RUNS, weights=weights)
    assert wm["q1"] == pytest.approx({"d1": 4.0, "d2": 4.0, "d3": 1.0, "d4": 0.0, "d5": 0.5})
    assert list(wm["q1"]) == ["d2", "d1", "d3", "d5", "d4"]


def test_combsum_depth_normalises_the_truncated_lists() -> None:
    # depth 2: A keeps d1=3, d2=2 -> d1 1, d2 0; B keeps d2, d4 -> d2 1, d4 0; C d5, d3 -> 1, 1
    assert combsum(RUNS, depth=2)["q1"] == pytest.approx({"d1": 1.0, "d2": 1.0, "d4": 0.0, "d5": 1.0, "d3": 1.0})


def test_fuse_dispatches() -> None:
    assert fuse(RUNS, "rrf") == rrf(RUNS)
    assert fuse(RUNS, "combsum") == combsum(RUNS)
    assert fuse(RUNS, "combmnz", weights=[1, 2, 3]) == combmnz(RUNS, weights=[1, 2, 3])
    with pytest.raises(ValueError, match="unknown fusion method 'borda'"):
        fuse(RUNS, "borda")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("weights", "phrase"),
    [
        ({"A": 1.0, "B": 1.0}, "missing \\['C'\\]"),
        ({"A": 1.0, "B": 1.0, "C": 1.0, "D": 1.0}, "unknown \\['D'\\]"),
        ([1.0, 2.0], "2 weights given for 3 runs"),
        ({"A": -1.0, "B": 1.0, "C": 1.0}, "weight of run 'A' must be a finite number >= 0"),
        ({"A": float("nan"), "B": 1.0, "C": 1.0}, "weight of run 'A'"),
        ([0, 0, 0], "at least one weight must be positive"),
    ],
)
def test_bad_weights(weights: object, phrase: str) -> None:
    with pytest.raises(ValueError, match=phrase):
        rrf(RUNS, weights=weights)  # type: ignore[arg-type]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="no runs"):
        rrf({})
    with pytest.raises(TypeError, match="a single run as \\[run\\]"):
        rrf(A)  # a single Run is not a mapping of runs
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        combsum(RUNS, depth=0)
    with pytest.raises(ValueError, match="k must be"):
        rrf(RUNS, k=-1)


# --------------------------------------------------------------------------- hybrid


def members() -> tuple[FakeRetriever, FakeRetriever]:
    bm25 = FakeRetriever("bm25", {"apple": {"d1": 9.0, "d2": 7.0, "d3": 5.0}, "pear": {"p1": 1.0}})
    dense = FakeRetriever("dense", {"apple": {"d3": 0.9, "d1": 0.8, "d4": 0.1}})
    return bm25, dense


def test_hybrid_is_a_retriever_and_fuses_by_rrf() -> None:
    bm25, dense = members()
    shallow = HybridRetriever([bm25, dense], depth=1)
    assert isinstance(shallow, Retriever)
    assert shallow.name == "hybrid"
    # depth 1: bm25 gives d1, dense gives d3, both 1/61: doc id descending puts d3 first.
    hits = shallow.search("apple", k=1)
    assert hits == [Hit("d3", pytest.approx(1 / 61))]
    assert bm25.asked == [1] and dense.asked == [1]
    # depth 3: bm25 d1 1, d2 2, d3 3; dense d3 1, d1 2, d4 3.
    deep = HybridRetriever([bm25, dense], depth=3)
    hits = deep.search("apple", k=2)
    assert [h.doc_id for h in hits] == ["d1", "d3"]
    assert [h.score for h in hits] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61])
    assert bm25.asked[-1] == 3 and dense.asked[-1] == 3
    # k larger than depth: members retrieve k.
    hits = shallow.search("apple", k=4)
    assert bm25.asked[-1] == 4 and dense.asked[-1] == 4
    assert [h.doc_id for h in hits] == ["d1", "d3", "d2", "d4"]
    assert [h.score for h in hits] == pytest.approx([1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63])


def test_hybrid_combsum_with_weights_and_batch_progress() -> None:
    bm25, dense = members()
    hybrid = HybridRetriever({"lex": bm25, "sem": dense}, fusion="combsum", weights={"lex": 1.0, "sem": 3.0}, depth=3)
    calls: list[tuple[int, int]] = []
    run = hybrid.batch_search(
        {"q1": "apple", "q2": "pear", "q3": "none"}, k=2, progress=lambda d, t: calls.append((d, t))
    )
    # lex: d1 1, d2 0.5, d3 0; sem: d3 1, d1 7/8, d4 0 -> d1 1 + 3*7/8, d2 0.5, d3 3, d4 0
    assert run["q1"] == pytest.approx({"d1": 3.625, "d3": 3.0})
    assert list(run["q1"]) == ["d1", "d3"]
    assert run["q2"] == {"p1": 1.0}
    assert run["q3"] == {}
    assert calls[-1] == (6, 6)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)


def test_hybrid_rejects_bad_configuration() -> None:
    bm25, dense = members()
    with pytest.raises(ValueError, match="two retrievers are named 'bm25'"):
        HybridRetriever([bm25, bm25])
    with pytest.raises(ValueError, match="unknown fusion method"):
        HybridRetriever([bm25, dense], fusion="max")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="missing \\['dense'\\]"):
        HybridRetriever([bm25, dense], weights={"bm25": 1.0})
    with pytest.raises(ValueError, match="k must be a positive integer"):
        HybridRetriever([bm25, dense]).search("apple", k=0)


def test_trec_ranking_ties_scores_equal_in_single_precision():
    from core.fusion import trec_ranking
    from core.metrics import evaluate

    # 1.0 and 1.0 + 1e-9 differ as doubles but are the same float32 (trec_eval's "float sim"): a tie, broken
    # by doc id descending, so "a" (the higher double) ranks after "b"
    scores = {"a": 1.0 + 1e-9, "b": 1.0, "c": 0.5, "d": 1e300}
    assert trec_ranking(scores) == ["d", "b", "a", "c"]
    rr = evaluate({"q": {"a": 1}}, {"q": {k: v for k, v in scores.items() if k != "d"}}, ["RR"])["RR"]["q"]
    assert rr == 0.5  # the measures agree: "a" is second
