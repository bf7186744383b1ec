"""``dense[:options]``: a bi-encoder over a FAISS index (by default all-MiniLM-L6-v2 for English, else multilingual-e5-small).

``pooling``, ``normalize``, ``max_length``, ``query_prefix`` and ``passage_prefix`` left out
come from the model folder's sentence-transformers files when it has them
(:func:`core.retrieval.st_config.read_conventions`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, get_args

from core.retrieval.dense import DenseRetriever, IndexType
from core.retrieval.encoder import Pooling
from pooljudge import encoders
from pooljudge.corpus import Corpus
from pooljudge.retrievers.options import CONTEXT, Preset, RetrieverOption, defaults

OPTIONS = (
    RetrieverOption(
        "model",
        str,
        help="a bi-encoder folder, or a bundled model's name (all-MiniLM-L6-v2, multilingual-e5-small); "
        "default: the collection language's bundled model",
    ),
    RetrieverOption(
        "pooling", str, help="token pooling (default: the model folder's, else mean)", choices=get_args(Pooling)
    ),
    RetrieverOption("normalize", bool, help="unit-length vectors (default: the model folder's, else true)"),
    RetrieverOption("index", str, "flat", "exact search, or approximate HNSW or IVF", choices=get_args(IndexType)),
    RetrieverOption("max_length", int, help="tokens kept per text (default: the model folder's)"),
    RetrieverOption("batch_size", int, 32, "texts encoded per batch"),
    RetrieverOption("query_prefix", str, help="text put before each query (default: the model folder's prompt)"),
    RetrieverOption("passage_prefix", str, help="text put before each passage (default: the model folder's prompt)"),
    RetrieverOption("nprobe", int, help="ivf: cells visited per query (default: a quarter of the cells)"),
    RetrieverOption("ef_search", int, 128, "hnsw: the search beam width"),
    CONTEXT,
)
FIRST_STAGE = True
PRESETS = (Preset("Dense: {model} (packaged, offline)"),)
_DEFAULT = defaults(OPTIONS)


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    """Nothing beyond the option types (the encoder and index refuse bad values when built)."""
    return options


def dense_retriever(options: Mapping[str, Any], name: str, language: str | None = None):
    """A :class:`core.retrieval.dense.DenseRetriever` from dense options (also a hybrid's member).

    Without a ``model`` option the encoder is the collection language's default
    (:func:`pooljudge.encoders.default_model`: multilingual-e5-small unless English).
    """
    kwargs = {k: options[k] for k in ("nprobe", "ef_search") if k in options}
    encoder = encoders.encoder_for(encoders.with_default_model(options, language))
    return DenseRetriever(encoder, index=options.get("index", _DEFAULT["index"]), name=name, **kwargs)


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    retriever = dense_retriever(spec.options, name, language)
    retriever.context = spec.options.get("context", _DEFAULT["context"])
    return retriever


def index(retriever, corpus: Corpus, progress=None):
    """Encode the passage texts of its context (the embeddings are cached on disk by the encoder)."""
    retriever.index(corpus.doc_ids, corpus.texts_for(retriever.context), progress=progress)
    return retriever
