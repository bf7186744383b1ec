"""Retriever kinds: one module each (bm25, dense, hybrid, hierarchical, rerank) and their registry.

Specs (``bm25:k1=1.2``) parse into :class:`RetrieverSpec`; :func:`build_retriever` and
:func:`index_retriever` go through the kind's module (:mod:`pooljudge.retrievers.registry`
says what a module holds).  A new kind is one module plus ``register_retriever(kind, module)``.
"""

from pooljudge.retrievers.registry import (
    RETRIEVERS,
    build_retriever,
    context_of,
    first_stage_kinds,
    index_retriever,
    register_retriever,
    retriever_kinds,
)
from pooljudge.retrievers.spec import RetrieverSpec, split_specs

__all__ = [
    "RETRIEVERS",
    "RetrieverSpec",
    "build_retriever",
    "context_of",
    "first_stage_kinds",
    "index_retriever",
    "register_retriever",
    "retriever_kinds",
    "split_specs",
]
