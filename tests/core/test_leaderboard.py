"""The incremental leaderboard equals a full evaluation and re-evaluates only what changed."""

import random

import pytest

from core.leaderboard import IncrementalEvaluator
from core.metrics import evaluate

MEASURES = ["MAP", "MRR@10", "nDCG@10", "P@5", "R@20", "Judged@10"]


def _data(seed=3, queries=40):
    rng = random.Random(seed)
    qrels = {f"q{i}": {f"d{j}": rng.choice([0, 1, 2, 3]) for j in rng.sample(range(60), 8)} for i in range(queries)}
    runs = {
        name: {
            f"q{i}": {f"d{j}": rng.choice([0.5, 1.0, 1.5, 2.0]) for j in rng.sample(range(60), 20)}
            for i in range(queries)
            if rng.random() > 0.1
        }
        for name in ("a", "b", "c")
    }
    return qrels, runs


def _assert_equal(got, qrels, runs, level):
    for name, run in runs.items():
        full = evaluate(qrels, run, MEASURES, level=level)
        assert got[name].keys() == full.keys()
        for measure in full:
            assert got[name][measure].keys() == full[measure].keys()
            for qid, value in full[measure].items():
                assert got[name][measure][qid] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize("level", [1, 2])
def test_equals_full_evaluation_and_recomputes_only_changed_queries(level):
    qrels, runs = _data()
    board = IncrementalEvaluator(MEASURES, level=level)
    _assert_equal(board.evaluate(qrels, runs), qrels, runs, level)
    assert board.evaluated_queries == 3 * 40
    assert board.evaluate(qrels, runs) and board.evaluated_queries == 0
    qrels["q7"]["d999"] = 3  # a new label on one query
    _assert_equal(board.evaluate(qrels, runs), qrels, runs, level)
    assert board.evaluated_queries == 3
    runs["b"]["q1"] = {"d1": 9.0}  # one run changed one query
    _assert_equal(board.evaluate(qrels, runs), qrels, runs, level)
    assert board.evaluated_queries == 1
    del qrels["q2"]  # a query leaves the qrels: it leaves the means too
    _assert_equal(board.evaluate(qrels, runs), qrels, runs, level)
    assert board.evaluated_queries == 0
