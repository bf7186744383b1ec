"""Re-ranking as a retriever: a first stage's top candidates re-scored by cross-encoders.

:class:`RerankRetriever` follows the :class:`core.retrieval.base.Retriever`
protocol: the first stage (BM25, dense, hybrid...) retrieves ``depth``
passages per query, and one cross-encoder, or the ensemble of several
(:func:`core.training.cross_encoder.rerank`: the mean of per-query min-max
normalised scores, as DuReader-retrieval combined its re-rankers), orders
them.  The top ``k`` come back in trec order.  The cross-encoders need the
passages' texts: :meth:`RerankRetriever.index_texts` hands them over (the
pipeline indexes :attr:`RerankRetriever.first` itself and replaces it by
the indexed copy).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.retrieval.base import Hit, ProgressCallback, Retriever, describe_retriever
from core.types import Run
from core.validators import positive_int

__all__ = ["RerankRetriever"]


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

    def __init__(self, first: Retriever, rerankers: Sequence[Any], *, depth: int = 100, name: str = "rerank") -> None:
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
            f"rerankers={len(self.rerankers)}, depth={self.depth}, name={self.name!r})"
        )

    @property
    def params(self) -> dict[str, Any]:
        """The depth, the re-rankers' fingerprints (which define the scores) and the first stage's name."""
        return {
            "depth": self.depth,
            "models": [getattr(r, "fingerprint", None) for r in self.rerankers],
            "first": getattr(self.first, "name", type(self.first).__name__),
        }

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
        from core.ranking import trec_ranking
        from core.training.cross_encoder import rerank

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
        out: Run = {}
        for qid in queries:
            docs = scored.get(qid, {})
            out[qid] = {d: docs[d] for d in trec_ranking(docs)[:k]}
        if progress is not None:
            progress(total, total)
        return out
