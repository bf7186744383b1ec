"""Pooling methods: depth (TREC), Take@N, and fixed-budget pools by RRF or RBP priority."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from core.fusion import DEFAULT_RRF_K, RunsArg, name_runs
from core.pooling.types import Contribution, Pool, all_ranks, pool_queries, provenance
from core.ranking import rank_positions, trec_ranking
from core.types import Run
from core.validators import positive_int, real_number

# --------------------------------------------------------------------------- pooling


def depth_pool(runs: RunsArg, depth: int, *, queries: Sequence[str] | None = None) -> Pool:
    r"""TREC-style depth-``k`` pool: the union of every run's top ``depth`` documents.

    .. math::

        \mathrm{Pool}_k(q) = \bigcup_{r} \{ d : \mathrm{rank}_r(q, d) \le k \}

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The contributing runs, ``{name: run}`` (a sequence is named
        ``"0"``, ``"1"``, ... by position).
    depth : int
        How many top documents of each run enter the pool.
    queries : Sequence[str], optional
        The queries to pool, in this order (a query no run retrieved gets an
        empty pool).  Default: every query of any run, in order of first
        appearance.

    Returns
    -------
    Pool
        ``{qid: {docid: [Contribution, ...]}}``.  Provenance lists exactly
        the runs that had the document within their top ``depth`` (a run
        that ranked it deeper is not listed), with that run's rank and
        score.  Documents appear run by run, in rank order.
    """
    named = name_runs(runs)
    positive_int(depth, "depth")
    pool: Pool = {}
    for qid in pool_queries(named, queries):
        entries: dict[str, list[Contribution]] = {}
        for name, run in named.items():
            docs = run.get(qid, {})
            for doc, rank in rank_positions(docs, depth).items():
                entries.setdefault(doc, []).append(Contribution(name, rank, float(docs[doc])))
        pool[qid] = entries
    return pool


def take_pool(runs: RunsArg, n: int, *, queries: Sequence[str] | None = None) -> Pool:
    r"""Take@N pooling: a fixed budget of ``n`` documents per query, filled depth by depth.

    Documents are taken rank by rank across the runs (every run's rank 1, in
    the order the runs are given, then every run's rank 2, ...), skipping
    documents already taken, until the query's pool holds ``n`` documents or
    the runs are exhausted.  This is depth pooling with the depth chosen per
    query so that the pool has exactly the budget (Lipani, Zobel and Lupu,
    "Fixed-cost pooling strategies", TKDE 2019, the depth-ordered Take@N
    baseline).

    Returns
    -------
    Pool
        Provenance lists every run that ranked the document no deeper than
        the depth at which the budget ran out, with its rank and score.
    """
    named = name_runs(runs)
    positive_int(n, "n")
    pool: Pool = {}
    for qid in pool_queries(named, queries):
        rankings = {name: trec_ranking(run.get(qid, {})) for name, run in named.items()}
        deepest = max((len(r) for r in rankings.values()), default=0)
        taken: list[str] = []
        seen: set[str] = set()
        depth = 0
        while len(taken) < n and depth < deepest:
            for ranking in rankings.values():
                if depth < len(ranking) and ranking[depth] not in seen and len(taken) < n:
                    seen.add(ranking[depth])
                    taken.append(ranking[depth])
            depth += 1
        entries: dict[str, list[Contribution]] = {doc: [] for doc in taken}
        for name, ranking in rankings.items():
            docs = named[name].get(qid, {})
            for rank, doc in enumerate(ranking[:depth], start=1):
                if doc in entries:
                    entries[doc].append(Contribution(name, rank, float(docs[doc])))
        pool[qid] = entries
    return pool


def _priority_pool(
    named: dict[str, Run],
    size: int,
    queries: Sequence[str] | None,
    weight: Callable[[int], float],
) -> tuple[Pool, Run]:
    pool: Pool = {}
    priorities: Run = {}
    for qid in pool_queries(named, queries):
        ranks = all_ranks(named, qid)
        terms: dict[str, list[float]] = {}
        for name in named:
            for doc, rank in ranks[name].items():
                terms.setdefault(doc, []).append(weight(rank))
        prio = {doc: math.fsum(parts) for doc, parts in terms.items()}
        chosen = trec_ranking(prio)[:size]
        priorities[qid] = {doc: prio[doc] for doc in chosen}
        pool[qid] = {doc: provenance(named, ranks, qid, doc) for doc in chosen}
    return pool, priorities


def rrf_priorities(runs: RunsArg, *, k: float = DEFAULT_RRF_K, queries: Sequence[str] | None = None) -> Run:
    r"""Every retrieved document's RRF priority, :math:`\sum_r 1 / (k + \mathrm{rank}_r(d))`.

    Ranks are trec-order ranks in each run's full list.  Returns a
    :data:`Run`, each query in trec order of priority.
    """
    named = name_runs(runs)
    _, prio = _priority_pool(named, 2**62, queries, _rrf_weight(k))
    return prio


def _rrf_weight(k: float) -> Callable[[int], float]:
    real_number(k, "k", low=0)
    return lambda rank: 1.0 / (k + rank)


def _rbp_weight(p: float) -> Callable[[int], float]:
    real_number(p, "p", low=0, high=1, low_open=True, high_open=True)
    return lambda rank: (1.0 - p) * p ** (rank - 1)


def rrf_pool(runs: RunsArg, size: int, k: float = DEFAULT_RRF_K, *, queries: Sequence[str] | None = None) -> Pool:
    r"""Pool a fixed budget of ``size`` documents per query, by reciprocal-rank priority.

    A document's priority is its RRF score (Cormack et al. 2009) over the
    runs' full lists,

    .. math::

        \pi(d) = \sum_{r \,:\, d \in r} \frac{1}{k + \mathrm{rank}_r(d)},

    and the ``size`` documents of highest priority are pooled (ties by doc
    id descending).

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The contributing runs.
    size : int
        Documents pooled per query (fewer when the runs retrieved fewer).
    k : float
        The RRF constant (default 60).
    queries : Sequence[str], optional
        As in :func:`depth_pool`.

    Returns
    -------
    Pool
        Provenance of a pooled document lists *every* run that retrieved
        it, at its rank in that run's full list (not only the runs whose
        rank made it win a place): the complete evidence behind its
        priority.  Documents are in priority order.
    """
    named = name_runs(runs)
    positive_int(size, "size")
    pool, _ = _priority_pool(named, size, queries, _rrf_weight(k))
    return pool


def rbp_priorities(runs: RunsArg, *, p: float = 0.8, queries: Sequence[str] | None = None) -> Run:
    r"""Every retrieved document's RBP priority, :math:`\sum_r (1-p)\,p^{\mathrm{rank}_r(d)-1}`.

    Returns a :data:`Run`, each query in trec order of priority.
    """
    named = name_runs(runs)
    _, prio = _priority_pool(named, 2**62, queries, _rbp_weight(p))
    return prio


def rbp_pool(runs: RunsArg, size: int, p: float = 0.8, *, queries: Sequence[str] | None = None) -> Pool:
    r"""Pool a fixed budget of ``size`` documents per query, by rank-biased-precision weight.

    Moffat, Webber & Zobel (2007) judge first the documents that carry the
    most weight in the runs' RBP scores.  The weight of rank :math:`i` in
    RBP with persistence :math:`p` is :math:`(1-p)\,p^{i-1}`; a document's
    priority is the sum over the runs that retrieved it,

    .. math::

        \pi(d) = \sum_{r \,:\, d \in r} (1 - p)\, p^{\mathrm{rank}_r(d) - 1},

    and the ``size`` documents of highest priority are pooled (ties by doc
    id descending).

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The contributing runs.
    size : int
        Documents pooled per query.
    p : float
        RBP persistence, ``0 < p < 1`` (default 0.8: the user looks at the
        next document with probability 0.8).
    queries : Sequence[str], optional
        As in :func:`depth_pool`.

    Returns
    -------
    Pool
        Provenance as in :func:`rrf_pool`: every run that retrieved the
        document, at its rank in that run's full list.
    """
    named = name_runs(runs)
    positive_int(size, "size")
    pool, _ = _priority_pool(named, size, queries, _rbp_weight(p))
    return pool
