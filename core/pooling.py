"""Pooling, pool statistics, selection for annotation and near-duplicate removal.

The path from runs to what annotators see (DESIGN.md, "The flow"):

1. **Pool** the runs of several contributing systems per query:
   :func:`depth_pool` (TREC's top-``k`` union), :func:`take_pool` (Take@N:
   a fixed budget per query, filled depth by depth), :func:`rrf_pool` or
   :func:`rbp_pool` (a fixed budget per query, filled by priority).  Every
   pooled pair keeps its *provenance*: which runs retrieved it and at which
   1-based trec-order rank, as :class:`Contribution` records.  Provenance is
   for export and analysis only; annotators never see it.
2. **Describe** the pool: :func:`pool_statistics` (sizes, per-run and unique
   contributions, pairwise overlap), plain dicts and lists ready to plot.
3. **Select** what gets annotated: :func:`select_top` re-ranks each query's
   pool with an ensemble of scorers and keeps the top ``n``
   (DuReader-retrieval: top 50 of each system pooled, top 5 annotated), or
   :func:`select_all` (annotate everything, T2Ranking's test split), or
   :func:`select_uncertain` (active selection, T2Ranking §4.4: only the
   pairs a cross-encoder trained on the labels so far is unsure about).
4. **Remove near-duplicates** from a selection (T2Ranking §4.3):
   :func:`dedupe_by_clustering` (Ward linkage), :func:`dedupe_by_similarity`
   (cosine threshold), per query with :func:`dedupe_pool`.

Ranks follow trec_eval everywhere: score descending, ties by document id
descending, so equal scores never make the result depend on dict order.

References
----------
.. [1] K. Spärck Jones and C. J. van Rijsbergen, "Report on the need for and
   provision of an 'ideal' information retrieval test collection", 1975
   (pooling); E. M. Voorhees and D. K. Harman, *TREC*, MIT Press, 2005.
.. [2] A. Moffat, W. Webber and J. Zobel, "Strategic system comparisons via
   targeted relevance judgments", SIGIR 2007 (RBP-weighted pooling).
.. [3] G. V. Cormack, C. L. A. Clarke and S. Büttcher, "Reciprocal rank
   fusion outperforms Condorcet and individual rank learning methods",
   SIGIR 2009.
.. [4] Y. Qiu et al., "DuReader-retrieval: A large-scale Chinese benchmark
   for passage retrieval from web search engine", EMNLP 2022.
.. [5] X. Xie et al., "T2Ranking: A large-scale Chinese benchmark for passage
   ranking", SIGIR 2023.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from core.fusion import (
    DEFAULT_RRF_K,
    RunsArg,
    WeightsArg,
    name_runs,
    resolve_weights,
)
from core.ranking import rank_positions, trec_ranking
from core.types import Run
from core.validators import positive_int, real_number

__all__ = [
    "Contribution",
    "EmbeddingsLookup",
    "Pool",
    "PoolStatistics",
    "Selection",
    "dedupe_by_clustering",
    "dedupe_by_similarity",
    "dedupe_pool",
    "depth_pool",
    "ensemble_scores",
    "pool_statistics",
    "rbp_pool",
    "rbp_priorities",
    "rrf_pool",
    "rrf_priorities",
    "select_all",
    "take_pool",
    "select_top",
    "ActiveReport",
    "select_uncertain",
]


@dataclass(frozen=True, slots=True)
class Contribution:
    """One run's part in a pooled pair: the run's name, the 1-based rank and the score it gave.

    ``rank`` is the trec-order rank (score descending, doc id descending)
    within the run's full list for the query.
    """

    run: str
    rank: int
    score: float


Pool = dict[str, dict[str, list[Contribution]]]
"""``{qid: {docid: [Contribution, ...]}}``: the pooled pairs and their provenance.

Contributions of a pair are listed in the order the runs were given.
"""

Selection = dict[str, list[str]]
"""``{qid: [docid, ...]}``: the documents chosen for annotation, best first."""


# --------------------------------------------------------------------------- helpers


def _pool_queries(runs: Mapping[str, Run], queries: Sequence[str] | None) -> list[str]:
    if queries is not None:
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of query ids, not one string")
        return list(dict.fromkeys(str(q) for q in queries))
    seen: dict[str, None] = {}
    for run in runs.values():
        for qid in run:
            seen.setdefault(qid, None)
    return list(seen)


def _all_ranks(runs: Mapping[str, Run], qid: str) -> dict[str, dict[str, int]]:
    return {name: rank_positions(run.get(qid, {})) for name, run in runs.items()}


def _provenance(runs: Mapping[str, Run], ranks: Mapping[str, Mapping[str, int]], qid: str, doc: str) -> list[Contribution]:
    return [
        Contribution(name, ranks[name][doc], float(runs[name][qid][doc]))
        for name in runs
        if doc in ranks[name]
    ]


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
    for qid in _pool_queries(named, queries):
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
    for qid in _pool_queries(named, queries):
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
    for qid in _pool_queries(named, queries):
        ranks = _all_ranks(named, qid)
        terms: dict[str, list[float]] = {}
        for name in named:
            for doc, rank in ranks[name].items():
                terms.setdefault(doc, []).append(weight(rank))
        prio = {doc: math.fsum(parts) for doc, parts in terms.items()}
        chosen = trec_ranking(prio)[:size]
        priorities[qid] = {doc: prio[doc] for doc in chosen}
        pool[qid] = {doc: _provenance(named, ranks, qid, doc) for doc in chosen}
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


def rrf_pool(
    runs: RunsArg, size: int, k: float = DEFAULT_RRF_K, *, queries: Sequence[str] | None = None
) -> Pool:
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
    contributed_pq = {name: {qid: 0 for qid in queries} for name in names}
    unique_pq = {name: {qid: 0 for qid in queries} for name in names}
    sets: dict[str, dict[str, set[str]]] = {name: {} for name in names}
    for qid in queries:
        for name in names:
            sets[name][qid] = set()
        for doc, contributions in pool[qid].items():
            contributors = list(dict.fromkeys(c.run for c in contributions))
            for name in contributors:
                contributed_pq[name][qid] += 1
                sets[name][qid].add(doc)
            if len(contributors) == 1:
                unique_pq[contributors[0]][qid] += 1
        if depth is not None:
            for name, run in named.items():
                sets[name][qid] = set(trec_ranking(run.get(qid, {}))[:depth])
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


# --------------------------------------------------------------------------- selection


def ensemble_scores(
    pool: Pool, scorers: Mapping[str, Run] | Sequence[Run], *, weights: WeightsArg = None
) -> Run:
    r"""Score every pooled document by a weighted mean of min-max normalised scorer scores.

    For query :math:`q` with pooled documents :math:`P_q` and scorers
    :math:`s = 1..m` with weights :math:`w_s`,

    .. math::

        E(d) = \frac{\sum_s w_s\, \hat s(d)}{\sum_s w_s}, \qquad
        \hat s(d) = \begin{cases}
            \dfrac{s(d) - \min_{P_q \cap s} s}{\max_{P_q \cap s} s - \min_{P_q \cap s} s}
              & d \in s \\[1ex]
            0 & d \notin s
        \end{cases}

    The min and max are over the pooled documents the scorer scored for
    that query (documents outside the pool do not stretch the scale); when
    they are equal every such document gets 1.0 (as in
    :func:`core.fusion.min_max_normalise`).  A pooled document a scorer did
    not score gets 0 from it, the same as that scorer's worst pooled
    document.

    Parameters
    ----------
    pool : Pool
        The pool to re-rank.
    scorers : Mapping[str, Run] or Sequence[Run]
        One or more scorers (a re-ranker's scores, or the contributing runs
        themselves).  Pass a single run as ``[run]``.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per scorer (default: plain mean).

    Returns
    -------
    Run
        ``{qid: {docid: E(d)}}`` for every pooled pair, each query in trec
        order of :math:`E`.
    """
    named = name_runs(scorers)
    w = resolve_weights(list(named), weights)
    total_w = math.fsum(w.values())
    result: Run = {}
    for qid, entries in pool.items():
        docs = list(entries)
        terms: dict[str, list[float]] = {doc: [] for doc in docs}
        for name, run in named.items():
            scores = run.get(qid, {})
            present = {doc: float(scores[doc]) for doc in docs if doc in scores}
            if not present or w[name] == 0.0:
                continue
            for doc, s in present.items():
                if not math.isfinite(s):
                    raise ValueError(f"scorer {name!r}, query {qid!r}, document {doc!r}: score {s!r} is not finite")
            low, high = min(present.values()), max(present.values())
            for doc, s in present.items():
                norm = 1.0 if high == low else (s - low) / (high - low)
                terms[doc].append(w[name] * norm)
        ens = {doc: math.fsum(parts) / total_w for doc, parts in terms.items()}
        result[qid] = {doc: ens[doc] for doc in trec_ranking(ens)}
    return result


def select_top(
    pool: Pool, scorers: Mapping[str, Run] | Sequence[Run], n: int, *, weights: WeightsArg = None
) -> Selection:
    """Keep the top ``n`` pooled documents per query by an ensemble of scorers.

    DuReader-retrieval pooled the top 50 of each retrieval system and had
    the top 5 after re-ranking annotated; this is that second step.  The
    ensemble score is :func:`ensemble_scores` (weighted mean of scores
    min-max normalised over the pool; a pooled document missing from a
    scorer gets 0 from it).  Ties are broken in trec order (doc id
    descending).

    Parameters
    ----------
    pool : Pool
        The pool.
    scorers : Mapping[str, Run] or Sequence[Run]
        One or more scorers; a single run as ``[run]``.
    n : int
        Documents kept per query.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per scorer.

    Returns
    -------
    Selection
        ``{qid: [docid, ...]}``, best first; every pool query appears
        (with fewer than ``n`` documents when its pool is smaller).
    """
    positive_int(n, "n")
    ens = ensemble_scores(pool, scorers, weights=weights)
    return {qid: list(docs)[:n] for qid, docs in ens.items()}


def select_all(pool: Pool) -> Selection:
    """Select every pooled document (T2Ranking's test split: annotate everything).

    Documents are ordered by their best (smallest) contributed rank, then
    by the number of runs that contributed them (more first), then by doc
    id descending; a document without contributions comes last.  The order
    matters for :func:`dedupe_pool`, which keeps the first of near-duplicates.

    Returns
    -------
    Selection
        ``{qid: [docid, ...]}`` for every pool query.
    """

    def key(item: tuple[str, list[Contribution]]) -> tuple[float, int]:
        contributions = item[1]
        best = min((c.rank for c in contributions), default=math.inf)
        return (best, -len({c.run for c in contributions}))

    selection: Selection = {}
    for qid, entries in pool.items():
        by_id = sorted(entries.items(), key=lambda item: item[0], reverse=True)  # ties: doc id descending
        selection[qid] = [doc for doc, _ in sorted(by_id, key=key)]  # stable sort keeps that tie order
    return selection


@dataclass(frozen=True)
class ActiveReport:
    """What :func:`select_uncertain` kept and what it saved the annotators.

    ``confident_relevant`` / ``confident_irrelevant`` are the skipped pairs
    (``{qid: [docid, ...]}``, most probable first) the model was sure about:
    probability above ``high`` / below ``low``.
    """

    low: float
    high: float
    kept: int
    confident_relevant: Selection
    confident_irrelevant: Selection

    @property
    def saved(self) -> int:
        """Pairs not sent to annotation: the confident ones of both kinds."""
        return sum(map(len, self.confident_relevant.values())) + sum(map(len, self.confident_irrelevant.values()))

    @property
    def total(self) -> int:
        """Every pooled pair considered: kept + saved."""
        return self.kept + self.saved

    def as_dict(self) -> dict[str, object]:
        """Counts as JSON-ready data (a job's result): kept, confident_relevant, confident_irrelevant, saved, pairs, band."""
        return {
            "kept": self.kept,
            "confident_relevant": sum(map(len, self.confident_relevant.values())),
            "confident_irrelevant": sum(map(len, self.confident_irrelevant.values())),
            "saved": self.saved,
            "pairs": self.total,
            "band": [self.low, self.high],
        }


def select_uncertain(pool: Pool, probabilities: Run, low: float, high: float) -> tuple[Selection, ActiveReport]:
    r"""Active selection (T2Ranking §4.4): annotate only the pairs the model is unsure about.

    T2Ranking scored its unlabelled pairs with a cross-encoder trained on
    the labels collected so far and spent annotation on the pairs it could
    not decide.  A pooled pair with probability :math:`p` is

    - kept (sent to annotation) when :math:`low \le p \le high` (both
      ends inclusive: a pair exactly on the boundary is still uncertain);
    - skipped as confidently relevant when :math:`p > high`;
    - skipped as confidently non-relevant when :math:`p < low`.

    A pooled pair without a probability (the model never saw it, e.g. its
    passage is missing from the store) is kept: nothing says it is settled.

    Parameters
    ----------
    pool : Pool
        The pool.
    probabilities : Run
        ``{qid: {docid: p}}``, :math:`p \in [0, 1]` (a cross-encoder's
        sigmoid scores of the pooled pairs).
    low, high : float
        The uncertainty band, ``0 <= low < high <= 1``.

    Returns
    -------
    (Selection, ActiveReport)
        Every pool query with its kept documents, most probable first
        (trec order of :math:`p`; unscored pairs after them in
        :func:`select_all` order), and the report.
    """
    low, high = real_number(low, "low"), real_number(high, "high")
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"the uncertainty band must satisfy 0 <= low < high <= 1, got low={low!r}, high={high!r}")
    fallback = select_all(pool)
    selection: Selection = {}
    relevant: Selection = {}
    irrelevant: Selection = {}
    kept = 0
    for qid, entries in pool.items():
        scores = probabilities.get(qid, {})
        scored = {}
        for doc in entries:
            if doc in scores:
                p = float(scores[doc])
                if not (math.isfinite(p) and 0.0 <= p <= 1.0):
                    raise ValueError(f"query {qid!r}, document {doc!r}: probability {p!r} is not in [0, 1]")
                scored[doc] = p
        order = trec_ranking(scored)
        selection[qid] = [d for d in order if low <= scored[d] <= high] + [d for d in fallback[qid] if d not in scored]
        relevant[qid] = [d for d in order if scored[d] > high]
        irrelevant[qid] = [d for d in order if scored[d] < low]
        kept += len(selection[qid])
    return selection, ActiveReport(low, high, kept, relevant, irrelevant)


# --------------------------------------------------------------------------- near-duplicates


def _unit_rows(doc_ids: Sequence[str], embeddings: ArrayLike) -> tuple[list[str], np.ndarray]:
    ids = [str(d) for d in doc_ids]
    if len(set(ids)) != len(ids):
        dup = next(d for d in ids if ids.count(d) > 1)
        raise ValueError(f"document {dup!r} is given twice")
    x = np.asarray(embeddings, dtype=np.float64)
    if len(ids) == 0:
        return ids, x.reshape(0, x.shape[-1] if x.ndim == 2 else 0)
    if x.ndim != 2 or x.shape[0] != len(ids):
        raise ValueError(f"embeddings must have shape ({len(ids)}, dim), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("embeddings contain NaN or infinite values")
    norms = np.linalg.norm(x, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"document {ids[int(np.argmin(norms))]!r} has a zero embedding (no direction)")
    return ids, x / norms[:, None]


def _keep_first(ids: list[str], labels: Sequence[int]) -> tuple[list[str], dict[str, str]]:
    representative: dict[int, str] = {}
    kept: list[str] = []
    removed: dict[str, str] = {}
    for doc, label in zip(ids, labels, strict=True):
        label = int(label)
        if label in representative:
            removed[doc] = representative[label]
        else:
            representative[label] = doc
            kept.append(doc)
    return kept, removed


def dedupe_by_clustering(
    doc_ids: Sequence[str], embeddings: ArrayLike, *, distance_threshold: float
) -> tuple[list[str], dict[str, str]]:
    r"""Near-duplicate removal by Ward hierarchical clustering (T2Ranking §4.3).

    Rows are L2-normalised, clustered with Ward linkage
    (:func:`scipy.cluster.hierarchy.linkage`, ``method="ward"``) and cut at
    ``distance_threshold`` (:func:`~scipy.cluster.hierarchy.fcluster`,
    ``criterion="distance"``: a cluster's members were all merged at a
    height :math:`\le t`).  One document per cluster is kept: the first in
    the given order, so pass documents best first.

    For two single documents the Ward merge height is their Euclidean
    distance, and for unit vectors

    .. math::

        \lVert a - b \rVert^2 = 2 - 2\cos(a, b)
        \quad\Longrightarrow\quad
        \text{merged} \iff \cos(a, b) \ge 1 - t^2 / 2,

    so ``t = 0.3`` pairs documents with cosine >= 0.955.  Larger clusters
    merge at larger heights (Ward's criterion grows with cluster size:
    :math:`\sqrt{2 n_A n_B / (n_A + n_B)}\,\lVert c_A - c_B \rVert`), so a
    cut keeps clusters compact rather than chaining.

    Parameters
    ----------
    doc_ids : Sequence[str]
        Distinct document ids, in preference order.
    embeddings : array_like, shape (n, dim)
        Row ``i`` embeds ``doc_ids[i]``; no row may be all zeros.
    distance_threshold : float
        The cut height :math:`t \ge 0`.

    Returns
    -------
    kept : list of str
        The representatives, in the given order.
    removed : dict of str to str
        ``{removed doc: the representative of its cluster}``.
    """
    real_number(distance_threshold, "distance_threshold", low=0)
    ids, x = _unit_rows(doc_ids, embeddings)
    if len(ids) < 2:
        return ids, {}
    labels = fcluster(linkage(x, method="ward"), t=float(distance_threshold), criterion="distance")
    return _keep_first(ids, labels)


def dedupe_by_similarity(
    doc_ids: Sequence[str], embeddings: ArrayLike, *, threshold: float = 0.95
) -> tuple[list[str], dict[str, str]]:
    r"""Near-duplicate removal by a cosine-similarity threshold.

    Two documents are duplicates when :math:`\cos(a, b) \ge` ``threshold``;
    clusters are the connected components of that graph
    (:func:`scipy.sparse.csgraph.connected_components`), so duplication is
    transitive: if ``a ~ b`` and ``b ~ c`` all three form one cluster even
    when ``cos(a, c)`` is below the threshold (single linkage).  One
    document per cluster is kept: the first in the given order.

    Parameters
    ----------
    doc_ids : Sequence[str]
        Distinct document ids, in preference order.
    embeddings : array_like, shape (n, dim)
        Row ``i`` embeds ``doc_ids[i]``; rows are L2-normalised here.
    threshold : float
        Cosine similarity at or above which two documents are duplicates,
        in ``[-1, 1]`` (default 0.95).  Cosines are computed in float64; two
        identical vectors may come out a hair below 1.0, so a threshold of
        exactly 1.0 is fragile.

    Returns
    -------
    kept : list of str
        The representatives, in the given order.
    removed : dict of str to str
        ``{removed doc: the representative of its cluster}``.
    """
    real_number(threshold, "threshold", low=-1, high=1)
    ids, x = _unit_rows(doc_ids, embeddings)
    if len(ids) < 2:
        return ids, {}
    adjacency = (x @ x.T) >= threshold
    np.fill_diagonal(adjacency, False)
    _, labels = connected_components(csr_matrix(adjacency), directed=False)
    return _keep_first(ids, labels)


EmbeddingsLookup = Mapping[str, ArrayLike] | Callable[[list[str]], ArrayLike]
"""``{docid: vector}``, or a function taking a list of doc ids and returning their ``(n, dim)`` rows."""


def dedupe_pool(
    selection: Mapping[str, Sequence[str]],
    embeddings_lookup: EmbeddingsLookup,
    *,
    method: Literal["ward", "similarity"] = "similarity",
    distance_threshold: float | None = None,
    threshold: float = 0.95,
) -> tuple[Selection, dict[str, dict[str, str]]]:
    """Remove near-duplicates within each query's selection.

    Parameters
    ----------
    selection : Mapping[str, Sequence[str]]
        ``{qid: [docid, ...]}`` best first (from :func:`select_top` or
        :func:`select_all`); the best-ranked member of a duplicate cluster
        survives.
    embeddings_lookup : Mapping[str, array_like] or callable
        Where the embeddings come from: a mapping ``{docid: vector}``, or a
        function called once per query with the list of its doc ids that
        returns an ``(n, dim)`` array (e.g. a disk cache).
    method : {"similarity", "ward"}
        :func:`dedupe_by_similarity` (``threshold``) or
        :func:`dedupe_by_clustering` (``distance_threshold``, required).
    distance_threshold : float, optional
        The Ward cut height.
    threshold : float
        The cosine threshold.

    Returns
    -------
    kept : Selection
        ``{qid: [docid, ...]}`` without duplicates, order preserved.
    removed : dict of str to dict of str to str
        ``{qid: {removed doc: representative}}`` (empty dict for a query
        without duplicates).

    Raises
    ------
    KeyError
        When a mapping lookup lacks a selected document.
    """
    if method == "ward":
        if distance_threshold is None:
            raise ValueError('method="ward" needs distance_threshold')
    elif method != "similarity":
        raise ValueError(f"unknown method {method!r}; expected 'similarity' or 'ward'")
    kept_all: Selection = {}
    removed_all: dict[str, dict[str, str]] = {}
    for qid, docs in selection.items():
        ids = [str(d) for d in docs]
        if not ids:
            kept_all[qid], removed_all[qid] = [], {}
            continue
        if isinstance(embeddings_lookup, Mapping):
            missing = [d for d in ids if d not in embeddings_lookup]
            if missing:
                raise KeyError(f"query {qid!r}: no embedding for document(s) {missing[:5]}")
            matrix = np.stack([np.asarray(embeddings_lookup[d], dtype=np.float64) for d in ids])
        else:
            matrix = np.asarray(embeddings_lookup(ids), dtype=np.float64)
        if distance_threshold is not None and method == "ward":
            kept, removed = dedupe_by_clustering(ids, matrix, distance_threshold=distance_threshold)
        else:
            kept, removed = dedupe_by_similarity(ids, matrix, threshold=threshold)
        kept_all[qid], removed_all[qid] = kept, removed
    return kept_all, removed_all
