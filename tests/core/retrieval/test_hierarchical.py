"""DAPR's hybrids: convex fusion, hierarchical (documents then passages) retrieval, pipeline specs.

Fused scores are worked out by hand in the comments.  The stub encoder's
vectors have coordinates in multiples of 1/4, so inner products are exact.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest

from core.fusion import FUSION_METHODS, combsum, convex, fuse
from core.retrieval.base import Hit, Retriever, trec_order
from core.retrieval.bm25 import BM25Retriever
from core.retrieval.hierarchical import HierarchicalRetriever
from core.retrieval.hybrid import HybridRetriever
from core.text import analyzer_for
from core.types import Passage, Run
from tests.core.fake_retriever import FakeRetriever

REPO = Path(__file__).resolve().parents[3]
NQ_SAMPLE = REPO.parent / "shared" / "data" / "dapr-sample" / "NaturalQuestions"


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))


# --------------------------------------------------------------------------- convex combination

A: Run = {"q1": {"d1": 4.0, "d2": 2.0, "d3": 0.0}, "q2": {"x": 5.0}}
B: Run = {"q1": {"d2": 0.9, "d4": 0.5, "d1": 0.1}, "q3": {"y": 1.0}}


def test_convex_hand_computed() -> None:
    # q1: A normalised d1 1, d2 0.5, d3 0; B normalised d2 1, d4 0.5, d1 0.
    # alpha 0.25: d1 0.25; d2 0.125 + 0.75 = 0.875; d3 0; d4 0.375.
    fused = convex(A, B, 0.25)
    assert fused["q1"] == pytest.approx({"d2": 0.875, "d4": 0.375, "d1": 0.25, "d3": 0.0}, rel=1e-12)
    assert list(fused["q1"]) == ["d2", "d4", "d1", "d3"]
    # q2 only in A (a single document normalises to 1): 0.25; q3 only in B: 0.75.
    assert fused["q2"] == {"x": 0.25} and fused["q3"] == {"y": 0.75}
    # alpha 0.5: d1 0.5, d2 0.75, d4 0.25, d3 0; it is CombSUM with weights (alpha, 1 - alpha).
    assert convex(A, B)["q1"] == pytest.approx({"d2": 0.75, "d1": 0.5, "d4": 0.25, "d3": 0.0})
    assert convex(A, B, 0.3) == combsum([A, B], weights=[0.3, 0.7])
    # alpha 1: B takes no part (its documents are not added), A's normalised scores remain.
    assert convex(A, B, 1.0)["q1"] == {"d1": 1.0, "d2": 0.5, "d3": 0.0}
    # depth 2 normalises the truncated lists: A d1 1, d2 0; B d2 1, d4 0 -> d1 .5, d2 .5, d4 0.
    assert convex(A, B, depth=2)["q1"] == {"d2": 0.5, "d1": 0.5, "d4": 0.0}


def test_convex_through_fuse_and_bad_arguments() -> None:
    assert "convex" in FUSION_METHODS
    assert fuse({"a": A, "b": B}, "convex", alpha=0.25) == convex(A, B, 0.25)
    assert fuse([A, B], "rrf") == fuse([A, B])  # the other methods ignore alpha
    with pytest.raises(ValueError, match="exactly two runs, got 3"):
        fuse([A, B, A], "convex")
    with pytest.raises(ValueError, match="weighted by alpha, not by weights"):
        fuse([A, B], "convex", weights=[1, 1])
    for bad in (-0.1, 1.5, float("nan"), True, "0.5"):
        with pytest.raises(ValueError, match="alpha must be a number in \\[0, 1\\]"):
            convex(A, B, bad)  # type: ignore[arg-type]


def test_hybrid_convex() -> None:
    bm25 = FakeRetriever("bm25", {"apple": {"d1": 9.0, "d2": 7.0, "d3": 5.0}})
    dense = FakeRetriever("dense", {"apple": {"d3": 0.9, "d1": 0.8, "d4": 0.1}})
    hybrid = HybridRetriever([bm25, dense], fusion="convex", alpha=0.75, depth=3)
    assert isinstance(hybrid, Retriever) and "alpha=0.75" in repr(hybrid)
    # bm25: d1 1, d2 0.5, d3 0; dense: d3 1, d1 7/8, d4 0.
    # d1 .75 + .25 * 7/8 = 0.96875; d2 0.375; d3 0.25; d4 0.
    hits = hybrid.search("apple", k=3)
    assert [h.doc_id for h in hits] == ["d1", "d2", "d3"]
    assert [h.score for h in hits] == pytest.approx([0.96875, 0.375, 0.25], rel=1e-12)
    run = hybrid.batch_search({"q": "apple", "none": "pear"}, k=4)
    assert run["q"] == pytest.approx({"d1": 0.96875, "d2": 0.375, "d3": 0.25, "d4": 0.0}, rel=1e-12)
    assert run["none"] == {}
    with pytest.raises(ValueError, match="exactly two runs, got 3"):
        HybridRetriever([bm25, dense, FakeRetriever("x", {})], fusion="convex")
    with pytest.raises(ValueError, match="not by weights"):
        HybridRetriever([bm25, dense], fusion="convex", weights=[1.0, 2.0])
    with pytest.raises(ValueError, match="alpha must be"):
        HybridRetriever([bm25, dense], fusion="convex", alpha=2.0)


# --------------------------------------------------------------------------- hierarchical retrieval


class StubEncoder:
    """Looks texts up in a table of vectors (queries and passages alike); counts calls."""

    def __init__(self, table: dict[str, list[float]], fingerprint: str = "stub") -> None:
        self.table = {t: np.asarray(v, dtype=np.float32) for t, v in table.items()}
        self.dim = len(next(iter(self.table.values())))
        self.fingerprint = fingerprint
        self.encoded: list[tuple[str, list[str]]] = []

    def encode(self, texts, *, kind="passage", progress=None):  # noqa: ANN001, ANN201
        self.encoded.append((kind, list(texts)))
        if progress is not None:
            progress(len(texts), len(texts))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self.table[t] for t in texts])


# D1 (passages given out of position order), D2, D3; the query vector is (1, 0).
PASSAGES = [
    Passage("p1a", "alpha second", title="Alpha", doc_id="D1", position=1),
    Passage("p1b", "alpha first", title="Alpha", doc_id="D1", position=0),
    Passage("p2a", "beta first", title="Beta", doc_id="D2", position=0),
    Passage("p2b", "beta second", title="Beta", doc_id="D2", position=1),
    Passage("p3a", "gamma only", title="Gamma", doc_id="D3", position=0),
]
VECTORS = {
    "alpha second": [0.5, 0.0],  # 0.5
    "alpha first": [0.0, 1.0],  # 0
    "beta first": [1.0, 0.0],  # 1
    "beta second": [0.25, 0.25],  # 0.25
    "gamma only": [1.0, 0.0],  # 1, but D3 is never among the top 2 documents
    "q": [1.0, 0.0],
    "nothing": [0.0, 1.0],
    "d3 only": [0.0, 1.0],
}
DOC_SCORES = {"q": {"D1": 10.0, "D2": 6.0, "D3": 2.0}, "d3 only": {"D3": 4.0}}


def hierarchical(**kwargs) -> tuple[HierarchicalRetriever, FakeRetriever, StubEncoder]:  # noqa: ANN003
    docs = FakeRetriever("docs", DOC_SCORES)
    encoder = StubEncoder(VECTORS)
    options = {"top_docs": 2, "context": "none"} | kwargs
    return HierarchicalRetriever(docs, encoder, **options).index_passages(PASSAGES), docs, encoder


def test_index_passages_groups_documents_in_position_order() -> None:
    r, docs, encoder = hierarchical()
    assert isinstance(r, Retriever) and len(r) == 5
    assert docs.indexed == (
        ["D1", "D2", "D3"],
        ["Alpha\nalpha first\nalpha second", "Beta\nbeta first\nbeta second", "Gamma\ngamma only"],
    )
    assert r.document_ids == ["D1", "D2", "D3"]
    assert r.passages_of("D1") == ["p1b", "p1a"]
    assert r.doc_ids == ["p1b", "p1a", "p2a", "p2b", "p3a"]
    # Passages are encoded in input order (the cache key a dense retriever of the same texts uses).
    assert encoder.encoded == [("passage", [p.text for p in PASSAGES])]
    with pytest.raises(KeyError, match="unknown document 'D9'"):
        r.passages_of("D9")


def test_convex_fusion_by_hand() -> None:
    # Top 2 documents: D1 (10) and D2 (6), normalised 1 and 0.  Candidates: their 4 passages,
    # dense p1a .5, p1b 0, p2a 1, p2b .25 (normalised by max 1, min 0: the same).
    r, docs, _ = hierarchical(alpha=0.5)
    # p1a .5 + .25 = .75; p1b .5; p2a 0 + .5 = .5; p2b .125.  p2a and p1b tie: "p2a" > "p1b".
    hits = r.search("q", k=10)
    assert hits == [Hit("p1a", 0.75), Hit("p2a", 0.5), Hit("p1b", 0.5), Hit("p2b", 0.125)]
    assert docs.asked == [2]  # top_docs documents were asked for
    # alpha .25: p1a .25 + .375 = .625; p1b .25; p2a .75; p2b .1875.
    r, _, _ = hierarchical(alpha=0.25)
    assert r.search("q", k=3) == [Hit("p2a", 0.75), Hit("p1a", 0.625), Hit("p1b", 0.25)]
    # A single top document normalises to 1 for every passage: only the dense order remains.
    # (D3 has one passage: 1 * alpha + 1 * (1 - alpha) = 1.)
    assert r.search("d3 only", k=5) == [Hit("p3a", 1.0)]


def test_rrf_fusion_by_hand() -> None:
    # Document ranks D1 1, D2 2 (shared by their passages); dense ranks p2a 1, p1a 2, p2b 3, p1b 4.
    r, _, _ = hierarchical(fusion="rrf")
    hits = r.search("q", k=4)
    # p1a 1/61 + 1/62 and p2a 1/62 + 1/61 tie: "p2a" first; p1b 1/61 + 1/64 > p2b 1/62 + 1/63.
    assert [h.doc_id for h in hits] == ["p2a", "p1a", "p1b", "p2b"]
    assert [h.score for h in hits] == pytest.approx(
        [1 / 62 + 1 / 61, 1 / 61 + 1 / 62, 1 / 61 + 1 / 64, 1 / 62 + 1 / 63], rel=1e-12
    )
    assert hits[0].score == hits[1].score
    assert r.params == {
        "top_docs": 2,
        "fusion": "rrf",
        "k_rrf": 60.0,
        "context": "none",
        "documents": {"class": "FakeRetriever"},
    }


def test_batch_search_progress_and_empty_queries() -> None:
    r, _, encoder = hierarchical()
    calls: list[tuple[int, int]] = []
    run = r.batch_search({"q1": "q", "q2": "nothing", "q3": "d3 only"}, k=2, progress=lambda d, t: calls.append((d, t)))
    assert run == {"q1": {"p1a": 0.75, "p2a": 0.5}, "q2": {}, "q3": {"p3a": 1.0}}
    assert calls[-1] == (6, 6) and all(t == 6 for _, t in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert encoder.encoded[-1] == ("query", ["q", "nothing", "d3 only"])  # one batch for all queries
    assert r.batch_search({}, k=2) == {}


def test_context_of_the_encoded_passages() -> None:
    table = {f"{p.title} {p.text}": VECTORS[p.text] for p in PASSAGES} | {"q": [1.0, 0.0]}
    encoder = StubEncoder(table)
    r = HierarchicalRetriever(FakeRetriever("docs", DOC_SCORES), encoder, top_docs=2).index_passages(PASSAGES)
    assert r.context == "title"
    assert encoder.encoded[0] == ("passage", [f"{p.title} {p.text}" for p in PASSAGES])
    assert r.search("q", k=1) == [Hit("p1a", 0.75)]
    # Explicit texts win over the context.
    encoder = StubEncoder(VECTORS)
    r = HierarchicalRetriever(FakeRetriever("docs", DOC_SCORES), encoder, top_docs=2)
    r.index_passages(PASSAGES, texts=[p.text for p in PASSAGES])
    assert encoder.encoded[0] == ("passage", [p.text for p in PASSAGES])
    with pytest.raises(ValueError, match="5 passages but 1 texts"):
        r.index_passages(PASSAGES, texts=["x"])


def test_bad_configuration_and_use() -> None:
    docs, encoder = FakeRetriever("docs", DOC_SCORES), StubEncoder(VECTORS)
    r = HierarchicalRetriever(docs, encoder)
    with pytest.raises(TypeError, match="needs document structure: call index_passages"):
        r.index(["p1"], ["text"])
    with pytest.raises(RuntimeError, match="not indexed"):
        r.search("q")
    for kwargs, phrase in [
        ({"top_docs": 0}, "top_docs must be a positive integer"),
        ({"fusion": "combsum"}, "fusion must be one of convex, rrf"),
        ({"alpha": 1.5}, "alpha must be a number in"),
        ({"k_rrf": -1}, "k_rrf must be"),
        ({"context": "summary"}, "context must be one of"),
        ({"name": ""}, "name must be"),
    ]:
        with pytest.raises(ValueError, match=phrase):
            HierarchicalRetriever(docs, encoder, **kwargs)
    with pytest.raises(TypeError, match="doc_retriever must have an index"):
        HierarchicalRetriever(object(), encoder)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="duplicate passage id 'p1a'"):
        r.index_passages([*PASSAGES, Passage("p1a", "again", doc_id="D4", position=0)])
    with pytest.raises(ValueError, match="different titles"):
        r.index_passages(
            [
                Passage("x", "a", title="One", doc_id="D", position=0),
                Passage("y", "b", title="Two", doc_id="D", position=1),
            ],
            texts=["q", "q"],
        )
    r = hierarchical()[0]
    with pytest.raises(ValueError, match="k must be a positive integer"):
        r.search("q", k=0)


# --------------------------------------------------------------------------- with real BM25 over documents


class HashingEncoder:
    """A deterministic bag-of-words encoder: stems hashed (crc32) into 64 dimensions, L2-normalised."""

    dim = 64
    fingerprint = "hashing-64"

    def __init__(self) -> None:
        self.analyzer = analyzer_for("en")
        self.passages = 0

    def encode(self, texts, *, kind="passage", progress=None):  # noqa: ANN001, ANN201
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for term in self.analyzer.tokenize(text):
                out[i, zlib.crc32(term.encode("utf-8")) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        if kind == "passage":
            self.passages += len(texts)
        if progress is not None:
            progress(len(texts), len(texts))
        return out / np.maximum(norms, 1e-12)


def test_bm25_documents_only_top_documents_return() -> None:
    passages = [
        Passage("v0", "The Half Moon is a pub in Putney.", title="Half Moon, Putney", doc_id="venue", position=0),
        Passage(
            "v1", "Many bands played the venue in the sixties.", title="Half Moon, Putney", doc_id="venue", position=1
        ),
        Passage("r0", "The Thames flows through London.", title="River Thames", doc_id="river", position=0),
        Passage("r1", "Rowing crews race on the river.", title="River Thames", doc_id="river", position=1),
        Passage("c0", "Bread is baked from flour.", title="Bread", doc_id="bread", position=0),
    ]
    r = HierarchicalRetriever(BM25Retriever(analyzer_for("en")), HashingEncoder(), top_docs=1)
    r.index_passages(passages)
    assert r.analyzer is r.doc_retriever.analyzer
    # "Putney" is only in the venue document (its title and first passage): its passages only,
    # although v1 alone never names the venue (DAPR's motivating example).
    hits = r.search("which bands played at the Half Moon in Putney", k=10)
    assert sorted(h.doc_id for h in hits) == ["v0", "v1"]
    assert hits == trec_order(hits)
    assert r.search("zebra", k=10) == []
    assert r.params["documents"]["class"] == "BM25Retriever"


def _nq_sample():
    if not NQ_SAMPLE.is_dir():
        pytest.skip("../shared/data/dapr-sample is absent")
    from core.formats.dapr import read_dapr

    source = read_dapr(NQ_SAMPLE)
    return list(source.passages()), {q.id: q.text for q in source.queries()}, list(source.qrels())


@pytest.mark.slow
@pytest.mark.shared_data
def test_dapr_natural_questions_sample() -> None:
    passages, queries, qrels = _nq_sample()
    encoder = HashingEncoder()
    r = HierarchicalRetriever(BM25Retriever(analyzer_for("en")), encoder, top_docs=3, name="hier")
    r.index_passages(passages)
    assert encoder.passages == len(passages) == len(r) == 2049
    # Positions intact: each document's passages in chunk order, as the reader numbered them.
    by_doc: dict[str, list[Passage]] = {}
    for p in passages:
        by_doc.setdefault(p.doc_id, []).append(p)
    assert r.document_ids == list(by_doc)
    for doc_id, chunks in by_doc.items():
        assert r.passages_of(doc_id) == [p.id for p in sorted(chunks, key=lambda p: p.position)]
        assert [p.position for p in sorted(chunks, key=lambda p: p.position)] == list(range(len(chunks)))
    position = {p.id: (p.doc_id, p.position) for p in passages}
    run = r.batch_search(queries, k=20)
    assert set(run) == set(queries)
    gold_found = 0
    for qid, text in queries.items():
        top = {h.doc_id for h in r.doc_retriever.search(text, 3)}
        assert run[qid] and {position[pid][0] for pid in run[qid]} <= top
        assert list(run[qid]) == [h.doc_id for h in trec_order([Hit(d, s) for d, s in run[qid].items()])]
        gold_found += any(e.query_id == qid and position[e.doc_id][0] in top for e in qrels)
    # BM25 over whole documents finds the gold document in its top 3 for every sample query.
    assert gold_found == len(queries)


@pytest.mark.slow
@pytest.mark.shared_data
def test_dapr_sample_with_the_real_minilm() -> None:
    """all-MiniLM-L6-v2 on the small documents only (~60 passages; ~20 passages/s on a 2-core CPU)."""
    from core.retrieval.encoder import BiEncoder, default_model_path

    passages, queries, qrels = _nq_sample()
    small = {"train-2", "dev-2", "dev-3", "dev-5", "train-151917"}
    passages = [p for p in passages if p.doc_id in small]
    gold = {e.query_id: e.doc_id for e in qrels if e.doc_id in {p.id for p in passages}}
    r = HierarchicalRetriever(BM25Retriever(analyzer_for("en")), BiEncoder(default_model_path()), top_docs=1, alpha=0.5)
    r.index_passages(passages)
    run = r.batch_search({qid: queries[qid] for qid in gold}, k=3)
    for qid, pid in gold.items():
        assert pid in run[qid], (queries[qid], run[qid])


# --------------------------------------------------------------------------- pipeline specs (no store)


@pytest.fixture
def stub_encoder(monkeypatch):
    from pooljudge import encoders

    encoder = HashingEncoder()
    monkeypatch.setattr(encoders, "encoder_for", lambda options: encoder)
    return encoder


def corpus_of(passages: list[Passage]):  # noqa: ANN201
    from core.context import contextualise
    from pooljudge.corpus import Corpus

    return Corpus("c", "en", [p.id for p in passages], contextualise(passages, "title"), {}, {}, passages=passages)


CORPUS = [
    Passage("v0", "The Half Moon is a pub in Putney, London.", title="Half Moon", doc_id="venue", position=0),
    Passage("v1", "Many bands played there in the sixties.", title="Half Moon", doc_id="venue", position=1),
    Passage("r0", "The Thames flows through London.", title="River Thames", doc_id="river", position=0),
]


def test_spec_parsing_of_the_new_options() -> None:
    from pooljudge.retrievers import RetrieverSpec

    assert RetrieverSpec.parse("hybrid:fusion=convex,alpha=0.3").options == {"fusion": "convex", "alpha": 0.3}
    assert RetrieverSpec.parse("hierarchical:top_docs=50,alpha=0.5").options == {"top_docs": 50, "alpha": 0.5}
    assert RetrieverSpec.parse("bm25:context=title+keyphrases").options == {"context": "title+keyphrases"}
    assert RetrieverSpec.parse("hybrid:bm25_context=none,dense_context=keyphrases").options == {
        "bm25_context": "none",
        "dense_context": "keyphrases",
    }
    assert RetrieverSpec.parse("hierarchical:fusion=rrf,dense_max_length=128,bm25_k1=1.2,context=none").options == {
        "fusion": "rrf",
        "dense_max_length": 128,
        "bm25_k1": 1.2,
        "context": "none",
    }
    for text, phrase in [
        ("bm25:context=summary", "option 'context' .* must be one of title, keyphrases"),
        ("hybrid:dense_context=abstract", "option 'dense_context'"),
        ("hybrid:alpha=0.3", "option 'alpha' .* needs fusion=convex"),
        ("hybrid:fusion=convex,alpha=1.5", "option 'alpha' must be in \\[0, 1\\]"),
        ("hybrid:fusion=borda", "must be one of rrf, combsum, combmnz, convex"),
        ("hierarchical:fusion=combsum", "must be one of convex, rrf"),
        ("hierarchical:fusion=rrf,alpha=0.5", "needs fusion=convex"),
        ("hierarchical:top_docs=0", "option 'top_docs' must be a positive integer"),
        ("hierarchical:bm25_context=none", "unknown option 'bm25_context'"),
        ("hierarchical:dense_index=hnsw", "unknown option 'dense_index'"),
    ]:
        with pytest.raises(ValueError, match=phrase):
            RetrieverSpec.parse(text)


@pytest.mark.slow
def test_build_and_index_from_specs(stub_encoder) -> None:
    from pooljudge.retrievers import RetrieverSpec, build_retriever, context_of, index_retriever

    hybrid = build_retriever(RetrieverSpec.parse("hybrid:fusion=convex,alpha=0.3"), "en")
    assert isinstance(hybrid, HybridRetriever) and (hybrid.fusion, hybrid.alpha) == ("convex", 0.3)
    assert [context_of(m) for m in hybrid.retrievers.values()] == ["title", "title"]
    mixed = build_retriever(RetrieverSpec.parse("hybrid:context=keyphrases,dense_context=none"), "en")
    assert [context_of(m) for m in mixed.retrievers.values()] == ["keyphrases", "none"]

    hier = build_retriever(RetrieverSpec.parse("hierarchical:top_docs=50,alpha=0.5"), "en")
    assert isinstance(hier, HierarchicalRetriever)
    assert (hier.top_docs, hier.fusion, hier.alpha, hier.context) == (50, "convex", 0.5, "title")
    assert isinstance(hier.doc_retriever, BM25Retriever) and hier.encoder is stub_encoder
    corpus = corpus_of(CORPUS)
    assert index_retriever(hier, corpus) is hier
    assert hier.passages_of("venue") == ["v0", "v1"]
    run = hier.batch_search({"q": "bands who played in Putney"}, k=5)
    assert set(run["q"]) == {"v0", "v1"}

    # bm25:context=title+keyphrases indexes the contextualised texts: v1 never says "Putney"
    # but its document's keyphrases do.
    spec = RetrieverSpec.parse("bm25:context=title+keyphrases")
    bm25 = build_retriever(spec, "en")
    assert context_of(bm25) == "title+keyphrases"
    bm25 = index_retriever(bm25, corpus)
    assert set(bm25.batch_search({"q": "Putney"}, k=5)["q"]) == {"v0", "v1"}
    plain = index_retriever(build_retriever(RetrieverSpec.parse("bm25"), "en"), corpus)
    assert set(plain.batch_search({"q": "Putney"}, k=5)["q"]) == {"v0"}
    assert corpus.texts_for("title") is corpus.texts
    assert corpus.texts_for("title+keyphrases")[1].startswith("Half Moon ")
    assert "Putney" in corpus.texts_for("title+keyphrases")[1]
