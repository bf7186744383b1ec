"""Tests for core.pooling: pools with provenance, statistics, selection, near-duplicate removal.

Hand-made runs with hand-computed pools and priorities, then an acceptance
test on LeCaRD's real rankings checked against a plain-Python computation
straight from the raw JSON files.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from core.pooling import (
    Contribution,
    dedupe_by_clustering,
    dedupe_by_similarity,
    dedupe_pool,
    depth_pool,
    ensemble_scores,
    pool_statistics,
    rbp_pool,
    rbp_priorities,
    rrf_pool,
    rrf_priorities,
    select_all,
    select_top,
)
from core.types import CollectionSource, Run

LECARD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "lecard"

# q1 ranks: R1 a b c d; R2 c a e f; R3 g a.
# q2: R1 has a tie at 1.0, doc id descending ranks y before x; R2 has z.  q3 only in R3.
R1: Run = {"q1": {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.6}, "q2": {"x": 1.0, "y": 1.0}}
R2: Run = {"q1": {"c": 5.0, "a": 4.0, "e": 3.0, "f": 2.0}, "q2": {"z": 2.0}}
R3: Run = {"q1": {"g": 1.0, "a": 0.5}, "q3": {"m": 1.0}}
RUNS = {"R1": R1, "R2": R2, "R3": R3}
C = Contribution


def test_depth_pool_exact_with_provenance() -> None:
    pool = depth_pool(RUNS, 2)
    assert pool == {
        "q1": {
            "a": [C("R1", 1, 0.9), C("R2", 2, 4.0), C("R3", 2, 0.5)],
            "b": [C("R1", 2, 0.8)],
            "c": [C("R2", 1, 5.0)],
            "g": [C("R3", 1, 1.0)],
        },
        "q2": {"y": [C("R1", 1, 1.0)], "x": [C("R1", 2, 1.0)], "z": [C("R2", 1, 2.0)]},
        "q3": {"m": [C("R3", 1, 1.0)]},
    }
    assert list(pool) == ["q1", "q2", "q3"]
    assert list(pool["q1"]) == ["a", "b", "c", "g"]  # run by run, in rank order


def test_depth_pool_queries_and_depth() -> None:
    pool = depth_pool(RUNS, 1, queries=["q3", "q9", "q1"])
    assert pool == {
        "q3": {"m": [C("R3", 1, 1.0)]},
        "q9": {},
        "q1": {"a": [C("R1", 1, 0.9)], "c": [C("R2", 1, 5.0)], "g": [C("R3", 1, 1.0)]},
    }
    deep = depth_pool([R1, R2], 100)
    assert set(deep["q1"]) == {"a", "b", "c", "d", "e", "f"}
    assert deep["q1"]["c"] == [C("0", 3, 0.7), C("1", 1, 5.0)]  # a sequence is named by position
    with pytest.raises(ValueError, match="depth must be a positive integer"):
        depth_pool(RUNS, 0)


def test_rrf_pool_hand_computed() -> None:
    # q1: a 1/61+1/62+1/62, c 1/63+1/61, g 1/61, b 1/62, e 1/63, d 1/64, f 1/64
    prio = rrf_priorities(RUNS)
    assert prio["q1"] == pytest.approx(
        {
            "a": 1 / 61 + 2 / 62,
            "c": 1 / 63 + 1 / 61,
            "g": 1 / 61,
            "b": 1 / 62,
            "e": 1 / 63,
            "d": 1 / 64,
            "f": 1 / 64,
        },
        rel=1e-12,
    )
    assert list(prio["q1"]) == ["a", "c", "g", "b", "e", "f", "d"]  # f, d tie: doc id descending
    pool = rrf_pool(RUNS, 3)
    # Provenance lists every run that retrieved the document, at its full-list rank:
    # c is at rank 3 in R1, beyond any small depth, and still listed.
    assert pool["q1"] == {
        "a": [C("R1", 1, 0.9), C("R2", 2, 4.0), C("R3", 2, 0.5)],
        "c": [C("R1", 3, 0.7), C("R2", 1, 5.0)],
        "g": [C("R3", 1, 1.0)],
    }
    assert list(pool["q1"]) == ["a", "c", "g"]
    # q2: z (R2 rank 1) and y (R1 rank 1) tie at 1/61: z first; x 1/62.
    assert list(rrf_pool(RUNS, 2)["q2"]) == ["z", "y"]
    assert rrf_pool(RUNS, 10)["q1"].keys() == {"a", "b", "c", "d", "e", "f", "g"}
    # k = 0: a 1 + 1/2 + 1/2 = 2, g 1, c 1/3 + 1 = 4/3
    assert list(rrf_pool(RUNS, 3, k=0)["q1"]) == ["a", "c", "g"]
    assert rrf_priorities(RUNS, k=0)["q1"]["c"] == pytest.approx(4 / 3)


def test_rbp_pool_hand_computed() -> None:
    # p = 0.5: rank weights 0.5, 0.25, 0.125, 0.0625 (exact in binary)
    prio = rbp_priorities(RUNS, p=0.5)
    assert prio["q1"] == {"a": 1.0, "c": 0.625, "g": 0.5, "b": 0.25, "e": 0.125, "f": 0.0625, "d": 0.0625}
    assert list(prio["q1"]) == ["a", "c", "g", "b", "e", "f", "d"]
    pool = rbp_pool(RUNS, 4, p=0.5)
    assert list(pool["q1"]) == ["a", "c", "g", "b"]
    assert pool["q1"]["b"] == [C("R1", 2, 0.8)]
    assert pool["q2"] == {"z": [C("R2", 1, 2.0)], "y": [C("R1", 1, 1.0)], "x": [C("R1", 2, 1.0)]}


def test_rbp_and_rrf_pools_disagree_where_they_should() -> None:
    # v is second in two runs, u and w first in one each.
    runs = {"S1": {"q": {"u": 1.0, "v": 0.5}}, "S2": {"q": {"w": 1.0, "v": 0.5}}}
    # RRF: v 2/62 = 0.0323 beats u, w 1/61 = 0.0164.
    assert list(rrf_pool(runs, 1)["q"]) == ["v"]
    # RBP p = 0.2: u, w 0.8 beat v 2 * 0.2 * 0.8 = 0.32 (top-heavy); w before u on the tie.
    assert rbp_priorities(runs, p=0.2)["q"] == pytest.approx({"w": 0.8, "u": 0.8, "v": 0.32})
    assert list(rbp_pool(runs, 2, p=0.2)["q"]) == ["w", "u"]
    # RBP p = 0.9 is patient: v 2 * 0.1 * 0.9 = 0.18 beats 0.1.
    assert list(rbp_pool(runs, 1, p=0.9)["q"]) == ["v"]
    with pytest.raises(ValueError, match="p must be a number strictly between 0 and 1"):
        rbp_pool(runs, 1, p=1.0)
    with pytest.raises(ValueError, match="size must be a positive integer"):
        rrf_pool(runs, 0)


def test_pool_statistics_exact() -> None:
    stats = pool_statistics(depth_pool(RUNS, 2), RUNS)
    assert stats.runs == ["R1", "R2", "R3"]
    assert stats.queries == ["q1", "q2", "q3"]
    assert stats.pool_size == {"q1": 4, "q2": 3, "q3": 1}
    assert stats.total == 8
    assert stats.contributed == {"R1": 4, "R2": 3, "R3": 3}
    assert stats.unique == {"R1": 3, "R2": 2, "R3": 2}  # b x y | c z | g m
    assert stats.contributed_per_query["R1"] == {"q1": 2, "q2": 2, "q3": 0}
    assert stats.unique_per_query["R3"] == {"q1": 1, "q2": 0, "q3": 1}
    # Jaccard per query, averaged over queries where either run has a document:
    # R1-R2: q1 {a,b} vs {c,a} 1/3, q2 {y,x} vs {z} 0 (q3: both empty, skipped) -> 1/6
    # R1-R3: q1 {a,b} vs {g,a} 1/3, q2 0, q3 0 -> 1/9;  R2-R3: 1/3, 0, 0 -> 1/9
    assert stats.overlap == [
        pytest.approx([1.0, 1 / 6, 1 / 9]),
        pytest.approx([1 / 6, 1.0, 1 / 9]),
        pytest.approx([1 / 9, 1 / 9, 1.0]),
    ]


def test_pool_statistics_with_depth_and_empty_run() -> None:
    runs = {**RUNS, "R4": {}}
    stats = pool_statistics(depth_pool(runs, 2), runs, depth=3)
    assert stats.contributed["R4"] == 0 and stats.unique["R4"] == 0
    # top 3: q1 R1 {a,b,c} vs R2 {c,a,e}: 2/4; q2 {y,x} vs {z}: 0 -> 0.25
    assert stats.overlap[0][1] == pytest.approx(0.25)
    assert math.isnan(stats.overlap[3][3])  # R4 never retrieved anything
    assert stats.overlap[0][3] == 0.0  # R1 vs R4: q1 0, q2 0, q3 skipped
    with pytest.raises(ValueError, match="not among the runs given"):
        pool_statistics(depth_pool(RUNS, 2), {"R1": R1})


# --------------------------------------------------------------------------- selection

S1: Run = {"q1": {"a": 0.2, "b": 0.8, "c": 0.5, "g": 0.8, "outside": 100.0}}
S2: Run = {"q1": {"a": 10.0, "c": 30.0}}


def test_ensemble_and_select_top_exact() -> None:
    pool = depth_pool(RUNS, 2)  # q1 {a, b, c, g}, q2 {y, x, z}, q3 {m}
    # S1 over the pooled documents only (the 100.0 outside the pool is ignored):
    #   a 0, b 1, c 0.5, g 1;  S2: a 0, c 1, b and g missing -> 0.
    # mean: a 0, b 0.5, c 0.75, g 0.5
    ens = ensemble_scores(pool, {"rerank": S1, "other": S2})
    assert ens["q1"] == pytest.approx({"a": 0.0, "b": 0.5, "c": 0.75, "g": 0.5})
    assert ens["q2"] == {"z": 0.0, "y": 0.0, "x": 0.0}
    assert select_top(pool, {"rerank": S1, "other": S2}, 2) == {"q1": ["c", "g"], "q2": ["z", "y"], "q3": ["m"]}
    assert select_top(pool, [S1, S2], 3)["q1"] == ["c", "g", "b"]  # g, b tie at 0.5: doc id descending
    # weighted 3:1 -> a 0, b 0.75, c (1.5 + 1) / 4 = 0.625, g 0.75
    assert select_top(pool, [S1, S2], 2, weights=[3, 1])["q1"] == ["g", "b"]
    # one scorer
    assert select_top(pool, [S2], 1)["q1"] == ["c"]
    with pytest.raises(TypeError, match="a single run as \\[run\\]"):
        select_top(pool, S1, 2)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        select_top(pool, [S1], 0)


def test_select_all() -> None:
    pool = depth_pool(RUNS, 2)
    # q1: a best rank 1 from 3 runs; c and g rank 1 from one run (g > c); b rank 2
    assert select_all(pool) == {"q1": ["a", "g", "c", "b"], "q2": ["z", "y", "x"], "q3": ["m"]}


# --------------------------------------------------------------------------- near-duplicates

# Two tight clusters and a loner, given in a scrambled preference order.
DOCS = ["d2", "d4", "d1", "d6", "d5", "d3"]
VECTORS = {
    "d1": [1.0, 0.0, 0.0],
    "d2": [0.99, 0.1, 0.0],  # cos(d1, d2) = 0.995
    "d3": [2.0, 0.0, 0.1],  # not unit length: normalised first; cos(d1, d3) = 0.9988
    "d4": [0.0, 1.0, 0.0],
    "d5": [0.05, 1.0, 0.0],  # cos(d4, d5) = 0.9988
    "d6": [0.0, 0.0, 1.0],
}
EMB = np.array([VECTORS[d] for d in DOCS])
CLUSTERED = (["d2", "d4", "d6"], {"d1": "d2", "d5": "d4", "d3": "d2"})


def test_dedupe_by_similarity_exact() -> None:
    assert dedupe_by_similarity(DOCS, EMB, threshold=0.95) == CLUSTERED
    assert dedupe_by_similarity(DOCS, EMB, threshold=0.999) == (["d2", "d4", "d1", "d6", "d5", "d3"], {})
    assert dedupe_by_similarity(["x"], [[1.0, 2.0]]) == (["x"], {})
    assert dedupe_by_similarity([], np.zeros((0, 3))) == ([], {})


def test_dedupe_by_clustering_exact() -> None:
    # unit-vector distances inside the clusters are <= 0.1, between them >= 1.3
    assert dedupe_by_clustering(DOCS, EMB, distance_threshold=0.5) == CLUSTERED
    assert dedupe_by_clustering(DOCS, EMB, distance_threshold=0.0) == (DOCS, {})
    everything = dedupe_by_clustering(DOCS, EMB, distance_threshold=100.0)
    assert everything == (["d2"], {d: "d2" for d in DOCS[1:]})


def test_ward_does_not_chain_but_threshold_does() -> None:
    # unit vectors at 0, 14 and 30 degrees: neighbours have cosine 0.970 and 0.961,
    # the ends 0.866.  Ward: 0 and 14 merge at 2 sin 7deg = 0.244; the third joins at
    # sqrt(4/3) * 0.397 = 0.459 > 0.3.  The threshold graph links all three.
    ids = ["p0", "p14", "p30"]
    emb = [[math.cos(math.radians(t)), math.sin(math.radians(t)), 0.0] for t in (0, 14, 30)]
    assert dedupe_by_clustering(ids, emb, distance_threshold=0.3) == (["p0", "p30"], {"p14": "p0"})
    assert dedupe_by_similarity(ids, emb, threshold=0.95) == (["p0"], {"p14": "p0", "p30": "p0"})


def test_dedupe_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="given twice"):
        dedupe_by_similarity(["a", "a"], [[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="shape \\(2, dim\\)"):
        dedupe_by_similarity(["a", "b"], [[1, 0]])
    with pytest.raises(ValueError, match="zero embedding"):
        dedupe_by_clustering(["a", "b"], [[1, 0], [0, 0]], distance_threshold=0.1)
    with pytest.raises(ValueError, match="distance_threshold"):
        dedupe_by_clustering(["a", "b"], [[1, 0], [0, 1]], distance_threshold=-1)


def test_dedupe_pool_per_query() -> None:
    selection = {"q1": DOCS, "q2": ["d6", "d1"], "q3": []}
    expected = (
        {"q1": ["d2", "d4", "d6"], "q2": ["d6", "d1"], "q3": []},
        {"q1": {"d1": "d2", "d5": "d4", "d3": "d2"}, "q2": {}, "q3": {}},
    )
    assert dedupe_pool(selection, VECTORS) == expected
    asked: list[list[str]] = []

    def lookup(ids: list[str]) -> np.ndarray:
        asked.append(ids)
        return np.array([VECTORS[d] for d in ids])

    assert dedupe_pool(selection, lookup, method="ward", distance_threshold=0.5) == expected
    assert asked == [DOCS, ["d6", "d1"]]
    with pytest.raises(KeyError, match="no embedding for document"):
        dedupe_pool({"q1": ["d1", "nope"]}, VECTORS)
    with pytest.raises(ValueError, match="needs distance_threshold"):
        dedupe_pool(selection, VECTORS, method="ward")


# --------------------------------------------------------------------------- LeCaRD acceptance


def _raw_lecard_lists() -> dict[str, dict[str, list[str]]]:
    """Every LeCaRD ranking as ``{run: {qid: [docid, ...] best first}}``, in plain Python."""
    lists: dict[str, dict[str, list[str]]] = {}
    for path in sorted((LECARD / "prediction").glob("*.json")):
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        objects = [json.loads(line) for line in lines] if len(lines) > 1 else [json.loads("\n".join(lines))]
        for k, obj in enumerate(objects, start=1):
            name = path.stem if len(objects) == 1 else f"{path.stem}_{k}"
            ascending = path.stem in ("bm25_top100", "tfidf_top100")  # stored worst first
            lists[name] = {qid: [str(d) for d in (reversed(docs) if ascending else docs)] for qid, docs in obj.items()}
    return lists


def _runs_of(source: CollectionSource) -> dict[str, Run]:
    """The runs of a collection source, read from their streams."""
    runs: dict[str, Run] = {}
    for name, stream in source.runs.items():
        run: Run = {}
        for entry in stream():
            run.setdefault(entry.query_id, {})[entry.doc_id] = entry.score
        runs[name] = run
    return runs


def _expected_depth_pool(
    lists: dict[str, dict[str, list[str]]], depth: int
) -> dict[str, dict[str, set[tuple[str, int]]]]:
    """Computed independently of core.pooling: the union of each list's first ``depth``, with (run, index + 1)."""
    expected: dict[str, dict[str, set[tuple[str, int]]]] = {}
    for name, per_query in lists.items():
        for qid, docs in per_query.items():
            for index, doc in enumerate(docs[:depth]):
                expected.setdefault(qid, {}).setdefault(doc, set()).add((name, index + 1))
    return expected


def _expected_unique(expected: dict[str, dict[str, set[tuple[str, int]]]], names: list[str]) -> dict[str, int]:
    """Per run, the pooled (query, document) pairs that no other run contributed."""
    unique = {name: 0 for name in names}
    for docs in expected.values():
        for contributors in docs.values():
            runs = {name for name, _ in contributors}
            if len(runs) == 1:
                unique[runs.pop()] += 1
    return unique


@pytest.mark.shared_data
def test_lecard_depth30_pool_matches_raw_json() -> None:
    if not LECARD.is_dir():
        pytest.skip(f"LeCaRD sample data not found at {LECARD}")
    from core.formats.jsonmaps import read_lecard

    runs = _runs_of(read_lecard(LECARD))
    raw = _raw_lecard_lists()
    assert (
        sorted(runs)
        == sorted(raw)
        == [
            "bert_1",
            "bert_2",
            "bert_3",
            "bert_4",
            "bm25_top100",
            "combined_top100",
            "lm_top100",
            "tfidf_top100",
        ]
    )

    pool = depth_pool(runs, 30)

    expected = _expected_depth_pool(raw, 30)
    assert set(pool) == set(expected)
    assert {q: len(d) for q, d in pool.items()} == {q: len(d) for q, d in expected.items()}
    got = {q: {d: {(c.run, c.rank) for c in cs} for d, cs in docs.items()} for q, docs in pool.items()}
    assert got == expected
    # scores are LeCaRD's rank-derived n - i
    for qid, docs in pool.items():
        for contributions in docs.values():
            for c in contributions:
                n = len(raw[c.run][qid])
                assert c.score == n - (c.rank - 1)

    stats = pool_statistics(pool, runs)
    assert stats.unique == _expected_unique(expected, list(raw))
    assert stats.total == sum(len(d) for d in expected.values())
    assert stats.pool_size == {q: len(d) for q, d in expected.items()}
    # the reversal matters: bm25's stored *last* document is its rank 1, its stored first is rank 100
    stored = json.loads((LECARD / "prediction" / "bm25_top100.json").read_text(encoding="utf-8"))
    for qid, docs in stored.items():
        assert C("bm25_top100", 1, float(len(docs))) in pool[qid][str(docs[-1])]
        if len(docs) > 30 and str(docs[0]) in pool[qid]:
            assert all(c.run != "bm25_top100" for c in pool[qid][str(docs[0])])


def test_take_pool_fills_the_budget_depth_by_depth():
    from core.pooling import Contribution, take_pool

    runs = {
        "a": {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}},
        "b": {"q": {"d2": 0.9, "d4": 0.8, "d5": 0.7}, "r": {"x": 1.0}},
    }
    pool = take_pool(runs, 3)
    # depth 1: d1 (a), d2 (b); depth 2: d2 already taken, d4 (b) fills the budget of 3
    assert list(pool["q"]) == ["d1", "d2", "d4"]
    assert pool["q"]["d2"] == [Contribution("a", 2, 2.0), Contribution("b", 1, 0.9)]
    assert pool["q"]["d4"] == [Contribution("b", 2, 0.8)]
    assert pool["r"] == {"x": [Contribution("b", 1, 1.0)]}
    assert list(take_pool(runs, 10)["q"]) == ["d1", "d2", "d4", "d3", "d5"]
