"""Scoring candidate lists with cross-encoders: one re-ranker's scores, or an ensemble's.

:func:`rerank` scores candidate lists with one re-ranker, or with several
whose per-query min-max normalised scores are averaged (DuReader-retrieval's
ensemble of re-rankers).  It takes anything that scores (query, passage)
pairs (:class:`PairScorer`), a :class:`core.training.cross_encoder.CrossEncoder`
in practice.  :class:`core.retrieval.rerank.RerankRetriever` re-ranks with it,
and so does training's held-out evaluation (:mod:`core.training.reranking`),
which is why it lives with retrieval, below training.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

import numpy as np

from core.retrieval.base import ProgressCallback
from core.types import Run

__all__ = ["PairScorer", "rerank"]


class PairScorer(Protocol):
    """What :func:`rerank` needs of a re-ranker: one relevance score per (query text, passage text) pair."""

    def score(self, pairs: Sequence[tuple[str, str]], *, progress: ProgressCallback | None = None) -> np.ndarray:
        """One score per pair, in order; ``progress(done, total)`` over the pairs scored."""
        ...


def _minmax(scores: np.ndarray) -> np.ndarray:
    """Min-max normalise to [0, 1]; all-equal scores carry no preference and become 0."""
    low, high = float(scores.min()), float(scores.max())
    if high == low:
        return np.zeros_like(scores, dtype=np.float64)
    return (scores.astype(np.float64) - low) / (high - low)


def rerank(
    encoders: Sequence[PairScorer],
    queries: Mapping[str, str],
    candidates: Mapping[str, Sequence[str]],
    passages: Mapping[str, str],
    *,
    progress: ProgressCallback | None = None,
) -> Run:
    """Score each query's candidates with one re-ranker, or an ensemble of several.

    One encoder: its raw logits.  Several: for each query, each encoder's
    scores are min-max normalised over the query's candidates and the
    normalised scores are averaged (DuReader-retrieval's ensemble; logits of
    different models are on different scales, so they are not averaged raw)::

        s(q, p) = 1/M * sum_m (s_m(q, p) - min_p' s_m(q, p')) / (max_p' s_m(q, p') - min_p' s_m(q, p'))

    Parameters
    ----------
    encoders : sequence of PairScorer
        At least one (anything with ``score(pairs, progress=)`` works: :class:`PairScorer`).
    queries : mapping
        ``{query_id: text}``; every query of ``candidates`` needs one.
    candidates : mapping
        ``{query_id: [passage_id, ...]}`` (duplicates are scored once).
    passages : mapping
        ``{passage_id: text}``; every candidate needs one.
    progress : callable, optional
        ``progress(done, total)`` over pairs scored, ``total`` = pairs times encoders.

    Returns
    -------
    Run
        ``{query_id: {passage_id: score}}`` for every query of ``candidates``.

    Raises
    ------
    ValueError
        With no encoders, a query or passage without a text, or a score that
        is not finite (a model whose weights or forward pass overflowed: its
        ranking would be arbitrary); the message names them.
    """
    if not encoders:
        raise ValueError("encoders: need at least one cross-encoder")
    keys = _candidate_pairs(queries, candidates, passages)
    pairs = [(queries[q], passages[d]) for q, d in keys]
    all_scores = _score_with_each(encoders, pairs, progress, keys)
    run: Run = {q: {} for q in candidates}
    start = 0
    for qid in candidates:
        n = len(dict.fromkeys(candidates[qid]))
        rows = keys[start : start + n]
        if len(encoders) == 1:
            values = all_scores[0][start : start + n].astype(np.float64)
        else:
            values = np.mean([_minmax(s[start : start + n]) for s in all_scores], axis=0) if n else np.empty(0)
        run[qid] = {d: float(v) for (_, d), v in zip(rows, values, strict=True)}
        start += n
    return run


def _candidate_pairs(
    queries: Mapping[str, str], candidates: Mapping[str, Sequence[str]], passages: Mapping[str, str]
) -> list[tuple[str, str]]:
    """``(query id, passage id)`` of every query's candidates, duplicates dropped, in order; texts checked."""
    missing_q = [q for q in candidates if q not in queries]
    if missing_q:
        raise ValueError(f"queries: no text for {len(missing_q)} candidate queries, e.g. {missing_q[:3]}")
    keys: list[tuple[str, str]] = []
    for qid, docs in candidates.items():
        keys.extend((qid, d) for d in dict.fromkeys(docs))
    missing_p = sorted({d for _, d in keys if d not in passages})
    if missing_p:
        raise ValueError(f"passages: no text for {len(missing_p)} candidates, e.g. {missing_p[:3]}")
    return keys


def _score_with_each(
    encoders: Sequence[PairScorer],
    pairs: list[tuple[str, str]],
    progress: ProgressCallback | None,
    keys: list[tuple[str, str]],
) -> list[np.ndarray]:
    """Every encoder's scores of ``pairs`` (``keys``: their ids), checked finite; ``progress`` over all of them."""
    total = len(pairs) * len(encoders)
    all_scores = []
    for m, encoder in enumerate(encoders):

        def enc_progress(done: int, _total: int, offset: int = m * len(pairs)) -> None:
            if progress is not None:
                progress(offset + done, total)

        all_scores.append(np.asarray(encoder.score(pairs, progress=enc_progress if progress else None)))
        _check_finite(all_scores[-1], encoder, keys)
    if progress is not None:
        progress(total, total)
    return all_scores


def _check_finite(scores: np.ndarray, encoder: PairScorer, keys: list[tuple[str, str]]) -> None:
    """Refuse NaN or infinite scores: trec_eval would rank them in an arbitrary order and still report a number."""
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        qid, doc = keys[int(bad[0])]
        raise ValueError(
            f"re-ranker {encoder!r}: {bad.size} of {len(scores)} scores are not finite, the first "
            f"{scores[bad[0]]} for query {qid!r}, passage {doc!r}"
        )
