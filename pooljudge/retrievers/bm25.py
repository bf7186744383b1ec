"""``bm25[:options]``: BM25 (bm25s or rank_bm25), the analyzer from the collection language."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pooljudge.corpus import Corpus

OPTIONS: dict[str, type] = {
    "chinese": str,
    "k1": float,
    "b": float,
    "method": str,
    "idf_method": str,
    "backend": str,
    "epsilon": float,
    "delta": float,
    "stem": bool,
    "context": str,
}
FIRST_STAGE = True
"""A re-ranker may re-rank it."""


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    """Nothing beyond the option types (bm25s refuses a bad ``method`` when built)."""
    return options


def bm25_retriever(options: Mapping[str, Any], language: str, name: str):
    """A :class:`core.retrieval.bm25.BM25Retriever` from BM25 options (a hybrid's members, a document index)."""
    from core.retrieval.bm25 import BM25Retriever
    from core.text import analyzer_for

    analyzer = analyzer_for(language, chinese=options.get("chinese", "jieba"), stem=options.get("stem", True))
    params = {k: options[k] for k in ("k1", "b", "method", "idf_method", "backend", "epsilon", "delta") if k in options}
    return BM25Retriever(analyzer, name=name, **params)


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    retriever = bm25_retriever(spec.options, language, name)
    retriever.context = spec.options.get("context", "title")
    return retriever


def index(retriever, corpus: Corpus, progress=None):
    """Index ``corpus``, or load the cached index: cached under ``cache_dir("bm25")`` by content and parameters.

    The key holds the passage texts and ids, the BM25 and the analyzer parameters; the loaded
    copy keeps the retriever's name and context.
    """
    from core.atomic import atomic_folder
    from core.cache import cache_dir, content_key
    from core.retrieval.bm25 import BM25Retriever

    texts = corpus.texts_for(retriever.context)
    key = content_key(
        texts,
        params={"ids": content_key(corpus.doc_ids), "bm25": retriever.params, "analyzer": retriever.analyzer.params},
    )
    folder = cache_dir("bm25") / key
    if (folder / "meta.json").exists():
        loaded = BM25Retriever.load(folder, name=retriever.name)
        loaded.context = retriever.context
        return loaded
    retriever.index(corpus.doc_ids, texts, progress=progress)
    # a concurrent reader never sees half an index; a process that loses the race keeps its equal copy in memory
    atomic_folder(folder, retriever.save)
    return retriever
