"""``hierarchical[:options]``: DAPR's BM25 over whole documents, then a bi-encoder over their passages."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pooljudge import encoders
from pooljudge.corpus import Corpus
from pooljudge.retrievers import bm25, dense
from pooljudge.retrievers.options import check_fusion, check_positive, prefixed

OPTIONS: dict[str, type] = {
    "top_docs": int,
    "fusion": str,
    "alpha": float,
    "context": str,
    **{f"bm25_{k}": v for k, v in bm25.OPTIONS.items() if k != "context"},
    **{f"dense_{k}": dense.OPTIONS[k] for k in encoders.ENCODER_OPTIONS},
}
FIRST_STAGE = True
FUSIONS = ("convex", "rrf")


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    check_fusion("hierarchical", options, text, FUSIONS, "convex")
    check_positive(options, "top_docs")
    return options


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    """Its ``context`` applies to the passages it encodes; ``bm25_*`` pick the document BM25, ``dense_*`` the encoder."""
    from core.retrieval.hierarchical import HierarchicalRetriever

    options = spec.options
    kwargs = {k: options[k] for k in ("top_docs", "fusion", "alpha") if k in options}
    return HierarchicalRetriever(
        bm25.bm25_retriever(prefixed(options, "bm25_"), language, "bm25-documents"),
        encoders.encoder_for(encoders.with_default_model(prefixed(options, "dense_"), language)),
        context=options.get("context", "title"),
        name=name,
        **kwargs,
    )


def index(retriever, corpus: Corpus, progress=None):
    """Index the corpus passages (documents from their doc ids and positions; the document BM25 is rebuilt
    every time: bm25s indexes ~20k documents/s)."""
    if len(corpus.passages) != len(corpus.doc_ids):
        raise ValueError("hierarchical retrieval needs the corpus passages (doc_id, position): use load_corpus")
    return retriever.index_passages(corpus.passages, texts=corpus.texts_for(retriever.context), progress=progress)
