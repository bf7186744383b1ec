"""Retriever options declared as data (:class:`pooljudge.retrievers.options.RetrieverOption`).

A kind's declaration is what the spec parser converts and refuses by, and what the CLI and the
Pooling page show; the defaults it declares are the ones the retrievers it builds really use.
"""

from __future__ import annotations

import inspect

import pytest

from core.retrieval.bm25 import BM25Retriever
from core.retrieval.dense import DenseRetriever
from core.retrieval.encoder import BiEncoder
from core.retrieval.hierarchical import HierarchicalRetriever
from core.retrieval.hybrid import HybridRetriever
from core.retrieval.rerank import RerankRetriever
from core.text import analyzer_for
from core.training.cross_encoder import CrossEncoder
from pooljudge.retrievers import RETRIEVERS, RetrieverOption, RetrieverSpec
from pooljudge.retrievers.catalogue import option_lines, presets, retrievers_help
from pooljudge.retrievers.options import defaults


def _signature_defaults(*functions) -> dict[str, object]:
    out: dict[str, object] = {}
    for function in functions:
        for name, parameter in inspect.signature(function).parameters.items():
            if parameter.default is not inspect.Parameter.empty:
                out.setdefault(name, parameter.default)
    return out


@pytest.mark.parametrize(
    ("kind", "builders", "options"),
    [
        ("bm25", (BM25Retriever, analyzer_for), ("k1", "b", "delta", "epsilon", "backend", "chinese", "stem")),
        ("dense", (DenseRetriever, BiEncoder), ("index", "ef_search", "batch_size")),
        ("hybrid", (HybridRetriever,), ("fusion", "depth", "alpha")),
        ("hierarchical", (HierarchicalRetriever,), ("top_docs", "fusion", "alpha", "context")),
        ("rerank", (RerankRetriever, CrossEncoder), ("depth", "interpolate", "max_length", "batch_size")),
    ],
)
def test_declared_defaults_are_the_ones_the_retrievers_use(kind, builders, options):
    declared = defaults(RETRIEVERS[kind].OPTIONS)
    used = _signature_defaults(*builders)
    assert {o: declared[o] for o in options} == {o: used[o] for o in options}


def test_every_built_in_option_has_help_and_choices_are_refused_by_name():
    for kind, module in RETRIEVERS.items():
        assert all(isinstance(o, RetrieverOption) and o.help for o in module.OPTIONS), kind
    with pytest.raises(ValueError) as info:
        RetrieverSpec.parse("dense:index=annoy")
    assert str(info.value) == "option 'index' of a dense retriever must be one of flat, hnsw, ivf, got 'annoy'"
    with pytest.raises(ValueError) as info:
        RetrieverSpec.parse("hybrid:bm25_backend=lucene")
    assert str(info.value) == (
        "option 'bm25_backend' of a hybrid retriever must be one of bm25s, rank_bm25, got 'lucene'"
    )
    assert RetrieverSpec.parse("hybrid:bm25_stem=no,dense_index=hnsw").options == {
        "bm25_stem": False,
        "dense_index": "hnsw",
    }


def test_a_declaration_is_checked_when_written():
    with pytest.raises(TypeError, match="option 'k': type must be str, int, float or bool"):
        RetrieverOption("k", list)
    with pytest.raises(ValueError, match="option 'mode': choices need type str and a default among them"):
        RetrieverOption("mode", str, "c", "a mode", choices=("a", "b"))


def test_the_listing_is_generated_from_the_declarations():
    k1 = next(o for o in RETRIEVERS["bm25"].OPTIONS if o.name == "k1")
    assert f"k1 (float, default 1.5): {k1.help}" in option_lines("bm25")
    # a member's options are one line, the member's option names without the prefix
    assert "bm25_*: the bm25 member's chinese, k1, b, method, idf_method, backend, epsilon, delta, stem" in (
        option_lines("hierarchical")
    )
    assert retrievers_help().splitlines()[1:3] == ["  bm25", f"    {RETRIEVERS['bm25'].OPTIONS[0].describe()}"]
    assert presets("e5") == {
        "BM25 (jieba words / English stems)": "bm25",
        "BM25 (CJK character bigrams)": "bm25:chinese=bigram",
        "Dense: e5 (packaged, offline)": "dense",
        "Hybrid: BM25 + e5, reciprocal rank fusion": "hybrid:fusion=rrf",
    }
