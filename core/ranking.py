"""trec_eval's ranking order, defined once for every module that ranks documents.

trec_eval (and so pytrec_eval, which :func:`core.metrics.evaluate` uses)
ranks the documents of a query by score descending and breaks ties by
document id descending, comparing ids with ``strcmp`` (byte order of UTF-8,
which equals Python's code-point order of ``str``).  It stores each score as
a C ``float`` (``float sim`` in ``form_res_rels.c``), so two scores that are
equal in single precision, such as ``1.0`` and ``1.0000000001``, are a tie
there and the document ids decide.  A rank computed here with float64
comparisons would disagree with the measures on such near-ties; every rank
in pooljudge (retrieval, fusion, pooling, the detectors, the drill-down and
the analyses) therefore comes from this module.

Scores beyond float32's range become +-inf, as the C conversion does.  A
run's own rank column plays no part.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["rank_positions", "trec_argsort", "trec_ranking", "trec_scores"]


def trec_scores(scores: ArrayLike) -> np.ndarray:
    """Scores as trec_eval compares them: rounded to 32-bit floats.

    Parameters
    ----------
    scores : array_like of float
        Scores in any precision.

    Returns
    -------
    numpy.ndarray of float32
        Same shape; a float32 input is returned as is (no copy).
    """
    arr = np.asarray(scores)
    if arr.dtype == np.float32:
        return arr
    with np.errstate(over="ignore"):  # beyond float32's range is +-inf, as in trec_eval
        return arr.astype(np.float64).astype(np.float32)


def trec_ranking(scores: Mapping[str, float]) -> list[str]:
    """Document ids of one query in trec_eval order.

    Parameters
    ----------
    scores : Mapping[str, float]
        ``{doc_id: score}`` of one query.

    Returns
    -------
    list of str
        Sorted by score descending (compared as 32-bit floats, see the
        module docstring), ties by doc id descending.
    """
    docs = list(scores)
    single = trec_scores([scores[d] for d in docs]).tolist()
    return [docs[i] for i in sorted(range(len(docs)), key=lambda i: (single[i], docs[i]), reverse=True)]


def rank_positions(scores: Mapping[str, float], depth: int | None = None) -> dict[str, int]:
    """1-based trec-order rank of every document of one query.

    Parameters
    ----------
    scores : Mapping[str, float]
        ``{doc_id: score}`` of one query.
    depth : int, optional
        Keep only ranks ``1..depth``.

    Returns
    -------
    dict of str to int
        ``{doc_id: rank}``, in rank order.
    """
    ranked = trec_ranking(scores)
    if depth is not None:
        ranked = ranked[:depth]
    return {doc: rank for rank, doc in enumerate(ranked, start=1)}


def trec_argsort(scores: ArrayLike, id_order: ArrayLike) -> np.ndarray:
    """Positions that put rows in trec_eval order: the array form of :func:`trec_ranking`.

    Parameters
    ----------
    scores : array_like of float, shape (n,)
        Row ``i``'s score.
    id_order : array_like of int, shape (n,)
        Row ``i``'s place among the rows' doc ids sorted ascending (any
        values that order the ids the same way will do).

    Returns
    -------
    numpy.ndarray of int
        ``order`` such that ``order[0]`` is the best row.
    """
    key = trec_scores(scores)
    # lexsort's last key is the primary one: score descending, then doc id descending
    return np.lexsort((-np.asarray(id_order), -key))
