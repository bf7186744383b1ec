"""Run comparison and paired significance tests.

Student's paired t-test and Fisher's paired randomisation test, as
recommended for IR by Smucker, Allan & Carterette ("A comparison of
statistical significance tests for information retrieval evaluation", CIKM
2007), and qrels version comparison, e.g. before/after relabelling false
negatives (Qiu et al., "DuReader-retrieval", EMNLP 2022, Figure 2).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy import stats

from core.analysis._common import _ALL, _DEFAULT_BLOCK, _measure_key, _per_query, _values
from core.metrics import evaluate
from core.types import Qrels, Run
from core.validators import positive_int

__all__ = [
    "MeasureComparison",
    "QueryDelta",
    "SignificanceResult",
    "VersionDelta",
    "compare_qrels_versions",
    "compare_runs",
    "paired_randomization_test",
    "paired_t_test",
    "per_query_deltas",
]


class QueryDelta(NamedTuple):
    """One query's value under run A and run B, and ``delta = b - a``."""

    qid: str
    a: float
    b: float
    delta: float


class SignificanceResult(NamedTuple):
    """A paired test's statistic, two-sided p-value and number of pairs."""

    statistic: float
    p_value: float
    n: int


class VersionDelta(NamedTuple):
    """A run's mean under qrels version A and B, and ``delta = b - a``."""

    a: float
    b: float
    delta: float


@dataclass(frozen=True)
class MeasureComparison:
    """Run A against run B on one measure (see :func:`compare_runs`).

    ``deltas`` is :func:`per_query_deltas`'s list; ``wins``/``losses``/``ties``
    count the queries where B is above/below/equal to A; ``t_test`` and
    ``randomization`` are ``None`` when not requested or when fewer than two
    queries were evaluated.
    """

    measure: str
    a: float
    b: float
    delta: float
    n: int
    wins: int
    losses: int
    ties: int
    deltas: list[QueryDelta]
    t_test: SignificanceResult | None = None
    randomization: SignificanceResult | None = None


def _paired(
    a: Mapping[str, float] | Sequence[float], b: Mapping[str, float] | Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """Two aligned float64 arrays from two per-query mappings (same queries) or two sequences."""
    if isinstance(a, Mapping) != isinstance(b, Mapping):
        raise TypeError("give both scores as mappings {qid: value} or both as sequences")
    if isinstance(a, Mapping):
        va, vb = _values(a), _values(b)  # type: ignore[arg-type]
        if va.keys() != vb.keys():
            only_a = sorted(va.keys() - vb.keys())[:5]
            only_b = sorted(vb.keys() - va.keys())[:5]
            raise ValueError(
                f"the two score sets cover different queries (only in a: {only_a}, only in b: {only_b}); "
                "evaluate both runs on the same qrels"
            )
        keys = sorted(va)
        xa = np.array([va[k] for k in keys], dtype=np.float64)
        xb = np.array([vb[k] for k in keys], dtype=np.float64)
    else:
        xa = np.asarray(a, dtype=np.float64)
        xb = np.asarray(b, dtype=np.float64)
        if xa.ndim != 1 or xb.ndim != 1:
            raise ValueError("scores must be one-dimensional")
        if xa.shape != xb.shape:
            raise ValueError(f"paired scores must have equal lengths, got {xa.size} and {xb.size}")
        if not (np.all(np.isfinite(xa)) and np.all(np.isfinite(xb))):
            raise ValueError("scores must be finite")
    if xa.size < 2:
        raise ValueError(f"a paired test needs at least 2 queries, got {xa.size}")
    return xa, xb


# ---------------------------------------------------------------------------- run comparison


def per_query_deltas(
    results_a: Mapping[str, Mapping[str, float]],
    results_b: Mapping[str, Mapping[str, float]],
    measure: str,
) -> list[QueryDelta]:
    """Per-query differences between two evaluations, largest change first.

    Parameters
    ----------
    results_a, results_b : mapping
        :func:`core.metrics.evaluate` results of run A and run B on the same
        qrels (``{measure: {qid: value, "all": mean}}``).
    measure : str
        The measure, in any spelling :func:`core.metrics.parse_measure`
        accepts (looked up under its canonical spelling).

    Returns
    -------
    list of QueryDelta
        ``(qid, a, b, b - a)`` for every evaluated query (``"all"`` excluded),
        sorted by ``|b - a|`` descending, ties by query id.

    Raises
    ------
    KeyError
        When a result lacks the measure.
    ValueError
        When the two results cover different queries.
    """
    key = _measure_key(measure)
    va = _values(_per_query(results_a, key, "results_a"))
    vb = _values(_per_query(results_b, key, "results_b"))
    if va.keys() != vb.keys():
        only_a = sorted(va.keys() - vb.keys())[:5]
        only_b = sorted(vb.keys() - va.keys())[:5]
        raise ValueError(f"{key}: the results cover different queries (only in a: {only_a}, only in b: {only_b})")
    rows = [QueryDelta(qid, va[qid], vb[qid], vb[qid] - va[qid]) for qid in va]
    rows.sort(key=lambda r: (-abs(r.delta), r.qid))
    return rows


def paired_t_test(
    a: Mapping[str, float] | Sequence[float], b: Mapping[str, float] | Sequence[float]
) -> SignificanceResult:
    """Two-sided paired (Student) t-test on per-query scores of two runs.

    With ``d_i = b_i - a_i`` over ``n`` queries,

    ``t = mean(d) / (s_d / sqrt(n))``, ``s_d`` the sample standard deviation
    (``ddof = 1``), and ``p = 2 P(T_{n-1} >= |t|)``; computed by
    :func:`scipy.stats.ttest_rel` (``b`` first, so ``t > 0`` means B is
    better).

    Parameters
    ----------
    a, b : mapping {qid: value} or sequence of float
        Per-query scores of run A and run B.  Mappings must cover the same
        queries (an ``"all"`` key is ignored) and are paired by query id;
        sequences are paired by position.

    Returns
    -------
    SignificanceResult
        ``(t, p, n)``.  When every difference is 0 the result is ``(0.0, 1.0,
        n)``; when the differences are all equal and non-zero, ``t`` is
        ``±inf`` and ``p`` is 0.

    Raises
    ------
    ValueError
        For fewer than 2 pairs, unequal lengths, different query sets or
        non-finite scores.
    """
    xa, xb = _paired(a, b)
    d = xb - xa
    n = int(d.size)
    if not np.any(d):
        return SignificanceResult(0.0, 1.0, n)
    if np.all(d == d[0]):
        return SignificanceResult(math.copysign(math.inf, float(d[0])), 0.0, n)
    res = stats.ttest_rel(xb, xa)
    return SignificanceResult(float(res.statistic), float(res.pvalue), n)


def paired_randomization_test(
    a: Mapping[str, float] | Sequence[float],
    b: Mapping[str, float] | Sequence[float],
    *,
    n_resamples: int = 9999,
    seed: int | None = 0,
) -> SignificanceResult:
    """Two-sided paired randomisation (permutation) test on the mean difference.

    Fisher's randomisation test as used in IR (Smucker, Allan & Carterette,
    CIKM 2007): under the null hypothesis the labels A/B of each query's pair
    of scores are exchangeable, so each ``d_i = b_i - a_i`` flips sign with
    probability 1/2.  The statistic is ``mean(d)``.  The null distribution
    is exact (all ``2^n`` sign patterns) when ``2^n <= n_resamples``, with
    ``p_greater = #{null >= observed} / 2^n``; otherwise ``n_resamples``
    random sign patterns give ``p_greater = (1 + #{null >= observed}) / (1 +
    n_resamples)`` (the observed pattern counted in, so ``p > 0``), likewise
    ``p_less``, and the two-sided ``p = min(1, 2 min(p_less, p_greater))``.
    These are the conventions of :func:`scipy.stats.permutation_test` with
    ``permutation_type="samples"`` (whose exact p-values this reproduces);
    the sign patterns are drawn here as a ``(batch, n)`` boolean matrix and
    reduced with one matrix product, which is much faster on thousands of
    queries.

    Parameters
    ----------
    a, b : mapping {qid: value} or sequence of float
        Per-query scores, as for :func:`paired_t_test`.
    n_resamples : int, default 9999
        Random sign patterns drawn (when the exact test is larger).
    seed : int or None, default 0
        Seed of the random patterns; equal seeds give equal p-values.

    Returns
    -------
    SignificanceResult
        ``(mean(b - a), p, n)``; identical runs give ``p = 1``.

    Raises
    ------
    ValueError
        As :func:`paired_t_test`, or for a non-positive ``n_resamples``.
    """
    n_resamples = positive_int(n_resamples, "n_resamples")
    xa, xb = _paired(a, b)
    d = xb - xa
    n = int(d.size)
    if not np.any(d):
        return SignificanceResult(0.0, 1.0, n)
    total = math.fsum(d.tolist())
    observed = total / n
    scale = math.fsum(np.abs(d).tolist()) / n
    if n < 63 and (1 << n) <= n_resamples:  # exact: every one of the 2^n patterns once
        greater, less = _exact_tails(d, total, observed, scale)
        extra, count = 0, 1 << n
    else:  # Monte Carlo: n_resamples random patterns, the observed one counted in (+1)
        greater, less = _sampled_tails(d, total, observed, scale, n_resamples, seed)
        extra, count = 1, n_resamples + 1
    p_greater, p_less = (greater + extra) / count, (less + extra) / count
    return SignificanceResult(observed, min(1.0, 2.0 * min(p_greater, p_less)), n)


def _exact_tails(d: np.ndarray, total: float, observed: float, scale: float) -> tuple[int, int]:
    """:func:`_tails` of the null statistics of all ``2^n`` sign patterns of ``d``.

    The pattern that flips the set ``F`` has the statistic ``(sum(d) - 2 sum_{i in F} d_i) / n``.
    """
    n = int(d.size)
    codes = np.arange(1 << n, dtype=np.int64)
    flips = ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)
    null = (total - 2.0 * (flips @ d)) / n
    return _tails(null, observed, scale)


def _sampled_tails(
    d: np.ndarray, total: float, observed: float, scale: float, n_resamples: int, seed: int | None
) -> tuple[int, int]:
    """:func:`_tails` summed over ``n_resamples`` random sign patterns, drawn in bounded batches."""
    n = int(d.size)
    rng = np.random.default_rng(seed)
    batch = max(1, _DEFAULT_BLOCK // n)
    greater = less = 0
    done = 0
    while done < n_resamples:
        m = min(batch, n_resamples - done)
        flips = rng.random((m, n)) < 0.5
        null = (total - 2.0 * (flips @ d)) / n
        g, l_ = _tails(null, observed, scale)
        greater += g
        less += l_
        done += m
    return greater, less


def _tails(null: np.ndarray, observed: float, scale: float) -> tuple[int, int]:
    """How many null statistics are >= / <= the observed one, within ``100 eps mean(|d|)``
    (scipy uses ``100 eps |observed|``; the mean of ``|d|`` bounds the rounding of every
    pattern's sum, so equal statistics cannot be split even when ``observed`` is near 0)."""
    gamma = 100 * np.finfo(np.float64).eps * scale
    return int(np.count_nonzero(null >= observed - gamma)), int(np.count_nonzero(null <= observed + gamma))


def compare_runs(
    qrels: Qrels,
    run_a: Run,
    run_b: Run,
    measures: Sequence[str],
    level: int = 1,
    *,
    intersection: bool = False,
    significance: bool = True,
    n_resamples: int = 9999,
    seed: int | None = 0,
) -> dict[str, MeasureComparison]:
    """Compare two runs on the same qrels, measure by measure.

    Both runs are evaluated by :func:`core.metrics.evaluate` (``trec_eval
    -c``: a judged query a run lacks scores 0).  For each measure the result
    holds the two means, ``delta = mean_b - mean_a``, win/loss/tie counts,
    :func:`per_query_deltas` and, with ``significance``,
    :func:`paired_t_test` and :func:`paired_randomization_test` on the
    per-query values.

    Parameters
    ----------
    qrels : Qrels
        Judgments.
    run_a, run_b : Run
        The runs (A is the baseline).
    measures : sequence of str
        Measure spellings (see :func:`core.metrics.parse_measure`).
    level : int, default 1
        Relevance level of the binary measures.
    intersection : bool, default False
        Evaluate only judged queries present in *both* runs.
    significance : bool, default True
        Run the two paired tests (skipped when fewer than 2 queries).
    n_resamples, seed
        Passed to :func:`paired_randomization_test`.

    Returns
    -------
    dict
        ``{canonical measure: MeasureComparison}`` in the order given.
    """
    if intersection:
        qrels = {q: d for q, d in qrels.items() if q in run_a and q in run_b}
    res_a = evaluate(qrels, run_a, measures, level=level)
    res_b = evaluate(qrels, run_b, measures, level=level)
    return {
        key: _comparison(key, res_a, res_b, significance=significance, n_resamples=n_resamples, seed=seed)
        for key in res_a
    }


def _comparison(
    key: str,
    res_a: Mapping[str, Mapping[str, float]],
    res_b: Mapping[str, Mapping[str, float]],
    *,
    significance: bool,
    n_resamples: int,
    seed: int | None,
) -> MeasureComparison:
    """One measure's :class:`MeasureComparison` from the two evaluations (see :func:`compare_runs`)."""
    deltas = per_query_deltas(res_a, res_b, key)
    t = r = None
    if significance and len(deltas) >= 2:
        sa = {d.qid: d.a for d in deltas}
        sb = {d.qid: d.b for d in deltas}
        t = paired_t_test(sa, sb)
        r = paired_randomization_test(sa, sb, n_resamples=n_resamples, seed=seed)
    mean_a, mean_b = res_a[key][_ALL], res_b[key][_ALL]
    return MeasureComparison(
        measure=key,
        a=mean_a,
        b=mean_b,
        delta=mean_b - mean_a,
        n=len(deltas),
        wins=sum(d.delta > 0 for d in deltas),
        losses=sum(d.delta < 0 for d in deltas),
        ties=sum(d.delta == 0 for d in deltas),
        deltas=deltas,
        t_test=t,
        randomization=r,
    )


def compare_qrels_versions(
    run_by_name: Mapping[str, Run],
    qrels_a: Qrels,
    qrels_b: Qrels,
    measures: Sequence[str],
    level: int = 1,
) -> dict[str, dict[str, VersionDelta]]:
    """Each run's means under two versions of the qrels.

    The analysis of DuReader-retrieval's Figure 2 (Qiu et al., EMNLP 2022):
    runs scored against the original labels and against labels where pooled
    false negatives were relabelled relevant; ``delta = value_b - value_a``
    shows how much each run was penalised by the missing labels.  Each mean
    is over the queries judged in that version (``trec_eval -c``).

    Parameters
    ----------
    run_by_name : mapping
        ``{run name: Run}``.
    qrels_a, qrels_b : Qrels
        The two versions (A = before, B = after).
    measures : sequence of str
        Measure spellings.
    level : int, default 1
        Relevance level of the binary measures.

    Returns
    -------
    dict
        ``{run name: {canonical measure: VersionDelta(a, b, b - a)}}``.
    """
    out: dict[str, dict[str, VersionDelta]] = {}
    for name, run in run_by_name.items():
        ra = evaluate(qrels_a, run, measures, level=level)
        rb = evaluate(qrels_b, run, measures, level=level)
        out[name] = {k: VersionDelta(ra[k][_ALL], rb[k][_ALL], rb[k][_ALL] - ra[k][_ALL]) for k in ra}
    return out
