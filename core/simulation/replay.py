"""The labelling simulation's driver: check the settings, plan each strategy's order, replay it batch by batch."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from core.metrics import parse_measure
from core.simulation.result import SimulationResult, SimulationRow
from core.simulation.statistics import (
    kendall_tau,
    per_query_values,
    percentile_intervals,
    resample_counts,
    update_values,
)
from core.simulation.strategies import (
    STRATEGIES,
    Pair,
    active_order,
    check_band,
    depth_order,
    judged_queries,
    random_order,
    top_n_order,
)
from core.types import Qrels, Run
from core.validators import int_in_range, positive_int, real_number

__all__ = ["Progress", "SimulationSettings", "simulate_labelling"]

Progress = Callable[[int, int], None]


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
        update_values(values, labels, changed, self.runs, self.position, self.settings.measure, self.settings.level)

    def _model_labels(self, confident: list[Pair], labels: Qrels, values: np.ndarray) -> tuple[int, int]:
        """Active with a band: the model labels the confident pairs; (relevant labels, wrong labels)."""
        level = self.settings.level
        high = check_band(self.settings.band)[1]
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
        lo, hi = percentile_intervals(values, self.counts, self.settings.confidence)
        return SimulationRow(
            strategy=plan.strategy,
            batch=batch,
            labelled_pairs=labelled,
            model_labelled=len(plan.confident),
            relevant_found=int(relevant),
            tau=kendall_tau(means, self.reference),
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
    reference = per_query_values(oracle, named, queries, settings.measure, settings.level).mean(axis=1)
    counts = resample_counts(len(queries), settings.resamples, settings.seed)
    replay = _Replay(oracle, named, queries, settings, reference, counts, probabilities, progress)
    return replay.run(_plans(settings, named, queries, base, probabilities), pool_pairs=len(base))
