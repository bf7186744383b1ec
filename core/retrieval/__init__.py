"""Contributing retrievers: BM25 (bm25s, rank_bm25), dense bi-encoders on FAISS, hybrids.

Every retriever follows one protocol (:class:`core.retrieval.base.Retriever`):
``search(query, k) -> list[Hit]`` and ``batch_search(queries, k) -> Run``.
"""
