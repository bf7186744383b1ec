"""What a pool is made of: sizes, per-run and unique contributions, pairwise overlap."""

from __future__ import annotations

import math
from dataclasses import dataclass

from core.fusion import RunsArg, name_runs
from core.pooling.types import Pool
from core.ranking import trec_ranking
from core.validators import positive_int

# --------------------------------------------------------------------------- statistics


@dataclass(frozen=True)
class PoolStatistics:
    """What a pool is made of, as plain data ready for tables and plots.

    Attributes
    ----------
    runs : list of str
        Run names, in the order given (rows and columns of ``overlap``).
    queries : list of str
        Query ids, in pool order.
    pool_size : dict of str to int
        Pooled documents per query.
    total : int
        Pooled pairs over all queries.
    contributed : dict of str to int
        Per run, the pooled pairs it contributed (has a :class:`Contribution` for).
    unique : dict of str to int
        Per run, the pooled pairs *only* it contributed.
    contributed_per_query, unique_per_query : dict of str to dict of str to int
        The same, ``{run: {qid: count}}``.
    overlap : list of list of float
        ``overlap[i][j]``: mean over queries of the Jaccard index
        :math:`|A \\cap B| / |A \\cup B|` of the document sets of runs ``i``
        and ``j`` (see :func:`pool_statistics`); ``nan`` when no query has a
        document in either set.
    """

    runs: list[str]
    queries: list[str]
    pool_size: dict[str, int]
    total: int
    contributed: dict[str, int]
    unique: dict[str, int]
    contributed_per_query: dict[str, dict[str, int]]
    unique_per_query: dict[str, dict[str, int]]
    overlap: list[list[float]]


def _contributions(
    pool: Pool, names: list[str], queries: list[str]
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, int]], dict[str, dict[str, set[str]]]]:
    """Per run and query: pooled pairs it contributed, those only it contributed, and its pooled documents."""
    contributed_pq = {name: {qid: 0 for qid in queries} for name in names}
    unique_pq = {name: {qid: 0 for qid in queries} for name in names}
    sets: dict[str, dict[str, set[str]]] = {name: {qid: set() for qid in queries} for name in names}
    for qid in queries:
        for doc, contributions in pool[qid].items():
            contributors = list(dict.fromkeys(c.run for c in contributions))
            for name in contributors:
                contributed_pq[name][qid] += 1
                sets[name][qid].add(doc)
            if len(contributors) == 1:
                unique_pq[contributors[0]][qid] += 1
    return contributed_pq, unique_pq, sets


def _overlap(names: list[str], queries: list[str], sets: dict[str, dict[str, set[str]]]) -> list[list[float]]:
    """Mean Jaccard of every two runs' document sets over the queries where either has one (nan: none)."""
    overlap: list[list[float]] = []
    for a in names:
        row = []
        for b in names:
            values = []
            for qid in queries:
                union = sets[a][qid] | sets[b][qid]
                if union:
                    values.append(len(sets[a][qid] & sets[b][qid]) / len(union))
            row.append(math.fsum(values) / len(values) if values else math.nan)
        overlap.append(row)
    return overlap


def pool_statistics(pool: Pool, runs: RunsArg, *, depth: int | None = None) -> PoolStatistics:
    r"""Pool sizes, per-run and unique contributions, and pairwise run overlap.

    Parameters
    ----------
    pool : Pool
        A pool from :func:`depth_pool`, :func:`rrf_pool` or :func:`rbp_pool`.
    runs : Mapping[str, Run] or Sequence[Run]
        The runs the pool was built from (named as when pooling).  Every run
        gets a row even if it contributed nothing.
    depth : int, optional
        How each run's document set for the overlap is defined.  With
        ``depth``, it is the run's top ``depth`` for the query (taken from
        ``runs``); without, it is the set of pooled documents the run
        contributed (for a depth-``k`` pool these are the same thing).

    Returns
    -------
    PoolStatistics
        ``contributed[r]`` counts pooled pairs with a contribution from
        ``r``; ``unique[r]`` those whose only contributor is ``r``.  The
        overlap of runs :math:`a, b` is

        .. math::

            O(a, b) = \frac{1}{|Q_{ab}|} \sum_{q \in Q_{ab}}
                      \frac{|A_q \cap B_q|}{|A_q \cup B_q|}

        over the pool's queries :math:`Q_{ab}` where :math:`A_q \cup B_q`
        is not empty (a query neither run retrieved says nothing about their
        agreement); ``nan`` when there is none.  The diagonal is 1.0 for a
        run with documents.
    """
    named = name_runs(runs)
    if depth is not None:
        positive_int(depth, "depth")
    names = list(named)
    unknown = sorted({c.run for entries in pool.values() for cs in entries.values() for c in cs} - set(names))
    if unknown:
        raise ValueError(f"the pool names runs {unknown} that are not among the runs given {names}")
    queries = list(pool)
    pool_size = {qid: len(pool[qid]) for qid in queries}
    contributed_pq, unique_pq, sets = _contributions(pool, names, queries)
    if depth is not None:
        for qid in queries:
            for name, run in named.items():
                sets[name][qid] = set(trec_ranking(run.get(qid, {}))[:depth])
    overlap = _overlap(names, queries, sets)
    return PoolStatistics(
        runs=names,
        queries=queries,
        pool_size=pool_size,
        total=sum(pool_size.values()),
        contributed={name: sum(contributed_pq[name].values()) for name in names},
        unique={name: sum(unique_pq[name].values()) for name in names},
        contributed_per_query=contributed_pq,
        unique_per_query=unique_pq,
        overlap=overlap,
    )
