"""core.simulation's active-retrain strategy and the active rules, with a scripted model worked out by hand.

The toy is tests/core/test_simulation.py's (2 queries, 3 runs, an 8-pair
depth-2 pool holding 5 relevant pairs: q1 d1, d3, d4 and q2 d4, d6).  The
:class:`Scripted` selector returns, after ``k`` updates, the probabilities of
its ``k``-th script entry and records what it was asked and taught, so the
replay's every step can be checked: which pairs are scored, which labels
reach the model, how many rounds run.  The real cross-encoder is tested in
tests/core/training/test_active_selector.py.
"""

from __future__ import annotations

import pytest

from core.simulation import RULES, active_order, simulate_labelling
from tests.core.test_simulation import DEPTH, ORACLE, PROBS, RUNS


class Scripted:
    """A selector whose probabilities after ``k`` updates are ``script[k]`` (``{(qid, docid): p}``)."""

    def __init__(self, *script: dict[tuple[str, str], float]) -> None:
        self.script = script
        self.rounds = 0
        self.resets = 0
        self.scored: list[list[tuple[str, str]]] = []
        self.taught: list[tuple[dict[tuple[str, str], int], int]] = []

    def reset(self) -> None:
        self.rounds = 0
        self.resets += 1

    def probabilities(self, pairs):
        self.scored.append(list(pairs))
        return [self.script[self.rounds][pair] for pair in pairs]

    def update(self, labels, level):
        self.taught.append((dict(labels), level))
        self.rounds += 1


BASE = {(q, d): p for q, docs in PROBS.items() for d, p in docs.items()}


def test_the_rules_order_by_uncertainty_or_by_probability():
    # uncertain: |p - .5| ascending (tests/core/test_simulation.py); relevant: p descending
    assert active_order(DEPTH, PROBS, rule="relevant")[0] == [
        ("q2", "d6"),
        ("q1", "d1"),
        ("q1", "d5"),
        ("q2", "d4"),
        ("q1", "d3"),
        ("q2", "d5"),
        ("q1", "d2"),
        ("q1", "d4"),
    ]
    assert RULES == ("uncertain", "relevant")
    with pytest.raises(ValueError, match="rule: unknown 'sure'; known: uncertain, relevant"):
        active_order(DEPTH, PROBS, rule="sure")


def test_retrains_between_batches_and_picks_from_the_new_scores():
    after_one = {("q1", "d4"): 0.5, ("q1", "d1"): 0.45, ("q2", "d6"): 0.6, ("q1", "d2"): 0.1, ("q1", "d5"): 0.95}
    after_two = {("q1", "d2"): 0.5, ("q1", "d5"): 0.3}
    model = Scripted(BASE, after_one, after_two)
    result = simulate_labelling(
        ORACLE, RUNS, depth=2, batch_size=3, strategies=["active", "active-retrain"], selector=model, resamples=50
    )
    # the base scores once for both strategies (the whole pool, depth order), then only what is left
    assert model.scored == [
        DEPTH,
        [("q1", "d1"), ("q1", "d2"), ("q2", "d6"), ("q1", "d5"), ("q1", "d4")],
        [("q1", "d2"), ("q1", "d5")],
    ]
    # 3 batches, 2 rounds: after batch 1 the model learns its labels, after batch 2 all six (q1 d2 unjudged: 0)
    assert model.taught == [
        ({("q1", "d3"): 1, ("q2", "d5"): 0, ("q2", "d4"): 1}, 1),
        ({("q1", "d3"): 1, ("q2", "d5"): 0, ("q2", "d4"): 1, ("q1", "d4"): 1, ("q1", "d1"): 2, ("q2", "d6"): 2}, 1),
    ]
    assert result.training_rounds == {"active-retrain": 2} and model.resets == 2
    fixed, retrained = result.orders["active"], result.orders["active-retrain"]
    assert fixed[:3] == retrained[:3] == [("q1", "d3"), ("q2", "d5"), ("q2", "d4")]  # the base model's batch
    assert retrained[3:] == [("q1", "d4"), ("q1", "d1"), ("q2", "d6"), ("q1", "d2"), ("q1", "d5")]
    assert fixed[3:6] == [("q1", "d5"), ("q1", "d2"), ("q1", "d1")]
    # recall of the 5 relevant pairs: the retrained model finds all of them with the second batch
    assert result.pool_relevant == 5
    assert result.recalls("active") == [(3, 0.4), (6, 0.6), (8, 1.0)]
    assert result.recalls("active-retrain") == [(3, 0.4), (6, 1.0), (8, 1.0)]
    assert result.pairs_to_recall(0.9) == {"active": 8, "active-retrain": 6}
    last = [row for row in result.rows if row.strategy == "active-retrain"][-1]
    assert last.metric == pytest.approx(result.full, abs=1e-12) and last.tau == 1.0


def test_with_a_band_the_model_labels_the_rest_once_it_is_sure():
    # base, band (.1, .9): q1 d4 (.05) and q2 d6 (.97) are out; 6 pairs in, uncertain first: q1 d3, q2 d5 | ...
    after_one = {
        ("q1", "d1"): 0.6,
        ("q1", "d2"): 0.05,  # model: 0, unjudged: right
        ("q2", "d4"): 0.5,
        ("q2", "d6"): 0.95,  # model: relevant, grade 2: right
        ("q1", "d5"): 0.99,  # model: relevant, unjudged: wrong
        ("q1", "d4"): 0.02,  # model: 0, grade 1: wrong
    }
    model = Scripted(BASE, after_one)
    calls = []
    result = simulate_labelling(
        ORACLE,
        RUNS,
        depth=2,
        batch_size=2,
        strategies=["active-retrain"],
        selector=model,
        band=(0.1, 0.9),
        resamples=50,
        progress=lambda done, total: calls.append((done, total)),
    )
    rows = result.rows
    # batch 2 takes the only two pairs left in the band; the model labels the other four and labelling stops
    assert result.orders["active-retrain"] == [("q1", "d3"), ("q2", "d5"), ("q2", "d4"), ("q1", "d1")]
    assert [(r.labelled_pairs, r.model_labelled) for r in rows] == [(2, 0), (4, 4)]
    assert result.training_rounds == {"active-retrain": 1}
    assert result.saved == {"active-retrain": 4} and result.model_wrong == {"active-retrain": 2}
    # relevant labels: q1 d3, q2 d4, q1 d1 (human) + q2 d6, q1 d5 (model) = 5; truly found: 4 of 5
    assert [(r.relevant_found, r.recall) for r in rows] == [(1, 0.2), (5, 0.8)]
    assert calls == [(1, 4), (2, 4), (4, 4)]  # 4 batches planned, 2 needed: the bar still completes


def test_a_model_sure_of_everything_after_a_round_labels_the_rest_in_a_row_of_its_own():
    sure = {pair: (0.99 if ORACLE.get(pair[0], {}).get(pair[1], 0) >= 1 else 0.01) for pair in BASE}
    model = Scripted(BASE, sure)
    result = simulate_labelling(
        ORACLE, RUNS, depth=2, batch_size=2, strategies=["active-retrain"], selector=model, band=(0.1, 0.9)
    )
    assert [(r.labelled_pairs, r.model_labelled, r.recall) for r in result.rows] == [(2, 0, 0.2), (2, 6, 1.0)]
    assert result.model_wrong == {"active-retrain": 0} and result.training_rounds == {"active-retrain": 1}


def test_active_takes_the_selectors_base_scores_when_no_probabilities_are_given():
    given = simulate_labelling(ORACLE, RUNS, depth=2, batch_size=3, strategies=["active"], probabilities=PROBS)
    scored = simulate_labelling(ORACLE, RUNS, depth=2, batch_size=3, strategies=["active"], selector=Scripted(BASE))
    assert scored.records() == given.records() and scored.orders == given.orders
    assert scored.training_rounds == {}


def test_the_same_selector_and_seed_give_the_same_replay():
    script = (BASE, {pair: 0.5 for pair in BASE}, {pair: 0.5 for pair in BASE})
    kwargs = dict(depth=2, batch_size=3, strategies=["random", "active-retrain"], seed=3, rule="relevant")
    first = simulate_labelling(ORACLE, RUNS, selector=Scripted(*script), **kwargs)
    again = simulate_labelling(ORACLE, RUNS, selector=Scripted(*script), **kwargs)
    assert first.records() == again.records() and first.orders == again.orders
    assert first.rule == "relevant"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"strategies": ["active-retrain"]}, "strategies: 'active-retrain' needs a selector"),
        ({"strategies": ["active-retrain"], "probabilities": PROBS}, "'active-retrain' needs a selector"),
        ({"strategies": ["active"], "selector": Scripted(BASE), "rule": "sure"}, "rule: unknown 'sure'"),
        (
            {"strategies": ["active"], "selector": Scripted({**BASE, ("q1", "d1"): 1.5})},
            r"probabilities: query 'q1', document 'd1' must be a number in \[0, 1\]",
        ),
    ],
)
def test_errors_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        simulate_labelling(ORACLE, RUNS, depth=2, **kwargs)


def test_a_selector_that_scores_too_few_pairs_is_named():
    class Short(Scripted):
        def probabilities(self, pairs):
            return super().probabilities(pairs)[:-1]

    with pytest.raises(ValueError, match="selector: returned 7 probabilities for 8 pairs"):
        simulate_labelling(ORACLE, RUNS, depth=2, strategies=["active-retrain"], selector=Short(BASE))
