"""Agreement statistics against hand computations and published worked examples."""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from core.agreement import (
    agreement_report,
    binarise,
    cohen_kappa,
    cohen_kappa_pairs,
    confusion_matrix,
    fleiss_kappa,
    from_label_map,
    krippendorff_alpha,
)

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def two_annotators(a_labels, b_labels):
    return [(f"i{k}", "a", la) for k, la in enumerate(a_labels)] + [(f"i{k}", "b", lb) for k, lb in enumerate(b_labels)]


def hand_kappa(a_labels, b_labels, categories, weights=None):
    """Cohen's kappa from the confusion matrix, in exact fractions.

    C[i][j] = #items with a = categories[i], b = categories[j]; n = sum C;
    r_i = sum_j C[i][j], c_j = sum_i C[i][j]; E[i][j] = r_i c_j / n;
    w[i][j] = 1 - [i == j] (unweighted), |i - j| (linear), (i - j)^2 (quadratic);
    kappa = 1 - sum w C / sum w E  (for w = 1 - [i == j] this is
    (p_o - p_e) / (1 - p_e) with p_o = sum C_ii / n, p_e = sum r_i c_i / n^2).
    """
    k = len(categories)
    idx = {c: i for i, c in enumerate(categories)}
    C = [[0] * k for _ in range(k)]
    for x, y in zip(a_labels, b_labels):
        C[idx[x]][idx[y]] += 1
    n = sum(map(sum, C))
    r = [sum(C[i]) for i in range(k)]
    c = [sum(C[i][j] for i in range(k)) for j in range(k)]

    def w(i, j):
        if weights is None:
            return 0 if i == j else 1
        return abs(i - j) if weights == "linear" else (i - j) ** 2

    observed = sum(w(i, j) * C[i][j] for i in range(k) for j in range(k))
    expected = sum(w(i, j) * Fraction(r[i] * c[j], n) for i in range(k) for j in range(k))
    return 1 - Fraction(observed) / expected


# ---------------------------------------------------------------------------
# Cohen
# ---------------------------------------------------------------------------

# Level 1 is never used: the quadratic weights must still see 0 and 2 as two steps apart.
A = [0, 0, 0, 2, 2, 3, 3, 3, 0, 2]
B = [0, 0, 2, 2, 3, 3, 3, 2, 0, 0]


def test_cohen_unweighted_hand_and_sklearn():
    # C (rows a, cols b over 0..3) = [[3,0,1,0],[0,0,0,0],[1,0,1,1],[0,0,1,2]]
    # p_o = 6/10, p_e = (4*4 + 0 + 3*3 + 3*3)/100 = 34/100, kappa = 0.26/0.66 = 13/33
    assert hand_kappa(A, B, (0, 1, 2, 3)) == Fraction(13, 33)
    result = cohen_kappa_pairs(two_annotators(A, B))
    (pair,) = result.pairs
    assert (pair.a, pair.b, pair.n_items) == ("a", "b", 10)
    assert pair.value == pytest.approx(13 / 33, abs=1e-12)
    assert pair.value == pytest.approx(cohen_kappa_score(A, B), abs=1e-12)
    assert result.mean == pytest.approx(13 / 33, abs=1e-12)
    assert result.n_items == 10


def test_cohen_quadratic_hand_and_sklearn():
    # sum w C = 4 + 1 + 1 + 4 = 10; sum w E = (48 + 108 + 48 + 9 + 108 + 9)/10 = 33
    # kappa_w = 1 - 10/33 = 23/33
    assert hand_kappa(A, B, (0, 1, 2, 3), "quadratic") == Fraction(23, 33)
    result = cohen_kappa_pairs(two_annotators(A, B), weights="quadratic")
    assert result.pairs[0].value == pytest.approx(23 / 33, abs=1e-12)
    assert result.pairs[0].value == pytest.approx(
        cohen_kappa_score(A, B, labels=[0, 1, 2, 3], weights="quadratic"), abs=1e-12
    )
    # Without labels=categories sklearn would put 0, 2, 3 at positions 0, 1, 2: a different value.
    assert cohen_kappa_score(A, B, weights="quadratic") != pytest.approx(23 / 33, abs=1e-6)
    linear = cohen_kappa_pairs(two_annotators(A, B), weights="linear").mean
    assert linear == pytest.approx(float(hand_kappa(A, B, (0, 1, 2, 3), "linear")), abs=1e-12)


def test_cohen_single_pair_function_and_min_items():
    judgments = two_annotators(A, B)
    assert cohen_kappa(judgments, "b", "a").value == pytest.approx(13 / 33, abs=1e-12)
    one_shared = [("x", "a", 0), ("x", "b", 1), ("y", "a", 2)]
    pair = cohen_kappa(one_shared, "a", "b")
    assert pair.n_items == 1 and math.isnan(pair.value)
    with pytest.raises(ValueError, match="no judgment"):
        cohen_kappa(judgments, "a", "zed")


def test_cohen_mean_weighted_by_shared_items():
    # a-b share 10 items (13/33), a-c share 4 items, b-c share none.
    c_labels = [0, 2, 3, 3]
    judgments = two_annotators(A, B) + [(f"i{k}", "c", lab) for k, lab in enumerate(c_labels)]
    result = cohen_kappa_pairs(judgments)
    by_pair = {(p.a, p.b): p for p in result.pairs}
    assert by_pair[("b", "c")].n_items == 4
    ac = float(hand_kappa(A[:4], c_labels, (0, 1, 2, 3)))
    bc = float(hand_kappa(B[:4], c_labels, (0, 1, 2, 3)))
    assert by_pair[("a", "c")].value == pytest.approx(ac, abs=1e-12)
    assert result.mean == pytest.approx((10 * 13 / 33 + 4 * ac + 4 * bc) / 18, abs=1e-12)
    assert result.n_items == 18


# ---------------------------------------------------------------------------
# Fleiss: Fleiss (1971) / Wikipedia worked example
# ---------------------------------------------------------------------------

# 10 subjects, 14 raters each, 5 categories: counts n_ij (Wikipedia "Fleiss' kappa").
WIKIPEDIA_TABLE = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def judgments_from_counts(table, categories):
    out = []
    for s, counts in enumerate(table):
        rater = 0
        for category, count in zip(categories, counts):
            for _ in range(count):
                out.append((f"subject{s}", f"r{rater}", category))
                rater += 1
    return out


def test_fleiss_wikipedia_example():
    judgments = judgments_from_counts(WIKIPEDIA_TABLE, (1, 2, 3, 4, 5))
    result = fleiss_kappa(judgments, categories=(1, 2, 3, 4, 5))
    # P_bar = 0.378, P_e = 0.213, kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210
    assert round(result.value, 3) == 0.210
    assert result.value == pytest.approx(sm_fleiss_kappa(np.array(WIKIPEDIA_TABLE)), abs=1e-12)
    assert (result.n_items, result.n_annotators, result.n_raters) == (10, 14, 14)
    assert (result.n_items_dropped, result.n_items_truncated) == (0, 0)


def test_fleiss_formula_by_hand():
    # 3 items x 3 raters; counts over 0..3: [3,0,0,0], [0,0,1,2], [0,1,1,1]
    # P_i = 1, 1/3, 0 -> P_bar = 4/9; p = (3,1,2,3)/9 -> P_e = 23/81; kappa = 13/58
    judgments = [
        ("d1", "A", 0), ("d1", "B", 0), ("d1", "C", 0),
        ("d2", "A", 3), ("d2", "B", 3), ("d2", "C", 2),
        ("d3", "A", 1), ("d3", "B", 2), ("d3", "C", 3),
    ]  # fmt: skip
    assert fleiss_kappa(judgments).value == pytest.approx(13 / 58, abs=1e-12)


# ---------------------------------------------------------------------------
# Krippendorff: "Computing Krippendorff's Alpha-Reliability" (2011), 4 observers x 12 units
# ---------------------------------------------------------------------------

nan = float("nan")
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]


@pytest.mark.parametrize(("level", "expected"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_krippendorff_2011_example(level, expected):
    judgments = [
        (f"unit{u}", f"observer{o}", int(v))
        for o, row in enumerate(KRIPPENDORFF_2011)
        for u, v in enumerate(row)
        if not math.isnan(v)
    ]
    result = krippendorff_alpha(judgments, level=level, categories=(1, 2, 3, 4, 5))
    assert round(result.value, 3) == expected
    direct = krippendorff.alpha(reliability_data=KRIPPENDORFF_2011, level_of_measurement=level)
    assert result.value == pytest.approx(direct, abs=1e-12)
    # unit 12 has a single value: not pairable; 40 pairable values (Krippendorff's n).
    assert (result.n_items, result.n_pairable, result.n_annotators) == (11, 40, 4)


def test_krippendorff_binary_by_hand():
    # a = [0,0,1,1,1,0], b = [0,0,1,1,0,0]: n = 12 values, n_0 = 7, n_1 = 5, one
    # disagreeing unit -> o_01 = o_10 = 1.  D_o = 2/12, D_e = 2*7*5/(12*11) = 70/132,
    # alpha = 1 - (2/12)/(70/132) = 24/35 (same for every level on binary data).
    judgments = two_annotators([0, 0, 1, 1, 1, 0], [0, 0, 1, 1, 0, 0])
    for level in ("nominal", "ordinal", "interval"):
        assert krippendorff_alpha(judgments, level=level, categories=(0, 1)).value == pytest.approx(24 / 35, abs=1e-12)


# ---------------------------------------------------------------------------
# binarisation
# ---------------------------------------------------------------------------

GA = [0, 1, 2, 3, 3, 1]
GB = [1, 1, 3, 2, 0, 0]


def test_binarise_changes_kappa_as_computed_by_hand():
    graded = two_annotators(GA, GB)
    # graded: p_o = 1/6, p_e = (1*2 + 2*2 + 1*1 + 2*1)/36 = 1/4 -> kappa = -1/9
    assert cohen_kappa_pairs(graded).mean == pytest.approx(-1 / 9, abs=1e-12)
    # >= 1: a = [0,1,1,1,1,1], b = [1,1,1,1,0,0]; C = [[0,1],[2,3]]
    # p_o = 3/6, p_e = (1*2 + 5*4)/36 = 22/36 -> kappa = -2/7
    ge1 = binarise(graded, at=1)
    assert [lab for _, who, lab in ge1 if who == "a"] == [0, 1, 1, 1, 1, 1]
    assert cohen_kappa_pairs(ge1, categories=(0, 1)).mean == pytest.approx(-2 / 7, abs=1e-12)
    # >= 2: a = [0,0,1,1,1,0], b = [0,0,1,1,0,0]; C = [[3,0],[1,2]]
    # p_o = 5/6, p_e = (3*4 + 3*2)/36 = 1/2 -> kappa = 2/3
    ge2 = binarise(graded, at=2)
    assert cohen_kappa_pairs(ge2, categories=(0, 1)).mean == pytest.approx(2 / 3, abs=1e-12)

    report = agreement_report(graded)
    overall = report["overall"]
    assert set(overall) == {"graded", "binary_ge1", "binary_ge2"}
    assert overall["graded"]["cohen_kappa"] == pytest.approx(-1 / 9, abs=1e-12)
    assert overall["binary_ge1"]["cohen_kappa"] == pytest.approx(-2 / 7, abs=1e-12)
    assert overall["binary_ge2"]["cohen_kappa"] == pytest.approx(2 / 3, abs=1e-12)
    # two categories: quadratic weights are the plain 0/1 weights
    assert overall["binary_ge2"]["cohen_kappa_quadratic"] == pytest.approx(2 / 3, abs=1e-12)
    assert overall["binary_ge2"]["krippendorff_alpha_ordinal"] == pytest.approx(24 / 35, abs=1e-12)
    assert overall["graded"]["cohen_kappa_quadratic"] == pytest.approx(
        float(hand_kappa(GA, GB, (0, 1, 2, 3), "quadratic")), abs=1e-12
    )


def test_binarise_validation():
    with pytest.raises(ValueError):
        agreement_report(two_annotators(GA, GB), binarise_at=(0,))  # everything relevant
    with pytest.raises(ValueError):
        agreement_report(two_annotators(GA, GB), binarise_at=(4,))  # nothing relevant
    with pytest.raises(ValueError):
        binarise([("i", "a", 1)], at=1.5)


# ---------------------------------------------------------------------------
# per query, per annotator, confusion matrix on a small hand-made set
# ---------------------------------------------------------------------------

SMALL = [
    (("q1", "d1"), "A", 0), (("q1", "d1"), "B", 0), (("q1", "d1"), "C", 0),
    (("q1", "d2"), "A", 3), (("q1", "d2"), "B", 3), (("q1", "d2"), "C", 2),
    (("q1", "d3"), "A", 1), (("q1", "d3"), "B", 2), (("q1", "d3"), "C", 3),
    (("q1", "d3"), "D", 2),  # fourth annotator: the first three all differ
    (("q2", "d1"), "A", 2), (("q2", "d1"), "B", 2), (("q2", "d1"), "C", 2),
    (("q2", "d2"), "A", 2), (("q2", "d2"), "B", 2), (("q2", "d2"), "C", 2),
    (("q3", "d1"), "A", 1),
]  # fmt: skip


def test_fleiss_truncates_or_drops_the_fourth_label():
    q1 = [j for j in SMALL if j[0][0] == "q1"]
    truncated = fleiss_kappa(q1)
    # first three labels of d3 in input order: A1 B2 C3 -> the hand value 13/58
    assert truncated.value == pytest.approx(13 / 58, abs=1e-12)
    assert (truncated.n_items, truncated.n_raters, truncated.n_items_truncated) == (3, 3, 1)
    assert truncated.n_annotators == 3
    dropped = fleiss_kappa(q1, extra="drop")
    # d1, d2 only: P_bar = 2/3, p = (3,0,1,2)/6 -> P_e = 7/18, kappa = 5/11
    assert dropped.value == pytest.approx(5 / 11, abs=1e-12)
    assert (dropped.n_items, dropped.n_items_dropped) == (2, 1)
    with pytest.raises(ValueError):
        fleiss_kappa(q1, n_raters=1)


def test_per_annotator_on_small_set():
    report = agreement_report(SMALL)
    assert (report["n_judgments"], report["n_items"], report["n_annotators"]) == (17, 6, 4)
    per = report["per_annotator"]
    # Shared items of A, B, C: q1d1 q1d2 q1d3 q2d1 q2d2 (q3d1 is A's alone).
    # A = [0,3,1,2,2], B = [0,3,2,2,2], C = [0,2,3,2,2]
    # kappa_AB: p_o = 4/5, p_e = 8/25 -> 12/17; kappa_AC: p_o = 3/5, p_e = 8/25 -> 7/17;
    # kappa_BC: p_o = 3/5, p_e = 11/25 -> 2/7.  D shares one item with each: NaN, left out.
    k_ab, k_ac, k_bc = 12 / 17, 7 / 17, 2 / 7
    pairs = {(p["a"], p["b"]): p for p in report["pairs"]}
    assert pairs[("A", "B")]["cohen_kappa"] == pytest.approx(k_ab, abs=1e-12)
    assert pairs[("A", "C")]["cohen_kappa"] == pytest.approx(k_ac, abs=1e-12)
    assert pairs[("B", "C")]["cohen_kappa"] == pytest.approx(k_bc, abs=1e-12)
    assert pairs[("A", "D")]["n_items"] == 1 and math.isnan(pairs[("A", "D")]["cohen_kappa"])
    assert per["A"]["cohen_kappa"] == pytest.approx((k_ab + k_ac) / 2, abs=1e-12)
    assert per["B"]["cohen_kappa"] == pytest.approx((k_ab + k_bc) / 2, abs=1e-12)
    assert per["C"]["cohen_kappa"] == pytest.approx((k_ac + k_bc) / 2, abs=1e-12)
    assert math.isnan(per["D"]["cohen_kappa"]) and per["D"]["n_pairs"] == 0
    assert report["overall"]["graded"]["cohen_kappa"] == pytest.approx((k_ab + k_ac + k_bc) / 3, abs=1e-12)
    # Majority of the others (strict, at least two other labels):
    # A: q1d1 (0=0 yes), q1d2 (B3 C2: none), q1d3 (B2 C3 D2 -> 2, A1 no), q2 x2 yes -> 3/4
    # B: q1d1 yes, q1d2 none, q1d3 (A1 C3 D2: none), q2 x2 yes -> 3/3
    # C: q1d1 yes, q1d2 (A3 B3 -> 3, C2 no), q1d3 (A1 B2 D2 -> 2, C3 no), q2 x2 yes -> 3/5
    # D: q1d3 (A1 B2 C3: none) -> no item
    assert (per["A"]["majority_agreement"], per["A"]["n_majority_items"]) == (0.75, 4)
    assert (per["B"]["majority_agreement"], per["B"]["n_majority_items"]) == (1.0, 3)
    assert (per["C"]["majority_agreement"], per["C"]["n_majority_items"]) == (0.6, 5)
    assert math.isnan(per["D"]["majority_agreement"]) and per["D"]["n_majority_items"] == 0
    assert per["A"]["majority_mean_abs_diff"] == 0.25  # |1 - 2| once in 4
    assert per["C"]["majority_mean_abs_diff"] == 0.4  # |2 - 3| + |3 - 2| in 5
    assert per["A"]["label_counts"] == {0: 1, 1: 2, 2: 2, 3: 1}
    assert per["A"]["n_items"] == 6


def test_per_query_on_small_set():
    per_query = agreement_report(SMALL)["per_query"]
    assert list(per_query) == ["q1", "q2", "q3"]
    q1 = per_query["q1"]
    assert (q1["n_items"], q1["n_judgments"], q1["n_annotators"], q1["n_pairable_items"]) == (3, 10, 4, 3)
    assert q1["fleiss_kappa"] == pytest.approx(13 / 58, abs=1e-12)
    # the same as the library on the (annotators x items) matrix of q1
    matrix = [[0, 3, 1], [0, 3, 2], [0, 2, 3], [nan, nan, 2]]
    direct = krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal")
    assert q1["krippendorff_alpha_ordinal"] == pytest.approx(direct, abs=1e-12)
    assert q1["unanimity"] == pytest.approx(1 / 3)
    # q2: every label 2 -> chance agreement is perfect, the coefficients are undefined
    q2 = per_query["q2"]
    assert math.isnan(q2["krippendorff_alpha_ordinal"]) and math.isnan(q2["fleiss_kappa"])
    assert q2["unanimity"] == 1.0
    # q3: a single label
    q3 = per_query["q3"]
    assert (q3["n_items"], q3["n_pairable_items"], q3["fleiss_n_items"]) == (1, 0, 0)
    assert math.isnan(q3["krippendorff_alpha_ordinal"]) and math.isnan(q3["unanimity"])


def test_per_query_needs_query_doc_tuples():
    assert agreement_report(two_annotators(GA, GB))["per_query"] == {}


def test_majority_needs_two_other_labels():
    # With two annotators the "others" are a single label: no majority is taken.
    per = agreement_report(two_annotators(GA, GB))["per_annotator"]
    assert per["a"]["n_majority_items"] == 0 and math.isnan(per["a"]["majority_agreement"])


def test_confusion_matrix_exact():
    # A vs B on q1d1 (0,0), q1d2 (3,3), q1d3 (1,2), q2d1 (2,2), q2d2 (2,2)
    assert confusion_matrix(SMALL, "A", "B") == [
        [1, 0, 0, 0],
        [0, 0, 1, 0],
        [0, 0, 2, 0],
        [0, 0, 0, 1],
    ]
    assert confusion_matrix(SMALL, "B", "A") == [
        [1, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 1, 2, 0],
        [0, 0, 0, 1],
    ]
    assert confusion_matrix(SMALL, "C", "D", categories=(0, 1, 2, 3)) == [
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 0, 0],
        [0, 0, 1, 0],
    ]
    no_shared = [("x", "a", 1), ("y", "b", 2)]
    assert confusion_matrix(no_shared, "a", "b") == [[0] * 4 for _ in range(4)]
    with pytest.raises(ValueError):
        confusion_matrix(SMALL, "A", "A")


# ---------------------------------------------------------------------------
# degenerate inputs: NaN, never a crash, no leaked warnings
# ---------------------------------------------------------------------------


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def assert_report_is_nan(report, *keys):
    for view in report["overall"].values():
        for key in keys:
            assert math.isnan(view[key]), key


@pytest.mark.usefixtures("no_warnings")
def test_everyone_agrees_on_one_category():
    judgments = [(("q", f"d{i}"), who, 1) for i in range(5) for who in ("a", "b", "c")]
    assert math.isnan(fleiss_kappa(judgments).value)
    assert fleiss_kappa(judgments).n_items == 5
    pairs = cohen_kappa_pairs(judgments)
    assert all(p.n_items == 5 and math.isnan(p.value) for p in pairs.pairs)
    assert math.isnan(pairs.mean) and pairs.n_items == 0
    assert math.isnan(cohen_kappa_pairs(judgments, weights="quadratic").mean)
    alpha = krippendorff_alpha(judgments)
    assert math.isnan(alpha.value) and alpha.n_items == 5
    report = agreement_report(judgments)
    assert_report_is_nan(report, "fleiss_kappa", "cohen_kappa", "krippendorff_alpha_ordinal")
    assert report["overall"]["graded"]["unanimity"] == 1.0
    assert report["per_annotator"]["a"]["majority_agreement"] == 1.0
    assert confusion_matrix(judgments, "a", "b")[1][1] == 5


@pytest.mark.usefixtures("no_warnings")
def test_perfect_agreement_with_variety_is_one():
    judgments = [(f"d{i}", who, i % 4) for i in range(8) for who in ("a", "b", "c")]
    assert fleiss_kappa(judgments).value == pytest.approx(1.0)
    assert cohen_kappa_pairs(judgments, weights="quadratic").mean == pytest.approx(1.0)
    assert krippendorff_alpha(judgments).value == pytest.approx(1.0)


@pytest.mark.usefixtures("no_warnings")
def test_single_annotator():
    judgments = [(("q", f"d{i}"), "solo", i % 4) for i in range(6)]
    fleiss = fleiss_kappa(judgments)
    assert math.isnan(fleiss.value) and fleiss.n_items == 0 and fleiss.n_items_dropped == 6
    pairs = cohen_kappa_pairs(judgments)
    assert pairs.pairs == () and math.isnan(pairs.mean)
    alpha = krippendorff_alpha(judgments)
    assert math.isnan(alpha.value) and (alpha.n_items, alpha.n_annotators) == (0, 1)
    report = agreement_report(judgments)
    assert_report_is_nan(report, "fleiss_kappa", "cohen_kappa", "krippendorff_alpha_ordinal", "unanimity")
    assert report["pairs"] == []
    assert math.isnan(report["per_annotator"]["solo"]["cohen_kappa"])
    assert math.isnan(report["per_query"]["q"]["krippendorff_alpha_ordinal"])


@pytest.mark.usefixtures("no_warnings")
def test_no_shared_items():
    judgments = [("x", "a", 0), ("y", "a", 3), ("z", "b", 1), ("w", "b", 2)]
    pair = cohen_kappa_pairs(judgments).pairs[0]
    assert pair.n_items == 0 and math.isnan(pair.value)
    assert math.isnan(krippendorff_alpha(judgments).value)
    assert math.isnan(fleiss_kappa(judgments).value)
    report = agreement_report(judgments)
    assert report["pairs"][0]["n_items"] == 0


@pytest.mark.usefixtures("no_warnings")
def test_empty_input():
    assert math.isnan(fleiss_kappa([]).value)
    assert math.isnan(cohen_kappa_pairs([]).mean)
    assert math.isnan(krippendorff_alpha([]).value)
    report = agreement_report([])
    assert (report["n_judgments"], report["n_items"], report["n_annotators"]) == (0, 0, 0)
    assert report["per_query"] == {} and report["per_annotator"] == {}


# ---------------------------------------------------------------------------
# input validation and helpers
# ---------------------------------------------------------------------------


def test_duplicate_judgment_is_an_error():
    with pytest.raises(ValueError, match="more than once"):
        fleiss_kappa([("i", "a", 1), ("i", "b", 1), ("i", "a", 2)])


@pytest.mark.parametrize(
    "bad",
    [
        [("i", "a", 4)],  # outside the scale
        [("i", "a", 1.0)],  # not an integer
        [("i", "a", True)],
        [("i", 7, 1)],  # annotator not a str
        [("i", "a")],  # not a triple
        [(["unhashable"], "a", 1)],
    ],
)
def test_malformed_judgments(bad):
    with pytest.raises(ValueError):
        krippendorff_alpha(bad)


def test_categories_must_be_increasing_integers():
    with pytest.raises(ValueError):
        cohen_kappa_pairs([("i", "a", 1)], categories=(3, 2, 1, 0))
    with pytest.raises(ValueError):
        cohen_kappa_pairs([("i", "a", 1)], categories=(1,))
    with pytest.raises(ValueError):
        cohen_kappa_pairs([("i", "a", 1)], weights="cubic")
    with pytest.raises(ValueError):
        krippendorff_alpha([("i", "a", 1)], level="circular")


def test_numpy_integer_labels_are_accepted():
    judgments = [(f"i{k}", who, np.int64(lab)) for k, lab in enumerate(A) for who in ("a",)] + [
        (f"i{k}", "b", np.int64(lab)) for k, lab in enumerate(B)
    ]
    assert cohen_kappa_pairs(judgments).mean == pytest.approx(13 / 33, abs=1e-12)


def test_from_label_map_keeps_order():
    labels = {("q", "d"): {"c": 1, "a": 2, "b": 3, "z": 2}}
    flat = from_label_map(labels)
    assert flat == [(("q", "d"), "c", 1), (("q", "d"), "a", 2), (("q", "d"), "b", 3), (("q", "d"), "z", 2)]
    # Fleiss keeps the first three in that order (c, a, b): all different -> one item, P_bar = 0
    result = fleiss_kappa(flat, n_raters=3)
    assert result.n_items_truncated == 1 and result.n_annotators == 3
    # counts (0,1,1,1): P_bar = 0, P_e = 3 * (1/3)^2 = 1/3 -> kappa = -1/2
    assert result.value == pytest.approx(-0.5, abs=1e-12)
