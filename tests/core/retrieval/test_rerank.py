"""core.training.cross_encoder.rerank (one re-ranker, an ensemble) and core.retrieval.rerank.RerankRetriever.

Exact expectations use a stub scorer whose scores are picked by hand (so
the min-max normalisation and the trec ordering can be checked to the
digit); one test checks that real (tiny) cross-encoders go through the same path.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from core.retrieval.base import Hit, Retriever  # noqa: E402
from core.retrieval.bm25 import BM25Retriever  # noqa: E402
from core.retrieval.rerank import RerankRetriever  # noqa: E402
from core.text import analyzer_for  # noqa: E402
from core.training.cross_encoder import rerank  # noqa: E402
from tests.core.training.conftest import tiny_encoder_folder  # noqa: E402, F401  (the shared tiny BERT fixture)

QUERIES = {"q1": "bread", "q2": "river"}
PASSAGES = {
    "a": "bread and butter",
    "b": "how to bake bread",
    "c": "bread bread bread",
    "d": "the river bank",
    "e": "a river of bread",
    "f": "fish in the river",
}


class Stub:
    """A re-ranker whose score of a (query, passage) pair is looked up in ``table[(query text, passage text)]``."""

    def __init__(self, table: dict[tuple[str, str], float], fingerprint: str = "stub") -> None:
        self.table = table
        self.fingerprint = fingerprint
        self.calls: list[int] = []

    def score(self, pairs, *, progress=None):
        self.calls.append(len(pairs))
        if progress is not None:
            progress(len(pairs), len(pairs))
        return np.array([self.table[p] for p in pairs], dtype=np.float32)


def table(scores: dict[tuple[str, str], float]) -> dict[tuple[str, str], float]:
    """``{(qid, pid): score}`` -> ``{(query text, passage text): score}``."""
    return {(QUERIES[q], PASSAGES[d]): s for (q, d), s in scores.items()}


ONE = Stub(
    table(
        {("q1", "a"): 1.0, ("q1", "b"): 3.0, ("q1", "c"): 2.0, ("q2", "d"): -1.0, ("q2", "e"): -1.0, ("q2", "f"): 0.5}
    ),
    "one",
)
TWO = Stub(
    table(
        {("q1", "a"): 40.0, ("q1", "b"): 20.0, ("q1", "c"): 0.0, ("q2", "d"): 7.0, ("q2", "e"): 9.0, ("q2", "f"): 8.0}
    ),
    "two",
)
CANDIDATES = {"q1": ["a", "b", "c"], "q2": ["d", "e", "f"]}


def test_one_reranker_gives_its_raw_scores():
    run = rerank([ONE], QUERIES, CANDIDATES, PASSAGES)
    assert run == {"q1": {"a": 1.0, "b": 3.0, "c": 2.0}, "q2": {"d": -1.0, "e": -1.0, "f": 0.5}}


def test_an_ensemble_averages_min_max_normalised_scores():
    calls: list[tuple[int, int]] = []
    run = rerank([ONE, TWO], QUERIES, CANDIDATES, PASSAGES, progress=lambda d, t: calls.append((d, t)))
    # q1: ONE (1, 3, 2) -> (0, 1, 0.5); TWO (40, 20, 0) -> (1, 0.5, 0); mean a=0.5, b=0.75, c=0.25
    # q2: ONE (-1, -1, 0.5) -> (0, 0, 1); TWO (7, 9, 8) -> (0, 1, 0.5); mean d=0, e=0.5, f=0.75
    assert run == {"q1": {"a": 0.5, "b": 0.75, "c": 0.25}, "q2": {"d": 0.0, "e": 0.5, "f": 0.75}}
    assert calls[-1] == (12, 12) and (6, 12) in calls  # 6 pairs times 2 re-rankers


def test_equal_scores_carry_no_preference_and_duplicates_are_scored_once():
    flat = Stub(table({("q1", "a"): 5.0, ("q1", "b"): 5.0, ("q1", "c"): 5.0}), "flat")
    run = rerank([flat, ONE], {"q1": "bread"}, {"q1": ["a", "b", "c", "b"]}, PASSAGES)
    # flat -> (0, 0, 0); ONE -> (0, 1, 0.5); mean (0, 0.5, 0.25)
    assert run == {"q1": {"a": 0.0, "b": 0.5, "c": 0.25}}
    assert flat.calls[-1] == 3


def test_rerank_errors_name_what_is_missing():
    with pytest.raises(ValueError, match="encoders"):
        rerank([], QUERIES, CANDIDATES, PASSAGES)
    with pytest.raises(ValueError, match=r"passages: no text for 1 candidates, e.g. \['zz'\]"):
        rerank([ONE], QUERIES, {"q1": ["a", "zz"]}, PASSAGES)
    with pytest.raises(ValueError, match="queries: no text"):
        rerank([ONE], QUERIES, {"q9": ["a"]}, PASSAGES)


def test_real_cross_encoders_rerank_like_their_scores(tiny_encoder_folder):  # noqa: F811
    from core.training.cross_encoder import CrossEncoder

    first = CrossEncoder(tiny_encoder_folder, device="cpu", seed=0)
    second = CrossEncoder(tiny_encoder_folder, device="cpu", seed=1)
    pairs = [(QUERIES["q1"], PASSAGES[d]) for d in "abc"]
    s1, s2 = first.score(pairs).astype(np.float64), second.score(pairs).astype(np.float64)
    alone = rerank([first], QUERIES, {"q1": list("abc")}, PASSAGES)["q1"]
    assert list(alone.values()) == pytest.approx(list(s1), abs=1e-6)
    both = rerank([first, second], QUERIES, {"q1": list("abc")}, PASSAGES)["q1"]
    expected = ((s1 - s1.min()) / (s1.max() - s1.min()) + (s2 - s2.min()) / (s2.max() - s2.min())) / 2
    assert list(both.values()) == pytest.approx(list(expected), abs=1e-6)


# --------------------------------------------------------------------------- the retriever


@pytest.fixture
def bm25() -> BM25Retriever:
    return BM25Retriever(analyzer_for("en")).index(list(PASSAGES), list(PASSAGES.values()))


def test_rerank_retriever_reorders_the_first_stage_top_depth(bm25):
    scores = {(q, d): 0.0 for q in QUERIES for d in PASSAGES}
    scores |= {
        ("q1", "a"): 9.0,
        ("q1", "e"): 8.0,
        ("q1", "b"): 1.0,
        ("q1", "c"): 1.0,
        ("q1", "d"): 50.0,
        ("q2", "d"): 2.0,
        ("q2", "e"): 3.0,
        ("q2", "f"): 1.0,
    }
    stub = Stub(table(scores))
    first = bm25.batch_search(QUERIES, 2)
    retriever = RerankRetriever(bm25, [stub], depth=4, name="ce").index_texts(list(PASSAGES), list(PASSAGES.values()))
    assert isinstance(retriever, Retriever)
    calls: list[tuple[int, int]] = []
    run = retriever.batch_search(QUERIES, 3, progress=lambda d, t: calls.append((d, t)))
    # BM25 finds bread in a, b, c, e (4 = depth) and river in d, e, f; "d" (score 50) is not retrieved for q1
    assert set(bm25.batch_search(QUERIES, 4)["q1"]) == {"a", "b", "c", "e"}
    assert first != run
    # q1: a 9, e 8, then b and c tie at 1: trec order breaks ties by doc id descending -> c before b
    assert list(run["q1"].items()) == [("a", 9.0), ("e", 8.0), ("c", 1.0)]
    assert list(run["q2"].items()) == [("e", 3.0), ("d", 2.0), ("f", 1.0)]
    assert calls[-1] == (4, 4)
    assert retriever.search("bread", 2) == [Hit("a", 9.0), Hit("e", 8.0)]
    assert retriever.params == {"depth": 4, "models": ["stub"], "first": "bm25"}


def test_rerank_retriever_needs_the_texts(bm25):
    retriever = RerankRetriever(bm25, [ONE], depth=3)
    with pytest.raises(ValueError, match="passages: no text"):
        retriever.batch_search(QUERIES, 2)
    with pytest.raises(ValueError, match="rerankers"):
        RerankRetriever(bm25, [])
    with pytest.raises(ValueError, match="depth"):
        RerankRetriever(bm25, [ONE], depth=0)


def test_rerank_retriever_with_a_tiny_cross_encoder(bm25, tiny_encoder_folder):  # noqa: F811
    from core.training.cross_encoder import CrossEncoder

    encoder = CrossEncoder(tiny_encoder_folder, device="cpu")
    retriever = RerankRetriever(bm25, [encoder], depth=10).index_texts(list(PASSAGES), list(PASSAGES.values()))
    run = retriever.batch_search(QUERIES, 2)
    for qid, query in QUERIES.items():
        docs = list(bm25.batch_search({qid: query}, 10)[qid])
        scores = encoder.score([(query, PASSAGES[d]) for d in docs])
        best = sorted(zip(scores.tolist(), docs), reverse=True)[:2]
        assert list(run[qid]) == [d for _, d in best]
        assert list(run[qid].values()) == pytest.approx([s for s, _ in best], abs=1e-6)
    assert retriever.params["models"] == [encoder.fingerprint]
    assert isinstance(Path(encoder.path), Path)
