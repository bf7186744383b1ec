"""How many labels are enough: a labelling simulation with a collection's own labels as the oracle.

No annotation tool tells a team when to stop labelling.  This module replays
labelling on a collection that is already fully labelled: the pairs of a
pool are "labelled" batch by batch, in the order a selection strategy would
send them to annotators, and after every batch the stored runs are
evaluated against the labels gathered so far.  Two numbers say whether the
labels are enough:

* the Kendall tau between the system ranking under the labels so far and
  the ranking under all labels (Voorhees, "Variations in relevance
  judgments and the measurement of retrieval effectiveness", 2000, takes
  0.9 as "equivalent rankings");
* each run's measure with a seeded percentile bootstrap 95% interval over
  queries (Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993).

Strategies (:data:`STRATEGIES`) give an order over the pool's pairs:

``depth``
    Incremental depth pooling: every run's rank-1 document of every query,
    then every rank 2, ... (queries in sorted id order, runs in the order
    given, a document already taken is skipped).
``top-n``
    DuReader-retrieval's selection: each query's pool re-ranked by the
    ensemble of the runs (:func:`core.pooling.ensemble_scores`), then
    round-robin over the queries by that rank (every query's best, then
    every query's second, ...).
``random``
    A seeded shuffle of the pool (``numpy.random.default_rng(seed)``).
``active``
    T2Ranking section 4.4: a cross-encoder's probability per pair, the most
    uncertain first (probability closest to 0.5).  With a confidence
    ``band=(low, high)``, a pair whose probability is outside the band gets
    the model's label instead of a human's and costs nothing (``p > high``:
    grade ``level``; ``p < low``: grade 0); the result reports those "pairs
    saved".  The probabilities are fixed for the whole simulation (the
    model is not retrained between batches).

Semantics (trec_eval's view, chosen so that every batch is comparable):

* The pool is the union over the runs of their top ``depth`` documents per
  query, for the queries the oracle judges (a query without oracle labels
  cannot be simulated).  Ranks are trec order (:mod:`core.ranking`).
* After a batch, the qrels are the oracle's grades of the pairs labelled so
  far; an unlabelled pair is absent, i.e. non-relevant, as trec_eval treats
  it.  A pooled pair the oracle does not judge stays absent once labelled
  (the oracle has nothing to say, exactly as under all labels).
* Every mean is over the same query set as the all-label evaluation: the
  queries with at least one oracle judgment (what :func:`core.metrics.evaluate`
  averages over).  A query with no labels yet scores 0 for every run, as
  trec_eval would score a judged query with no relevant document, so the
  means of different batches and of the full labels are comparable.
* Tau is ``scipy.stats.kendalltau`` (tau-b, ties counted) between the runs'
  means; it is NaN while every run has the same mean (nothing to rank).
  When the pool holds every judged pair of the oracle, the last batch
  reproduces the full labels and tau is 1; a shallower pool stays below
  (the bias of the pool itself).
* The bootstrap draws ``resamples`` query samples once from the seed and
  uses them for every batch, strategy and run (paired resamples: the bands
  of two batches differ only by the labels).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from scipy.stats import kendalltau

from core.metrics import evaluate, parse_measure
from core.pooling import depth_pool, ensemble_scores
from core.ranking import trec_ranking
from core.types import Qrels, Run
from core.validators import int_in_range, positive_int, real_number

__all__ = [
    "CSV_COLUMNS",
    "STRATEGIES",
    "SimulationResult",
    "SimulationRow",
    "TAU_TARGET",
    "active_order",
    "bootstrap_interval",
    "depth_order",
    "judged_queries",
    "random_order",
    "simulate_labelling",
    "top_n_order",
]

STRATEGIES: tuple[str, ...] = ("depth", "top-n", "random", "active")
"""The labelling orders :func:`simulate_labelling` knows, in documentation order."""

TAU_TARGET = 0.9
"""Kendall tau at which two system rankings are usually called equivalent (Voorhees 2000)."""

CSV_COLUMNS: tuple[str, ...] = (
    "strategy",
    "batch",
    "labelled_pairs",
    "model_labelled",
    "relevant_found",
    "tau",
    "run",
    "metric",
    "lo",
    "hi",
    "full",
)
"""Columns of :meth:`SimulationResult.to_csv`: one row per strategy, batch and run."""

Pair = tuple[str, str]
Progress = Callable[[int, int], None]


# --------------------------------------------------------------------------- orders


def judged_queries(oracle: Qrels) -> list[str]:
    """The queries the simulation evaluates and pools: those with at least one judgment, sorted by id.

    Sorted rather than in the mapping's order: a store returns qrels in no
    defined order, and the labelling orders must not depend on it.
    """
    return sorted(qid for qid, docs in oracle.items() if docs)


def _rankings(runs: Mapping[str, Run], queries: Sequence[str], depth: int) -> dict[str, dict[str, list[str]]]:
    return {name: {qid: trec_ranking(run.get(qid, {}))[:depth] for qid in queries} for name, run in runs.items()}


def depth_order(runs: Mapping[str, Run], queries: Sequence[str], depth: int) -> list[Pair]:
    """The pool's pairs in incremental depth-pooling order.

    Rank 1 of every run for every query, then rank 2, ..., down to
    ``depth``: at each rank the queries in the order given and, within a
    query, the runs in the order given; a document already taken for the
    query is skipped.

    Parameters
    ----------
    runs : Mapping[str, Run]
        ``{name: run}``; ranks are trec order (score descending, doc id descending).
    queries : Sequence[str]
        The queries to pool, in order.
    depth : int
        Pool depth: each run's top ``depth`` documents per query.

    Returns
    -------
    list of (qid, docid)
        Every pair of the depth-``depth`` pool exactly once.
    """
    depth = positive_int(depth, "depth")
    rankings = _rankings(runs, queries, depth)
    seen: set[Pair] = set()
    order: list[Pair] = []
    for rank in range(depth):
        for qid in queries:
            for name in runs:
                ranked = rankings[name][qid]
                if rank < len(ranked) and (qid, ranked[rank]) not in seen:
                    seen.add((qid, ranked[rank]))
                    order.append((qid, ranked[rank]))
    return order


def top_n_order(runs: Mapping[str, Run], queries: Sequence[str], depth: int) -> list[Pair]:
    """The pool's pairs in DuReader-retrieval's top-N order, round-robin over queries.

    Each query's depth-``depth`` pool is ranked by the ensemble of the runs
    (:func:`core.pooling.ensemble_scores`: mean of min-max normalised run
    scores over the pool, trec order for ties); the order takes every
    query's best pair (queries in the order given), then every query's
    second, and so on, so that a budget of ``n`` pairs per query is a
    prefix of it.
    """
    depth = positive_int(depth, "depth")
    pool = depth_pool(dict(runs), depth, queries=list(queries))
    ranked = {qid: list(docs) for qid, docs in ensemble_scores(pool, dict(runs)).items()}
    longest = max((len(docs) for docs in ranked.values()), default=0)
    return [(qid, ranked[qid][i]) for i in range(longest) for qid in queries if i < len(ranked[qid])]


def random_order(pairs: Sequence[Pair], seed: int) -> list[Pair]:
    """``pairs`` shuffled by ``numpy.random.default_rng(seed).permutation`` (the same seed, the same order)."""
    rng = np.random.default_rng(seed)
    return [pairs[i] for i in rng.permutation(len(pairs))]


def _probability(probabilities: Mapping[str, Mapping[str, float]], qid: str, doc: str) -> float:
    try:
        value = probabilities[qid][doc]
    except KeyError:
        raise ValueError(
            f"probabilities: no probability for query {qid!r}, document {doc!r} (every pooled pair needs one)"
        ) from None
    return real_number(value, f"probabilities: query {qid!r}, document {doc!r}", low=0.0, high=1.0)


def active_order(
    pairs: Sequence[Pair],
    probabilities: Mapping[str, Mapping[str, float]],
    *,
    band: tuple[float, float] | None = None,
) -> tuple[list[Pair], list[Pair]]:
    """T2Ranking's active selection: the most uncertain pairs first; with a band, the confident ones apart.

    Parameters
    ----------
    pairs : Sequence[(qid, docid)]
        The pool, in its reference order (ties keep it: the sort is stable).
    probabilities : Mapping[str, Mapping[str, float]]
        ``{qid: {docid: p}}``, the model's probability that the pair is
        relevant, for every pair of ``pairs``.
    band : (low, high), optional
        Pairs with ``low <= p <= high`` go to humans; the others are
        returned apart (the model labels them).  Default: all go to humans.

    Returns
    -------
    (human, confident)
        ``human`` sorted by ``|p - 0.5|`` ascending; ``confident`` the pairs
        outside the band, in the reference order.
    """
    low, high = _check_band(band)
    scored = [(pair, _probability(probabilities, *pair)) for pair in pairs]
    human = [(pair, p) for pair, p in scored if low <= p <= high]
    confident = [pair for pair, p in scored if not low <= p <= high]
    human.sort(key=lambda item: abs(item[1] - 0.5))
    return [pair for pair, _ in human], confident


def _check_band(band: tuple[float, float] | None) -> tuple[float, float]:
    if band is None:
        return 0.0, 1.0
    if not isinstance(band, (tuple, list)) or len(band) != 2:
        raise ValueError(f"band must be two probabilities (low, high), got {band!r}")
    low = real_number(band[0], "band: low", low=0.0, high=1.0)
    high = real_number(band[1], "band: high", low=0.0, high=1.0)
    if low >= high:  # as core.pooling.select_uncertain: a band, not a point
        raise ValueError(f"band: low must be below high, got ({low:g}, {high:g})")
    return low, high


# --------------------------------------------------------------------------- statistics


def _resample_counts(n_queries: int, resamples: int, seed: int) -> np.ndarray:
    """``counts[b, i]``: how often query ``i`` is drawn in resample ``b`` (n draws with replacement each)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_queries, size=(resamples, n_queries))
    counts = np.zeros((resamples, n_queries))
    np.add.at(counts, (np.arange(resamples)[:, None], draws), 1.0)
    return counts


def _intervals(values: np.ndarray, counts: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
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
    lo, hi = _intervals(arr[None, :], _resample_counts(arr.size, resamples, seed), confidence)
    return float(lo[0]), float(hi[0])


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    if np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan  # nothing to rank: scipy would warn and return NaN
    return float(kendalltau(a, b).statistic)


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class SimulationRow:
    """The state after one batch of one strategy.

    ``labelled_pairs`` counts the pairs humans labelled so far;
    ``model_labelled`` the pairs the model labelled for free (active with a
    band; 0 otherwise); ``relevant_found`` the labelled pairs (human or
    model) with grade ``>= level``; ``metric``, ``lo``, ``hi``: each run's
    mean and bootstrap interval under the labels so far.
    """

    strategy: str
    batch: int
    labelled_pairs: int
    model_labelled: int
    relevant_found: int
    tau: float
    metric: dict[str, float]
    lo: dict[str, float]
    hi: dict[str, float]


@dataclass(frozen=True)
class SimulationResult:
    """What :func:`simulate_labelling` found.

    Attributes
    ----------
    measure, level, depth, batch_size, seed, resamples
        The parameters (``measure`` in its canonical spelling).
    runs : list of str
        The runs, in the order given.
    queries : int
        Queries evaluated (those with oracle judgments).
    pool_pairs : int
        Pairs in the depth-``depth`` pool.
    full : dict
        ``{run: mean}`` under all oracle labels (the reference).
    rows : list of SimulationRow
        Strategy by strategy, batch by batch.
    saved : dict
        ``{strategy: pairs the model labelled instead of humans}`` (only
        ``active`` with a band saves any).
    model_wrong : dict
        ``{strategy: model labels that disagree with the oracle}`` (relevant
        means grade ``>= level``; an unjudged pair counts as non-relevant).
    """

    measure: str
    level: int
    depth: int
    batch_size: int
    seed: int
    resamples: int
    runs: list[str]
    queries: int
    pool_pairs: int
    full: dict[str, float]
    rows: list[SimulationRow] = field(default_factory=list)
    saved: dict[str, int] = field(default_factory=dict)
    model_wrong: dict[str, int] = field(default_factory=dict)

    @property
    def strategies(self) -> list[str]:
        """The strategies simulated, in order."""
        return list(dict.fromkeys(row.strategy for row in self.rows))

    def taus(self, strategy: str) -> list[tuple[int, float]]:
        """``[(labelled_pairs, tau), ...]`` of one strategy, batch by batch."""
        return [(row.labelled_pairs, row.tau) for row in self.rows if row.strategy == strategy]

    def pairs_to_reach(self, threshold: float = TAU_TARGET) -> dict[str, int | None]:
        """``{strategy: human-labelled pairs after the first batch with tau >= threshold}`` (None: never).

        The stop-labelling hint: with that many pairs labelled in the
        strategy's order, the system ranking first agreed with the full
        labels' to that tau.
        """
        reached: dict[str, int | None] = {}
        for row in self.rows:
            reached.setdefault(row.strategy, None)
            if reached[row.strategy] is None and not math.isnan(row.tau) and row.tau >= threshold:
                reached[row.strategy] = row.labelled_pairs
        return reached

    def records(self) -> list[dict[str, Any]]:
        """One dict per strategy, batch and run, with the keys :data:`CSV_COLUMNS`."""
        return [
            {
                "strategy": row.strategy,
                "batch": row.batch,
                "labelled_pairs": row.labelled_pairs,
                "model_labelled": row.model_labelled,
                "relevant_found": row.relevant_found,
                "tau": row.tau,
                "run": run,
                "metric": row.metric[run],
                "lo": row.lo[run],
                "hi": row.hi[run],
                "full": self.full[run],
            }
            for row in self.rows
            for run in self.runs
        ]

    def to_csv(self, path: str | Path | None = None) -> str:
        """The records as CSV (header :data:`CSV_COLUMNS`, floats with 6 decimals, NaN as ``nan``); also written to ``path``."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for record in self.records():
            writer.writerow([f"{v:.6f}" if isinstance(v, float) else v for v in record.values()])
        text = out.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text


# --------------------------------------------------------------------------- simulation


@dataclass(frozen=True)
class SimulationSettings:
    """How :func:`simulate_labelling` replays labelling (its keyword arguments but ``probabilities`` and ``progress``).

    Parameters
    ----------
    depth : int, default 20
        Pool depth.
    measure : str, default "nDCG@10"
        Any :func:`core.metrics.parse_measure` spelling.
    level : int, default 1
        Relevance level of binary measures (and of ``relevant_found`` and
        the model's "relevant" label, which is this grade).
    batch_size : int, default 50
        Pairs labelled per batch (the last batch may be smaller).
    strategies : Sequence[str]
        Any of :data:`STRATEGIES`; ``"active"`` needs ``probabilities``.
    band : (low, high), optional
        Active only: pairs with probability outside ``[low, high]`` take the
        model's label at no cost.
    seed : int, default 0
        Seeds the random order and the bootstrap.
    resamples : int, default 1000
        Bootstrap resamples.
    confidence : float, default 0.95
        Bootstrap interval's coverage.
    """

    depth: int = 20
    measure: str = "nDCG@10"
    level: int = 1
    batch_size: int = 50
    strategies: Sequence[str] = ("depth", "top-n", "random")
    band: tuple[float, float] | None = None
    seed: int = 0
    resamples: int = 1000
    confidence: float = 0.95

    def checked(self, probabilities: Mapping[str, Mapping[str, float]] | None) -> SimulationSettings:
        """A copy with every setting checked: the measure's canonical spelling, the strategies without repeats.

        The band is checked by the active strategy, which alone uses it.

        Raises
        ------
        ValueError
            Naming the setting; also for ``active`` without ``probabilities``.
        """
        measure = str(parse_measure(self.measure))
        level = int_in_range(self.level, "level", 1)
        depth = positive_int(self.depth, "depth")
        batch_size = positive_int(self.batch_size, "batch_size")
        resamples = positive_int(self.resamples, "resamples")
        seed = int_in_range(self.seed, "seed", 0)
        confidence = real_number(self.confidence, "confidence", low=0.0, high=1.0, low_open=True, high_open=True)
        if isinstance(self.strategies, str):
            raise ValueError(f"strategies must be a sequence of names, not one string {self.strategies!r}")
        wanted = tuple(dict.fromkeys(self.strategies))
        unknown = [s for s in wanted if s not in STRATEGIES]
        if unknown or not wanted:
            raise ValueError(
                f"strategies: unknown {', '.join(map(repr, unknown)) or '(none given)'}; known: {', '.join(STRATEGIES)}"
            )
        if "active" in wanted and probabilities is None:
            raise ValueError("strategies: 'active' needs the model's probabilities of the pooled pairs")
        return SimulationSettings(depth, measure, level, batch_size, wanted, self.band, seed, resamples, confidence)


def _checked_data(oracle: Qrels, runs: Mapping[str, Run], depth: int) -> tuple[dict[str, Run], list[str], list[Pair]]:
    """The runs by name, the judged queries and the depth pool; ValueError when any of them is too small."""
    named = {str(name): run for name, run in runs.items()}
    if len(named) < 2:
        raise ValueError(f"runs: at least two runs are needed to rank systems, got {len(named)}")
    queries = judged_queries(oracle)
    if not queries:
        raise ValueError("oracle: the qrels judge no query")
    base = depth_order(named, queries, depth)
    if not base:
        raise ValueError(f"runs: no run retrieved a document for any of the {len(queries)} judged queries")
    return named, queries, base


class _Plan(NamedTuple):
    """A strategy's labelling order: the pairs for humans, in order, and (active) those the model labels."""

    strategy: str
    order: list[Pair]
    confident: list[Pair]


def _plans(
    settings: SimulationSettings,
    runs: Mapping[str, Run],
    queries: Sequence[str],
    base: list[Pair],
    probabilities: Mapping[str, Mapping[str, float]] | None,
) -> list[_Plan]:
    """Each wanted strategy's order over the pool (``base`` is the depth order)."""
    plans = []
    for strategy in settings.strategies:
        if strategy == "depth":
            plans.append(_Plan(strategy, base, []))
        elif strategy == "top-n":
            plans.append(_Plan(strategy, top_n_order(runs, queries, settings.depth), []))
        elif strategy == "random":
            plans.append(_Plan(strategy, random_order(base, settings.seed), []))
        else:
            assert probabilities is not None  # SimulationSettings.checked demands them for "active"
            human, confident = active_order(base, probabilities, band=settings.band)
            plans.append(_Plan(strategy, human, confident))
    return plans


@dataclass
class _Replay:
    """What every strategy's replay shares; counts the evaluated batches for ``progress``.

    ``reference`` is each run's mean measure under all labels; ``counts`` the bootstrap's resamples.
    """

    oracle: Qrels
    runs: dict[str, Run]
    queries: list[str]
    settings: SimulationSettings
    reference: np.ndarray
    counts: np.ndarray
    probabilities: Mapping[str, Mapping[str, float]] | None
    progress: Progress | None
    total: int = 0
    done: int = 0

    def __post_init__(self) -> None:
        self.names = list(self.runs)
        self.position = {qid: i for i, qid in enumerate(self.queries)}

    def _update(self, values: np.ndarray, labels: Qrels, changed: set[str]) -> None:
        _update(values, labels, changed, self.runs, self.position, self.settings.measure, self.settings.level)

    def _model_labels(self, confident: list[Pair], labels: Qrels, values: np.ndarray) -> tuple[int, int]:
        """Active with a band: the model labels the confident pairs; (relevant labels, wrong labels)."""
        level = self.settings.level
        high = _check_band(self.settings.band)[1]
        assert self.probabilities is not None  # only the active strategy has confident pairs
        relevant = wrong = 0
        for qid, doc in confident:
            grade = level if self.probabilities[qid][doc] > high else 0
            truth = self.oracle.get(qid, {}).get(doc, 0)
            wrong += (grade >= level) != (truth >= level)
            labels.setdefault(qid, {})[doc] = grade
            relevant += grade >= level
        self._update(values, labels, {qid for qid, _ in confident})
        return relevant, wrong

    def _oracle_labels(self, pairs: list[Pair], labels: Qrels, values: np.ndarray) -> int:
        """Humans (the oracle) label ``pairs``; the number of relevant labels among them."""
        changed = set()
        relevant = 0
        for qid, doc in pairs:
            grade = self.oracle.get(qid, {}).get(doc)
            if grade is not None:  # a pair the oracle does not judge stays absent, as under all labels
                labels.setdefault(qid, {})[doc] = grade
                relevant += grade >= self.settings.level
                changed.add(qid)
        self._update(values, labels, changed)
        return relevant

    def _row(self, plan: _Plan, batch: int, labelled: int, relevant: int, values: np.ndarray) -> SimulationRow:
        means = values.mean(axis=1)
        lo, hi = _intervals(values, self.counts, self.settings.confidence)
        return SimulationRow(
            strategy=plan.strategy,
            batch=batch,
            labelled_pairs=labelled,
            model_labelled=len(plan.confident),
            relevant_found=int(relevant),
            tau=_tau(means, self.reference),
            metric={n: float(v) for n, v in zip(self.names, means)},
            lo={n: float(v) for n, v in zip(self.names, lo)},
            hi={n: float(v) for n, v in zip(self.names, hi)},
        )

    def run(self, plans: list[_Plan], *, pool_pairs: int) -> SimulationResult:
        """Replay every plan in turn; the simulation's result."""
        settings = self.settings
        self.total = sum(math.ceil(len(plan.order) / settings.batch_size) for plan in plans)
        rows: list[SimulationRow] = []
        saved: dict[str, int] = {}
        wrong: dict[str, int] = {}
        for plan in plans:
            plan_rows, plan_wrong = self.replay(plan)
            rows += plan_rows
            if plan.strategy == "active":
                saved[plan.strategy], wrong[plan.strategy] = len(plan.confident), plan_wrong
        return SimulationResult(
            measure=settings.measure,
            level=settings.level,
            depth=settings.depth,
            batch_size=settings.batch_size,
            seed=settings.seed,
            resamples=settings.resamples,
            runs=self.names,
            queries=len(self.queries),
            pool_pairs=pool_pairs,
            full={name: float(v) for name, v in zip(self.names, self.reference)},
            rows=rows,
            saved=saved,
            model_wrong=wrong,
        )

    def replay(self, plan: _Plan) -> tuple[list[SimulationRow], int]:
        """Label ``plan``'s pairs batch by batch from nothing; a row per batch, and the model's wrong labels."""
        size = self.settings.batch_size
        labels: Qrels = {}
        values = np.zeros((len(self.names), len(self.queries)))  # no label yet: every run scores 0 on every query
        relevant, wrong = self._model_labels(plan.confident, labels, values) if plan.strategy == "active" else (0, 0)
        rows = []
        for batch, start in enumerate(range(0, len(plan.order), size), start=1):
            relevant += self._oracle_labels(plan.order[start : start + size], labels, values)
            rows.append(self._row(plan, batch, min(start + size, len(plan.order)), relevant, values))
            self.done += 1
            if self.progress is not None:
                self.progress(self.done, self.total)
        return rows, wrong


def simulate_labelling(
    oracle: Qrels,
    runs: Mapping[str, Run],
    *,
    depth: int = 20,
    measure: str = "nDCG@10",
    level: int = 1,
    batch_size: int = 50,
    strategies: Sequence[str] = ("depth", "top-n", "random"),
    probabilities: Mapping[str, Mapping[str, float]] | None = None,
    band: tuple[float, float] | None = None,
    seed: int = 0,
    resamples: int = 1000,
    confidence: float = 0.95,
    progress: Progress | None = None,
) -> SimulationResult:
    """Replay labelling with ``oracle`` as the annotators and watch the system ranking settle.

    See the module docstring for the strategies and the semantics.

    Parameters
    ----------
    oracle : Qrels
        The collection's full labels.
    runs : Mapping[str, Run]
        ``{name: run}``, at least two (a ranking of one system has no tau).
    depth, measure, level, batch_size, strategies, band, seed, resamples, confidence
        The replay's settings, as :class:`SimulationSettings` documents them.
    probabilities : Mapping[str, Mapping[str, float]], optional
        ``{qid: {docid: p}}`` for every pooled pair (a cross-encoder's ``probabilities``).
    progress : callable, optional
        ``progress(done, total)`` after each evaluated batch.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Naming the argument: an unknown strategy, ``active`` without
        probabilities, fewer than two runs, no judged query, an empty pool,
        a bad depth, batch size, band or measure.
    """
    given = SimulationSettings(depth, measure, level, batch_size, strategies, band, seed, resamples, confidence)
    settings = given.checked(probabilities)
    named, queries, base = _checked_data(oracle, runs, settings.depth)
    reference = _values(oracle, named, queries, settings.measure, settings.level).mean(axis=1)
    counts = _resample_counts(len(queries), settings.resamples, settings.seed)
    replay = _Replay(oracle, named, queries, settings, reference, counts, probabilities, progress)
    return replay.run(_plans(settings, named, queries, base, probabilities), pool_pairs=len(base))


def _update(
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


def _values(qrels: Qrels, runs: Mapping[str, Run], queries: Sequence[str], measure: str, level: int) -> np.ndarray:
    """``values[r, i]``: run ``r``'s measure on query ``queries[i]`` under ``qrels`` (0 where it has no labels)."""
    out = np.zeros((len(runs), len(queries)))
    if not qrels:
        return out
    for r, run in enumerate(runs.values()):
        per = evaluate(qrels, run, [measure], level=level)[measure]
        out[r] = [per.get(qid, 0.0) for qid in queries]
    return out
