"""A retriever with fixed scores per query text, for the hybrid and hierarchical retriever tests."""

from __future__ import annotations

from collections.abc import Mapping

from core.retrieval.base import Hit, trec_order
from core.types import Run


class FakeRetriever:
    """Fixed scores per query text; records what it was indexed with and the k it was asked for."""

    def __init__(self, name: str, results: dict[str, dict[str, float]]) -> None:
        self.name = name
        self.results = results
        self.asked: list[int] = []
        self.indexed: tuple[list[str], list[str]] | None = None

    def index(self, doc_ids, texts, progress=None):  # noqa: ANN001, ANN201
        self.indexed = (list(doc_ids), list(texts))
        if progress is not None:
            progress(len(doc_ids), len(doc_ids))
        return self

    def search(self, query: str, k: int = 10) -> list[Hit]:
        self.asked.append(k)
        return trec_order([Hit(d, s) for d, s in self.results.get(query, {}).items()])[:k]

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress=None) -> Run:  # noqa: ANN001
        run: Run = {}
        for i, (qid, text) in enumerate(queries.items(), start=1):
            run[qid] = {h.doc_id: h.score for h in self.search(text, k)}
            if progress is not None:
                progress(i, len(queries))
        return run
