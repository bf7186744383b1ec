"""``hybrid[:options]``: BM25 and dense members fused (rrf, combsum, combmnz, or convex with ``alpha``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.retrieval.hybrid import HybridRetriever
from pooljudge.corpus import Corpus
from pooljudge.retrievers import bm25, dense
from pooljudge.retrievers.options import (
    CONTEXT,
    Preset,
    RetrieverOption,
    check_alpha,
    check_positive,
    defaults,
    members,
    prefixed,
)
from pooljudge.retrievers.registry import index_retriever

FUSIONS = ("rrf", "combsum", "combmnz", "convex")
OPTIONS = (
    RetrieverOption("fusion", str, "rrf", "how the BM25 and dense runs are fused", choices=FUSIONS),
    RetrieverOption("depth", int, 100, "hits of each member fused per query"),
    RetrieverOption("alpha", float, 0.5, "fusion=convex only: the weight of BM25's min-max normalised scores"),
    replace(CONTEXT, help="the default of bm25_context and dense_context"),
    *members(bm25.OPTIONS, "bm25_"),
    *members(dense.OPTIONS, "dense_"),
)
FIRST_STAGE = True
PRESETS = (Preset("Hybrid: BM25 + {model}, reciprocal rank fusion", "fusion=rrf"),)
_DEFAULT = defaults(OPTIONS)


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    check_alpha(options, text, options.get("fusion", _DEFAULT["fusion"]))
    check_positive(options, "depth")
    return options


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    """Its ``context`` is the default of the members' ``bm25_context`` / ``dense_context``."""
    options = spec.options
    context = options.get("context", _DEFAULT["context"])
    bm25_options, dense_options = prefixed(options, "bm25_"), prefixed(options, "dense_")
    members = [
        bm25.bm25_retriever(bm25_options, language, "bm25"),
        dense.dense_retriever(dense_options, "dense", language),
    ]
    members[0].context = bm25_options.get("context", context)
    members[1].context = dense_options.get("context", context)
    return HybridRetriever(
        members,
        fusion=options.get("fusion", _DEFAULT["fusion"]),
        depth=options.get("depth", _DEFAULT["depth"]),
        alpha=options.get("alpha", _DEFAULT["alpha"]),
        name=name,
    )


def index(retriever, corpus: Corpus, progress=None):
    """Index each member as its own kind does (a cached BM25 index is loaded), with its own context."""
    for key, member in list(retriever.retrievers.items()):
        retriever.retrievers[key] = index_retriever(member, corpus, progress=progress)
    return retriever
