"""Held-out ranking quality: the nDCG@10 and MRR@10 training and weight choices are judged by.

Below both :mod:`core.retrieval` (choosing a re-ranker's interpolation weight) and
:mod:`core.training` (picking checkpoints, early stopping), which both measure with it.
"""

from __future__ import annotations

from core.metrics import evaluate
from core.types import Qrels, Run

__all__ = ["METRICS", "ranking_metrics"]

METRICS = ("nDCG@10", "MRR@10")
"""What :func:`ranking_metrics` reports (``core.metrics`` spellings)."""


def ranking_metrics(run: Run, qrels: Qrels, level: int = 1) -> dict[str, float]:
    """Held-out nDCG@10 and MRR@10 of ``run``, averaged over the judged queries (trec_eval ``-c``).

    Queries in ``qrels`` the run lacks count as 0 (a trainer must not look
    better by dropping hard queries); run queries without labels are ignored.

    Parameters
    ----------
    run : Run
        ``{query_id: {passage_id: score}}``.
    qrels : Qrels
        ``{query_id: {passage_id: grade}}``; queries without judgments are left out.
    level : int, optional
        The lowest grade MRR counts as relevant.

    Returns
    -------
    dict
        ``{"nDCG@10": x, "MRR@10": y}``; both are 0.0 when ``qrels`` is empty.
    """
    judged = {q: j for q, j in qrels.items() if j}
    if not judged:
        return {m: 0.0 for m in METRICS}
    results = evaluate(judged, {q: r for q, r in run.items() if q in judged}, list(METRICS), level=level)
    return {m: float(results[m].get("all", 0.0)) for m in METRICS}
