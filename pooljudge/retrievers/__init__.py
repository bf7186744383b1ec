"""Retriever kinds: one module each (bm25, dense, hybrid, hierarchical, rerank) and their registry.

Specs (``bm25:k1=1.2``) parse into :class:`RetrieverSpec`; :func:`build_retriever` and
:func:`index_retriever` go through the kind's module (:mod:`pooljudge.retrievers.registry`
says what a module holds; each declares its options as data,
:class:`pooljudge.retrievers.options.RetrieverOption`).  A new kind is one module plus
``register_retriever(kind, module)``: the built-in kinds' lines are below.
"""

from pooljudge.retrievers import bm25, dense, hierarchical, hybrid, rerank
from pooljudge.retrievers.options import RetrieverOption
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

register_retriever("bm25", bm25)
register_retriever("dense", dense)
register_retriever("hybrid", hybrid)
register_retriever("hierarchical", hierarchical)
register_retriever("rerank", rerank)

__all__ = [
    "RETRIEVERS",
    "RetrieverOption",
    "RetrieverSpec",
    "build_retriever",
    "context_of",
    "first_stage_kinds",
    "index_retriever",
    "register_retriever",
    "retriever_kinds",
    "split_specs",
]
