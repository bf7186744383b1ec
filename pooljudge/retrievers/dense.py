"""``dense[:options]``: a bi-encoder over a FAISS index (by default all-MiniLM-L6-v2 for English, else multilingual-e5-small).

``pooling``, ``normalize``, ``max_length``, ``query_prefix`` and ``passage_prefix`` left out
come from the model folder's sentence-transformers files when it has them
(:func:`core.retrieval.st_config.read_conventions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pooljudge import encoders
from pooljudge.corpus import Corpus

OPTIONS: dict[str, type] = {
    "model": str,
    "pooling": str,
    "normalize": bool,
    "index": str,
    "max_length": int,
    "batch_size": int,
    "query_prefix": str,
    "passage_prefix": str,
    "nprobe": int,
    "ef_search": int,
    "context": str,
}
FIRST_STAGE = True


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    """Nothing beyond the option types (the encoder and index refuse bad values when built)."""
    return options


def dense_retriever(options: Mapping[str, Any], name: str, language: str | None = None):
    """A :class:`core.retrieval.dense.DenseRetriever` from dense options (also a hybrid's member).

    Without a ``model`` option the encoder is the collection language's default
    (:func:`pooljudge.encoders.default_model`: multilingual-e5-small unless English).
    """
    from core.retrieval.dense import DenseRetriever

    kwargs = {k: options[k] for k in ("nprobe", "ef_search") if k in options}
    encoder = encoders.encoder_for(encoders.with_default_model(options, language))
    return DenseRetriever(encoder, index=options.get("index", "flat"), name=name, **kwargs)


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    retriever = dense_retriever(spec.options, name, language)
    retriever.context = spec.options.get("context", "title")
    return retriever


def index(retriever, corpus: Corpus, progress=None):
    """Encode the passage texts of its context (the embeddings are cached on disk by the encoder)."""
    retriever.index(corpus.doc_ids, corpus.texts_for(retriever.context), progress=progress)
    return retriever
