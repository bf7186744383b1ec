"""The labelling simulation's driver: check the settings, plan each strategy's order, replay it batch by batch."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from core.metrics import parse_measure
from core.simulation.result import SimulationResult, SimulationRow
from core.simulation.selector import Selector
from core.simulation.statistics import (
    kendall_tau,
    per_query_values,
    percentile_intervals,
    resample_counts,
    update_values,
)
from core.simulation.strategies import (
    ACTIVE_STRATEGIES,
    RULES,
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
Probabilities = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True)
class SimulationSettings:
    """How :func:`simulate_labelling` replays labelling (its keyword arguments but the models and ``progress``).

    Parameters
    ----------
    depth : int, default 20
        Pool depth.
    measure : str, default "nDCG@10"
        Any :func:`core.metrics.parse_measure` spelling.
    level : int, default 1
        Relevance level of binary measures (and of ``relevant_found``, of
        ``recall`` and of the model's "relevant" label, which is this grade).
    batch_size : int, default 50
        Pairs labelled per batch (the last batch may be smaller).
    strategies : Sequence[str]
        Any of :data:`STRATEGIES`; ``"active"`` needs ``probabilities`` or a
        ``selector``, ``"active-retrain"`` a ``selector``.
    band : (low, high), optional
        Active strategies only: pairs with probability outside ``[low, high]``
        take the model's label at no cost.
    seed : int, default 0
        Seeds the random order and the bootstrap.
    resamples : int, default 1000
        Bootstrap resamples.
    confidence : float, default 0.95
        Bootstrap interval's coverage.
    rule : {"uncertain", "relevant"}, default "uncertain"
        The active strategies' order (:func:`~core.simulation.strategies.active_order`).
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
    rule: str = "uncertain"

    def checked(self, probabilities: Probabilities | None, selector: Selector | None = None) -> SimulationSettings:
        """A copy with every setting checked: the measure's canonical spelling, the strategies without repeats.

        The band is checked by the active strategies, which alone use it.

        Raises
        ------
        ValueError
            Naming the setting; also for ``active`` without ``probabilities``
            or a ``selector``, and ``active-retrain`` without a ``selector``.
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
        if self.rule not in RULES:
            raise ValueError(f"rule: unknown {self.rule!r}; known: {', '.join(RULES)}")
        if "active" in wanted and probabilities is None and selector is None:
            raise ValueError("strategies: 'active' needs the model's probabilities of the pooled pairs (or a selector)")
        if "active-retrain" in wanted and selector is None:
            raise ValueError("strategies: 'active-retrain' needs a selector (a model that learns between batches)")
        return SimulationSettings(
            depth, measure, level, batch_size, wanted, self.band, seed, resamples, confidence, self.rule
        )


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


def _scored(selector: Selector, pairs: Sequence[Pair]) -> dict[str, dict[str, float]]:
    """The selector's probabilities of ``pairs`` as ``{qid: {docid: p}}`` (checked by :func:`active_order`)."""
    values = list(selector.probabilities(pairs))
    if len(values) != len(pairs):
        raise ValueError(f"selector: returned {len(values)} probabilities for {len(pairs)} pairs")
    out: dict[str, dict[str, float]] = {}
    for (qid, doc), p in zip(pairs, values):
        out.setdefault(qid, {})[doc] = float(p)
    return out


class _Plan(NamedTuple):
    """A strategy's labelling order: the pairs for humans, in order, and (active) those the model labels.

    ``probabilities`` are the model's (active strategies); ``active-retrain``
    holds the pool in its reference order and the base model's scores, and
    chooses its order batch by batch.
    """

    strategy: str
    order: list[Pair]
    confident: list[Pair]
    probabilities: Probabilities | None = None


def _plans(
    settings: SimulationSettings,
    runs: Mapping[str, Run],
    queries: Sequence[str],
    base: list[Pair],
    probabilities: Probabilities | None,
    selector: Selector | None,
) -> list[_Plan]:
    """Each wanted strategy's order over the pool (``base`` is the depth order)."""
    scored: Probabilities | None = None
    wanted = settings.strategies
    if selector is not None and ("active-retrain" in wanted or ("active" in wanted and probabilities is None)):
        selector.reset()
        scored = _scored(selector, base)  # once: "active" and the first batch of "active-retrain" share them
    plans = []
    for strategy in settings.strategies:
        if strategy == "depth":
            plans.append(_Plan(strategy, base, []))
        elif strategy == "top-n":
            plans.append(_Plan(strategy, top_n_order(runs, queries, settings.depth), []))
        elif strategy == "random":
            plans.append(_Plan(strategy, random_order(base, settings.seed), []))
        elif strategy == "active":
            fixed = probabilities if probabilities is not None else scored
            if fixed is None:
                raise ValueError("strategies: 'active' needs the model's probabilities of the pooled pairs")
            human, confident = active_order(base, fixed, band=settings.band, rule=settings.rule)
            plans.append(_Plan(strategy, human, confident, fixed))
        else:
            plans.append(_Plan(strategy, base, [], scored))
    return plans


@dataclass
class _Labels:
    """One strategy's labels so far, each run's per-query values under them, and the counts the rows report.

    ``relevant`` counts labels (human or model) with grade >= level,
    ``found`` the truly relevant pairs among them, ``wrong`` the model's
    labels the oracle disagrees with, ``model`` the pairs the model labelled.
    """

    labels: Qrels
    values: np.ndarray
    relevant: int = 0
    found: int = 0
    wrong: int = 0
    model: int = 0


class _Outcome(NamedTuple):
    """What replaying one plan gave: its rows, the pairs humans labelled in order, the training rounds."""

    rows: list[SimulationRow]
    labels: _Labels
    order: list[Pair]
    rounds: int


@dataclass
class _Replay:
    """What every strategy's replay shares; counts the evaluated batches for ``progress``.

    ``reference`` is each run's mean measure under all labels; ``counts`` the
    bootstrap's resamples; ``pool_relevant`` the pooled pairs the oracle
    grades >= level.
    """

    oracle: Qrels
    runs: dict[str, Run]
    queries: list[str]
    settings: SimulationSettings
    reference: np.ndarray
    counts: np.ndarray
    pool_relevant: int
    selector: Selector | None
    progress: Progress | None
    total: int = 0
    done: int = 0

    def __post_init__(self) -> None:
        self.names = list(self.runs)
        self.position = {qid: i for i, qid in enumerate(self.queries)}

    def _fresh(self) -> _Labels:
        # no label yet: every run scores 0 on every query
        return _Labels({}, np.zeros((len(self.names), len(self.queries))))

    def _update(self, state: _Labels, changed: set[str]) -> None:
        settings = self.settings
        update_values(state.values, state.labels, changed, self.runs, self.position, settings.measure, settings.level)

    def _truth(self, pair: Pair) -> int | None:
        return self.oracle.get(pair[0], {}).get(pair[1])

    def _model_labels(self, confident: list[Pair], probabilities: Probabilities, state: _Labels) -> None:
        """The model labels the confident pairs: grade ``level`` above the band, 0 below it."""
        level = self.settings.level
        high = check_band(self.settings.band)[1]
        for qid, doc in confident:
            grade = level if probabilities[qid][doc] > high else 0
            truth = (self._truth((qid, doc)) or 0) >= level
            state.wrong += (grade >= level) != truth
            state.labels.setdefault(qid, {})[doc] = grade
            state.relevant += grade >= level
            state.found += grade >= level and truth
        state.model += len(confident)
        self._update(state, {qid for qid, _ in confident})

    def _oracle_labels(self, pairs: list[Pair], state: _Labels) -> None:
        """Humans (the oracle) label ``pairs``."""
        changed = set()
        for qid, doc in pairs:
            grade = self._truth((qid, doc))
            if grade is not None:  # a pair the oracle does not judge stays absent, as under all labels
                state.labels.setdefault(qid, {})[doc] = grade
                state.relevant += grade >= self.settings.level
                state.found += grade >= self.settings.level
                changed.add(qid)
        self._update(state, changed)

    def _advance(self, batches: int) -> None:
        """Count ``batches`` more as evaluated and report the progress."""
        self.done += batches
        if self.progress is not None:
            self.progress(self.done, self.total)

    def _row(self, strategy: str, batch: int, labelled: int, state: _Labels) -> SimulationRow:
        means = state.values.mean(axis=1)
        lo, hi = percentile_intervals(state.values, self.counts, self.settings.confidence)
        self._advance(1)
        return SimulationRow(
            strategy=strategy,
            batch=batch,
            labelled_pairs=labelled,
            model_labelled=state.model,
            relevant_found=int(state.relevant),
            recall=state.found / self.pool_relevant if self.pool_relevant else math.nan,
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
        orders: dict[str, list[Pair]] = {}
        rounds: dict[str, int] = {}
        for plan in plans:
            outcome = self.retrain(plan) if plan.strategy == "active-retrain" else self.replay(plan)
            rows += outcome.rows
            orders[plan.strategy] = outcome.order
            if plan.strategy in ACTIVE_STRATEGIES:
                saved[plan.strategy], wrong[plan.strategy] = outcome.labels.model, outcome.labels.wrong
            if plan.strategy == "active-retrain":
                rounds[plan.strategy] = outcome.rounds
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
            pool_relevant=self.pool_relevant,
            rule=settings.rule,
            orders=orders,
            training_rounds=rounds,
        )

    def replay(self, plan: _Plan) -> _Outcome:
        """Label ``plan``'s pairs batch by batch from nothing (the model's confident pairs first)."""
        size = self.settings.batch_size
        state = self._fresh()
        if plan.confident and plan.probabilities is not None:
            self._model_labels(plan.confident, plan.probabilities, state)
        rows = []
        for batch, start in enumerate(range(0, len(plan.order), size), start=1):
            self._oracle_labels(plan.order[start : start + size], state)
            rows.append(self._row(plan.strategy, batch, min(start + size, len(plan.order)), state))
        return _Outcome(rows, state, plan.order, 0)

    def retrain(self, plan: _Plan) -> _Outcome:
        """``active-retrain``: choose a batch with the model, label it, fine-tune on every label so far, repeat.

        The first batch is chosen by the base model (as ``active``'s);
        after each batch but the last, ``selector.update`` learns from all
        human labels so far (an unjudged pair as grade 0, trec_eval's
        reading) and the unlabelled pairs are scored again.  With a band,
        once every pair the model is unsure about fits in the batch, the
        model labels the rest and labelling stops.
        """
        selector, probabilities = self.selector, plan.probabilities
        if selector is None or probabilities is None:
            raise ValueError("strategies: 'active-retrain' needs a selector (a model that learns between batches)")
        size, settings = self.settings.batch_size, self.settings
        state, remaining = self._fresh(), list(plan.order)
        taught: dict[Pair, int] = {}
        rows: list[SimulationRow] = []
        order: list[Pair] = []
        rounds = 0
        selector.reset()
        while remaining:
            if order:  # a batch arrived since the model last scored: learn from every label, score what is left
                selector.update(dict(taught), settings.level)
                rounds += 1
                probabilities = _scored(selector, remaining)
            human, confident = active_order(remaining, probabilities, band=settings.band, rule=settings.rule)
            batch = human[:size]
            self._oracle_labels(batch, state)
            taught.update((pair, self._truth(pair) or 0) for pair in batch)
            order += batch
            if len(human) <= size:  # every pair the model is unsure about is labelled: it labels the rest
                if confident:
                    self._model_labels(confident, probabilities, state)
                remaining = []
            else:
                taken = set(batch)
                remaining = [pair for pair in remaining if pair not in taken]
            if batch or confident and not remaining:  # a row for the model's labels too, even without a human batch
                rows.append(self._row(plan.strategy, len(rows) + 1, len(order), state))
        skipped = math.ceil(len(plan.order) / size) - len(rows)
        if skipped:  # a band ended it early: the progress still reaches its total
            self._advance(skipped)
        return _Outcome(rows, state, order, rounds)


def simulate_labelling(
    oracle: Qrels,
    runs: Mapping[str, Run],
    *,
    depth: int = 20,
    measure: str = "nDCG@10",
    level: int = 1,
    batch_size: int = 50,
    strategies: Sequence[str] = ("depth", "top-n", "random"),
    probabilities: Probabilities | None = None,
    selector: Selector | None = None,
    rule: str = "uncertain",
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
    depth, measure, level, batch_size, strategies, band, seed, resamples, confidence, rule
        The replay's settings, as :class:`SimulationSettings` documents them.
    probabilities : Mapping[str, Mapping[str, float]], optional
        ``{qid: {docid: p}}`` for every pooled pair (a cross-encoder's
        ``probabilities``): ``active``'s fixed scores.
    selector : Selector, optional
        The model of ``active-retrain`` (:class:`core.simulation.selector.Selector`),
        fine-tuned between batches; its base scores are also ``active``'s
        when ``probabilities`` is None.
    progress : callable, optional
        ``progress(done, total)`` after each evaluated batch.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        Naming the argument: an unknown strategy or rule, an active strategy
        without its model, fewer than two runs, no judged query, an empty
        pool, a bad depth, batch size, band or measure.
    """
    given = SimulationSettings(depth, measure, level, batch_size, strategies, band, seed, resamples, confidence, rule)
    settings = given.checked(probabilities, selector)
    named, queries, base = _checked_data(oracle, runs, settings.depth)
    reference = per_query_values(oracle, named, queries, settings.measure, settings.level).mean(axis=1)
    counts = resample_counts(len(queries), settings.resamples, settings.seed)
    pool_relevant = sum(oracle.get(qid, {}).get(doc, 0) >= settings.level for qid, doc in base)
    replay = _Replay(oracle, named, queries, settings, reference, counts, pool_relevant, selector, progress)
    plans = _plans(settings, named, queries, base, probabilities, selector)
    return replay.run(plans, pool_pairs=len(base))
