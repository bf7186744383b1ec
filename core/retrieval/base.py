"""The one retriever protocol shared by BM25, dense and hybrid retrievers."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol, runtime_checkable

from core.ranking import trec_ranking
from core.types import Run

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` during long operations (encoding, indexing, searching)."""


class Hit(NamedTuple):
    """One retrieved passage: its id and score (higher is better)."""

    doc_id: str
    score: float


@runtime_checkable
class Retriever(Protocol):
    """What every contributing retriever offers.

    ``batch_search`` takes ``{query_id: query_text}`` and returns a
    :data:`core.types.Run`; within a query, hits are ordered by score
    descending, ties by doc id descending (trec_eval's order).
    """

    name: str

    def search(self, query: str, k: int = 10) -> list[Hit]: ...

    def batch_search(
        self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None
    ) -> Run: ...


def trec_order(hits: list[Hit]) -> list[Hit]:
    """Sort hits as trec_eval ranks them (:func:`core.ranking.trec_ranking`).

    Score descending, compared as 32-bit floats, then doc id descending; the
    hits keep their own scores.  Doc ids are distinct within one query.
    """
    by_id = {h.doc_id: h for h in hits}
    if len(by_id) != len(hits):
        raise ValueError("hits of one query must have distinct doc ids")
    return [by_id[d] for d in trec_ranking({h.doc_id: h.score for h in hits})]
