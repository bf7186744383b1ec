"""A re-ranker interpolated with its first stage (``rerank:...,interpolate=W``), and choosing ``W`` on dev queries.

The expectations are computed by hand (tiny runs) or from ``CrossEncoder.score`` and BM25's own
scores on the toy collection of tests/test_rerank_pipeline.py, so the tests pin down which scores
are normalised over which documents.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from core.ranking import trec_ranking
from core.retrieval.rerank import choose_interpolation, interpolate_runs
from pooljudge.pipeline import retrieve
from pooljudge.retrievers import RetrieverSpec
from tests.test_rerank_pipeline import min_max, models, scores_of, texts, toy  # noqa: F401 (fixtures)


def test_interpolation_normalises_each_query_over_the_reranked_candidates():
    first = {"q1": {"a": 10.0, "b": 6.0, "c": 2.0, "x": 1.0}, "q2": {"d": 5.0, "e": 5.0}}
    reranked = {"q1": {"a": -1.0, "b": 3.0, "c": 1.0}, "q2": {"d": 0.2, "e": 0.8}}
    out = interpolate_runs(first, reranked, 0.3)
    # q1: first a=1, b=0.5, c=0 (over a, b, c: x was not re-ranked); reranked a=0, b=1, c=0.5
    assert out["q1"] == pytest.approx({"b": 0.3 * 0.5 + 0.7, "c": 0.35, "a": 0.3})
    assert list(out["q1"]) == ["b", "c", "a"] and "x" not in out["q1"]
    # q2: equal first-stage scores normalise to 1 each (core.fusion.min_max_normalise)
    assert out["q2"] == pytest.approx({"e": 0.3 + 0.7, "d": 0.3})
    assert interpolate_runs(first, reranked, 0) == reranked  # the re-ranker's raw scores
    assert list(interpolate_runs(first, reranked, 1)["q1"]) == ["a", "b", "c"]  # the first stage's order
    for bad in (-0.1, 1.5, math.nan, True):
        with pytest.raises(ValueError, match="interpolate"):
            interpolate_runs(first, reranked, bad)


def test_the_weight_is_chosen_on_the_dev_qrels_ties_to_the_smaller():
    first = {"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 1.0, "e": 0.0}}
    reranked = {"q1": {"a": 0.0, "b": 1.0, "c": 0.9}, "q2": {"d": 0.0, "e": 1.0}}
    qrels = {"q1": {"a": 1}, "q2": {"e": 1}}
    best, scores = choose_interpolation(first, reranked, qrels, grid=(0.0, 0.25, 0.6, 0.75, 1.0))
    # q1 puts a first for a first-stage weight w > 2/3 (a: w, b: 0.5w + (1-w), c: 0.9(1-w)), second
    # for 0.47 < w < 2/3, else third; q2 puts e first for w < 0.5 (d: w, e: 1-w), else second.
    # nDCG@10 of one relevant document at rank r: 1/log2(r+1).
    r2, r3 = 1 / math.log2(3), 1 / math.log2(4)
    expected = {0.0: (r3 + 1) / 2, 0.25: (r3 + 1) / 2, 0.6: r2, 0.75: (1 + r2) / 2, 1.0: (1 + r2) / 2}
    assert scores == pytest.approx(expected)
    assert best == 0.75  # 0.75 and 1.0 tie: the smaller weight wins
    with pytest.raises(ValueError, match="grid"):
        choose_interpolation(first, reranked, qrels, grid=())


def test_rerank_spec_interpolates_with_the_first_stage(toy, models):  # noqa: F811
    _, store = toy
    a, _ = models
    spec = RetrieverSpec.parse(f"rerank:model={a},depth=4,interpolate=0.4")
    assert spec.options["interpolate"] == 0.4
    _, run, config = retrieve(store, "toy", spec, k=4)
    assert config["params"]["interpolate"] == 0.4
    _, first, _ = retrieve(store, "toy", RetrieverSpec.parse("bm25"), k=4)
    queries, passages = texts(store)
    ce = scores_of(a, queries, passages, {q: list(docs) for q, docs in first.items()})
    differs = 0
    for q, docs in first.items():
        nf, nc = min_max(docs), min_max(ce[q])
        if len(set(docs.values())) == 1:
            nf = dict.fromkeys(docs, 1.0)  # core.fusion: all-equal scores normalise to 1
        expected = {d: 0.4 * nf[d] + 0.6 * nc[d] for d in docs}
        assert list(run[q]) == trec_ranking(expected)
        np.testing.assert_allclose([run[q][d] for d in run[q]], [expected[d] for d in run[q]], atol=1e-6)
        differs += trec_ranking(expected) != trec_ranking(ce[q])
    assert differs > 0  # the first stage's scores changed some query's order
    plain = retrieve(store, "toy", RetrieverSpec.parse(f"rerank:model={a},depth=4"), k=4)[2]
    assert "interpolate" not in plain["params"]  # a plain re-ranker's stored parameters are unchanged


@pytest.mark.parametrize("value", ["1.5", "-0.2", "nan", "high"])
def test_a_bad_interpolation_weight_is_refused_when_parsed(value):
    with pytest.raises(ValueError, match="interpolate"):
        RetrieverSpec.parse(f"rerank:model=m,interpolate={value}")
