"""core.training.active.RetrainingSelector: a cross-encoder fine-tuned between batches, on tiny random BERTs.

The last tests run the labelling simulation on a toy built so that the base
model is misled and the labels correct it: per query, 2 relevant passages
"very fish ...", 2 relevant "the fish ...", 4 non-relevant "very dog ...".
The base model is first trained on other texts to believe the opposite
("very dog" relevant, "the fish" not), so it ranks the non-relevant pairs
first, "very fish" next and "the fish" last.  Fixed active selection
(most probably relevant first) must spend two batches on "very dog" pairs;
retraining learns from its first batch that "very dog" is not relevant and
from its second that "fish" is.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from core.simulation import simulate_labelling
from core.training.active import RetrainingSelector
from tests.core.training.conftest import TOPICS, make_tiny_encoder


@pytest.fixture(autouse=True)
def _one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the machine is shared; one thread is also what determinism assumes
    yield
    torch.set_num_threads(threads)


QUERIES = {f"q-{t}": f"{t} ?" for t in TOPICS[:4]}
FILL = ("old", "new", "big", "small")
PASSAGES: dict[str, str] = {}
ORACLE: dict[str, dict[str, int]] = {}
for _t in TOPICS[:4]:
    for _j in range(2):
        PASSAGES[f"a-{_t}-{_j}"] = f"very fish {FILL[_j]} ."  # relevant, with the word that misleads the base
        PASSAGES[f"b-{_t}-{_j}"] = f"the fish {FILL[_j + 2]} ."  # relevant
    for _j in range(4):
        PASSAGES[f"x-{_t}-{_j}"] = f"very dog {FILL[_j]} ."  # not relevant, what the base model prefers
    ORACLE[f"q-{_t}"] = {d: int(d[0] != "x") for d in PASSAGES if d.split("-")[1] == _t}
# two runs in opposite orders: their union at depth 10 is every passage of the query
RUNS = {
    "A": {q: {d: float(len(docs) - k) for k, d in enumerate(docs)} for q, docs in ORACLE.items()},
    "B": {q: {d: float(k) for k, d in enumerate(docs)} for q, docs in ORACLE.items()},
}
SETTINGS = dict(steps=20, batch_size=8, learning_rate=3e-3, max_length=32, device="cpu")


@pytest.fixture(scope="module")
def misled(tmp_path_factory):
    """A tiny cross-encoder trained (20 steps) to find "very dog" relevant and "the fish" not, saved to a folder."""
    root = tmp_path_factory.mktemp("active")
    plain = make_tiny_encoder(root / "plain", initializer_range=0.3, dropout=0.0)
    texts = {"v1": "very dog good .", "v2": "a very dog .", "n1": "the fish good .", "n2": "a fish ."}
    queries = {"m1": "what ?", "m2": "is it ?"}
    teacher = RetrainingSelector(plain, queries, texts, **{**SETTINGS, "batch_size": 4})
    teacher.update({(q, d): int(d[0] == "v") for q in queries for d in texts}, 1)
    return teacher.encoder.save(root / "misled")


def selector(folder, **changes):
    return RetrainingSelector(folder, QUERIES, PASSAGES, **{**SETTINGS, **changes})


@pytest.mark.slow
def test_a_round_changes_the_scores_of_the_same_pairs_towards_the_labels(misled):
    model = selector(misled)
    pairs = [("q-bread", "b-bread-0"), ("q-bread", "x-bread-0"), ("q-river", "b-river-1"), ("q-river", "x-river-3")]
    before = model.probabilities(pairs)
    model.update({pairs[0]: 1, pairs[1]: 0}, 1)
    after = model.probabilities(pairs)
    assert (model.rounds, model.steps_done) == (1, 20)
    assert not np.allclose(before, after, atol=1e-3)  # the same pairs, other scores: the weights moved
    # the labelled pairs went the labels' way, and so did the unlabelled pairs like them
    assert before[0] < before[1] and after[0] > after[1]
    assert after[2] - after[3] > before[2] - before[3]
    model.reset()
    assert model.rounds == 0 and np.array_equal(model.probabilities(pairs), before)


@pytest.mark.slow
def test_rounds_are_seeded_and_warm_start_differs_from_restarting(misled):
    labels = {("q-bread", "b-bread-0"): 1, ("q-bread", "x-bread-0"): 0, ("q-cat", "a-cat-1"): 1}
    pairs = [("q-cat", "b-cat-0"), ("q-cat", "x-cat-2"), ("q-market", "a-market-0")]

    def twice(**changes):
        model = selector(misled, steps=5, **changes)
        model.update(labels, 1)
        model.update(dict(reversed(labels.items())), 1)  # the mapping's order does not matter
        return model.probabilities(pairs)

    warm = twice()
    assert np.array_equal(warm, twice())
    assert not np.allclose(warm, twice(seed=1), atol=1e-4)
    assert not np.allclose(warm, twice(from_base=True), atol=1e-4)


def test_refuses_no_labels_and_pairs_without_texts(misled):
    model = selector(misled)
    with pytest.raises(ValueError, match="labels: a round of fine-tuning needs at least one labelled pair"):
        model.update({}, 1)
    with pytest.raises(ValueError, match="selector: passage 'nope' has no text"):
        model.update({("q-cat", "nope"): 1}, 1)
    with pytest.raises(ValueError, match="selector: query 'q-9' has no text"):
        model.probabilities([("q-9", "a-cat-0")])
    with pytest.raises(ValueError, match="steps must be a positive integer"):
        selector(misled, steps=0)


def simulate(model, strategies, batch_size=8):
    return simulate_labelling(
        ORACLE,
        RUNS,
        depth=10,
        batch_size=batch_size,
        strategies=strategies,
        selector=model,
        rule="relevant",
        resamples=50,
    )


@pytest.mark.slow
def test_retraining_finds_the_relevant_pairs_the_misled_base_model_puts_last(misled):
    model = selector(misled)
    pairs = [(q, d) for q in ORACLE for d in ORACLE[q]]
    base = dict(zip(pairs, model.probabilities(pairs)))
    # the toy works as designed: every "very dog" pair above every "very fish" pair above every "the fish" pair
    kinds = {k: [v for (q, d), v in base.items() if d[0] == k] for k in "xab"}
    assert min(kinds["x"]) > max(kinds["a"]) and min(kinds["a"]) > max(kinds["b"])
    result = simulate(model, ["random", "active", "active-retrain"])
    # 32 pooled pairs, 16 relevant, batches of 8: the fixed model labels the 16 "very dog" pairs first
    assert (result.pool_pairs, result.pool_relevant) == (32, 16)
    assert result.recalls("active") == [(8, 0.0), (16, 0.0), (24, 0.5), (32, 1.0)]
    retrained = [r for _, r in result.recalls("active-retrain")]
    assert retrained[0] == 0.0 and retrained[1] >= 0.5 and retrained[2] == 1.0
    assert all(r >= f for r, (_, f) in zip(retrained, result.recalls("active")))
    # the first batch is the base model's, the same for both; the rest follows the retrained model
    assert result.orders["active-retrain"][:8] == result.orders["active"][:8]
    assert result.orders["active-retrain"][8:16] != result.orders["active"][8:16]
    # one round between two batches: 4 batches, 3 rounds of 20 steps
    assert result.training_rounds == {"active-retrain": 3}
    assert (model.rounds, model.steps_done) == (3, 60)


def test_the_simulation_repeats_with_the_same_seed(misled):
    first = simulate(selector(misled, steps=5), ["active-retrain"], batch_size=16)
    again = simulate(selector(misled, steps=5), ["active-retrain"], batch_size=16)
    assert first.records() == again.records() and first.orders == again.orders
    assert first.training_rounds == {"active-retrain": 1}
