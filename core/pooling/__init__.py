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

from core.pooling.dedupe import EmbeddingsLookup, dedupe_by_clustering, dedupe_by_similarity, dedupe_pool
from core.pooling.methods import depth_pool, rbp_pool, rbp_priorities, rrf_pool, rrf_priorities, take_pool
from core.pooling.registry import (
    DEFAULT_DEPTH,
    POOLING_METHODS,
    PoolingMethod,
    pooling_method,
    register_pooling_method,
)
from core.pooling.selection import ActiveReport, ensemble_scores, select_all, select_top, select_uncertain
from core.pooling.statistics import PoolStatistics, pool_statistics
from core.pooling.types import Contribution, Pool, Selection

__all__ = [
    "DEFAULT_DEPTH",
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
    "POOLING_METHODS",
    "PoolingMethod",
    "pooling_method",
    "register_pooling_method",
]
