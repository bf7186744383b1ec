"""The labelling simulation on a stored collection: load its labels and runs, run :mod:`core.simulation`.

Shared by the CLI (``pooljudge simulate-labelling``) and the Labelling
simulation page.  The oracle is a frozen qrels version (default: the newest
one), the systems are the collection's stored runs (default: every shown
run), and the active strategy's probabilities come from a cross-encoder
(:class:`core.training.cross_encoder.CrossEncoder`) given as a folder or a
model registered in the collection.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from core.simulation import STRATEGIES, SimulationResult, depth_order, judged_queries, simulate_labelling
from core.types import Qrels, Run
from db.engine import Store

__all__ = ["load_inputs", "model_probabilities", "simulate_collection"]

Progress = Callable[[int, int], None]


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
    from db.queries import list_runs, load_qrels, load_run, relevance_level

    with store.read() as session:
        oracle = load_qrels(session, collection, qrels)
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
        loaded = {name: load_run(session, collection, name) for name in names}
        level = relevance_level(session, collection)
    return oracle, loaded, level


def _model_folder(store: Store, collection: str, model: str | Path) -> Path:
    try:  # a model registered in the collection, by name (the trained-models registry)
        from pooljudge.training import resolve_model
    except ImportError:
        pass
    else:
        return Path(resolve_model(store, collection, str(model), role="cross-encoder"))
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise ValueError(f"model: {str(model)!r} is not a folder")
    return folder


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
    from core.context import with_title
    from core.training.cross_encoder import CrossEncoder
    from db.queries import iter_queries, passages_by_id

    folder = _model_folder(store, collection, model)
    with store.read() as session:
        queries = {q.id: q.text for q in iter_queries(session, collection)}
        passages = passages_by_id(session, collection, {doc for _, doc in pairs})
    texts = []
    for qid, doc in pairs:
        if qid not in queries:
            raise ValueError(f"model: query {qid!r} has no text in {collection!r} (the active strategy scores texts)")
        if doc not in passages:
            raise ValueError(f"model: passage {doc!r} is not in {collection!r} (the active strategy scores texts)")
        texts.append((queries[qid], with_title(passages[doc].text, passages[doc].title)))
    probs: np.ndarray | list[float] = CrossEncoder(folder).probabilities(texts, progress=progress) if texts else []
    out: dict[str, dict[str, float]] = {}
    for (qid, doc), p in zip(pairs, probs):
        out.setdefault(qid, {})[doc] = float(p)
    return out


def _check_strategies(strategies: Sequence[str], model: str | Path | None, band: tuple[float, float] | None) -> None:
    """Refuse, before loading anything, an unknown strategy, ``active`` without a model, a band without ``active``."""
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"strategies: unknown {', '.join(map(repr, unknown))}; known: {', '.join(STRATEGIES)}")
    if "active" in strategies and model is None:
        raise ValueError("model: the active strategy needs a cross-encoder (a registered model name or a folder)")
    if band is not None and "active" not in strategies:
        raise ValueError("band: only the active strategy uses a confidence band")


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
        The active strategy's cross-encoder: a registered model name or a folder;
        required when ``strategies`` holds ``"active"``.
    level : int, optional
        Relevance level (default: the collection's).
    progress, model_progress : callable, optional
        ``(done, total)`` over the simulated batches / the pairs the model scores.

    Other parameters are :func:`core.simulation.simulate_labelling`'s.
    """
    _check_strategies(strategies, model, band)
    oracle, loaded, stored_level = load_inputs(store, collection, qrels=qrels, runs=runs)
    probabilities = None
    if "active" in strategies:
        assert model is not None  # _check_strategies demands one for "active"
        pairs = depth_order(loaded, judged_queries(oracle), depth)
        probabilities = model_probabilities(store, collection, pairs, model, progress=model_progress)
    return simulate_labelling(
        oracle,
        loaded,
        depth=depth,
        measure=measure,
        level=stored_level if level is None else level,
        batch_size=batch_size,
        strategies=strategies,
        probabilities=probabilities,
        band=band,
        seed=seed,
        resamples=resamples,
        progress=progress,
    )
