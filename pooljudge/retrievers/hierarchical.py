"""``hierarchical[:options]``: DAPR's BM25 over whole documents, then a bi-encoder over their passages."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.retrieval.hierarchical import HierarchicalRetriever
from pooljudge import encoders
from pooljudge.corpus import Corpus
from pooljudge.retrievers import bm25, dense
from pooljudge.retrievers.options import (
    CONTEXT,
    RetrieverOption,
    check_alpha,
    check_positive,
    defaults,
    members,
    prefixed,
)

FUSIONS = ("convex", "rrf")
OPTIONS = (
    RetrieverOption("top_docs", int, 100, "documents BM25 keeps per query, whose passages are encoded"),
    RetrieverOption("fusion", str, "convex", "how document and passage scores are fused", choices=FUSIONS),
    RetrieverOption("alpha", float, 0.5, "fusion=convex only: the weight of the document BM25's scores"),
    replace(CONTEXT, help="document context prepended to the passages it encodes"),
    *members(bm25.OPTIONS, "bm25_", drop=("context",)),
    *members(dense.OPTIONS, "dense_", only=encoders.ENCODER_OPTIONS),
)
FIRST_STAGE = True
_DEFAULT = defaults(OPTIONS)


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    check_alpha(options, text, options.get("fusion", _DEFAULT["fusion"]))
    check_positive(options, "top_docs")
    return options


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    """Its ``context`` applies to the passages it encodes; ``bm25_*`` pick the document BM25, ``dense_*`` the encoder."""
    options = spec.options
    kwargs = {k: options[k] for k in ("top_docs", "fusion", "alpha") if k in options}
    return HierarchicalRetriever(
        bm25.bm25_retriever(prefixed(options, "bm25_"), language, "bm25-documents"),
        encoders.encoder_for(encoders.with_default_model(prefixed(options, "dense_"), language)),
        context=options.get("context", _DEFAULT["context"]),
        name=name,
        **kwargs,
    )


def index(retriever, corpus: Corpus, progress=None):
    """Index the corpus passages (documents from their doc ids and positions; the document BM25 is rebuilt
    every time: bm25s indexes ~20k documents/s)."""
    if len(corpus.passages) != len(corpus.doc_ids):
        raise ValueError("hierarchical retrieval needs the corpus passages (doc_id, position): use load_corpus")
    return retriever.index_passages(corpus.passages, texts=corpus.texts_for(retriever.context), progress=progress)
