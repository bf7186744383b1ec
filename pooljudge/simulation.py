"""The labelling simulation on a stored collection: load its labels and runs, run :mod:`core.simulation`.

Shared by the CLI (``pooljudge simulate-labelling``) and the Labelling
simulation page.  The oracle is a frozen qrels version (default: the newest
one), the systems are the collection's stored runs (default: every shown
run), and the active strategies' model is a cross-encoder given as a folder
or a model registered in the collection: ``active`` keeps its first scores,
``active-retrain`` fine-tunes it between batches
(:class:`core.training.active.RetrainingSelector`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.simulation import (
    ACTIVE_STRATEGIES,
    RULES,
    STRATEGIES,
    SimulationResult,
    depth_order,
    judged_queries,
    simulate_labelling,
)
from core.types import Qrels, Run
from db.engine import Store
from pooljudge.models_lookup import registered_model_folder

if TYPE_CHECKING:
    from core.training.active import RetrainingSelector

__all__ = ["RetrainSettings", "load_inputs", "model_probabilities", "model_selector", "simulate_collection"]

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class RetrainSettings:
    """How ``active-retrain`` fine-tunes its cross-encoder after each batch (:class:`core.training.active.RetrainingSelector`).

    ``steps`` optimiser steps of ``batch_size`` labelled pairs per round at
    ``learning_rate``; pairs are cut to ``max_length`` tokens (also when
    ``active`` scores them); ``from_base`` restarts every round from the
    base weights instead of the previous round's.
    """

    steps: int = 10
    batch_size: int = 16
    learning_rate: float = 1e-4
    max_length: int = 256
    from_base: bool = False


def load_inputs(
    store: Store, collection: str, *, qrels: str | None = None, runs: Sequence[str] | None = None
) -> tuple[Qrels, dict[str, Run], int]:
    """The oracle qrels, the runs ``{name: run}`` and the collection's relevance level.

    Raises
    ------
    ValueError
        ``qrels: ...`` when the version holds no judgment (or the collection has none),
        ``runs: ...`` for fewer than two runs; :class:`db.queries.NotFound` names an
        unknown collection, version or run (with the known runs).
    """
    from db.queries import list_runs, relevance_level, stored_qrels, stored_run

    with store.read() as session:
        oracle = stored_qrels(session, collection, qrels)
        if not any(oracle.values()):
            raise ValueError(
                f"qrels: {'version ' + repr(qrels) if qrels else 'collection ' + repr(collection)} "
                "has no judgments to use as the oracle"
            )
        names = list(dict.fromkeys(runs)) if runs is not None else [r.name for r in list_runs(session, collection)]
        if len(names) < 2:
            raise ValueError(
                f"runs: the simulation ranks systems and needs at least two runs, got {len(names)}"
                + (f" ({', '.join(map(repr, names))})" if names else "")
            )
        loaded = {name: stored_run(session, collection, name) for name in names}
        level = relevance_level(session, collection)
    return oracle, loaded, level


def _model_folder(store: Store, collection: str, model: str | Path) -> Path:
    """A cross-encoder registered in the collection by name, else a folder (a RocketQAv2 model's co-trained one)."""
    return registered_model_folder(store, collection, str(model), role="cross-encoder")


def _pair_texts(
    store: Store, collection: str, pairs: Sequence[tuple[str, str]]
) -> tuple[dict[str, str], dict[str, str]]:
    """The texts of the pairs' queries and passages (title then text, as the retrievers index them)."""
    from core.context import with_title
    from db.queries import iter_queries, passages_by_id

    with store.read() as session:
        queries = {q.id: q.text for q in iter_queries(session, collection)}
        passages = passages_by_id(session, collection, {doc for _, doc in pairs})
    for qid, doc in pairs:
        if qid not in queries:
            raise ValueError(f"model: query {qid!r} has no text in {collection!r} (the active strategy scores texts)")
        if doc not in passages:
            raise ValueError(f"model: passage {doc!r} is not in {collection!r} (the active strategy scores texts)")
    used = {qid for qid, _ in pairs}
    return {q: t for q, t in queries.items() if q in used}, {
        d: with_title(p.text, p.title) for d, p in passages.items()
    }


def model_probabilities(
    store: Store,
    collection: str,
    pairs: Sequence[tuple[str, str]],
    model: str | Path,
    *,
    progress: Progress | None = None,
) -> dict[str, dict[str, float]]:
    """A cross-encoder's probability of every (query, passage) pair, ``{qid: {docid: p}}``.

    The passage text is the title followed by the text, as the retrievers index it.

    Raises
    ------
    ValueError
        ``model: ...`` for a model that is neither registered nor a folder, or
        naming a query or passage the collection lacks.
    """
    from core.training.cross_encoder import CrossEncoder

    folder = _model_folder(store, collection, model)
    queries, passages = _pair_texts(store, collection, pairs)
    texts = [(queries[qid], passages[doc]) for qid, doc in pairs]
    probs: np.ndarray | list[float] = CrossEncoder(folder).probabilities(texts, progress=progress) if texts else []
    out: dict[str, dict[str, float]] = {}
    for (qid, doc), p in zip(pairs, probs):
        out.setdefault(qid, {})[doc] = float(p)
    return out


def model_selector(
    store: Store,
    collection: str,
    pairs: Sequence[tuple[str, str]],
    model: str | Path,
    *,
    settings: RetrainSettings = RetrainSettings(),
    seed: int = 0,
    progress: Progress | None = None,
) -> RetrainingSelector:
    """The active strategies' model over ``pairs``: a :class:`core.training.active.RetrainingSelector`.

    Its base scores are ``active``'s (the same as :func:`model_probabilities`
    at the same ``max_length``); ``active-retrain`` fine-tunes it between
    batches as ``settings`` say, seeded with ``seed``.

    Raises
    ------
    ValueError
        As :func:`model_probabilities`, and for a setting out of range.
    """
    from core.training.active import RetrainingSelector

    folder = _model_folder(store, collection, model)
    queries, passages = _pair_texts(store, collection, pairs)
    return RetrainingSelector(
        folder,
        queries,
        passages,
        steps=settings.steps,
        batch_size=settings.batch_size,
        learning_rate=settings.learning_rate,
        max_length=settings.max_length,
        from_base=settings.from_base,
        seed=seed,
        progress=progress,
    )


def _check_strategies(
    strategies: Sequence[str], model: str | Path | None, band: tuple[float, float] | None, rule: str
) -> None:
    """Refuse, before loading anything, an unknown strategy or rule, an active one without a model, a stray band."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"strategies: unknown {', '.join(map(repr, unknown))}; known: {', '.join(STRATEGIES)}")
    if rule not in RULES:
        raise ValueError(f"rule: unknown {rule!r}; known: {', '.join(RULES)}")
    active = [s for s in strategies if s in ACTIVE_STRATEGIES]
    if active and model is None:
        raise ValueError(f"model: the {active[0]} strategy needs a cross-encoder (a registered model name or a folder)")
    if band is not None and not active:
        raise ValueError("band: only the active strategies use a confidence band")


def simulate_collection(
    store: Store,
    collection: str,
    *,
    qrels: str | None = None,
    runs: Sequence[str] | None = None,
    depth: int = 20,
    batch_size: int = 50,
    strategies: Sequence[str] = ("depth", "top-n", "random"),
    model: str | Path | None = None,
    band: tuple[float, float] | None = None,
    rule: str = "uncertain",
    retrain: RetrainSettings = RetrainSettings(),
    measure: str = "nDCG@10",
    level: int | None = None,
    seed: int = 0,
    resamples: int = 1000,
    progress: Progress | None = None,
    model_progress: Progress | None = None,
) -> SimulationResult:
    """Run :func:`core.simulation.simulate_labelling` on a stored collection.

    Parameters
    ----------
    qrels : str, optional
        The oracle's qrels version (default: the newest).
    runs : Sequence[str], optional
        Stored run names (default: every shown run, oldest first).
    model : str or Path, optional
        The active strategies' cross-encoder (a registered model name or a folder).
    retrain : RetrainSettings
        How ``active-retrain`` fine-tunes the model between batches (seeded with ``seed``).
    level : int, optional
        Relevance level (default: the collection's).
    progress, model_progress : callable, optional
        ``(done, total)`` over the simulated batches / the pairs the model scores.

    Other parameters are :func:`core.simulation.simulate_labelling`'s.
    """
    _check_strategies(strategies, model, band, rule)
    oracle, loaded, stored_level = load_inputs(store, collection, qrels=qrels, runs=runs)
    selector = None
    if any(s in ACTIVE_STRATEGIES for s in strategies) and model is not None:  # the model scores the depth pool
        pool = depth_order(loaded, judged_queries(oracle), depth)
        selector = model_selector(store, collection, pool, model, settings=retrain, seed=seed, progress=model_progress)
    return simulate_labelling(
        oracle,
        loaded,
        depth=depth,
        measure=measure,
        level=stored_level if level is None else level,
        batch_size=batch_size,
        strategies=strategies,
        selector=selector,
        rule=rule,
        band=band,
        seed=seed,
        resamples=resamples,
        progress=progress,
    )
