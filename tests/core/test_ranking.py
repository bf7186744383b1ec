"""One ranking order (trec_eval's) everywhere: issue 10, acceptance 4.

trec_eval stores scores as C ``float``: 1.0 and 1.0000000001 are equal there,
so the doc id decides (descending).  A float64 comparison would put the
higher score first.  Every module that computes a rank must agree with the
measures on such near-ties.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from core import ranking
from core.analysis import ranked_with_labels
from core.detectors import false_negative_candidates
from core.fusion import rank_positions, rrf
from core.metrics import evaluate
from core.pooling import depth_pool, rrf_pool, select_all, take_pool
from core.retrieval.base import Hit, trec_order

ROOT = Path(__file__).resolve().parents[2]

HIGH, LOW = 1.0000000001, 1.0
assert HIGH != LOW and np.float32(HIGH) == np.float32(LOW)

# "d1" has the higher float64 score, "d2" the larger id: trec_eval ranks d2 first.
RUN = {"q1": {"d1": HIGH, "d2": LOW, "d0": 0.5}}
QRELS = {"q1": {"d2": 1, "d1": 0, "d0": 0}}


def test_the_measures_rank_the_tie_by_doc_id_descending():
    result = evaluate(QRELS, RUN, ["RR", "P@1"])
    assert result["RR"]["q1"] == 1.0
    assert result["P@1"]["q1"] == 1.0
    # control: 1.0000001 differs from 1.0 in float32, so the score decides and d2 falls to rank 2
    apart = {"q1": {"d1": 1.0000001, "d2": LOW, "d0": 0.5}}
    assert np.float32(1.0000001) != np.float32(LOW)
    assert evaluate(QRELS, apart, ["RR", "P@1"]) == {"RR": {"q1": 0.5, "all": 0.5}, "P@1": {"q1": 0.0, "all": 0.0}}


def test_one_ranking_function_agrees_with_the_measures():
    assert ranking.trec_ranking(RUN["q1"]) == ["d2", "d1", "d0"]
    assert ranking.rank_positions(RUN["q1"]) == {"d2": 1, "d1": 2, "d0": 3}
    assert rank_positions(RUN["q1"]) == {"d2": 1, "d1": 2, "d0": 3}
    order = ranking.trec_argsort(np.array([HIGH, LOW, 0.5]), np.array([1, 2, 0]))
    assert order.tolist() == [1, 0, 2]


def test_retrieval_orders_hits_as_the_measures_do():
    hits = [Hit("d1", HIGH), Hit("d2", LOW), Hit("d0", 0.5)]
    assert [h.doc_id for h in trec_order(hits)] == ["d2", "d1", "d0"]
    assert trec_order(hits)[0] == Hit("d2", LOW)  # the score itself is kept, not rounded


def test_bm25_top_k_compares_float64_scores_in_single_precision():
    from core.retrieval.bm25 import BM25Retriever
    from core.text import analyzer_for

    retriever = BM25Retriever(analyzer_for("en"), backend="rank_bm25")
    retriever.index(["d0", "d1", "d2"], ["apple", "apple pear", "apple plum"])
    # the backend's float64 scores with a near-tie (row i is doc id "d<i>")
    retriever._scores_and_baseline = lambda ids: (np.array([0.5, HIGH, LOW]), 0.0)
    hits = retriever.search("apple", k=1)
    assert hits == [Hit("d2", LOW)]
    assert [h.doc_id for h in retriever.search("apple", k=3)] == ["d2", "d1", "d0"]


def test_pooling_takes_the_same_top_k():
    pool = depth_pool({"r": RUN}, 1)
    assert {d: [(c.run, c.rank) for c in cs] for d, cs in pool["q1"].items()} == {"d2": [("r", 1)]}
    assert list(take_pool({"r": RUN}, 1)["q1"]) == ["d2"]
    assert list(rrf_pool({"r": RUN}, 1)["q1"]) == ["d2"]
    assert select_all(depth_pool({"r": RUN}, 3))["q1"] == ["d2", "d1", "d0"]


def test_fusion_ranks_the_tie_the_same_way():
    # one run fused alone keeps its trec order, and its RRF scores follow it
    fused = rrf({"r": RUN})
    assert list(fused["q1"]) == ["d2", "d1", "d0"]
    assert fused["q1"]["d2"] > fused["q1"]["d1"]


def test_the_false_negative_detector_ranks_as_the_measures_do():
    found = false_negative_candidates(RUN, QRELS | {"q1": {"d2": 0, "d1": 0, "d0": 0}}, depth=1)
    assert [(c.query_id, c.doc_id, c.rank) for c in found] == [("q1", "d2", 1)]
    found = false_negative_candidates(RUN, {}, depth=3)
    assert [(c.doc_id, c.rank, c.score) for c in found] == [("d2", 1, LOW), ("d1", 2, HIGH), ("d0", 3, 0.5)]


def test_the_drill_down_shows_the_ranks_the_measures_count():
    top = ranked_with_labels(RUN["q1"], QRELS["q1"], 1)
    assert [(r.rank, r.doc_id, r.grade) for r in top] == [(1, "d2", 1)]
    from db.error_analysis import failing_queries

    assert failing_queries(QRELS, RUN, k=1, level=1) == []  # d2 (relevant) is at rank 1, as RR = 1 says


@pytest.mark.parametrize(
    "scores",
    [
        {"a": 0.1, "b": 0.1 + 1e-12, "c": 0.1 - 1e-12, "d": 0.3},
        {"x": 3.0e38, "y": 4.0e38, "z": 5.0e38},  # beyond float32's range: all +inf, a tie
        {"a": -0.0, "b": 0.0},
    ],
)
def test_every_rank_matches_pytrec_eval_rank_by_rank(scores):
    """For each document, RR with only that document relevant is 1/rank: the measures' own ranks."""
    run = {"q": scores}
    expected = ranking.rank_positions(scores)
    for doc in scores:
        rr = evaluate({"q": {doc: 1}}, run, ["RR"])["RR"]["q"]
        assert round(1 / rr) == expected[doc], doc
    assert {c.doc_id: c.rank for c in false_negative_candidates(run, {}, depth=len(scores))} == expected
    assert {r.doc_id: r.rank for r in ranked_with_labels(scores, {})} == expected
    assert {d: cs[0].rank for d, cs in depth_pool({"r": run}, len(scores))["q"].items()} == expected
    assert [h.doc_id for h in trec_order([Hit(d, s) for d, s in scores.items()])] == list(expected)


def test_ranks_are_computed_in_one_place():
    """No module sorts by score itself: core.ranking is the only home of the order."""
    pattern = re.compile(r"def trec_ranking|def trec_order|def rank_positions|ranked\.sort\(|float32\)\.tolist")
    out = [
        f"{p.relative_to(ROOT)}:{n}"
        for folder in ("core", "db", "views", "pooljudge")
        for p in sorted((ROOT / folder).rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    # trec_order is the Hit adapter over trec_ranking
    assert [line.split(":")[0] for line in out] == ["core/ranking.py", "core/ranking.py", "core/retrieval/base.py"]


def test_written_run_files_rank_as_the_measures_do(tmp_path):
    from core.formats.trec import write_run

    path = tmp_path / "run.trec"
    write_run({"q1": {"a": 1.0, "b": 1.0, **RUN["q1"]}}, path, depth=1)
    assert path.read_text().split()[2:4] == ["d2", "1"]
