"""Re-ranking with trained cross-encoders: the held-out evaluation training keeps the best weights by.

:func:`evaluate_reranker` is the held-out evaluation
:func:`core.training.cross_encoder.train_cross_encoder` keeps the best
weights by; it scores with :func:`core.retrieval.ensemble.rerank` (one
re-ranker's scores, or an ensemble's), re-exported here with
:class:`~core.retrieval.ensemble.PairScorer`.
"""

from __future__ import annotations

from core.retrieval.base import ProgressCallback
from core.retrieval.ensemble import PairScorer, rerank
from core.training.common import ranking_metrics
from core.training.data import LabelledData

__all__ = ["EVAL_DEPTH", "PairScorer", "evaluate_reranker", "rerank"]

EVAL_DEPTH = 100
"""How many of each held-out query's candidates the held-out evaluation re-ranks."""


def evaluate_reranker(
    encoder: PairScorer, data: LabelledData, depth: int = EVAL_DEPTH, progress: ProgressCallback | None = None
) -> dict[str, float]:
    """nDCG@10 and MRR@10 of ``encoder`` re-ranking each query's first ``depth`` candidates."""
    candidates = {
        q: [d for d in data.candidates.get(q, [])[:depth] if d in data.passages]
        for q in data.queries
        if q in data.qrels
    }
    run = rerank([encoder], data.queries, candidates, data.passages, progress=progress)
    return ranking_metrics(run, data.qrels, data.level)
