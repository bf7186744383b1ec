"""``bm25[:options]``: BM25 (bm25s or rank_bm25), the analyzer from the collection language."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from core.atomic import atomic_folder
from core.cache import cache_dir, content_key
from core.retrieval.bm25 import BACKENDS, BM25Retriever
from core.text import analyzer_for
from pooljudge.corpus import Corpus
from pooljudge.retrievers.options import CONTEXT, Preset, RetrieverOption, defaults

OPTIONS = (
    RetrieverOption(
        "chinese",
        str,
        "jieba",
        "how CJK runs become terms (Chinese and mixed collections): jieba words, jieba's search mode, "
        "or character bigrams",
        choices=("jieba", "jieba_search", "bigram"),
    ),
    RetrieverOption("k1", float, 1.5, "term-frequency saturation"),
    RetrieverOption("b", float, 0.75, "length normalisation, in [0, 1]"),
    RetrieverOption(
        "method",
        str,
        help="the BM25 variant: robertson, lucene (default), atire, bm25l or bm25+ with bm25s; "
        "okapi (default), bm25l or bm25+ with rank_bm25",
    ),
    RetrieverOption("idf_method", str, help="bm25s only: the idf variant (default: the method's)"),
    RetrieverOption(
        "backend", str, "bm25s", "bm25s (fast) or rank_bm25 (kept for parity checks)", choices=tuple(BACKENDS)
    ),
    RetrieverOption("epsilon", float, 0.25, "rank_bm25 okapi only: negative idfs become epsilon * mean idf"),
    RetrieverOption("delta", float, 0.5, "the delta of bm25l and bm25+"),
    RetrieverOption("stem", bool, True, "Snowball English stemming of words"),
    CONTEXT,
)
FIRST_STAGE = True
"""A re-ranker may re-rank it."""
PRESETS = (
    Preset("BM25 (jieba words / English stems)", ""),
    Preset("BM25 (CJK character bigrams)", "chinese=bigram"),
)
_DEFAULT = defaults(OPTIONS)


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    """Nothing beyond the option types (bm25s refuses a bad ``method`` when built)."""
    return options


def bm25_retriever(options: Mapping[str, Any], language: str, name: str):
    """A :class:`core.retrieval.bm25.BM25Retriever` from BM25 options (a hybrid's members, a document index)."""
    analyzer = analyzer_for(
        language, chinese=options.get("chinese", _DEFAULT["chinese"]), stem=options.get("stem", _DEFAULT["stem"])
    )
    params = {k: options[k] for k in ("k1", "b", "method", "idf_method", "backend", "epsilon", "delta") if k in options}
    return BM25Retriever(analyzer, name=name, **params)


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    retriever = bm25_retriever(spec.options, language, name)
    retriever.context = spec.options.get("context", _DEFAULT["context"])
    return retriever


def index(retriever, corpus: Corpus, progress=None):
    """Index ``corpus``, or load the cached index: cached under ``cache_dir("bm25")`` by content and parameters.

    The key holds the passage texts and ids, the BM25 and the analyzer parameters; the loaded
    copy keeps the retriever's name and context.
    """
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
