"""``hybrid[:options]``: BM25 and dense members fused (rrf, combsum, combmnz, or convex with ``alpha``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pooljudge.corpus import Corpus
from pooljudge.retrievers import bm25, dense
from pooljudge.retrievers.options import check_fusion, check_positive, prefixed

OPTIONS: dict[str, type] = {
    "fusion": str,
    "depth": int,
    "alpha": float,
    "context": str,
    **{f"bm25_{k}": v for k, v in bm25.OPTIONS.items()},
    **{f"dense_{k}": v for k, v in dense.OPTIONS.items()},
}
FIRST_STAGE = True
FUSIONS = ("rrf", "combsum", "combmnz", "convex")


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    check_fusion("hybrid", options, text, FUSIONS, "rrf")
    check_positive(options, "depth")
    return options


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    """Its ``context`` is the default of the members' ``bm25_context`` / ``dense_context``."""
    from core.retrieval.hybrid import HybridRetriever

    options = spec.options
    context = options.get("context", "title")
    bm25_options, dense_options = prefixed(options, "bm25_"), prefixed(options, "dense_")
    members = [
        bm25.bm25_retriever(bm25_options, language, "bm25"),
        dense.dense_retriever(dense_options, "dense", language),
    ]
    members[0].context = bm25_options.get("context", context)
    members[1].context = dense_options.get("context", context)
    return HybridRetriever(
        members,
        fusion=options.get("fusion", "rrf"),
        depth=options.get("depth", 100),
        alpha=options.get("alpha", 0.5),
        name=name,
    )


def index(retriever, corpus: Corpus, progress=None):
    """Index each member as its own kind does (a cached BM25 index is loaded), with its own context."""
    from pooljudge.retrievers.registry import index_retriever

    for key, member in list(retriever.retrievers.items()):
        retriever.retrievers[key] = index_retriever(member, corpus, progress=progress)
    return retriever
