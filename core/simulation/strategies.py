"""The labelling orders of :func:`core.simulation.simulate_labelling`: depth, top-n, random, active, active-retrain.

Each strategy is an order over the pool's (query, document) pairs; the
module docstring of :mod:`core.simulation` describes them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from core.pooling import depth_pool, ensemble_scores
from core.ranking import trec_ranking
from core.types import Qrels, Run
from core.validators import positive_int, real_number

__all__ = [
    "ACTIVE_STRATEGIES",
    "RULES",
    "STRATEGIES",
    "Pair",
    "active_order",
    "check_band",
    "depth_order",
    "judged_queries",
    "random_order",
    "top_n_order",
]

STRATEGIES: tuple[str, ...] = ("depth", "top-n", "random", "active", "active-retrain")
"""The labelling orders :func:`~core.simulation.simulate_labelling` knows, in documentation order."""
ACTIVE_STRATEGIES: tuple[str, ...] = ("active", "active-retrain")
"""The strategies a model orders (and which a confidence band applies to)."""
RULES: tuple[str, ...] = ("uncertain", "relevant")
"""How active selection orders the pairs humans label: most uncertain first, or most probably relevant first."""

Pair = tuple[str, str]


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
    rule: str = "uncertain",
) -> tuple[list[Pair], list[Pair]]:
    """Active selection's order: the most uncertain (or most probable) pairs first; with a band, the confident apart.

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
    rule : {"uncertain", "relevant"}
        ``"uncertain"`` (T2Ranking section 4.4): ``|p - 0.5|`` ascending;
        ``"relevant"`` (continuous active learning, Cormack and Grossman,
        SIGIR 2014): ``p`` descending, so that the relevant pairs, the only
        labels that move a trec_eval measure, come first.

    Returns
    -------
    (human, confident)
        ``human`` in the rule's order; ``confident`` the pairs outside the
        band, in the reference order.

    Raises
    ------
    ValueError
        Naming a pair without a probability or with one outside [0, 1], a bad band or an unknown rule.
    """
    low, high = check_band(band)
    if rule not in RULES:
        raise ValueError(f"rule: unknown {rule!r}; known: {', '.join(RULES)}")
    scored = [(pair, _probability(probabilities, *pair)) for pair in pairs]
    human = [(pair, p) for pair, p in scored if low <= p <= high]
    confident = [pair for pair, p in scored if not low <= p <= high]
    if rule == "uncertain":
        human.sort(key=lambda item: abs(item[1] - 0.5))
    else:
        human.sort(key=lambda item: -item[1])
    return [pair for pair, _ in human], confident


def check_band(band: tuple[float, float] | None) -> tuple[float, float]:
    """The band as ``(low, high)`` floats, ``(0, 1)`` for None; ValueError unless ``0 <= low < high <= 1``."""
    if band is None:
        return 0.0, 1.0
    if not isinstance(band, (tuple, list)) or len(band) != 2:
        raise ValueError(f"band must be two probabilities (low, high), got {band!r}")
    low = real_number(band[0], "band: low", low=0.0, high=1.0)
    high = real_number(band[1], "band: high", low=0.0, high=1.0)
    if low >= high:  # as core.pooling.select_uncertain: a band, not a point
        raise ValueError(f"band: low must be below high, got ({low:g}, {high:g})")
    return low, high
