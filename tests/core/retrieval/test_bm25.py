"""BM25Retriever: hand-computed scores, trec tie order, save/load, rank_bm25 parity, real-data quality."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from core.retrieval.base import Hit, Retriever, trec_order
from core.retrieval.bm25 import BM25Retriever
from core.text import Analyzer, analyzer_for
from core.types import Passage

SHARED_DATA = Path(__file__).resolve().parents[3].parent / "shared" / "data"

# Plain words (no stemming, no stopwords) so that the terms are the words themselves.
PLAIN = Analyzer(stem=False, stopwords="none")

IDS = ["d1", "d2", "d3", "d4", "d5"]
TEXTS = [
    "apple banana apple",  # |d| = 3
    "banana cherry",  # 2
    "apple cherry date egg",  # 4
    "fig grape",  # 2
    "banana cherry",  # 2, same text as d2: ties with it
]
QUERY = "apple cherry"
N, AVGDL = 5, 13 / 5  # 13 terms in 5 documents
DF = {"apple": 2, "banana": 3, "cherry": 3, "date": 1, "egg": 1, "fig": 1, "grape": 1}


def lucene_score(k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """bm25s "lucene" BM25 of QUERY, by hand.

    score(q, d) = sum_t idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df + 0.5) / (df + 0.5))
    """

    def idf(t: str) -> float:
        return math.log(1 + (N - DF[t] + 0.5) / (DF[t] + 0.5))

    def tfc(tf: int, dl: int) -> float:
        return tf / (tf + k1 * (1 - b + b * dl / AVGDL))

    return {
        "d1": idf("apple") * tfc(2, 3),
        "d2": idf("cherry") * tfc(1, 2),
        "d3": idf("apple") * tfc(1, 4) + idf("cherry") * tfc(1, 4),
        "d4": 0.0,
        "d5": idf("cherry") * tfc(1, 2),
    }


def okapi_score(epsilon: float, k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """rank_bm25 BM25Okapi of QUERY, by hand.

    score(q, d) = sum_t idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(N - df + 0.5) - ln(df + 0.5), and a negative idf becomes
                  epsilon * (mean idf over the whole vocabulary)
    """
    raw = {t: math.log(N - df + 0.5) - math.log(df + 0.5) for t, df in DF.items()}
    mean = sum(raw.values()) / len(raw)
    idf = {t: (v if v >= 0 else epsilon * mean) for t, v in raw.items()}

    def tfc(tf: int, dl: int) -> float:
        return tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / AVGDL))

    return {
        "d1": idf["apple"] * tfc(2, 3),
        "d2": idf["cherry"] * tfc(1, 2),
        "d3": (idf["apple"] + idf["cherry"]) * tfc(1, 4),
        "d4": 0.0,
        "d5": idf["cherry"] * tfc(1, 2),
    }


@pytest.fixture(scope="module")
def toy() -> BM25Retriever:
    return BM25Retriever(PLAIN).index(IDS, TEXTS)


# --------------------------------------------------------------------------- hand-made corpus


def test_hand_computed_scores(toy: BM25Retriever) -> None:
    expected = lucene_score()
    # the formula itself, pinned: ln(2.4) * 2/3.6731 etc.
    assert expected["d1"] == pytest.approx(0.476695, abs=1e-6)
    assert expected["d3"] == pytest.approx(0.455432, abs=1e-6)
    assert expected["d2"] == pytest.approx(0.240582, abs=1e-6)
    scores = toy.get_scores(QUERY)
    assert scores.tolist() == pytest.approx([expected[d] for d in IDS], abs=1e-6)
    hits = toy.search(QUERY, k=10)
    # d4 has no query term: not returned (no zero-score padding); d5 and d2 tie -> doc id descending
    assert [h.doc_id for h in hits] == ["d1", "d3", "d5", "d2"]
    assert [h.score for h in hits] == pytest.approx([expected[d] for d in ["d1", "d3", "d5", "d2"]], abs=1e-6)
    assert hits == trec_order(hits)
    assert hits[2].score == hits[3].score


def test_top_k_cut_respects_tie_order(toy: BM25Retriever) -> None:
    assert [h.doc_id for h in toy.search(QUERY, k=3)] == ["d1", "d3", "d5"]  # d5 beats its tie d2
    assert [h.doc_id for h in toy.search(QUERY, k=1)] == ["d1"]
    # banana+cherry: d2 and d5 (both terms, |d|=2) tie above d1 (banana, |d|=3) and d3 (cherry, |d|=4)
    assert [h.doc_id for h in toy.search("banana cherry", k=10)] == ["d5", "d2", "d1", "d3"]
    assert [h.doc_id for h in toy.search("banana cherry", k=1)] == ["d5"]


def test_no_match_and_small_k(toy: BM25Retriever) -> None:
    assert toy.search("kiwi", k=10) == []
    assert toy.search("", k=10) == []
    assert toy.search("the", k=10) == []  # unknown term
    assert [h.doc_id for h in toy.search("fig", k=100)] == ["d4"]  # k > N: only real matches
    run = toy.batch_search({"q1": QUERY, "q2": "kiwi", "q3": "grape fig"}, k=2)
    assert list(run) == ["q1", "q2", "q3"]
    assert list(run["q1"]) == ["d1", "d3"]
    assert run["q2"] == {}
    assert list(run["q3"]) == ["d4"]
    with pytest.raises(ValueError, match="k must be"):
        toy.search(QUERY, k=0)
    with pytest.raises(TypeError):
        toy.search(None)  # type: ignore[arg-type]


def test_retriever_protocol(toy: BM25Retriever) -> None:
    assert isinstance(toy, Retriever)
    assert toy.name == "bm25"
    assert len(toy) == 5 and toy.doc_ids == IDS
    assert all(isinstance(h, Hit) for h in toy.search(QUERY))
    assert toy.batch_search({"q": QUERY}, k=10)["q"] == {h.doc_id: h.score for h in toy.search(QUERY, k=10)}


def test_query_term_repetition_counts(toy: BM25Retriever) -> None:
    once = toy.get_scores("apple")
    twice = toy.get_scores("apple apple")
    assert twice.tolist() == pytest.approx((2 * once).tolist(), abs=1e-6)


def test_rank_bm25_okapi_by_hand() -> None:
    for epsilon in (0.0, 0.25):
        expected = okapi_score(epsilon)
        r = BM25Retriever(PLAIN, backend="rank_bm25", epsilon=epsilon).index(IDS, TEXTS)
        assert r.get_scores(QUERY).tolist() == pytest.approx([expected[d] for d in IDS], abs=1e-9)
    # cherry is in 3 of 5 documents: raw idf ln(2.5/3.5) < 0, floored at 0 with epsilon=0 ...
    r0 = BM25Retriever(PLAIN, backend="rank_bm25", epsilon=0.0).index(IDS, TEXTS)
    assert [h.doc_id for h in r0.search(QUERY)] == ["d1", "d3"]  # d2, d5 score 0: not returned
    # ... and 0.25 * mean idf = 0.25 * (ln(3.5/2.5) - 2 ln(3.5/2.5) + 4 ln 3) / 7 otherwise
    r25 = BM25Retriever(PLAIN, backend="rank_bm25").index(IDS, TEXTS)
    eps_idf = 0.25 * (math.log(3.5 / 2.5) - 2 * math.log(3.5 / 2.5) + 4 * math.log(3)) / 7
    assert eps_idf == pytest.approx(0.144928, abs=1e-6)
    assert [h.doc_id for h in r25.search(QUERY)] == ["d1", "d3", "d5", "d2"]


def test_rank_bm25_equals_bm25s_atire_robertson_on_toy() -> None:
    ours = BM25Retriever(PLAIN, method="atire", idf_method="robertson", dtype="float64").index(IDS, TEXTS)
    ref = BM25Retriever(PLAIN, backend="rank_bm25", epsilon=0.0).index(IDS, TEXTS)
    for q in (QUERY, "banana", "apple date egg fig", "cherry cherry grape"):
        assert ours.get_scores(q).tolist() == pytest.approx(ref.get_scores(q).tolist(), abs=1e-12)
        ours_hits, ref_hits = ours.search(q, k=10), ref.search(q, k=10)
        assert [h.doc_id for h in ours_hits] == [h.doc_id for h in ref_hits]
        assert [h.score for h in ours_hits] == pytest.approx([h.score for h in ref_hits], abs=1e-12)


def test_bm25_plus_baseline_is_not_a_match() -> None:
    for backend in ("bm25s", "rank_bm25"):
        r = BM25Retriever(PLAIN, method="bm25+", backend=backend).index(IDS, TEXTS)
        scores = r.get_scores(QUERY)
        assert scores[IDS.index("d4")] > 0  # every document gets sum_t idf(t) * delta
        assert "d4" not in {h.doc_id for h in r.search(QUERY, k=10)}
        assert [h.doc_id for h in r.search(QUERY, k=10)] == ["d1", "d3", "d5", "d2"]


def test_params_and_validation() -> None:
    assert BM25Retriever(PLAIN).params == {
        "backend": "bm25s", "method": "lucene", "k1": 1.5, "b": 0.75, "idf_method": "lucene", "dtype": "float32",
    }  # fmt: skip
    assert BM25Retriever(PLAIN, backend="rank_bm25").params == {
        "backend": "rank_bm25", "method": "okapi", "k1": 1.5, "b": 0.75, "epsilon": 0.25,
    }  # fmt: skip
    with pytest.raises(ValueError, match="method"):
        BM25Retriever(PLAIN, method="okapi")
    with pytest.raises(ValueError, match="method"):
        BM25Retriever(PLAIN, backend="rank_bm25", method="lucene")
    with pytest.raises(ValueError, match="idf_method"):
        BM25Retriever(PLAIN, backend="rank_bm25", idf_method="robertson")
    with pytest.raises(ValueError, match="backend"):
        BM25Retriever(PLAIN, backend="pyserini")
    with pytest.raises(ValueError, match="b must"):
        BM25Retriever(PLAIN, b=1.5)
    with pytest.raises(TypeError):
        BM25Retriever("en")  # type: ignore[arg-type]
    r = BM25Retriever(PLAIN)
    with pytest.raises(RuntimeError, match="no index"):
        r.search("apple")
    with pytest.raises(ValueError, match="duplicate doc id 'd1'"):
        r.index(["d1", "d2", "d1"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="2 doc ids but 3 texts"):
        r.index(["d1", "d2"], ["a", "b", "c"])
    with pytest.raises(ValueError, match="non-empty str"):
        r.index(["d1", ""], ["a", "b"])


def test_empty_documents_and_empty_vocabulary() -> None:
    r = BM25Retriever(PLAIN).index(["a", "b", "c"], ["", "the cat", "，。"])
    assert [h.doc_id for h in r.search("cat")] == ["b"]
    nothing = BM25Retriever(PLAIN).index(["a", "b"], ["", "..."])
    assert nothing.search("cat") == [] and nothing.vocabulary_size == 0
    assert nothing.batch_search({"q": "cat"}) == {"q": {}}


def test_index_passages_with_title() -> None:
    passages = [
        Passage(id="p1", title="Zebra", text="A striped animal."),
        Passage(id="p2", title="", text="Zebra crossings are striped."),
    ]
    with_title = BM25Retriever(analyzer_for("en")).index_passages(passages)
    assert {h.doc_id for h in with_title.search("zebra")} == {"p1", "p2"}
    without = BM25Retriever(analyzer_for("en")).index_passages(passages, with_title=False)
    assert [h.doc_id for h in without.search("zebra")] == ["p2"]


def test_progress_callbacks() -> None:
    calls: list[tuple[int, int]] = []
    texts = [f"word{i % 7} other{i % 3}" for i in range(1000)]
    r = BM25Retriever(PLAIN).index([str(i) for i in range(1000)], texts, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (1000, 1000) and calls.count((1000, 1000)) == 1
    assert all(t == 1000 for _, t in calls) and [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert len(calls) > 2
    calls.clear()
    r.batch_search({f"q{i}": f"word{i % 7}" for i in range(50)}, k=3, progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (50, 50) and len(calls) == 50


@pytest.mark.parametrize("backend", ["bm25s", "rank_bm25"])
def test_save_load_round_trip(tmp_path: Path, backend: str) -> None:
    method = "bm25+" if backend == "bm25s" else "okapi"
    r = BM25Retriever(PLAIN, backend=backend, method=method, k1=1.2, b=0.6, name="toy").index(IDS, TEXTS)
    r.save(tmp_path / "idx")
    loaded = BM25Retriever.load(tmp_path / "idx")
    assert loaded.name == "toy" and loaded.params == r.params and loaded.analyzer == PLAIN
    assert loaded.doc_ids == IDS
    queries = {"q1": QUERY, "q2": "banana", "q3": "kiwi", "q4": "grape fig egg"}
    assert loaded.batch_search(queries, k=3) == r.batch_search(queries, k=3)
    assert loaded.get_scores(QUERY).tolist() == r.get_scores(QUERY).tolist()
    with pytest.raises(ValueError, match="built with"):
        BM25Retriever.load(tmp_path / "idx", analyzer=analyzer_for("en"))
    with pytest.raises(FileNotFoundError, match="not a saved BM25 index"):
        BM25Retriever.load(tmp_path / "nowhere")


# --------------------------------------------------------------------------- real data

needs_data = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"shared data not found at {SHARED_DATA}")


def _collection(src):  # noqa: ANN001, ANN202
    """A source's passages, ``{qid: text}`` queries and ``{qid: {doc: grade}}`` qrels."""
    passages = list(src.passages())
    queries = {q.id: q.text for q in src.queries()}
    qrels: dict[str, dict[str, int]] = {}
    for e in src.qrels():
        qrels.setdefault(e.query_id, {})[e.doc_id] = e.grade
    return passages, queries, qrels


@pytest.fixture(scope="module")
def dbpedia():
    from core.formats.beir import read_beir

    return _collection(read_beir(SHARED_DATA / "agentset-dbpedia-subset"))


@pytest.fixture(scope="module")
def rgb_zh():
    from core.formats.qa_jsonl import read_qa_jsonl

    return _collection(read_qa_jsonl(SHARED_DATA / "rgb-zh" / "zh_refine.json"))


def _measure(qrels, run) -> tuple[float, float]:
    from core.metrics import evaluate

    result = evaluate(qrels, run, ["nDCG@10", "MRR@10"], level=1)
    return result["nDCG@10"]["all"], result["MRR@10"]["all"]


@pytest.mark.slow
@pytest.mark.shared_data
@needs_data
def test_rank_bm25_parity_on_dbpedia(dbpedia) -> None:
    passages, queries, _ = dbpedia
    analyzer = Analyzer(stopwords="none")  # keeps "the", "of": terms in more than half of the documents
    ids = [p.id for p in passages]
    tokens = [analyzer.tokenize(f"{p.title}\n{p.text}") for p in passages]
    sample = [
        "the morning call lehigh valley pa",
        "Who painted The Storm on the Sea of Galilee?",
        "Which European countries have a constitutional monarchy?",
        "Indian Cuisine dish rice dhal vegetables roti papad",
        "B. F. Skinner",
    ]
    assert set(sample) <= set(queries.values())
    doc_freq: dict[str, int] = {}
    for doc in tokens:
        for t in set(doc):
            doc_freq[t] = doc_freq.get(t, 0) + 1
    assert doc_freq["the"] > len(ids) / 2  # the idf floor is exercised

    ref = BM25Retriever(analyzer, backend="rank_bm25", epsilon=0.0).index_tokens(ids, tokens)
    exact = BM25Retriever(analyzer, method="atire", idf_method="robertson", dtype="float64").index_tokens(ids, tokens)
    fast = BM25Retriever(analyzer, method="atire", idf_method="robertson").index_tokens(ids, tokens)
    default_eps = BM25Retriever(analyzer, backend="rank_bm25").index_tokens(ids, tokens)
    plus_ref = BM25Retriever(analyzer, backend="rank_bm25", method="bm25+").index_tokens(ids, tokens)
    plus = BM25Retriever(analyzer, method="bm25+", dtype="float64").index_tokens(ids, tokens)
    worst64 = worst32 = worst_plus = 0.0
    eps_differs = False
    for q in sample:
        expected = ref.get_scores(q)
        assert expected.max() > 1.0
        worst64 = max(worst64, float(np.abs(exact.get_scores(q) - expected).max()))
        # float32 scores: compared relative to the score
        rel = np.abs(fast.get_scores(q).astype(np.float64) - expected) / np.maximum(np.abs(expected), 1.0)
        worst32 = max(worst32, float(rel.max()))
        worst_plus = max(worst_plus, float(np.abs(plus.get_scores(q) - plus_ref.get_scores(q)).max()))
        eps_differs |= not np.allclose(default_eps.get_scores(q), expected, atol=1e-6)
        top_ref = [h.score for h in ref.search(q, k=10)]
        assert [h.score for h in exact.search(q, k=10)] == pytest.approx(top_ref, abs=1e-6)
    print(f"\nparity max |diff|: float64 {worst64:.2e}, float32 relative {worst32:.2e}, bm25+ {worst_plus:.2e}")
    assert worst64 <= 1e-6
    assert worst32 <= 1e-6
    assert worst_plus <= 1e-6
    assert eps_differs  # with rank_bm25's default epsilon=0.25 the floored idfs are not 0


@pytest.mark.slow
@pytest.mark.shared_data
@needs_data
def test_dbpedia_quality_and_save_load(dbpedia, tmp_path: Path, capsys) -> None:
    passages, queries, qrels = dbpedia
    r = BM25Retriever(analyzer_for("en")).index_passages(passages, with_title=True)
    judged = {q: t for q, t in queries.items() if q in qrels}
    run = r.batch_search(judged, k=100)
    ndcg, mrr = _measure(qrels, run)
    with capsys.disabled():
        print(f"\nDBpedia subset, BM25 (bm25s lucene, English analyzer, titles): nDCG@10 {ndcg:.4f}, MRR@10 {mrr:.4f}")
    assert ndcg >= 0.36
    # hits are real documents, in trec order, no zero scores
    known = set(r.doc_ids)
    for hits in run.values():
        assert set(hits) <= known and all(s > 0 for s in hits.values())
        ranked = trec_order([Hit(d, s) for d, s in hits.items()])
        assert [h.doc_id for h in ranked] == list(hits)
    r.save(tmp_path / "dbpedia")
    loaded = BM25Retriever.load(tmp_path / "dbpedia")
    assert loaded.batch_search(judged, k=100) == run


@pytest.mark.slow  # indexes the real RGB zh corpus
@pytest.mark.shared_data
@needs_data
def test_rgb_zh_quality(rgb_zh, capsys) -> None:
    passages, queries, qrels = rgb_zh
    assert len(passages) == 7337 and len(queries) == 300
    results = {}
    for chinese in ("jieba", "bigram"):
        r = BM25Retriever(analyzer_for("zh", chinese=chinese)).index_passages(passages)
        results[chinese] = _measure(qrels, r.batch_search(queries, k=10))
    with capsys.disabled():
        for chinese, (ndcg, mrr) in results.items():
            print(f"\nRGB zh, BM25 (bm25s lucene, {chinese}): nDCG@10 {ndcg:.4f}, MRR@10 {mrr:.4f}", end="")
        print()
    ndcg_j, mrr_j = results["jieba"]
    ndcg_b, mrr_b = results["bigram"]
    assert ndcg_j >= 0.65
    assert mrr_j >= 0.75
    assert abs(ndcg_b - ndcg_j) <= 0.03
    assert abs(mrr_b - mrr_j) <= 0.03
