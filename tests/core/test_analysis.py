"""Tests for core.analysis: hand-computed values and cross-checks against scipy / brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from core.analysis import (
    LEXICAL_LEAKAGE_THRESHOLD,
    UNGROUPED,
    UNTAGGED,
    CategoryMean,
    LeakPair,
    QueryDelta,
    char_bigrams,
    compare_qrels_versions,
    compare_runs,
    find_leakage,
    find_lexical_leakage,
    intra_list_similarity,
    judged_per_query,
    label_distribution,
    length_stats,
    length_stats_of,
    metrics_by_category,
    metrics_by_group,
    paired_randomization_test,
    paired_t_test,
    per_query_deltas,
    relevant_positions,
    sampled_intra_list_similarity,
)
from core.metrics import evaluate
from core.types import Passage

SQRT3 = math.sqrt(3.0)


# ---------------------------------------------------------------- deltas


def test_per_query_deltas_order_and_values():
    a = {"P@1": {"q2": 1.0, "q1": 0.5, "q3": 0.0, "q4": 0.25, "all": 0.4375}}
    b = {"P@1": {"q2": 1.0, "q1": 0.0, "q3": 0.5, "q4": 0.0, "all": 0.375}}
    rows = per_query_deltas(a, b, "p@1")  # any spelling
    assert rows == [
        QueryDelta("q1", 0.5, 0.0, -0.5),  # |0.5| tie broken by qid
        QueryDelta("q3", 0.0, 0.5, 0.5),
        QueryDelta("q4", 0.25, 0.0, -0.25),
        QueryDelta("q2", 1.0, 1.0, 0.0),
    ]


def test_per_query_deltas_rejects_different_queries_and_missing_measure():
    a = {"P@1": {"q1": 1.0}}
    b = {"P@1": {"q2": 1.0}}
    with pytest.raises(ValueError, match="different queries"):
        per_query_deltas(a, b, "P@1")
    with pytest.raises(KeyError, match="MAP"):
        per_query_deltas(a, a, "MAP")


def test_compare_runs_means_wins_and_tests():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run_a = {"q1": {"d1": 1.0, "x": 2.0}, "q2": {"d2": 1.0}, "q3": {"x": 1.0}}  # RR 1/2, 1, 0
    run_b = {"q1": {"d1": 3.0, "x": 2.0}, "q2": {"d2": 1.0}, "q3": {"d3": 1.0}}  # RR 1, 1, 1
    out = compare_runs(qrels, run_a, run_b, ["mrr@10"], seed=1)
    c = out["MRR@10"]
    assert c.a == pytest.approx(0.5) and c.b == pytest.approx(1.0) and c.delta == pytest.approx(0.5)
    assert (c.n, c.wins, c.losses, c.ties) == (3, 2, 0, 1)
    assert [d.qid for d in c.deltas] == ["q3", "q1", "q2"]
    ref = stats.ttest_rel([1.0, 1.0, 1.0], [0.5, 1.0, 0.0])
    assert c.t_test.p_value == pytest.approx(ref.pvalue)
    # exact randomisation over 2^3 sign patterns of d = (0.5, 0, 1): sums 1.5, 1.5, -0.5, -0.5, 0.5, 0.5, -1.5, -1.5
    # observed 1.5 -> P(null >= obs) = 2/8, two-sided 4/8
    assert c.randomization.p_value == pytest.approx(0.5)
    assert c.randomization.statistic == pytest.approx(0.5)


def test_compare_runs_intersection_uses_queries_of_both_runs():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    run_a = {"q1": {"d1": 1.0}, "q2": {"d2": 1.0}}
    run_b = {"q1": {"d1": 1.0}}
    assert compare_runs(qrels, run_a, run_b, ["P@1"], significance=False)["P@1"].b == 0.5
    c = compare_runs(qrels, run_a, run_b, ["P@1"], intersection=True)["P@1"]
    assert (c.n, c.a, c.b, c.t_test) == (1, 1.0, 1.0, None)


# ---------------------------------------------------------------- significance


def test_t_test_hand_case():
    # d = (1, 2, 3): mean 2, s = 1, t = 2 / (1 / sqrt 3) = 2 sqrt 3;
    # with 2 df, P(T >= t) = (1 - t / sqrt(t^2 + 2)) / 2, so p = 1 - sqrt(12/14)
    r = paired_t_test([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    assert r.statistic == pytest.approx(2 * SQRT3)
    assert r.p_value == pytest.approx(1 - math.sqrt(12 / 14))
    assert r.n == 3
    flipped = paired_t_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert flipped.statistic == pytest.approx(-2 * SQRT3) and flipped.p_value == pytest.approx(r.p_value)


def test_t_test_matches_scipy_and_pairs_by_qid():
    rng = np.random.default_rng(3)
    a = rng.random(40)
    b = a + rng.normal(0.05, 0.2, 40)
    ref = stats.ttest_rel(b, a)
    r = paired_t_test(list(a), list(b))
    assert r.statistic == pytest.approx(ref.statistic) and r.p_value == pytest.approx(ref.pvalue)
    # mappings are paired by qid whatever their order; "all" is ignored
    ma = {f"q{i}": float(v) for i, v in enumerate(a)} | {"all": 0.0}
    mb = {f"q{i}": float(v) for i, v in reversed(list(enumerate(b)))}
    assert paired_t_test(ma, mb).p_value == pytest.approx(ref.pvalue)


def test_t_test_degenerate_and_errors():
    assert paired_t_test([0.1, 0.2], [0.1, 0.2]) == (0.0, 1.0, 2)
    r = paired_t_test([0.0, 0.0], [0.5, 0.5])
    assert r.statistic == math.inf and r.p_value == 0.0
    with pytest.raises(ValueError, match="at least 2"):
        paired_t_test([1.0], [0.0])
    with pytest.raises(ValueError, match="equal lengths"):
        paired_t_test([1.0, 2.0], [0.0])
    with pytest.raises(ValueError, match="different queries"):
        paired_t_test({"a": 1.0, "b": 0.0}, {"a": 1.0, "c": 0.0})
    with pytest.raises(TypeError):
        paired_t_test({"a": 1.0, "b": 0.0}, [1.0, 0.0])
    with pytest.raises(ValueError, match="finite"):
        paired_t_test([1.0, math.nan], [0.0, 0.0])


def test_randomization_identical_runs_give_p_one():
    a = list(np.linspace(0, 1, 50))
    r = paired_randomization_test(a, a)
    assert r == (0.0, 1.0, 50)


def test_randomization_exact_hand_case():
    # d = (1, 2, 3): 8 equally likely sign patterns, sums 6, 4, 2, 0, 0, -2, -4, -6;
    # only +6 and -6 are as extreme as the observed 6 -> p = 2/8
    r = paired_randomization_test([0.0, 0.0, 0.0], [1.0, 2.0, 3.0])
    assert r.statistic == pytest.approx(2.0)
    assert r.p_value == pytest.approx(0.25)


def test_randomization_matches_scipy():
    rng = np.random.default_rng(9)
    a = rng.random(10)
    b = a + rng.normal(0.1, 0.2, 10)

    def mean_diff(x, y, axis):
        return np.mean(y - x, axis=axis)

    # 2^10 = 1024 <= n_resamples: both are exact and must agree
    ref = stats.permutation_test((a, b), mean_diff, permutation_type="samples", vectorized=True)
    r = paired_randomization_test(a, b)
    assert r.p_value == pytest.approx(ref.pvalue)
    assert r.statistic == pytest.approx(ref.statistic)
    # Monte Carlo on 40 queries: agree within sampling error
    a = rng.random(40)
    b = a + rng.normal(0.05, 0.2, 40)
    ref = stats.permutation_test(
        (a, b), mean_diff, permutation_type="samples", vectorized=True, n_resamples=20000, rng=1
    )
    r = paired_randomization_test(a, b, n_resamples=20000, seed=2)
    assert 0.01 < ref.pvalue < 0.99
    assert r.p_value == pytest.approx(ref.pvalue, abs=0.02)


def test_randomization_better_run_small_p_and_seeded():
    rng = np.random.default_rng(0)
    a = rng.random(60)
    better = a + 0.2 + rng.normal(0, 0.05, 60)
    r = paired_randomization_test(a, better, n_resamples=2000, seed=5)
    assert r.p_value < 0.01 and r.statistic > 0.15
    # a borderline case: the p-value depends on the resamples, so seeds matter
    noisy = a + rng.normal(0.02, 0.15, 60)
    p1 = paired_randomization_test(a, noisy, n_resamples=500, seed=11).p_value
    p2 = paired_randomization_test(a, noisy, n_resamples=500, seed=11).p_value
    p3 = paired_randomization_test(a, noisy, n_resamples=500, seed=12).p_value
    assert p1 == p2
    assert p1 != p3
    assert 0.0 < p1 < 1.0
    # close to the t-test on a large sample
    big = paired_randomization_test(a, noisy, n_resamples=20000, seed=1).p_value
    assert big == pytest.approx(paired_t_test(a, noisy).p_value, abs=0.03)
    with pytest.raises(ValueError, match="n_resamples"):
        paired_randomization_test(a, noisy, n_resamples=0)


# ---------------------------------------------------------------- qrels versions


def test_compare_qrels_versions_false_negative_relabelled():
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 2.0, "d5": 1.0}}
    qrels_a = {"q1": {"d1": 0, "d3": 2}, "q2": {"d4": 2}}
    qrels_b = {"q1": {"d1": 0, "d2": 2, "d3": 2}, "q2": {"d4": 2}}  # d2 was a false negative
    out = compare_qrels_versions({"bm25": run}, qrels_a, qrels_b, ["MRR@10", "P@1"], level=2)
    mrr = out["bm25"]["MRR@10"]
    # before: RR(q1) = 1/3, RR(q2) = 1 -> 2/3; after: RR(q1) = 1/2 -> 3/4
    assert mrr.a == pytest.approx(2 / 3)
    assert mrr.b == pytest.approx(3 / 4)
    assert mrr.delta == pytest.approx(1 / 12)
    assert out["bm25"]["P@1"] == pytest.approx((0.5, 0.5, 0.0))


# ---------------------------------------------------------------- groups and categories


def test_metrics_by_group_by_hand():
    qrels = {"q1": {"d": 1}, "q2": {"d": 1}, "q3": {"d": 1}, "q4": {"d": 1}, "q5": {"d": 1}}
    run = {
        "q1": {"d": 1.0},  # P@1 = 1, RR = 1
        "q2": {"x": 2.0, "d": 1.0},  # P@1 = 0, RR = 1/2
        "q3": {"x": 1.0},  # 0, 0
        "q4": {"d": 1.0},  # 1, 1
        # q5 missing -> 0, 0
    }
    groups = {"q1": "dev", "q2": "dev", "q3": "test", "q4": "test", "zz": "train"}
    out = metrics_by_group(qrels, run, ["P@1", "RR"], groups)
    assert list(out) == ["dev", "test", UNGROUPED]
    assert out["dev"] == {"n": 2, "P@1": pytest.approx(0.5), "RR": pytest.approx(0.75)}
    assert out["test"] == {"n": 2, "P@1": pytest.approx(0.5), "RR": pytest.approx(0.5)}
    assert out[UNGROUPED] == {"n": 1, "P@1": 0.0, "RR": 0.0}
    with pytest.raises(TypeError, match="group must be a str"):
        metrics_by_group(qrels, run, ["P@1"], {"q1": 3})


def test_metrics_by_category_by_hand():
    values = {"q1": 1.0, "q2": 0.5, "q3": 0.0, "q4": 0.25, "q5": 0.75, "all": 0.5}
    cats = {"q1": {"coref"}, "q2": {"coref", "numeric"}, "q3": {"numeric"}, "q4": set(), "other": {"x"}}
    out = metrics_by_category(values, cats)
    assert list(out) == ["coref", "numeric", UNTAGGED]
    assert out["coref"] == CategoryMean(0.75, 2)
    assert out["numeric"] == CategoryMean(0.25, 2)
    assert out[UNTAGGED] == CategoryMean(0.5, 2)  # q4 (empty set) and q5 (absent)
    with pytest.raises(TypeError, match="set of str"):
        metrics_by_category(values, {"q1": "coref"})


def test_metrics_by_category_on_evaluate_output():
    qrels = {"q1": {"d": 1}, "q2": {"d": 1}}
    res = evaluate(qrels, {"q1": {"d": 1.0}}, ["P@1"])
    out = metrics_by_category(res["P@1"], {"q1": {"a"}, "q2": {"a"}})
    assert out == {"a": CategoryMean(0.5, 2)}


# ---------------------------------------------------------------- dataset statistics


def test_length_stats_by_hand():
    texts = ["", "ab", "abcd", "中文字", "abcdefghij"]  # lengths 0, 2, 4, 3, 10
    s = length_stats(iter(texts))
    assert (s.count, s.min, s.max) == (5, 0, 10)
    assert s.mean == pytest.approx(19 / 5)
    assert s.median == 3.0
    # sorted 0, 2, 3, 4, 10; p10 at rank 0.4 -> 0 + 0.4 * 2; p90 at rank 3.6 -> 4 + 0.6 * 6
    assert s.p10 == pytest.approx(0.8)
    assert s.p90 == pytest.approx(7.6)
    assert length_stats_of([0, 2, 4, 3, 10]) == s
    with pytest.raises(ValueError):
        length_stats_of([])
    with pytest.raises(ValueError):
        length_stats([])
    with pytest.raises(TypeError):
        length_stats(["a", 3])


def test_label_distribution_and_judged_per_query():
    qrels = {"q1": {"a": 0, "b": 3, "c": 2}, "q2": {"a": 2}, "q3": {}}
    assert label_distribution(qrels) == {0: 1, 2: 2, 3: 1}
    assert list(label_distribution(qrels)) == [0, 2, 3]
    assert judged_per_query(qrels) == {"q1": 3, "q2": 1, "q3": 0}
    assert judged_per_query(qrels, min_grade=2) == {"q1": 2, "q2": 1, "q3": 0}
    with pytest.raises(TypeError):
        label_distribution({"q": {"a": 1.5}})


# ---------------------------------------------------------------- ILS


def _brute_ils(x: np.ndarray) -> float:
    u = x / np.linalg.norm(x, axis=1, keepdims=True)
    n = len(u)
    return sum(float(u[i] @ u[j]) for i in range(n) for j in range(i + 1, n)) * 2 / (n * (n - 1))


def test_ils_hand_case():
    # 0, 60 and 90 degrees: cos = 1/2 (0-60), 0 (0-90), sqrt(3)/2 (60-90)
    v = np.array([[1.0, 0.0], [0.5, SQRT3 / 2], [0.0, 1.0]])
    expected = (0.5 + 0.0 + SQRT3 / 2) / 3
    assert intra_list_similarity(v) == pytest.approx(expected)
    # scale does not matter (cosine); 0, 60, 120 degrees: 1/2, -1/2, 1/2 -> 1/6
    w = np.array([[3.0, 0.0], [1.0, SQRT3], [-2.0, 2 * SQRT3]])
    assert intra_list_similarity(w) == pytest.approx(1 / 6)
    # identical directions -> 1, opposite pair -> -1
    assert intra_list_similarity(np.array([[1.0, 1.0], [2.0, 2.0]])) == pytest.approx(1.0)
    assert intra_list_similarity(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(-1.0)


def test_ils_matches_brute_force_with_chunks():
    x = np.random.default_rng(7).normal(size=(37, 5)).astype(np.float32)
    ref = _brute_ils(x.astype(np.float64))
    assert intra_list_similarity(x) == pytest.approx(ref, abs=1e-6)
    assert intra_list_similarity(x, chunk_size=4) == pytest.approx(ref, abs=1e-6)


def test_ils_errors():
    with pytest.raises(ValueError, match="at least 2"):
        intra_list_similarity(np.ones((1, 3)))
    with pytest.raises(ValueError, match="zero vector"):
        intra_list_similarity(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="2-d"):
        intra_list_similarity(np.ones(3))


def test_sampled_ils_close_and_seeded():
    x = np.random.default_rng(2).normal(size=(200, 4)) + 0.5
    exact = intra_list_similarity(x)
    est = sampled_intra_list_similarity(x, n_pairs=50_000, seed=3)
    assert est.n_pairs == 50_000
    assert abs(est.value - exact) < 4 * est.stderr + 1e-9
    assert sampled_intra_list_similarity(x, n_pairs=1000, seed=3) == sampled_intra_list_similarity(
        x, n_pairs=1000, seed=3
    )
    # every pair is the same pair when n = 2
    two = np.array([[1.0, 0.0], [0.5, SQRT3 / 2]])
    assert sampled_intra_list_similarity(two, n_pairs=10).value == pytest.approx(0.5)


# ---------------------------------------------------------------- leakage


def test_find_leakage_exact_pairs_and_inclusive_threshold():
    # vectors chosen so the cosines are exact in floating point
    train_ids = ["t_same", "t_half", "t_orth", "t_dup", "t_far", "t_35"]
    train = np.array(
        [
            [5.0, 0.0, 0.0, 0.0],  # cos with e1 = 1
            [1.0, 1.0, 1.0, 1.0],  # cos with e1 = cos with e2 = 1/2 exactly
            [0.0, 0.0, 1.0, 0.0],  # 0 with both
            [0.0, 2.0, 0.0, 0.0],  # 1 with e2
            [-1.0, 0.1, 0.0, 0.0],  # ~ -1 with e1, ~0.1 with e2
            [0.0, 0.0, 3.0, 4.0],  # 0 with both
        ]
    )
    eval_ids = ["e1", "e2"]
    evals = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 3.0, 0.0, 0.0]])
    out = find_leakage(train_ids, train, eval_ids, evals)  # default threshold 0.5
    assert out == [
        LeakPair("t_dup", "e2", 1.0),
        LeakPair("t_same", "e1", 1.0),
        LeakPair("t_half", "e1", 0.5),  # exactly at the threshold: kept (>=)
        LeakPair("t_half", "e2", 0.5),
    ]
    above = find_leakage(train_ids, train, eval_ids, evals, threshold=0.5000001)
    assert [(p.train_id, p.eval_id) for p in above] == [("t_dup", "e2"), ("t_same", "e1")]
    top1 = find_leakage(train_ids, train, eval_ids, evals, top=1)
    assert [(p.train_id, p.eval_id) for p in top1] == [("t_dup", "e2"), ("t_same", "e1")]
    # a second exact boundary: (0, 0, 3, 4) against (0, 0, 0, 1) has cosine 4/5
    at = find_leakage(["t_35"], train[5:], ["e3"], np.array([[0.0, 0.0, 0.0, 7.0]]), threshold=0.8)
    assert at == [LeakPair("t_35", "e3", 0.8)]
    assert find_leakage(["t_35"], train[5:], ["e3"], np.array([[0.0, 0.0, 0.0, 7.0]]), threshold=0.81) == []


def test_find_leakage_chunked_equals_brute_force():
    rng = np.random.default_rng(4)
    train = rng.normal(size=(53, 6))
    evals = rng.normal(size=(29, 6))
    tids = [f"t{i}" for i in range(53)]
    eids = [f"e{i}" for i in range(29)]
    tu = train / np.linalg.norm(train, axis=1, keepdims=True)
    eu = evals / np.linalg.norm(evals, axis=1, keepdims=True)
    sims = eu @ tu.T
    ref = sorted(
        ((tids[j], eids[i], sims[i, j]) for i in range(29) for j in range(53) if sims[i, j] >= 0.3),
        key=lambda p: (-p[2], p[0], p[1]),
    )
    for block in (1, 7, 53, 10**6):
        got = find_leakage(tids, train, eids, evals, threshold=0.3, block_elements=block)
        assert [(p.train_id, p.eval_id) for p in got] == [(a, b) for a, b, _ in ref]
        assert [p.similarity for p in got] == pytest.approx([s for *_, s in ref])
    # top=2: each eval query keeps its two best matches
    got = find_leakage(tids, train, eids, evals, threshold=0.3, top=2, block_elements=60)
    per_eval: dict[str, list] = {}
    for t, e, s in ref:
        per_eval.setdefault(e, []).append((t, e, s))
    expected = sorted((x for v in per_eval.values() for x in v[:2]), key=lambda p: (-p[2], p[0], p[1]))
    assert [(p.train_id, p.eval_id) for p in got] == [(a, b) for a, b, _ in expected]
    # float32 inputs work too
    got32 = find_leakage(tids, train.astype(np.float32), eids, evals.astype(np.float32), threshold=0.3)
    assert len(got32) == len(ref)


def test_find_leakage_validation():
    v = np.eye(2)
    with pytest.raises(ValueError, match="ids"):
        find_leakage(["a"], v, ["x", "y"], v)
    with pytest.raises(ValueError, match="duplicate"):
        find_leakage(["a", "a"], v, ["x", "y"], v)
    with pytest.raises(ValueError, match="dimension"):
        find_leakage(["a", "b"], v, ["x"], np.ones((1, 3)))
    with pytest.raises(ValueError, match="threshold"):
        find_leakage(["a", "b"], v, ["x", "y"], v, threshold=1.5)
    with pytest.raises(ValueError, match="zero vector"):
        find_leakage(["a", "b"], np.array([[1.0, 0.0], [0.0, 0.0]]), ["x", "y"], v)
    assert find_leakage([], np.empty((0, 2)), ["x", "y"], v) == []


# ---------------------------------------------------------------- relevant positions


def test_relevant_positions_two_document_corpus():
    passages = [
        Passage("a1", "..", doc_id="A", position=1),
        Passage("a0", "..", doc_id="A", position=0),
        Passage("a2", "..", doc_id="A", position=2),
        Passage("b0", "..", doc_id="B", position=0),
        Passage("b1", "..", doc_id="B", position=1),
        Passage("c0", "..", doc_id="C", position=0),  # single-passage document
        Passage("flat", ".."),  # no document structure
    ]
    qrels = {
        "q1": {"a0": 2, "b1": 3, "a1": 1},  # a1 below level 2
        "q2": {"a2": 2, "c0": 2, "gone": 3, "flat": 2},
        "q3": {"a0": 3},
    }
    r = relevant_positions(qrels, iter(passages), level=2, bins=2)
    # relevant pairs: a0 (pos 0 of 3), b1 (1 of 2), a2 (2 of 3), c0 (0 of 1), a0 again
    assert r.n == 5
    assert r.counts == {0: 3, 1: 1, 2: 1}
    assert r.share_first == pytest.approx(3 / 5)
    assert r.mean_position == pytest.approx(3 / 5)
    assert r.median_position == 0.0
    assert r.relative == [0.0, 1.0, 1.0, 0.0]  # a0, b1, a2, a0 (c0 has no relative position)
    assert r.mean_relative == pytest.approx(0.5)
    assert r.relative_histogram == [2, 2]
    assert (r.n_single, r.n_missing, r.n_unpositioned) == (1, 1, 1)
    # level 1 adds a1 at position 1 of 3 -> relative 0.5
    r1 = relevant_positions(qrels, passages, level=1)
    assert r1.n == 6 and 0.5 in r1.relative


def test_relevant_positions_empty_and_errors():
    r = relevant_positions({"q": {"x": 0}}, [Passage("x", "t", doc_id="D", position=0)], level=1)
    assert r.n == 0 and math.isnan(r.share_first) and r.counts == {}
    with pytest.raises(ValueError, match="position"):
        relevant_positions({}, [Passage("x", "t", doc_id="D", position=-1)])
    with pytest.raises(ValueError, match="twice"):
        relevant_positions(
            {"q": {"x": 1}},
            [Passage("x", "t", doc_id="D", position=0), Passage("x", "t", doc_id="D", position=1)],
        )


# --------------------------------------------------------------------------- lexical leakage (Chinese, no encoder)


def test_char_bigrams_stay_within_runs_of_letters_and_digits():
    assert char_bigrams("除夕吃饺子？") == ["除夕", "夕吃", "吃饺", "饺子"]
    assert char_bigrams("ＢＥＲＴ 是 a_b") == ["be", "er", "rt", "是", "a", "b"]  # NFKC, lower case; _ separates
    assert char_bigrams("？！ ") == []


def test_find_lexical_leakage_exact_cosines_on_the_demo_queries():
    """The issue's false pair (0.86 with the English encoder) shares one bigram in 36: far below the threshold."""
    assert LEXICAL_LEAKAGE_THRESHOLD == 0.4
    train = {"zh-q27": "黄山的最高峰是哪座", "p3": "高血压的诊断标准", "p1": "故宫是哪年开始建造的"}
    evals = {"zh-q10": "高血压的诊断标准是什么", "zh-q01": "故宫是哪一年开始修建的"}
    pairs = find_lexical_leakage(list(train), list(train.values()), list(evals), list(evals.values()))
    # 高血压的诊断标准 has 7 bigrams, all among the 10 of 高血压的诊断标准是什么: 7 / sqrt(7 * 10)
    assert pairs == [
        LeakPair("p3", "zh-q10", pytest.approx(7 / math.sqrt(70))),
        LeakPair("p1", "zh-q01", pytest.approx(5 / math.sqrt(9 * 10))),
    ]
    everything = find_lexical_leakage(
        list(train), list(train.values()), list(evals), list(evals.values()), threshold=1e-9
    )
    assert ("zh-q27", "zh-q01", pytest.approx(1 / math.sqrt(8 * 10))) in [tuple(p) for p in everything]  # 是哪
    assert ("zh-q27", "zh-q10") not in [(p.train_id, p.eval_id) for p in everything]  # nothing shared


def test_find_lexical_leakage_top_inclusive_threshold_and_errors():
    pairs = find_lexical_leakage(["a", "b", "c"], ["饺子馅", "饺子皮", "包子"], ["e"], ["饺子"], threshold=1e-9)
    assert [(p.train_id, round(p.similarity, 4)) for p in pairs] == [("a", 0.7071), ("b", 0.7071)]
    assert [
        p.train_id
        for p in find_lexical_leakage(["a", "b"], ["饺子馅", "饺子皮"], ["e"], ["饺子"], top=1, threshold=0.1)
    ] == ["a"]  # ties by train id
    assert find_lexical_leakage(["a"], ["饺子"], ["e"], ["饺子"], threshold=1.0)[0].similarity == pytest.approx(1.0)
    assert find_lexical_leakage(["a"], ["？"], ["e"], ["！"]) == []  # no bigram at all
    assert find_lexical_leakage([], [], ["e"], ["饺子"]) == []
    with pytest.raises(ValueError, match="threshold must be above 0"):
        find_lexical_leakage(["a"], ["饺子"], ["e"], ["饺子"], threshold=0)
    with pytest.raises(ValueError, match="duplicate train id 'a'"):
        find_lexical_leakage(["a", "a"], ["饺子", "包子"], ["e"], ["饺子"])
    with pytest.raises(ValueError, match="2 eval ids for 1 eval texts"):
        find_lexical_leakage(["a"], ["饺子"], ["e", "f"], ["饺子"])
