"""Tests for core.simulation: labelling orders, tau per batch, bootstrap intervals.

A 2-query, 3-run toy whose orders, measures and taus are worked out by hand
in the comments; P@2 at level 1 keeps the arithmetic checkable.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from core.metrics import evaluate
from core.simulation import (
    CSV_COLUMNS,
    active_order,
    bootstrap_interval,
    depth_order,
    random_order,
    simulate_labelling,
    top_n_order,
)

ORACLE = {"q1": {"d1": 2, "d3": 1, "d4": 1}, "q2": {"d4": 1, "d6": 2, "d5": 0}}
RUNS = {
    # trec order top 2: q1 [d1, d2], q2 [d4, d5]          P@2: .5, .5 -> .5
    "A": {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 3.0, "d5": 2.0}},
    # q1 [d2, d5], q2 [d5, d4]                            P@2: 0, .5 -> .25
    "B": {"q1": {"d2": 3.0, "d5": 2.0, "d1": 1.0}, "q2": {"d5": 3.0, "d4": 2.0, "d6": 1.0}},
    # q1 [d3, d4], q2 [d6, d4] (a tie: doc id descending) P@2: 1, 1 -> 1
    "C": {"q1": {"d3": 3.0, "d4": 2.0}, "q2": {"d6": 2.0, "d4": 2.0}},
}
PROBS = {"q1": {"d1": 0.9, "d2": 0.2, "d3": 0.55, "d4": 0.05, "d5": 0.7}, "q2": {"d4": 0.65, "d5": 0.4, "d6": 0.97}}
QUERIES = ["q1", "q2"]

# rank 1: q1 A d1, B d2, C d3; q2 A d4, B d5, C d6; rank 2: q1 A d2 (taken), B d5, C d4; q2 all taken
DEPTH = [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d4"), ("q2", "d5"), ("q2", "d6"), ("q1", "d5"), ("q1", "d4")]


def test_depth_order_is_incremental_depth_pooling():
    assert depth_order(RUNS, QUERIES, 2) == DEPTH
    assert depth_order(RUNS, QUERIES, 1) == DEPTH[:6]


def test_top_n_order_round_robin_by_ensemble():
    # q1 min-max over the pool: A d1 1, d2 .5, d3 0; B d2 1, d5 .5, d1 0; C d3 1, d4 0
    #   means: d2 1.5/3, d1 1/3, d3 1/3 (tie: d3 first, doc id descending), d5 .5/3, d4 0
    # q2: A d4 1, d5 0; B d5 1, d4 .5, d6 0; C d6 = d4 (equal scores: both 1)
    #   sums: d4 2.5, d5 1, d6 1 (tie: d6 first)
    assert top_n_order(RUNS, QUERIES, 2) == [
        ("q1", "d2"),
        ("q2", "d4"),
        ("q1", "d3"),
        ("q2", "d6"),
        ("q1", "d1"),
        ("q2", "d5"),
        ("q1", "d5"),
        ("q1", "d4"),
    ]


def test_random_order_is_a_seeded_permutation():
    order = random_order(DEPTH, 0)
    assert order == [
        ("q1", "d3"),
        ("q2", "d5"),
        ("q2", "d4"),
        ("q1", "d5"),
        ("q2", "d6"),
        ("q1", "d1"),
        ("q1", "d2"),
        ("q1", "d4"),
    ]
    assert random_order(DEPTH, 0) == order and sorted(order) == sorted(DEPTH)
    assert random_order(DEPTH, 1) != order


def test_active_order_most_uncertain_first_and_band():
    # |p - .5|: q1d3 .05, q2d5 .1, q2d4 .15, q1d5 .2, q1d2 .3, q1d1 .4, q1d4 .45, q2d6 .47
    human, confident = active_order(DEPTH, PROBS)
    assert human == [
        ("q1", "d3"),
        ("q2", "d5"),
        ("q2", "d4"),
        ("q1", "d5"),
        ("q1", "d2"),
        ("q1", "d1"),
        ("q1", "d4"),
        ("q2", "d6"),
    ]
    assert confident == []
    human, confident = active_order(DEPTH, PROBS, band=(0.1, 0.9))
    assert human == [("q1", "d3"), ("q2", "d5"), ("q2", "d4"), ("q1", "d5"), ("q1", "d2"), ("q1", "d1")]  # .9 is in
    assert confident == [("q2", "d6"), ("q1", "d4")]  # reference order


def test_active_order_errors_name_the_pair_and_band():
    with pytest.raises(ValueError, match=r"query 'q2', document 'd6'"):
        active_order(DEPTH, {"q1": PROBS["q1"], "q2": {"d4": 0.5, "d5": 0.5}})
    with pytest.raises(ValueError, match=r"probabilities: query 'q1', document 'd1' must be a number in \[0, 1\]"):
        active_order(DEPTH, {"q1": {**PROBS["q1"], "d1": 1.5}, "q2": PROBS["q2"]})
    with pytest.raises(ValueError, match="band: low must be below high"):
        active_order(DEPTH, PROBS, band=(0.9, 0.1))


def test_taus_and_metrics_per_batch_by_hand():
    result = simulate_labelling(ORACLE, RUNS, depth=2, measure="P@2", level=1, batch_size=3, strategies=["depth"])
    assert result.full == {"A": 0.5, "B": 0.25, "C": 1.0}
    assert result.pool_pairs == 8 and result.queries == 2
    rows = result.rows
    assert [(r.batch, r.labelled_pairs, r.relevant_found) for r in rows] == [(1, 3, 2), (2, 6, 4), (3, 8, 5)]
    # batch 1 labels q1 d1 (2), d2 (unjudged: stays absent), d3 (1); q2 has no label: 0 for every run.
    #   A: q1 [d1, d2] .5, q2 0 -> .25; B: q1 [d2, d5] 0 -> 0; C: q1 [d3, d4] (d4 unlabelled) .5 -> .25
    assert rows[0].metric == {"A": 0.25, "B": 0.0, "C": 0.25}
    # against (.5, .25, 1): A>B concordant, A=C a tie in x, B<C concordant: tau-b = 2 / sqrt(2 * 3)
    assert rows[0].tau == pytest.approx(2 / math.sqrt(6), abs=1e-12)
    assert rows[0].tau == pytest.approx(kendalltau([0.25, 0.0, 0.25], [0.5, 0.25, 1.0]).statistic, abs=1e-12)
    # batch 2 adds q2's three labels: A .5, B .25, C (.5 + 1) / 2: the same order as the full labels
    assert rows[1].metric == {"A": 0.5, "B": 0.25, "C": 0.75} and rows[1].tau == 1.0
    # the pool holds every judged pair: the last batch is the full labels
    assert rows[2].metric == result.full and rows[2].tau == 1.0
    assert result.pairs_to_reach(0.9) == {"depth": 6}
    assert result.pairs_to_reach(0.5) == {"depth": 3}


def test_full_labels_match_trec_eval_and_last_batch_is_tau_one():
    strategies = ["depth", "top-n", "random", "active"]
    result = simulate_labelling(ORACLE, RUNS, depth=2, batch_size=5, strategies=strategies, probabilities=PROBS)
    assert result.measure == "nDCG@10"
    for name, run in RUNS.items():
        assert result.full[name] == pytest.approx(evaluate(ORACLE, run, ["nDCG@10"])["nDCG@10"]["all"], abs=1e-12)
    assert result.strategies == strategies
    for strategy in strategies:
        rows = [r for r in result.rows if r.strategy == strategy]
        assert [r.labelled_pairs for r in rows] == [5, 8]
        assert rows[-1].tau == 1.0 and rows[-1].metric == pytest.approx(result.full, abs=1e-12)
    assert result.saved == {"active": 0}


def test_top_n_batch_by_hand():
    result = simulate_labelling(ORACLE, RUNS, depth=2, measure="P@2", batch_size=3, strategies=["top-n"])
    # batch 1 labels q1 d2 (unjudged), q2 d4 (1), q1 d3 (1)
    #   A: q1 [d1, d2] 0, q2 [d4, d5] .5 -> .25; B: q1 0, q2 [d5, d4] .5 -> .25; C: q1 [d3, d4] .5, q2 [d6, d4] .5 -> .5
    first = result.rows[0]
    assert first.metric == {"A": 0.25, "B": 0.25, "C": 0.5}
    assert first.tau == pytest.approx(kendalltau([0.25, 0.25, 0.5], [0.5, 0.25, 1.0]).statistic, abs=1e-12)


def test_active_with_band_labels_confident_pairs_for_free():
    result = simulate_labelling(
        ORACLE, RUNS, depth=2, measure="P@2", batch_size=3, strategies=["active"], probabilities=PROBS, band=(0.1, 0.9)
    )
    # q2 d6 (.97 > .9) is labelled relevant (grade = level 1), q1 d4 (.05 < .1) non-relevant: the oracle says 1
    assert result.saved == {"active": 2} and result.model_wrong == {"active": 1}
    rows = result.rows
    assert [(r.labelled_pairs, r.model_labelled) for r in rows] == [(3, 2), (6, 2)]
    # the end: q1 d1 2, d3 1, d4 0 (model); q2 d4 1, d5 0, d6 1 (model)
    #   A .5, B .25, C: q1 [d3, d4] .5, q2 [d6, d4] 1 -> .75: ranking as the full labels'
    assert rows[-1].metric == {"A": 0.5, "B": 0.25, "C": 0.75} and rows[-1].tau == 1.0


def test_bootstrap_interval_contains_estimate_and_is_seeded():
    rng = np.random.default_rng(3)
    values = rng.random(40)
    lo, hi = bootstrap_interval(values, resamples=1000, seed=0)
    assert lo < values.mean() < hi
    assert (lo, hi) == bootstrap_interval(values, resamples=1000, seed=0)
    assert (lo, hi) != bootstrap_interval(values, resamples=1000, seed=1)
    assert bootstrap_interval([0.4] * 5) == pytest.approx((0.4, 0.4))
    # the same resampled means as a plain loop over index draws with the same generator
    draws = np.random.default_rng(0).integers(0, 40, size=(1000, 40))
    means = values[draws].mean(axis=1)
    assert (lo, hi) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])), abs=1e-12)


def test_simulation_intervals_contain_metric_and_repeat():
    kwargs = dict(depth=2, measure="nDCG@10", batch_size=2, strategies=["depth", "random"], seed=5)
    first = simulate_labelling(ORACLE, RUNS, **kwargs)
    again = simulate_labelling(ORACLE, RUNS, **kwargs)
    assert first.records() == again.records()
    for row in first.rows:
        for run in first.runs:
            assert row.lo[run] - 1e-12 <= row.metric[run] <= row.hi[run] + 1e-12


def test_records_and_csv():
    result = simulate_labelling(ORACLE, RUNS, depth=2, measure="P@2", batch_size=3, strategies=["depth"])
    records = result.records()
    assert len(records) == 3 * 3 and tuple(records[0]) == CSV_COLUMNS
    assert records[1] == {
        "strategy": "depth",
        "batch": 1,
        "labelled_pairs": 3,
        "model_labelled": 0,
        "relevant_found": 2,
        "recall": 0.4,  # 2 of the pool's 5 relevant pairs (q1 d1, d3, d4; q2 d4, d6)
        "tau": pytest.approx(0.816496580927726),
        "run": "B",
        "metric": 0.0,
        "lo": 0.0,
        "hi": 0.0,
        "full": 0.25,
    }
    lines = result.to_csv().splitlines()
    assert lines[0] == ",".join(CSV_COLUMNS)
    assert lines[1] == "depth,1,3,0,2,0.400000,0.816497,A,0.250000,0.000000,0.500000,0.500000"
    assert len(lines) == 10


def test_tau_is_nan_while_nothing_ranks():
    # one batch labels only q1 d2, which the oracle does not judge: every run scores 0
    result = simulate_labelling(ORACLE, RUNS, depth=2, measure="P@2", batch_size=1, strategies=["top-n"])
    # batch 2 adds q2 d4 (1): every run has P@2 .25 on q2, still no order
    assert math.isnan(result.rows[0].tau) and math.isnan(result.rows[1].tau)
    assert [r.tau for r in result.rows[2:4]] == pytest.approx([2 / math.sqrt(6)] * 2)
    assert result.pairs_to_reach() == {"top-n": 5}
    assert "tau" in result.to_csv().splitlines()[0] and ",nan," in result.to_csv().splitlines()[1]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategies": ["deep"]}, "strategies: unknown 'deep'"),
        ({"strategies": ["active"]}, "strategies: 'active' needs"),
        ({"depth": 0}, "depth must be a positive integer"),
        ({"batch_size": 0}, "batch_size must be a positive integer"),
        ({"measure": "nope@3"}, "unknown measure"),
        ({"strategies": "depth"}, "strategies must be a sequence"),
    ],
)
def test_errors_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_labelling(ORACLE, RUNS, **kwargs)


def test_errors_runs_and_oracle():
    with pytest.raises(ValueError, match="runs: at least two runs"):
        simulate_labelling(ORACLE, {"A": RUNS["A"]})
    with pytest.raises(ValueError, match="oracle: the qrels judge no query"):
        simulate_labelling({}, RUNS)
    with pytest.raises(ValueError, match="runs: no run retrieved"):
        simulate_labelling({"q9": {"x": 1}}, RUNS)


def test_progress_counts_every_batch():
    calls = []
    simulate_labelling(
        ORACLE,
        RUNS,
        depth=2,
        batch_size=3,
        strategies=["depth", "random"],
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(1, 6), (2, 6), (3, 6), (4, 6), (5, 6), (6, 6)]


def test_incremental_evaluation_equals_evaluating_every_prefix():
    """Only the queries a batch touched are re-evaluated: the means equal a full trec_eval pass per prefix."""
    rng = np.random.default_rng(7)
    docs = [f"d{i}" for i in range(30)]
    queries = [f"q{i}" for i in range(6)]
    oracle = {q: {str(d): int(rng.integers(0, 4)) for d in rng.choice(docs, 12, replace=False)} for q in queries}
    runs = {
        name: {q: {str(d): float(rng.random()) for d in rng.choice(docs, 15, replace=False)} for q in queries}
        for name in ("r1", "r2", "r3", "r4")
    }
    result = simulate_labelling(oracle, runs, depth=8, batch_size=7, measure="MAP", level=2, strategies=["depth"])
    order = depth_order(runs, sorted(queries), 8)
    for row in result.rows:
        labels = {}
        for qid, doc in order[: row.labelled_pairs]:
            if doc in oracle[qid]:
                labels.setdefault(qid, {})[doc] = oracle[qid][doc]
        for name, run in runs.items():
            per = evaluate(labels, run, ["MAP"], level=2)["MAP"] if labels else {}
            assert row.metric[name] == pytest.approx(sum(per.get(q, 0.0) for q in queries) / len(queries), abs=1e-12)
    assert len(result.rows) == math.ceil(len(order) / 7) == 18
