"""Re-ranking as a retriever: a first stage's top candidates re-scored by cross-encoders.

:class:`RerankRetriever` follows the :class:`core.retrieval.base.Retriever`
protocol: the first stage (BM25, dense, hybrid...) retrieves ``depth``
passages per query, and one cross-encoder, or the ensemble of several
(:func:`core.retrieval.ensemble.rerank`: the mean of per-query min-max
normalised scores, as DuReader-retrieval combined its re-rankers), orders
them; with ``interpolate=w`` the order is the convex combination of the
first stage's and the re-rankers' per-query min-max normalised scores,
``w`` weighting the first stage (Birch, Yilmaz et al. 2019: BERT scores
interpolated with BM25's; the weight is chosen on held-out queries, see
:func:`choose_interpolation`).  The top ``k`` come back in trec order.  The cross-encoders need the
passages' texts: :meth:`RerankRetriever.index_texts` hands them over (the
pipeline indexes :attr:`RerankRetriever.first` itself and replaces it by
the indexed copy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.fusion import convex, min_max_normalise
from core.held_out import ranking_metrics
from core.ranking import trec_ranking
from core.retrieval.base import Hit, ProgressCallback, Retriever, describe_retriever
from core.retrieval.ensemble import rerank
from core.types import Qrels, Run
from core.validators import positive_int, real_number

__all__ = [
    "INTERPOLATION_GRID",
    "PRIOR_GRID",
    "RerankRetriever",
    "add_prior",
    "choose_interpolation",
    "choose_prior_weight",
    "interpolate_runs",
]

INTERPOLATION_GRID = tuple(i / 10 for i in range(11))
"""The first-stage weights :func:`choose_interpolation` tries: 0, 0.1, ..., 1."""
PRIOR_GRID = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
"""Weights :func:`choose_prior_weight` tries: logit units, from none to nearly the first stage's order."""


def interpolate_runs(first: Run, reranked: Run, weight: float) -> Run:
    """Each query's re-ranked candidates scored ``weight * first + (1 - weight) * reranked``, both min-max normalised.

    Only the re-ranked candidates take part (a first-stage hit that was not
    re-ranked is left out); ``weight`` 0 keeps the re-ranker's raw scores.

    Examples
    --------
    >>> interpolate_runs({"q": {"a": 3.0, "b": 1.0, "c": 0.5}}, {"q": {"a": -2.0, "b": 4.0}}, 0.25)
    {'q': {'b': 0.75, 'a': 0.25}}
    """
    w = real_number(weight, "interpolate", low=0, high=1)
    if w == 0:
        return {q: dict(docs) for q, docs in reranked.items()}
    kept = {q: {d: first.get(q, {}).get(d, 0.0) for d in docs} for q, docs in reranked.items()}
    return convex(kept, reranked, alpha=w)


def choose_interpolation(
    first: Run, reranked: Run, qrels: Qrels, level: int = 1, grid: Sequence[float] = INTERPOLATION_GRID
) -> tuple[float, dict[float, float]]:
    """The first-stage weight in ``grid`` with the best nDCG@10 on ``qrels``'s queries, and every weight's nDCG@10.

    Ties go to the smaller weight (the re-ranker alone when it is as good).
    Choose it on queries that neither trained the re-ranker nor are
    reported (a dev split).

    Examples
    --------
    The re-ranker alone puts the relevant ``a`` second; half and half, or
    the first stage alone, put it first; the smaller weight wins the tie:

    >>> first = {"q": {"a": 2.0, "b": 0.0, "c": 1.0}}
    >>> reranked = {"q": {"a": 0.8, "b": 1.0, "c": 0.0}}
    >>> best, scores = choose_interpolation(first, reranked, {"q": {"a": 1}}, grid=(0.0, 0.5, 1.0))
    >>> best, {w: round(v, 4) for w, v in scores.items()}
    (0.5, {0.0: 0.6309, 0.5: 1.0, 1.0: 1.0})
    """
    return _best_weight(first, reranked, qrels, level, grid, interpolate_runs)


def add_prior(first: Run, reranked: Run, weight: float) -> Run:
    """Each re-ranked candidate's score plus ``weight`` times its min-max normalised first-stage score.

    A log-linear combination: on a re-ranker's logits it multiplies the
    re-ranker's softmax by the first stage's evidence, so it keeps the
    logits' scale (what a listwise distillation target needs; the convex
    :func:`interpolate_runs` maps everything into [0, 1]).  The first stage
    is normalised over each query's whole ``first`` list; a candidate
    missing from it gets 0.

    Examples
    --------
    >>> add_prior({"q": {"a": 3.0, "b": 1.0}}, {"q": {"a": -2.0, "b": 4.0, "c": 0.0}}, 2.0)
    {'q': {'a': 0.0, 'b': 4.0, 'c': 0.0}}
    """
    w = real_number(weight, "prior weight", low=0)
    normalised = min_max_normalise({q: first[q] for q in reranked if q in first})
    return {q: {d: s + w * normalised.get(q, {}).get(d, 0.0) for d, s in docs.items()} for q, docs in reranked.items()}


def choose_prior_weight(
    first: Run, reranked: Run, qrels: Qrels, level: int = 1, grid: Sequence[float] = PRIOR_GRID
) -> tuple[float, dict[float, float]]:
    """:func:`choose_interpolation` for :func:`add_prior`: the weight in ``grid`` with the best nDCG@10 on ``qrels``.

    ``reranked`` should hold a re-ranker's raw logits (``CrossEncoder.score``).

    Examples
    --------
    >>> first = {"q": {"a": 2.0, "b": 0.0, "c": 1.0}}
    >>> best, scores = choose_prior_weight(first, {"q": {"a": 0.0, "b": 1.0, "c": -1.0}}, {"q": {"a": 1}}, grid=(0, 2))
    >>> best, {w: round(v, 4) for w, v in scores.items()}
    (2.0, {0.0: 0.6309, 2.0: 1.0})
    """
    return _best_weight(first, reranked, qrels, level, grid, add_prior)


def _best_weight(
    first: Run,
    reranked: Run,
    qrels: Qrels,
    level: int,
    grid: Sequence[float],
    combine: Callable[[Run, Run, float], Run],
) -> tuple[float, dict[float, float]]:
    """The weight of ``grid`` whose ``combine(first, reranked, w)`` has the best nDCG@10 (ties: the smaller)."""
    if not grid:
        raise ValueError("grid: need at least one weight")
    judged = {q: docs for q, docs in reranked.items() if q in qrels}
    scores = {float(w): ranking_metrics(combine(first, judged, w), qrels, level)["nDCG@10"] for w in grid}
    best = max(scores, key=lambda w: (scores[w], -w))
    return best, scores


class RerankRetriever:
    """A first-stage retriever whose top ``depth`` passages are re-scored by cross-encoders.

    Parameters
    ----------
    first : Retriever
        The first stage (already indexed, or indexed by the caller later and
        assigned to :attr:`first`).
    rerankers : sequence of CrossEncoder
        One re-ranker (its raw scores), or several (the mean of their per-query
        min-max normalised scores).
    depth : int, default 100
        How many first-stage passages each query re-ranks; a search for
        ``k > depth`` re-ranks ``k`` so the list can be filled.
    name : str, default "rerank"
        The retriever's name (its run tag).
    interpolate : float, default 0
        The first stage's weight in :func:`interpolate_runs` (0: the
        re-rankers alone).

    Attributes
    ----------
    first : Retriever
        The first stage (public: the pipeline replaces it by its indexed copy).
    rerankers : list
    depth : int
    """

    kind = "rerank"
    context: str | None = None
    """The passage context its texts are indexed with (set by :mod:`pooljudge.retrievers`); ``None``: the corpus default."""

    def __init__(
        self,
        first: Retriever,
        rerankers: Sequence[Any],
        *,
        depth: int = 100,
        name: str = "rerank",
        interpolate: float = 0.0,
    ) -> None:
        if not hasattr(first, "batch_search"):
            raise TypeError(f"first must be a Retriever (with batch_search), got {type(first).__name__}")
        rerankers = list(rerankers)
        if not rerankers:
            raise ValueError("rerankers: need at least one cross-encoder")
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty str")
        self.first = first
        self.rerankers = rerankers
        self.depth = positive_int(depth, "depth")
        self.name = name
        self.interpolate = real_number(interpolate, "interpolate", low=0, high=1)
        self._texts: dict[str, str] = {}

    def index(
        self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None
    ) -> RerankRetriever:
        """Index the first stage with ``texts`` and keep them for the cross-encoders; returns ``self``."""
        self.first.index(doc_ids, texts, progress=progress)
        return self.index_texts(doc_ids, texts)

    def describe(self) -> dict[str, Any]:
        """The first stage's description and each cross-encoder's folder and fingerprint (which weights ranked)."""
        return describe_retriever(
            self,
            first=self.first.describe(),
            models=[
                {"path": str(e.path), "fingerprint": e.fingerprint, "max_length": e.max_length} for e in self.rerankers
            ],
        )

    def __repr__(self) -> str:
        return (
            f"RerankRetriever(first={getattr(self.first, 'name', type(self.first).__name__)!r}, "
            f"rerankers={len(self.rerankers)}, depth={self.depth}, interpolate={self.interpolate}, name={self.name!r})"
        )

    @property
    def params(self) -> dict[str, Any]:
        """The depth, the re-rankers' fingerprints (which define the scores) and the first stage's name."""
        params: dict[str, Any] = {
            "depth": self.depth,
            "models": [getattr(r, "fingerprint", None) for r in self.rerankers],
            "first": getattr(self.first, "name", type(self.first).__name__),
        }
        if self.interpolate:  # absent at 0, so that stored runs of plain re-rankers keep their parameters
            params["interpolate"] = self.interpolate
        return params

    def index_texts(self, doc_ids: Sequence[str], texts: Sequence[str]) -> RerankRetriever:
        """Remember the passages' texts (what the cross-encoders read); replaces earlier texts."""
        doc_ids, texts = list(doc_ids), list(texts)
        if len(doc_ids) != len(texts):
            raise ValueError(f"doc_ids ({len(doc_ids)}) and texts ({len(texts)}) differ in length")
        self._texts = dict(zip(doc_ids, texts, strict=True))
        return self

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Top ``k`` re-ranked hits for one query, in trec order."""
        run = self.batch_search({"q": query}, k)
        return [Hit(d, s) for d, s in run["q"].items()]

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None) -> Run:
        """``first.batch_search(queries, depth)`` re-scored by the cross-encoders, top ``k`` per query in trec order.

        ``progress(done, total)`` runs over ``2 * len(queries)``: the first
        half for the first stage's queries, the second for the pairs scored
        (in proportion).

        Raises
        ------
        ValueError
            When a retrieved passage has no text (:meth:`index_texts` was not
            called with the first stage's corpus).
        """
        positive_int(k, "k")
        n = len(queries)
        total = 2 * n

        def first_progress(done: int, _total: int) -> None:
            if progress is not None:
                progress(min(done, n), total)

        first_run = self.first.batch_search(queries, max(self.depth, k), progress=first_progress if progress else None)
        candidates = {q: list(first_run.get(q, {})) for q in queries}
        if progress is not None:
            progress(n, total)

        def rerank_progress(done: int, pairs: int) -> None:
            if progress is not None:
                progress(n + (n * done // pairs if pairs else n), total)

        scored = rerank(
            self.rerankers, queries, candidates, self._texts, progress=rerank_progress if progress else None
        )
        scored = interpolate_runs(first_run, scored, self.interpolate)
        out: Run = {}
        for qid in queries:
            docs = scored.get(qid, {})
            out[qid] = {d: docs[d] for d in trec_ranking(docs)[:k]}
        if progress is not None:
            progress(total, total)
        return out
