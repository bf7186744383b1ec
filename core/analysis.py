"""Benchmark analysis: run comparison, significance, breakdowns, dataset statistics.

Everything here is plain data in, plain data out, computed from the
per-query values of :func:`core.metrics.evaluate` (``{measure: {qid: value,
"all": mean}}``).  The pieces follow how published passage-retrieval
benchmarks were studied:

* run comparison and paired significance tests (Student's paired t-test and
  Fisher's paired randomisation test, as recommended for IR by Smucker, Allan
  & Carterette, "A comparison of statistical significance tests for
  information retrieval evaluation", CIKM 2007);
* qrels version comparison, e.g. before/after relabelling false negatives
  (Qiu et al., "DuReader-retrieval", EMNLP 2022, Figure 2);
* metrics per query group (split, type, domain, language) and per error
  category, where a query may carry several categories (Wang et al., "DAPR:
  A Benchmark on Document-Aware Passage Retrieval", ACL 2024, Figure 3);
* dataset statistics: text lengths, label distribution, judgments per query;
* query diversity by intra-list similarity (Xie et al., "T2Ranking: A
  large-scale Chinese Benchmark for Passage Ranking", SIGIR 2023, eq. 3-4);
* train/eval leakage by near-duplicate queries (DuReader-retrieval, cosine
  >= 0.5);
* the position of relevant passages within their documents (DAPR, Table 1).

The query id ``"all"`` is reserved by :func:`core.metrics.evaluate` for the
mean; the functions that take per-query values ignore that key.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy import stats

from core.metrics import evaluate, parse_measure
from core.ranking import trec_ranking
from core.types import Passage, Qrels, Run
from core.validators import integer, is_integer, is_real, positive_int, real_number

__all__ = [
    "UNGROUPED",
    "UNTAGGED",
    "CategoryMean",
    "ILSEstimate",
    "LeakPair",
    "LengthStats",
    "MeasureComparison",
    "QueryDelta",
    "RankedDoc",
    "RelevantPositions",
    "SignificanceResult",
    "VersionDelta",
    "compare_qrels_versions",
    "compare_runs",
    "find_leakage",
    "intra_list_similarity",
    "judged_per_query",
    "label_distribution",
    "length_stats",
    "metrics_by_category",
    "metrics_by_group",
    "missed_relevant",
    "paired_randomization_test",
    "paired_t_test",
    "per_query_deltas",
    "ranked_with_labels",
    "relevant_positions",
    "sampled_intra_list_similarity",
]

UNTAGGED = "untagged"
"""Category of the queries that carry no error-category tag."""

UNGROUPED = "ungrouped"
"""Group of the evaluated queries that ``groups`` does not mention."""

_ALL = "all"
_DEFAULT_BLOCK = 1 << 23  # elements of one similarity block (64 MiB in float64)


# ---------------------------------------------------------------------------- small result types


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


class RankedDoc(NamedTuple):
    """A passage of one query's ranking: 1-based rank and score in the run (``None`` when the
    run did not retrieve it) and its grade in the qrels (``None`` when unjudged)."""

    rank: int | None
    doc_id: str
    score: float | None
    grade: int | None


class VersionDelta(NamedTuple):
    """A run's mean under qrels version A and B, and ``delta = b - a``."""

    a: float
    b: float
    delta: float


class CategoryMean(NamedTuple):
    """Mean of a measure over the queries of one category, and their number."""

    mean: float
    n: int


class LengthStats(NamedTuple):
    """Length statistics of a set of texts, in characters (Unicode code points)."""

    count: int
    mean: float
    median: float
    p10: float
    p90: float
    min: int
    max: int


class ILSEstimate(NamedTuple):
    """A sampled intra-list similarity: the estimate, its standard error, the pairs drawn."""

    value: float
    stderr: float
    n_pairs: int


class LeakPair(NamedTuple):
    """A training query near-duplicate to an evaluation query."""

    train_id: str
    eval_id: str
    similarity: float


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


@dataclass(frozen=True)
class RelevantPositions:
    """Where relevant passages sit in their documents (see :func:`relevant_positions`).

    Attributes
    ----------
    n : int
        Relevant (query, passage) pairs whose passage has a document and a
        position.
    counts : dict[int, int]
        0-based position -> number of relevant pairs, by position.
    share_first : float
        ``counts[0] / n`` (NaN when ``n == 0``).
    mean_position, median_position : float
        Of the 0-based positions (NaN when ``n == 0``).
    relative : list[float]
        ``position / (L - 1)`` per relevant pair in a document of ``L >= 2``
        passages, in qrels order.
    mean_relative : float
        Mean of ``relative`` (NaN when empty).
    relative_histogram : list[int]
        Counts of ``relative`` in equal-width bins over ``[0, 1]`` (the last
        bin closed).
    n_single : int
        Pairs in single-passage documents (position 0, no relative position).
    n_missing : int
        Relevant pairs whose passage is not among the passages given.
    n_unpositioned : int
        Relevant pairs whose passage has no ``doc_id`` or no ``position``.
    """

    n: int
    counts: dict[int, int]
    share_first: float
    mean_position: float
    median_position: float
    relative: list[float] = field(repr=False)
    mean_relative: float
    relative_histogram: list[int]
    n_single: int
    n_missing: int
    n_unpositioned: int


# ---------------------------------------------------------------------------- helpers


def _measure_key(measure: object) -> str:
    return str(parse_measure(measure))  # type: ignore[arg-type]


def _per_query(results: Mapping[str, Mapping[str, float]], measure: str, what: str) -> Mapping[str, float]:
    try:
        return results[measure]
    except KeyError:
        raise KeyError(
            f"{what} holds no values for {measure!r} (it has {', '.join(map(repr, results)) or 'nothing'})"
        ) from None


def _values(per_query: Mapping[str, float]) -> dict[str, float]:
    """Per-query values without the ``"all"`` mean, checked to be finite numbers."""
    out: dict[str, float] = {}
    for qid, value in per_query.items():
        if qid == _ALL:
            continue
        if not is_real(value):
            raise TypeError(f"query {qid!r}: value must be a number, got {type(value).__name__}")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"query {qid!r}: value must be finite, got {v}")
        out[qid] = v
    return out


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
        raise ValueError(
            f"{key}: the results cover different queries (only in a: {only_a}, only in b: {only_b})"
        )
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
    # null statistic of a sign pattern with flipped set F: (sum(d) - 2 sum_{i in F} d_i) / n
    if n < 63 and (1 << n) <= n_resamples:  # exact: every one of the 2^n patterns once
        codes = np.arange(1 << n, dtype=np.int64)
        flips = ((codes[:, None] >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)
        null = (total - 2.0 * (flips @ d)) / n
        extra, count = 0, int(null.size)
        greater, less = _tails(null, observed, scale)
    else:  # Monte Carlo: n_resamples random patterns, the observed one counted in (+1)
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
        extra, count = 1, n_resamples + 1
    p_greater = (greater + extra) / count
    p_less = (less + extra) / count
    return SignificanceResult(observed, min(1.0, 2.0 * min(p_greater, p_less)), n)


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
    out: dict[str, MeasureComparison] = {}
    for key in res_a:
        deltas = per_query_deltas(res_a, res_b, key)
        t = r = None
        if significance and len(deltas) >= 2:
            sa = {d.qid: d.a for d in deltas}
            sb = {d.qid: d.b for d in deltas}
            t = paired_t_test(sa, sb)
            r = paired_randomization_test(sa, sb, n_resamples=n_resamples, seed=seed)
        mean_a, mean_b = res_a[key][_ALL], res_b[key][_ALL]
        out[key] = MeasureComparison(
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
    return out


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


# ---------------------------------------------------------------------------- drill-down


def ranked_with_labels(
    scores: Mapping[str, float], judgments: Mapping[str, int], k: int | None = None
) -> list[RankedDoc]:
    """One query's ranking as the measures see it, with each passage's grade.

    The order is :mod:`core.metrics`' (trec_eval's): score descending, scores
    compared as 32-bit floats, ties broken by document id descending, so rank
    ``i`` here is the rank ``i`` that ``MRR@10`` or ``P@10`` count.

    Parameters
    ----------
    scores : mapping
        ``{doc id: score}`` of one query in a run (``run.get(qid, {})``).
    judgments : mapping
        ``{doc id: grade}`` of the same query (``qrels.get(qid, {})``).
    k : int or None, default None
        Keep the top ``k`` passages; ``None`` keeps them all.

    Returns
    -------
    list of RankedDoc
        ``(rank, doc_id, score, grade)`` in rank order; ``grade`` is ``None``
        for an unjudged passage.
    """
    if k is not None:
        k = positive_int(k, "k")
    ranked = trec_ranking(scores)[:k]
    return [RankedDoc(i, d, float(scores[d]), judgments.get(d)) for i, d in enumerate(ranked, 1)]


def missed_relevant(
    scores: Mapping[str, float], judgments: Mapping[str, int], k: int, level: int = 1
) -> list[RankedDoc]:
    """The relevant passages (``grade >= level``) of one query that a run left out of its top ``k``.

    Parameters
    ----------
    scores, judgments : mapping
        As for :func:`ranked_with_labels`.
    k : int
        Depth of the top that was shown.
    level : int, default 1
        Relevance level.

    Returns
    -------
    list of RankedDoc
        ``(rank, doc_id, score, grade)`` where ``rank``/``score`` are the
        passage's place in the whole run (beyond ``k``) or ``None`` when the
        run did not retrieve it; sorted by grade descending, then retrieved
        before unretrieved by rank, then doc id.
    """
    k = positive_int(k, "k")
    level = integer(level, "level")
    ranks = {d: i for i, d in enumerate(trec_ranking(scores), 1)}
    missed = [
        RankedDoc(ranks.get(d), d, float(scores[d]) if d in scores else None, g)
        for d, g in judgments.items()
        if g >= level and ranks.get(d, k + 1) > k
    ]
    missed.sort(key=lambda r: (-r.grade, r.rank is None, r.rank or 0, r.doc_id))
    return missed


# ---------------------------------------------------------------------------- breakdowns


def metrics_by_group(
    qrels: Qrels,
    run: Run,
    measures: Sequence[str],
    groups: Mapping[str, str],
    level: int = 1,
    *,
    intersection: bool = False,
) -> dict[str, dict[str, float]]:
    """Mean of each measure over the evaluated queries of each group.

    One :func:`core.metrics.evaluate` call gives the per-query values; a
    group's mean is ``(1/|G|) sum_{q in G} m(q)`` over its evaluated queries.
    Groups are any query attribute: split, type, domain, language.

    Parameters
    ----------
    qrels, run, measures, level, intersection
        As for :func:`core.metrics.evaluate`.
    groups : mapping
        ``{qid: group name}``.  Evaluated queries it does not mention go to
        :data:`UNGROUPED`; entries for queries that were not evaluated are
        ignored.

    Returns
    -------
    dict
        ``{group: {"n": number of queries, measure: mean, ...}}``, groups
        sorted by name with :data:`UNGROUPED` last; only groups with at least
        one evaluated query appear.  ``pandas.DataFrame.from_dict(result,
        orient="index")`` gives the table.

    Raises
    ------
    TypeError
        When a group name is not a str.
    """
    for qid, g in groups.items():
        if not isinstance(g, str):
            raise TypeError(f"query {qid!r}: group must be a str, got {type(g).__name__}")
    results = evaluate(qrels, run, measures, level=level, intersection=intersection)
    if not results:
        return {}
    first = next(iter(results.values()))
    members: dict[str, list[str]] = {}
    for qid in first:
        if qid != _ALL:
            members.setdefault(groups.get(qid, UNGROUPED), []).append(qid)
    order = sorted(g for g in members if g != UNGROUPED) + ([UNGROUPED] if UNGROUPED in members else [])
    out: dict[str, dict[str, float]] = {}
    for g in order:
        qids = members[g]
        row: dict[str, float] = {"n": len(qids)}
        for key, per in results.items():
            row[key] = math.fsum(per[q] for q in qids) / len(qids)
        out[g] = row
    return out


def metrics_by_category(
    per_query_values: Mapping[str, float],
    categories: Mapping[str, Iterable[str]],
) -> dict[str, CategoryMean]:
    """Mean of a per-query measure per error category (DAPR, Figure 3).

    A query tagged with several categories counts in each of them, so the
    categories overlap and their sizes can sum to more than the number of
    queries.  Queries with no tag (absent from ``categories`` or with an empty
    set) are counted under :data:`UNTAGGED`.

    Parameters
    ----------
    per_query_values : mapping
        ``{qid: value}``, e.g. ``evaluate(...)["nDCG@10"]`` (``"all"`` is
        ignored).
    categories : mapping
        ``{qid: set of category names}``; entries for queries without a value
        are ignored.

    Returns
    -------
    dict
        ``{category: CategoryMean(mean, n)}``, categories sorted by name with
        :data:`UNTAGGED` last.

    Raises
    ------
    TypeError
        When a tag set is a bare str or holds non-str tags.
    """
    values = _values(per_query_values)
    buckets: dict[str, list[float]] = {}
    for qid, v in values.items():
        tags = categories.get(qid, ())
        if isinstance(tags, str):
            raise TypeError(f"query {qid!r}: categories must be a set of str, got the str {tags!r}")
        tags = set(tags)
        for t in tags:
            if not isinstance(t, str):
                raise TypeError(f"query {qid!r}: category must be a str, got {type(t).__name__}")
        for t in tags or (UNTAGGED,):
            buckets.setdefault(t, []).append(v)
    order = sorted(c for c in buckets if c != UNTAGGED) + ([UNTAGGED] if UNTAGGED in buckets else [])
    return {c: CategoryMean(math.fsum(buckets[c]) / len(buckets[c]), len(buckets[c])) for c in order}


# ---------------------------------------------------------------------------- dataset statistics


def length_stats(texts: Iterable[str]) -> LengthStats:
    """Length statistics of texts in characters (Unicode code points, ``len(str)``).

    Percentiles use linear interpolation between order statistics
    (:func:`numpy.percentile`'s default, Hyndman & Fan type 7).

    Parameters
    ----------
    texts : iterable of str
        E.g. passage or query texts.

    Returns
    -------
    LengthStats
        ``(count, mean, median, p10, p90, min, max)``.

    Raises
    ------
    ValueError
        When there are no texts.
    TypeError
        When an item is not a str.
    """
    lengths: list[int] = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"text {i}: expected str, got {type(t).__name__}")
        lengths.append(len(t))
    if not lengths:
        raise ValueError("length_stats needs at least one text")
    return length_stats_of(lengths)


def length_stats_of(lengths: Sequence[int] | np.ndarray) -> LengthStats:
    """:func:`length_stats` from the lengths themselves (e.g. ``SELECT length(text)``, no texts in memory)."""
    arr = np.asarray(lengths, dtype=np.int64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("length_stats_of needs a non-empty 1-d sequence of lengths")
    p10, p50, p90 = np.percentile(arr, [10, 50, 90])
    return LengthStats(
        count=int(arr.size),
        mean=float(arr.mean()),
        median=float(p50),
        p10=float(p10),
        p90=float(p90),
        min=int(arr.min()),
        max=int(arr.max()),
    )


def label_distribution(qrels: Qrels) -> dict[int, int]:
    """Number of judgments per grade, sorted by grade.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}``.

    Returns
    -------
    dict
        ``{grade: count}``.

    Raises
    ------
    TypeError
        When a grade is not an int.
    """
    counts: Counter[int] = Counter()
    for qid, docs in qrels.items():
        for doc, grade in docs.items():
            if not is_integer(grade):
                raise TypeError(f"query {qid!r}, doc {doc!r}: grade must be an int, got {grade!r}")
            counts[int(grade)] += 1
    return dict(sorted(counts.items()))


def judged_per_query(qrels: Qrels, *, min_grade: int | None = None) -> dict[str, int]:
    """Number of judged passages per query (or of those with ``grade >= min_grade``).

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}``; a query with no judgments gets 0.
    min_grade : int or None, default None
        Count only judgments with ``grade >= min_grade`` (e.g. 2 for the
        relevant passages on the 4-level scale).

    Returns
    -------
    dict
        ``{qid: count}`` in qrels order.
    """
    if min_grade is None:
        return {qid: len(docs) for qid, docs in qrels.items()}
    integer(min_grade, "min_grade")
    return {qid: sum(g >= min_grade for g in docs.values()) for qid, docs in qrels.items()}


# ---------------------------------------------------------------------------- embeddings


def _matrix(vectors: object, what: str) -> np.ndarray:
    arr = np.asarray(vectors)
    if arr.ndim != 2:
        raise ValueError(f"{what} must be a 2-d array (n, dim), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    return arr


def _normalised(block: np.ndarray, what: str, offset: int, dtype: type = np.float64) -> np.ndarray:
    x = np.asarray(block, dtype=dtype)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} holds non-finite values")
    norms = np.linalg.norm(x, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"{what} row {offset + int(zero[0])} is a zero vector (cosine undefined)")
    return x / norms[:, None]


def intra_list_similarity(vectors: np.ndarray, *, chunk_size: int = 65536) -> float:
    """Intra-list similarity of a query set: mean pairwise cosine similarity.

    T2Ranking's query diversity (Xie et al., "T2Ranking: A large-scale Chinese
    Benchmark for Passage Ranking", SIGIR 2023, eq. 3-4); lower ILS means more
    diverse queries::

        ILS(Q) = 2 / (|Q| (|Q| - 1)) * sum_{i<j} cos(e_i, e_j)

    With unit vectors ``u_i = e_i / ||e_i||`` (rows of ``U``) the pair sum is
    the off-diagonal half of ``U U^T``, and since ``1^T U U^T 1 = ||sum_i
    u_i||^2`` and the diagonal sums to ``|Q|``::

        sum_{i<j} cos(e_i, e_j) = (||sum_i u_i||^2 - |Q|) / 2

    so the exact value costs one pass over the vectors (``O(|Q| d)`` time,
    ``O(chunk_size d)`` memory) instead of the ``|Q|^2`` matrix product.
    Rows are normalised and summed in float64, ``chunk_size`` at a time.

    Parameters
    ----------
    vectors : array of shape (n, dim)
        Query embeddings (not necessarily normalised), ``n >= 2``, no zero
        rows.  A ``numpy.memmap`` is read chunk by chunk.
    chunk_size : int, default 65536
        Rows normalised at a time.

    Returns
    -------
    float
        ILS in ``[-1/(n-1), 1]``.

    Raises
    ------
    ValueError
        For fewer than 2 vectors, a zero vector or non-finite values.
    """
    chunk_size = positive_int(chunk_size, "chunk_size")
    arr = _matrix(vectors, "vectors")
    n = arr.shape[0]
    if n < 2:
        raise ValueError(f"intra-list similarity needs at least 2 vectors, got {n}")
    total = np.zeros(arr.shape[1], dtype=np.float64)
    for start in range(0, n, chunk_size):
        total += _normalised(arr[start : start + chunk_size], "vectors", start).sum(axis=0)
    pair_sum = (float(total @ total) - n) / 2.0
    return 2.0 * pair_sum / (n * (n - 1))


def sampled_intra_list_similarity(
    vectors: np.ndarray, *, n_pairs: int = 100_000, seed: int | None = 0
) -> ILSEstimate:
    """Monte Carlo estimate of :func:`intra_list_similarity` from random pairs.

    Draws ``n_pairs`` pairs ``(i, j)``, ``i != j``, uniformly with
    replacement; the estimate is the mean cosine of the pairs and its
    standard error ``s / sqrt(n_pairs)`` (``s`` the sample standard
    deviation).  Unbiased for ILS because every unordered pair is equally
    likely.  The exact value is already linear in ``|Q|``; sampling touches
    only the sampled rows, which helps when the vectors are memory-mapped or
    when a confidence interval is wanted.

    Parameters
    ----------
    vectors : array of shape (n, dim)
        Query embeddings, ``n >= 2``, no zero rows.
    n_pairs : int, default 100000
        Pairs drawn (in batches of 65536).
    seed : int or None, default 0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    ILSEstimate
        ``(value, stderr, n_pairs)``; ``stderr`` is NaN for one pair.
    """
    n_pairs = positive_int(n_pairs, "n_pairs")
    arr = _matrix(vectors, "vectors")
    n = arr.shape[0]
    if n < 2:
        raise ValueError(f"intra-list similarity needs at least 2 vectors, got {n}")
    rng = np.random.default_rng(seed)
    sims = np.empty(n_pairs, dtype=np.float64)
    batch = 65536
    for start in range(0, n_pairs, batch):
        m = min(batch, n_pairs - start)
        i = rng.integers(0, n, size=m)
        j = rng.integers(0, n - 1, size=m)
        j = j + (j >= i)  # uniform over the n - 1 indices other than i
        rows = np.unique(np.concatenate([i, j]))
        unit = _normalised(arr[rows], "vectors", 0)
        pos = {int(r): k for k, r in enumerate(rows)}
        ui = unit[[pos[int(x)] for x in i]]
        uj = unit[[pos[int(x)] for x in j]]
        sims[start : start + m] = np.einsum("ij,ij->i", ui, uj)
    stderr = float(np.std(sims, ddof=1) / math.sqrt(n_pairs)) if n_pairs > 1 else math.nan
    return ILSEstimate(float(sims.mean()), stderr, n_pairs)


def find_leakage(
    train_ids: Sequence[str],
    train_vecs: np.ndarray,
    eval_ids: Sequence[str],
    eval_vecs: np.ndarray,
    threshold: float = 0.5,
    top: int | None = None,
    *,
    block_elements: int = _DEFAULT_BLOCK,
) -> list[LeakPair]:
    """Training queries near-duplicate to evaluation (dev/test) queries.

    DuReader-retrieval (Qiu et al., EMNLP 2022) removed training queries whose
    embedding cosine similarity to a dev/test query was at least 0.5.  A pair
    leaks when ``cos(t, e) = t.e / (||t|| ||e||) >= threshold`` (inclusive;
    the comparison is on the computed floating-point cosine).

    The similarities are computed block by block, ``E_block U_T^T`` for a
    block of evaluation rows against all (normalised) training rows, each
    block at most ``block_elements`` similarities, so memory stays bounded
    (100k x 10k needs only one 64 MiB block at a time by default).  float32
    inputs are compared in float32, anything else in float64.

    Parameters
    ----------
    train_ids, eval_ids : sequence of str
        Unique ids, one per row of the matching matrix.
    train_vecs, eval_vecs : array of shape (n, dim)
        Query embeddings with the same ``dim``; no zero rows.
    threshold : float, default 0.5
        Cosine threshold in ``[-1, 1]``.
    top : int or None, default None
        Keep at most this many training matches per evaluation query (its
        most similar ones, ties by training id); ``None`` keeps all.
    block_elements : int, default 2**23
        Similarities computed per block.

    Returns
    -------
    list of LeakPair
        ``(train_id, eval_id, similarity)`` sorted by similarity descending,
        then train id, then eval id.

    Raises
    ------
    ValueError
        For mismatched lengths or dimensions, duplicate ids, zero vectors,
        non-finite values, or a threshold outside ``[-1, 1]``.
    """
    t_arr = _matrix(train_vecs, "train_vecs")
    e_arr = _matrix(eval_vecs, "eval_vecs")
    train_ids, eval_ids = list(train_ids), list(eval_ids)
    for ids, arr, what in ((train_ids, t_arr, "train"), (eval_ids, e_arr, "eval")):
        if len(ids) != arr.shape[0]:
            raise ValueError(f"{len(ids)} {what} ids for {arr.shape[0]} {what} vectors")
        if len(set(ids)) != len(ids):
            dup = next(i for i, c in Counter(ids).items() if c > 1)
            raise ValueError(f"duplicate {what} id {dup!r}")
    if t_arr.shape[1] != e_arr.shape[1]:
        raise ValueError(f"dimension mismatch: train {t_arr.shape[1]}, eval {e_arr.shape[1]}")
    real_number(threshold, "threshold", low=-1, high=1)
    if top is not None:
        top = positive_int(top, "top")
    block_elements = positive_int(block_elements, "block_elements")
    n_train, n_eval = t_arr.shape[0], e_arr.shape[0]
    if n_train == 0 or n_eval == 0:
        return []

    dtype = np.float32 if (t_arr.dtype == np.float32 and e_arr.dtype == np.float32) else np.float64
    train_unit = _normalised(t_arr, "train_vecs", 0, dtype)
    train_rank = np.empty(n_train, dtype=np.int64)  # position of each train id in sorted order
    train_rank[sorted(range(n_train), key=train_ids.__getitem__)] = np.arange(n_train)
    rows_per_block = max(1, block_elements // n_train)

    found: list[LeakPair] = []
    for start in range(0, n_eval, rows_per_block):
        eval_unit = _normalised(e_arr[start : start + rows_per_block], "eval_vecs", start, dtype)
        sims = eval_unit @ train_unit.T  # (block, n_train)
        rows, cols = np.nonzero(sims >= threshold)
        if rows.size == 0:
            continue
        vals = sims[rows, cols].astype(np.float64)
        if top is not None:
            order = np.lexsort((train_rank[cols], -vals, rows))
            rows, cols, vals = rows[order], cols[order], vals[order]
            first = np.searchsorted(rows, rows, side="left")  # start of each row's run
            keep = (np.arange(rows.size) - first) < top
            rows, cols, vals = rows[keep], cols[keep], vals[keep]
        found.extend(
            LeakPair(train_ids[c], eval_ids[start + r], float(v))
            for r, c, v in zip(rows.tolist(), cols.tolist(), vals.tolist())
        )
    found.sort(key=lambda p: (-p.similarity, p.train_id, p.eval_id))
    return found


LEXICAL_LEAKAGE_THRESHOLD = 0.4
"""Character-bigram cosine at or above which :func:`find_lexical_leakage` flags a pair.

Calibrated on the bundled demo and paraphrases of its Chinese test queries:
the demo's three Chinese training queries (番茄炒蛋的做法, 麻婆豆腐是哪个省的菜,
黄山的最高峰是哪座) score at most 0.12 against any Chinese dev/test query, and
two different questions of one template (端午节为什么吃粽子 against
除夕为什么要吃饺子) 0.21; reworded paraphrases score 0.53 (故宫是哪年开始建造的
/ 故宫是哪一年开始修建的), 0.53 (吃饺子为什么是除夕的习俗 / 除夕为什么要吃饺子),
0.63 (端午节为啥要吃粽子 / 端午节为什么吃粽子) and 0.84 (高血压的诊断标准 /
高血压的诊断标准是什么).  A paraphrase in other words (怎么预防小孩近视 /
怎样预防孩子近视, 0.29) is out of reach of any lexical measure: that needs a
Chinese encoder; a question of the same short template (元宵节为什么吃汤圆 /
端午节为什么吃粽子, 0.50) is flagged although it asks something else: the
measure sees shared wording, so the flagged list is for review.
"""

_WORD_RUN = re.compile(r"[^\W_]+")


def char_bigrams(text: str) -> list[str]:
    """The overlapping character bigrams of ``text``'s runs of letters and digits (NFKC, lower-cased).

    Punctuation and spaces separate runs and never enter a bigram; a run of
    one character counts as itself.  ``"除夕吃饺子？"`` gives 除夕, 夕吃, 吃饺, 饺子.
    """
    grams: list[str] = []
    for run in _WORD_RUN.findall(unicodedata.normalize("NFKC", text).lower()):
        grams.extend([run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)])
    return grams


def find_lexical_leakage(
    train_ids: Sequence[str],
    train_texts: Sequence[str],
    eval_ids: Sequence[str],
    eval_texts: Sequence[str],
    threshold: float = LEXICAL_LEAKAGE_THRESHOLD,
    top: int | None = None,
) -> list[LeakPair]:
    """Training queries near-duplicate to evaluation queries by character-bigram cosine.

    :func:`find_leakage` for texts without an encoder of their language (an
    English encoder puts unrelated Chinese questions at cosine 0.5-0.86): each
    query is a vector of its :func:`char_bigrams` counts (scikit-learn's
    ``CountVectorizer``), and a pair leaks when the cosine of the two vectors
    is at least ``threshold`` (default :data:`LEXICAL_LEAKAGE_THRESHOLD`,
    calibrated for Chinese questions).  It measures shared wording, not
    meaning.

    Parameters
    ----------
    train_ids, eval_ids : sequence of str
        Unique ids, one per text.
    train_texts, eval_texts : sequence of str
        The query texts.
    threshold : float, default LEXICAL_LEAKAGE_THRESHOLD
        Cosine threshold in ``(0, 1]`` (a pair sharing no bigram has cosine 0 and never leaks).
    top : int or None, default None
        Keep at most this many training matches per evaluation query, as in :func:`find_leakage`.

    Returns
    -------
    list of LeakPair
        Sorted by similarity descending, then train id, then eval id.
    """
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import normalize

    train_ids, eval_ids = list(train_ids), list(eval_ids)
    for ids, texts, what in ((train_ids, train_texts, "train"), (eval_ids, eval_texts, "eval")):
        if len(ids) != len(texts):
            raise ValueError(f"{len(ids)} {what} ids for {len(texts)} {what} texts")
        if len(set(ids)) != len(ids):
            dup = next(i for i, c in Counter(ids).items() if c > 1)
            raise ValueError(f"duplicate {what} id {dup!r}")
    real_number(threshold, "threshold", low=0, high=1)
    if threshold == 0:
        raise ValueError("threshold must be above 0: every pair has a bigram cosine >= 0")
    if top is not None:
        top = positive_int(top, "top")
    if not train_ids or not eval_ids:
        return []
    vectorizer = CountVectorizer(analyzer=char_bigrams)
    try:
        matrix = vectorizer.fit_transform([*train_texts, *eval_texts])
    except ValueError:  # no text has a letter or digit: no bigram, nothing can match
        return []
    matrix = normalize(matrix.astype(np.float64))
    sims = (matrix[len(train_ids):] @ matrix[: len(train_ids)].T).tocoo()  # (eval, train), sparse
    found = [LeakPair(train_ids[c], eval_ids[r], float(v))
             for r, c, v in zip(sims.row.tolist(), sims.col.tolist(), sims.data.tolist()) if v >= threshold]
    found.sort(key=lambda p: (-p.similarity, p.train_id, p.eval_id))
    if top is not None:
        seen: Counter[str] = Counter()  # found is most similar first: keep each eval query's first `top`
        kept = []
        for pair in found:
            seen[pair.eval_id] += 1
            if seen[pair.eval_id] <= top:
                kept.append(pair)
        found = kept
    return found


# ---------------------------------------------------------------------------- positions


def relevant_positions(
    qrels: Qrels, passages: Iterable[Passage], level: int = 1, *, bins: int = 10
) -> RelevantPositions:
    """Position of the relevant passages within their documents (DAPR, Table 1).

    Every relevant (query, passage) pair, ``grade >= level``, counts once.
    A document's length ``L`` is one more than the largest ``position`` among
    its passages given here; the relative position of a passage at 0-based
    position ``p`` is ``p / (L - 1)`` (0 = first passage, 1 = last), undefined
    for single-passage documents, which are counted apart (``n_single``) but
    still enter ``counts``.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {passage id: grade}}``.
    passages : iterable of Passage
        The corpus, read once; only passages with ``doc_id`` and ``position``
        count towards document lengths.
    level : int, default 1
        Relevance level.
    bins : int, default 10
        Bins of ``relative_histogram`` over ``[0, 1]``.

    Returns
    -------
    RelevantPositions

    Raises
    ------
    ValueError
        For a negative position, a passage id given twice with different
        structure, or a bad ``level``/``bins``.
    """
    level = integer(level, "level")
    bins = positive_int(bins, "bins")
    relevant = {pid for docs in qrels.values() for pid, g in docs.items() if g >= level}
    doc_last: dict[str, int] = {}
    where: dict[str, tuple[str | None, int | None]] = {}
    for p in passages:
        if not isinstance(p, Passage):
            raise TypeError(f"expected Passage, got {type(p).__name__}")
        if p.position is not None and (not is_integer(p.position) or p.position < 0):
            raise ValueError(f"passage {p.id!r}: position must be a non-negative int, got {p.position!r}")
        if p.doc_id is not None and p.position is not None:
            if p.position > doc_last.get(p.doc_id, -1):
                doc_last[p.doc_id] = p.position
        if p.id in relevant:
            seen = where.get(p.id)
            if seen is not None and seen != (p.doc_id, p.position):
                raise ValueError(f"passage {p.id!r} given twice with different doc_id/position")
            where[p.id] = (p.doc_id, p.position)

    positions: list[int] = []
    relative: list[float] = []
    n_single = n_missing = n_unpositioned = 0
    for docs in qrels.values():
        for pid, g in docs.items():
            if g < level:
                continue
            if pid not in where:
                n_missing += 1
                continue
            doc, pos = where[pid]
            if doc is None or pos is None:
                n_unpositioned += 1
                continue
            positions.append(pos)
            length = doc_last[doc] + 1
            if length == 1:
                n_single += 1
            else:
                relative.append(pos / (length - 1))
    n = len(positions)
    counts = dict(sorted(Counter(positions).items()))
    hist, _ = np.histogram(np.asarray(relative, dtype=np.float64), bins=bins, range=(0.0, 1.0))
    return RelevantPositions(
        n=n,
        counts=counts,
        share_first=counts.get(0, 0) / n if n else math.nan,
        mean_position=float(np.mean(positions)) if n else math.nan,
        median_position=float(np.median(positions)) if n else math.nan,
        relative=relative,
        mean_relative=math.fsum(relative) / len(relative) if relative else math.nan,
        relative_histogram=[int(x) for x in hist],
        n_single=n_single,
        n_missing=n_missing,
        n_unpositioned=n_unpositioned,
    )
