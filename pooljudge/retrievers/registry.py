"""Retriever kinds by name, and building and indexing a retriever through its kind's module.

A kind's module (:mod:`pooljudge.retrievers.bm25` is the smallest) holds:

``OPTIONS``
    A tuple of :class:`pooljudge.retrievers.options.RetrieverOption`: what its spec may say,
    each option's type, default, allowed values and help (``name`` is every kind's).
``PRESETS`` (optional)
    :class:`pooljudge.retrievers.options.Preset` specs the Pooling page offers ready-made.
``FIRST_STAGE``
    Whether a ``rerank`` retriever may re-rank it.
``check(options, text, raw) -> options``
    Refuses option values that would only fail later; ``raw`` holds the options under the
    module's ``RAW_PREFIX`` (if it has one) as written.
``build(spec, language, *, name, resolve) -> Retriever``
    An un-indexed retriever (:class:`core.retrieval.base.Retriever`) with its ``context``.
``index(retriever, corpus, progress) -> Retriever`` (optional)
    Index a :class:`pooljudge.corpus.Corpus`; without it the retriever's own ``index`` gets
    the passage texts of its context.

Adding a kind is that module plus one line: ``register_retriever("mine", module)`` (the built-in
kinds' lines are in :mod:`pooljudge.retrievers`; this module imports no kind, so a kind's module
may build and index through it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from core.retrieval.base import Retriever
from pooljudge.corpus import Corpus
from pooljudge.retrievers.options import RetrieverOption

Progress = Callable[[int, int], None]

RETRIEVERS: dict[str, ModuleType] = {}
"""Every retriever kind a spec may name, and its module, in registration order."""


def register_retriever(kind: str, module: ModuleType) -> ModuleType:
    """Make ``kind`` a retriever spec kind, built and indexed by ``module`` (see the module docstring)."""
    kind = kind.strip().lower()
    if not kind or not kind.isidentifier():
        raise ValueError(f"a retriever kind must be a word, got {kind!r}")
    if kind in RETRIEVERS:
        raise ValueError(f"a retriever kind {kind!r} is already registered")
    missing = [a for a in ("OPTIONS", "check", "build") if not hasattr(module, a)]
    if missing:
        raise TypeError(f"retriever module {module.__name__} lacks {', '.join(missing)}")
    if not all(isinstance(option, RetrieverOption) for option in module.OPTIONS):
        raise TypeError(f"retriever module {module.__name__}: OPTIONS must be a tuple of RetrieverOption")
    RETRIEVERS[kind] = module
    return module


def retriever_kinds() -> tuple[str, ...]:
    """The registered kinds, in registration order."""
    return tuple(RETRIEVERS)


def first_stage_kinds() -> tuple[str, ...]:
    """The kinds a ``rerank`` retriever may re-rank."""
    return tuple(kind for kind, module in RETRIEVERS.items() if getattr(module, "FIRST_STAGE", True))


def kind_module(kind: str) -> ModuleType:
    """The module of a registered kind; ``ValueError`` naming the kinds."""
    if kind not in RETRIEVERS:
        raise ValueError(f"unknown retriever kind {kind!r}; expected one of {', '.join(RETRIEVERS)}")
    return RETRIEVERS[kind]


def build_retriever(
    spec: Any, language: str | None, *, name: str | None = None, resolve: Callable[[str], Path] | None = None
) -> Retriever:
    """An un-indexed retriever for ``spec`` (:class:`pooljudge.retrievers.spec.RetrieverSpec`).

    BM25's analyzer follows the collection ``language`` (default English).  The ``context``
    option (default ``title``) decides which passage texts :func:`index_retriever` gives the
    retriever (:func:`context_of`); a hybrid's ``context`` is the default of its members'
    ``bm25_context`` / ``dense_context``, a re-ranker's the default of its first stage's
    ``first_context``.  ``resolve`` turns a ``rerank`` model as written into its folder
    (registered names need the collection, see :func:`pooljudge.pipeline.retrieve`); by
    default each model must be a folder.
    """
    return kind_module(spec.kind).build(spec, language or "en", name=name or spec.default_name(), resolve=resolve)


def context_of(retriever: Retriever) -> str | None:
    """The passage context a retriever indexes with (its ``context``); ``None``: the corpus default."""
    return getattr(retriever, "context", None)


def index_retriever(retriever: Retriever, corpus: Corpus, *, progress: Progress | None = None) -> Retriever:
    """Index ``corpus`` as the retriever's kind does; returns the indexed retriever (maybe a loaded copy).

    A BM25 index is cached on disk (the copy is loaded instead of rebuilt); dense retrievers
    cache their passage embeddings; a hybrid indexes its members, a re-ranker its first stage.
    Each retriever gets the passage texts of its ``context`` (:meth:`Corpus.texts_for`).
    """
    module = RETRIEVERS.get(getattr(retriever, "kind", ""))  # "": a retriever made outside the registry
    if module is not None and hasattr(module, "index"):
        return module.index(retriever, corpus, progress)
    retriever.index(corpus.doc_ids, corpus.texts_for(context_of(retriever)), progress=progress)
    return retriever
