"""Contributing retrievers: BM25 (bm25s, rank_bm25), dense bi-encoders on FAISS, hybrids.

Every retriever follows one protocol (:class:`core.retrieval.base.Retriever`):
``search(query, k) -> list[Hit]``, ``batch_search(queries, k) -> Run``,
``index(doc_ids, texts)``, ``describe()`` (its resolved configuration, stored
with its run), and the attributes ``name``, ``kind`` and ``context``.  The spec
kinds that build and index them over a stored collection live in
:mod:`pooljudge.retrievers`, one module each.
"""
