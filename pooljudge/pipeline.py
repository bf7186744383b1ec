"""Retrieval over a stored collection: a retriever spec in, a run out (the glue between ``core`` and ``db``).

Used by the CLI (``pooljudge index / retrieve``) and by the pooling job
(:mod:`pooljudge.pool_job`).  Retrievers are described by spec strings
(:class:`pooljudge.retrievers.RetrieverSpec`; one module per kind in
:mod:`pooljudge.retrievers`) so that a job's parameters are plain JSON::

    bm25                                   BM25 (bm25s), analyzer from the collection language
    bm25:chinese=bigram,k1=1.2,b=0.75      CJK character bigrams, other BM25 parameters
    bm25:backend=rank_bm25                 the rank_bm25 backend
    dense                                  all-MiniLM-L6-v2 from the packaged weights, exact FAISS search
    dense:model=/path/to/encoder,pooling=cls,index=hnsw,query_prefix=query: ,max_length=512
    bm25:name=bm25-title                   any retriever: the run's name
    hybrid:fusion=rrf                      BM25 + default dense, fused (rrf, combsum, combmnz)
    hybrid:fusion=convex,alpha=0.3         0.3 * min-max BM25 + 0.7 * min-max dense (DAPR's hybrid)
    hierarchical:top_docs=50,alpha=0.5     DAPR: BM25 over whole documents, then the dense encoder
                                           over the passages of the top 50, scores fused (fusion=convex
                                           with alpha weighting BM25, or fusion=rrf); dense_* options
                                           pick the encoder, bm25_* the document BM25
    bm25:context=title+keyphrases          any retriever: document context prepended to passage texts
                                           (title, the default; keyphrases; title+keyphrases; none);
                                           a hybrid's bm25_context / dense_context set one member's;
                                           hierarchical's applies to the passages it encodes
    rerank:model=PATH,first=bm25,depth=100 a cross-encoder re-ranking the first stage's top ``depth``
                                           (first: bm25, dense, hybrid or hierarchical; first_* options
                                           go to the first stage's spec, e.g. first_chinese=bigram);
    rerank:model=PATH1;PATH2               an ensemble: the mean of per-query min-max normalised scores
                                           (DuReader-retrieval); a model is a folder or the name of a
                                           model registered in the collection (pooljudge models)

Indexes are cached on disk keyed by the corpus content and the retriever
parameters (BM25 index folders; dense passage embeddings), so a repeated
run only searches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.types import Run
from db.engine import Store
from pooljudge.corpus import load_corpus
from pooljudge.encoders import models_text
from pooljudge.models_lookup import reranker_folder
from pooljudge.retrievers import RetrieverSpec, build_retriever, index_retriever

Progress = Callable[[int, int], None]


def retrieve(
    store: Store,
    collection: str,
    spec: RetrieverSpec,
    *,
    k: int = 100,
    name: str | None = None,
    split: str | None = None,
    progress: Callable[[str], Progress] | None = None,
) -> tuple[str, Run, dict[str, Any]]:
    """Index the collection with ``spec`` and search all its queries (or one split's).

    Returns the run name, the run, and the retriever's full configuration (its ``describe()``).
    """
    stage = progress or (lambda _label: lambda _d, _t: None)
    corpus = load_corpus(store, collection, split=split)
    retriever = build_retriever(
        spec, corpus.language, name=name, resolve=lambda model: reranker_folder(store, collection, model)
    )
    models = models_text(retriever.describe())  # the stage labels say which model encodes
    label = f"{retriever.name} ({models})" if models else retriever.name
    retriever = index_retriever(retriever, corpus, progress=stage(f"indexing {label}"))
    run = retriever.batch_search(corpus.queries, k, progress=stage(f"searching {label}"))
    return retriever.name, run, retriever.describe()


def check_new_run_name(store: Store, collection: str, name: str) -> str:
    """Refuse a run name that is bad (:func:`db.importer.check_run_name`) or exists (or is being imported)."""
    from db.importer import check_run_name
    from db.runs import run_name

    check_run_name(name)
    with store.read() as session:
        taken = run_name(session, collection, name)
    if taken is not None and taken.ready:
        raise ValueError(f"run {name!r} already exists in {collection!r}; give the new run another name")
    if taken is not None:
        raise ValueError(
            f"run {name!r} is being imported into {collection!r} (or a crashed import left it); "
            "give the new run another name"
        )
    return name
