"""Tests for core.qc: DuReader-retrieval package QC (sample, two reviewers, 93%, revise, repeat)."""

from __future__ import annotations

import json

import pytest

from core.qc import (
    Disagreement,
    QcCycle,
    QcResult,
    QcRound,
    package_accuracy,
    qc_decision,
    round_seed,
    sample_for_qc,
)

PACKAGE = [(f"q{i // 10:02d}", f"d{i:03d}") for i in range(100)]
TRUTH = {p: i % 4 for i, p in enumerate(PACKAGE)}
REVIEWS = {p: {"rev1": g, "rev2": g} for p, g in TRUTH.items()}


def with_errors(n: int) -> dict[tuple[str, str], int]:
    """The annotator's labels with the first ``n`` pairs wrong (grade shifted by one)."""
    labels = dict(TRUTH)
    for p in PACKAGE[:n]:
        labels[p] = (labels[p] + 1) % 4
    return labels


# --- sampling ---------------------------------------------------------------


def test_sample_size_distinct_and_deterministic() -> None:
    pairs = [("q", f"d{i:03d}") for i in range(250)]
    s = sample_for_qc(pairs, seed=3)
    assert len(s) == 100 and len(set(s)) == 100 and set(s) <= set(pairs)
    assert sample_for_qc(list(reversed(pairs)), seed=3) == s  # input order does not matter
    assert sample_for_qc(pairs, seed=4) != s
    assert len(sample_for_qc(pairs, size=30, seed=3)) == 30


def test_small_package_is_reviewed_entirely() -> None:
    pairs = [("q", f"d{i}") for i in range(40)]
    s = sample_for_qc(pairs, seed=1)
    assert sorted(s) == sorted(pairs)


def test_sample_rejects_duplicates_and_bad_size() -> None:
    with pytest.raises(ValueError, match="more than once"):
        sample_for_qc([("q", "a"), ("q", "a")], seed=0)
    with pytest.raises(ValueError, match="size"):
        sample_for_qc([("q", "a")], size=0, seed=0)


def test_round_seed_differs_by_round_and_package() -> None:
    assert round_seed(1, "ann-p001", 1) != round_seed(1, "ann-p001", 2)
    assert round_seed(1, "ann-p001", 1) != round_seed(1, "ann-p002", 1)
    assert round_seed(1, "ann-p001", 1) == round_seed(1, "ann-p001", 1)


# --- accuracy and decision --------------------------------------------------


def test_planted_errors_fall_below_threshold() -> None:
    r = package_accuracy(with_errors(10), REVIEWS)
    assert (r.accuracy, r.n_checked, r.n_correct) == (0.9, 100, 90)
    assert [d.pair for d in r.disagreements] == PACKAGE[:10]
    assert r.disagreements[0] == Disagreement(PACKAGE[0], 1, {"rev1": 0, "rev2": 0}, 0)
    assert qc_decision(r) == "revise"
    assert qc_decision(package_accuracy(with_errors(0), REVIEWS)) == "pass"


def test_threshold_is_inclusive_and_exact() -> None:
    assert qc_decision(package_accuracy(with_errors(7), REVIEWS)) == "pass"  # 93 / 100
    assert qc_decision(package_accuracy(with_errors(8), REVIEWS)) == "revise"  # 92 / 100
    assert qc_decision(package_accuracy(with_errors(8), REVIEWS), threshold=0.92) == "pass"


def test_reviewer_disagreement_rules() -> None:
    ann = {("q", "a"): 2, ("q", "b"): 2, ("q", "c"): 1}
    rev = {
        ("q", "a"): {"r1": 2, "r2": 3},  # reviewers disagree; annotator matches r1
        ("q", "b"): {"r1": 2, "r2": 2},  # all agree
        ("q", "c"): {"r1": 0, "r2": 3},  # reviewers disagree; annotator matches neither
    }
    m = package_accuracy(ann, rev, rule="majority")
    assert (m.n_checked, m.n_correct, m.accuracy) == (1, 1, 1.0)
    assert m.reviewer_conflicts == [("q", "a"), ("q", "c")]
    a = package_accuracy(ann, rev, rule="all")
    assert (a.n_checked, a.n_correct) == (3, 1)
    assert [d.pair for d in a.disagreements] == [("q", "a"), ("q", "c")]
    assert a.disagreements[0].consensus is None
    y = package_accuracy(ann, rev, rule="any")
    assert (y.n_checked, y.n_correct) == (3, 2)
    assert [d.pair for d in y.disagreements] == [("q", "c")]


def test_three_reviewers_majority() -> None:
    ann = {("q", "a"): 2, ("q", "b"): 3}
    rev = {("q", "a"): {"r1": 2, "r2": 2, "r3": 3}, ("q", "b"): {"r1": 2, "r2": 2, "r3": 3}}
    r = package_accuracy(ann, rev)
    assert (r.n_checked, r.n_correct) == (2, 1)
    assert r.disagreements == [Disagreement(("q", "b"), 3, {"r1": 2, "r2": 2, "r3": 3}, 2)]


def test_binary_comparison_at_a_relevance_level() -> None:
    ann = {("q", "a"): 3, ("q", "b"): 1, ("q", "c"): 2}
    rev = {
        ("q", "a"): {"r1": 2, "r2": 3},  # both relevant at level 2
        ("q", "b"): {"r1": 0, "r2": 1},  # both not relevant
        ("q", "c"): {"r1": 1, "r2": 1},  # not relevant; annotator says relevant
    }
    graded = package_accuracy(ann, rev)
    assert (graded.n_checked, graded.n_correct) == (1, 0)
    binary = package_accuracy(ann, rev, relevance_level=2)
    assert (binary.n_checked, binary.n_correct) == (3, 2)
    assert binary.disagreements == [Disagreement(("q", "c"), 2, {"r1": 1, "r2": 1}, 0)]


def test_incomplete_reviews_block_the_decision() -> None:
    ann = {("q", "a"): 1, ("q", "b"): 1}
    rev = {("q", "a"): {"r1": 1, "r2": 1}, ("q", "b"): {"r1": 1}}
    r = package_accuracy(ann, rev)
    assert (r.n_checked, r.incomplete, r.complete) == (1, [("q", "b")], False)
    with pytest.raises(ValueError, match="not complete"):
        qc_decision(r)
    r2 = package_accuracy(ann, {("q", "a"): rev[("q", "a")]}, sample=[("q", "a"), ("q", "b")])
    assert r2.incomplete == [("q", "b")]
    with pytest.raises(ValueError, match="nothing|no pair"):
        qc_decision(package_accuracy(ann, {}))


def test_accuracy_input_errors() -> None:
    with pytest.raises(ValueError, match="no annotator label"):
        package_accuracy({}, {("q", "a"): {"r1": 1, "r2": 1}})
    with pytest.raises(ValueError, match="not in the sample"):
        package_accuracy({("q", "a"): 1}, {("q", "a"): {"r1": 1, "r2": 1}}, sample=[("q", "b")])
    with pytest.raises(ValueError, match="rule"):
        package_accuracy({}, {}, rule="mean")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="threshold"):
        qc_decision(QcResult(1.0, 1, 1), threshold=93)


# --- the cycle ---------------------------------------------------------------


def test_cycle_revise_then_pass_keeps_every_round() -> None:
    cycle = QcCycle("ann-p001", seed=5)
    assert cycle.state == "not_started"
    r1 = cycle.start_round(PACKAGE)
    assert cycle.state == "in_review"
    assert (r1.number, r1.seed, len(r1.sample)) == (1, round_seed(5, "ann-p001", 1), 100)
    with pytest.raises(ValueError, match="in_review"):
        cycle.start_round(PACKAGE)

    d1 = cycle.record_review(with_errors(10), REVIEWS)
    assert (d1.decision, d1.result.accuracy) == ("revise", 0.9)  # type: ignore[union-attr]
    assert cycle.state == "revising"
    with pytest.raises(ValueError, match="no round is in review"):
        cycle.record_review(TRUTH, REVIEWS)

    r2 = cycle.start_round(PACKAGE)  # the annotator fixed the errors
    assert r2.number == 2 and r2.seed != r1.seed and r2.sample != r1.sample
    d2 = cycle.record_review(TRUTH, REVIEWS)
    assert (d2.decision, d2.result.accuracy) == ("pass", 1.0)  # type: ignore[union-attr]
    assert cycle.state == "passed"
    assert [(r.number, r.decision) for r in cycle.history] == [(1, "revise"), (2, "pass")]
    with pytest.raises(ValueError, match="passed"):
        cycle.start_round(PACKAGE)


def test_cycle_incomplete_review_stays_in_review() -> None:
    cycle = QcCycle("p", seed=0, sample_size=10)
    rnd = cycle.start_round(PACKAGE)
    partial = {p: REVIEWS[p] for p in rnd.sample[:5]}
    with pytest.raises(ValueError, match="not complete"):
        cycle.record_review(TRUTH, partial)
    assert cycle.state == "in_review"
    assert cycle.record_review(TRUTH, {p: REVIEWS[p] for p in rnd.sample}).decision == "pass"


def test_history_round_trips_through_json() -> None:
    cycle = QcCycle("ann-p001", seed=5, sample_size=20)
    rnd = cycle.start_round(PACKAGE)
    cycle.record_review(with_errors(100), {p: REVIEWS[p] for p in rnd.sample})
    cycle.start_round(PACKAGE)
    records = json.loads(json.dumps([r.to_dict() for r in cycle.history]))
    rebuilt = [QcRound.from_dict(r) for r in records]
    assert rebuilt == cycle.history
    again = QcCycle("ann-p001", seed=5, sample_size=20, rounds=rebuilt)
    assert again.state == "in_review"
    with pytest.raises(ValueError, match="numbered"):
        QcCycle("x", seed=0, rounds=[rebuilt[1]])
