"""The simulation's numbers: per-query measure values, seeded bootstrap intervals and Kendall tau.

The bootstrap is Efron and Tibshirani's percentile interval over queries;
tau is scipy's tau-b between the runs' means (see :mod:`core.simulation`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from scipy.stats import kendalltau

from core.metrics import evaluate
from core.types import Qrels, Run
from core.validators import positive_int, real_number

__all__ = [
    "bootstrap_interval",
    "kendall_tau",
    "per_query_values",
    "percentile_intervals",
    "resample_counts",
    "update_values",
]


def resample_counts(n_queries: int, resamples: int, seed: int) -> np.ndarray:
    """``counts[b, i]``: how often query ``i`` is drawn in resample ``b`` (n draws with replacement each)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_queries, size=(resamples, n_queries))
    counts = np.zeros((resamples, n_queries))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
    return counts


def percentile_intervals(values: np.ndarray, counts: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    # the mean of a resample is counts @ values / n: one matrix product for every run and resample
    means = values @ counts.T / values.shape[1]
    tail = (1.0 - confidence) / 2.0 * 100.0
    lo, hi = np.percentile(means, [tail, 100.0 - tail], axis=1)
    return lo, hi


def bootstrap_interval(
    values: Sequence[float], *, resamples: int = 1000, confidence: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-query ``values``.

    ``resamples`` samples of the queries with replacement, drawn from
    ``numpy.random.default_rng(seed)``; the interval is the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` percentiles of
    their means (numpy's linear interpolation).  Deterministic for a seed.
    """
    arr = np.asarray(values, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("values must be a non-empty sequence of per-query values")
    resamples = positive_int(resamples, "resamples")
    confidence = real_number(confidence, "confidence", low=0.0, high=1.0, low_open=True, high_open=True)
    lo, hi = percentile_intervals(arr[None, :], resample_counts(arr.size, resamples, seed), confidence)
    return float(lo[0]), float(hi[0])


def kendall_tau(a: np.ndarray, b: np.ndarray) -> float:
    if np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan  # nothing to rank: scipy would warn and return NaN
    return float(kendalltau(a, b).statistic)


def update_values(
    values: np.ndarray,
    qrels: Qrels,
    changed: set[str],
    runs: Mapping[str, Run],
    position: Mapping[str, int],
    measure: str,
    level: int,
) -> None:
    """Re-evaluate only the queries whose labels changed, in place.

    A trec_eval measure of a query depends on that query's qrels and ranking
    alone, so evaluating the changed queries gives the same per-query values
    as evaluating everything again, at the cost of a batch, not of the
    collection.
    """
    sub = {qid: qrels[qid] for qid in sorted(changed) if qrels.get(qid)}
    if not sub:
        return
    columns = [position[qid] for qid in sub]
    for r, run in enumerate(runs.values()):
        per = evaluate(sub, {qid: run[qid] for qid in sub if qid in run}, [measure], level=level)[measure]
        values[r, columns] = [per[qid] for qid in sub]


def per_query_values(
    qrels: Qrels, runs: Mapping[str, Run], queries: Sequence[str], measure: str, level: int
) -> np.ndarray:
    """``values[r, i]``: run ``r``'s measure on query ``queries[i]`` under ``qrels`` (0 where it has no labels)."""
    out = np.zeros((len(runs), len(queries)))
    if not qrels:
        return out
    for r, run in enumerate(runs.values()):
        per = evaluate(qrels, run, [measure], level=level)[measure]
        out[r] = [per.get(qid, 0.0) for qid in queries]
    return out
