"""A retriever kind written as a newcomer would add one: this module plus one ``register_retriever`` line.

``toy[:min_overlap=N,context=...]`` scores a passage by how many distinct query words it contains
(lower-cased, split on white space), keeping passages with at least ``min_overlap`` (default 1).
Its options are declared as data (``OPTIONS``): the spec parser, ``pooljudge pool --help`` and the
Pooling page read their types, defaults and help from there; ``PRESETS`` is the page's ready-made spec.
It has no ``index(retriever, corpus, progress)`` function: the registry's default hands the
retriever the passage texts of its context.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.retrieval.base import Hit, describe_retriever, trec_order
from core.types import Run
from pooljudge.retrievers.options import CONTEXT, Preset, RetrieverOption

OPTIONS = (
    RetrieverOption("min_overlap", int, 1, "distinct query words a passage must hold to be retrieved"),
    CONTEXT,
)
FIRST_STAGE = True
PRESETS = (Preset("Toy: query words in common", "min_overlap=1"),)


class ToyRetriever:
    kind = "toy"
    context: str | None = None

    def __init__(self, *, min_overlap: int = 1, name: str = "toy") -> None:
        self.min_overlap = min_overlap
        self.name = name
        self._words: dict[str, set[str]] = {}

    @property
    def params(self) -> dict[str, Any]:
        return {"min_overlap": self.min_overlap}

    def index(self, doc_ids: Sequence[str], texts: Sequence[str], progress=None) -> ToyRetriever:
        self._words = {d: set(t.lower().split()) for d, t in zip(doc_ids, texts, strict=True)}
        return self

    def describe(self) -> dict[str, Any]:
        return describe_retriever(self)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        words = set(query.lower().split())
        hits = [Hit(d, float(len(words & ws))) for d, ws in self._words.items() if len(words & ws) >= self.min_overlap]
        return trec_order(hits)[:k]

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress=None) -> Run:
        return {qid: {h.doc_id: h.score for h in self.search(text, k)} for qid, text in queries.items()}


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    if options.get("min_overlap", 1) < 1:
        raise ValueError(f"option 'min_overlap' in {text!r} must be at least 1")
    return options


def build(spec, language: str, *, name: str, resolve=None) -> ToyRetriever:
    retriever = ToyRetriever(min_overlap=spec.options.get("min_overlap", 1), name=name)
    retriever.context = spec.options.get("context", "title")
    return retriever
