"""Tests for core.metrics: hand-computed values, trec_eval semantics, and
agreement with bare pytrec_eval and with straightforward Python versions."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from array import array
from pathlib import Path

import pytest
import pytrec_eval

from core.metrics import MAX_EXP_GRADE, Measure, evaluate, format_json, format_tsv, parse_measure

LOG2_3 = math.log2(3)


def one(results, measure, qid="q"):
    return results[measure][qid]


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text, canonical",
    [
        ("map", "MAP"),
        ("MAP", "MAP"),
        ("AP", "MAP"),
        ("rr", "RR"),
        ("RR@5", "RR@5"),
        ("mrr@10", "MRR@10"),
        ("MRR", "MRR"),
        ("p@10", "P@10"),
        ("P(rel=2)@10", "P(rel=2)@10"),
        (" p ( rel = 2 ) @ 10 ", "P(rel=2)@10"),
        ("r@100", "R@100"),
        ("Recall@100", "R@100"),
        ("ndcg@10", "nDCG@10"),
        ("NDCG", "nDCG"),
        ("ndcg_exp@20", "nDCG_exp@20"),
        ("rprec", "Rprec"),
        ("Rprec(rel=3)", "Rprec(rel=3)"),
        ("success@1", "Success@1"),
        ("accuracy@5", "Accuracy@5"),
        ("judged@10", "Judged@10"),
    ],
)
def test_parse_canonical_spelling(text, canonical):
    m = parse_measure(text)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m  # the canonical spelling parses back


def test_parse_fields_and_frozen():
    m = parse_measure("P(rel=2)@10")
    assert (m.name, m.cutoff, m.rel) == ("P", 10, 2)
    assert parse_measure("nDCG@10") == Measure("nDCG", 10)
    assert parse_measure(m) is m
    with pytest.raises(AttributeError):
        m.cutoff = 5  # type: ignore[misc]


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("foo@10", "unknown measure 'foo'"),
        ("", "cannot parse"),
        ("P@@3", "cannot parse"),
        ("P", "needs a cutoff"),
        ("Judged", "needs a cutoff"),
        ("Success", "needs a cutoff"),
        ("MAP@10", "takes no cutoff"),
        ("Rprec@5", "takes no cutoff"),
        ("P@0", "positive integer"),
        ("P@-3", "positive integer"),
        ("P@1.5", "positive integer"),
        ("P@ten", "positive integer"),
        ("nDCG(rel=2)@10", "takes no relevance level"),
        ("Judged(rel=1)@10", "takes no relevance level"),
        ("P(rel=0)@10", "rel must be an integer >= 1"),
        ("P(rel=x)@10", "rel must be an integer >= 1"),
        ("P(gain=2)@10", "unknown parameter"),
        ("P(rel=1,rel=2)@10", "given twice"),
    ],
)
def test_parse_errors(text, fragment):
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        parse_measure(text)


def test_measure_constructor_validates():
    with pytest.raises(ValueError):
        Measure("ndcg", 10)  # not the canonical name
    with pytest.raises(ValueError):
        Measure("P", True)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Measure("P")


def test_bad_level():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0}}
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="level"):
            evaluate(qrels, run, ["P@1"], level=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------- ordering


def test_ties_broken_by_docid_descending():
    qrels = {"q": {"a": 1, "b": 0}}
    for run in ({"q": {"a": 1.0, "b": 1.0}}, {"q": {"b": 1.0, "a": 1.0}}):
        res = evaluate(qrels, run, ["P@1", "RR", "MRR@1", "MRR@2"])
        # b > a, so b is ranked first
        assert one(res, "P@1") == 0.0
        assert one(res, "RR") == 0.5
        assert one(res, "MRR@1") == 0.0
        assert one(res, "MRR@2") == 0.5


def test_docid_order_is_byte_order_for_non_ascii():
    # "é" (UTF-8 C3 A9) sorts after "z" (7A) in byte order, so it ranks first
    qrels = {"q": {"z": 1}}
    res = evaluate(qrels, {"q": {"z": 2.0, "é": 2.0}}, ["RR"])
    assert one(res, "RR") == 0.5


def test_scores_compared_in_single_precision_like_trec_eval():
    qrels = {"q": {"a": 1}}
    # 0.1 + 1e-9 and 0.1 are the same 32-bit float: a tie, b wins on docid
    assert one(evaluate(qrels, {"q": {"a": 0.1 + 1e-9, "b": 0.1}}, ["RR"]), "RR") == 0.5
    # 1e-7 apart survives single precision
    assert one(evaluate(qrels, {"q": {"a": 0.1 + 1e-7, "b": 0.1}}, ["RR"]), "RR") == 1.0


def test_run_rank_is_ignored_scores_decide():
    qrels = {"q": {"a": 1}}
    res = evaluate(qrels, {"q": {"a": 0.5, "b": 0.9, "c": 0.1}}, ["RR", "P@1"])
    assert one(res, "RR") == 0.5 and one(res, "P@1") == 0.0


# ---------------------------------------------------------------- levels


def test_relevance_level_binary_measures_but_not_ndcg():
    qrels = {"q": {"a": 1, "b": 2, "c": 0}}
    run = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    names = ["P@1", "R@1", "RR", "MAP", "Rprec", "Success@1", "nDCG@3", "nDCG"]
    at1 = evaluate(qrels, run, names, level=1)
    at2 = evaluate(qrels, run, names, level=2)
    # level 1: a and b relevant
    assert one(at1, "P@1") == 1.0 and one(at1, "R@1") == 0.5 and one(at1, "RR") == 1.0
    assert one(at1, "MAP") == pytest.approx(1.0) and one(at1, "Rprec") == 1.0
    # level 2: only b (rank 2) is relevant; a (grade 1) is not
    assert one(at2, "P@1") == 0.0 and one(at2, "R@1") == 0.0 and one(at2, "Success@1") == 0.0
    assert one(at2, "RR") == 0.5
    assert one(at2, "MAP") == pytest.approx(0.5)
    assert one(at2, "Rprec") == 0.0  # R = 1, the top document is a
    # nDCG: grade-1 a still gains 1, whatever the level
    expected = (1 + 2 / LOG2_3) / (2 + 1 / LOG2_3)
    for res in (at1, at2):
        assert one(res, "nDCG@3") == pytest.approx(expected, abs=1e-12)
        assert one(res, "nDCG") == pytest.approx(expected, abs=1e-12)


def test_explicit_rel_overrides_level_in_one_call():
    qrels = {"q": {"a": 1, "b": 2}}
    run = {"q": {"a": 3.0, "b": 2.0}}
    res = evaluate(qrels, run, ["P@1", "P(rel=2)@1", "RR(rel=2)", "nDCG@2"], level=1)
    assert one(res, "P@1") == 1.0
    assert one(res, "P(rel=2)@1") == 0.0
    assert one(res, "RR(rel=2)") == 0.5
    assert list(res) == ["P@1", "P(rel=2)@1", "RR(rel=2)", "nDCG@2"]
    # only-rel measures: nDCG rides along, unchanged
    res2 = evaluate(qrels, run, ["P(rel=2)@1", "nDCG@2"], level=1)
    assert one(res2, "nDCG@2") == one(res, "nDCG@2")


# ---------------------------------------------------------------- queries


def test_missing_queries_score_zero_and_intersection_excludes_them():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "empty": {}}
    run = {"q1": {"a": 1.0}, "q3": {"x": 1.0}}  # q2 missing, q3 unjudged
    res = evaluate(qrels, run, ["P@1", "nDCG@10", "MRR@10", "Judged@1"])
    for name in res:
        assert res[name]["q1"] == 1.0
        assert res[name]["q2"] == 0.0
        assert "q3" not in res[name] and "empty" not in res[name]
        assert res[name]["all"] == 0.5
        assert list(res[name])[-1] == "all"
    inter = evaluate(qrels, run, ["P@1", "nDCG@10"], intersection=True)
    assert inter["P@1"] == {"q1": 1.0, "all": 1.0}
    assert inter["nDCG@10"] == {"q1": 1.0, "all": 1.0}


def test_no_evaluated_queries_mean_is_zero():
    assert evaluate({}, {"q": {"a": 1.0}}, ["MAP"]) == {"MAP": {"all": 0.0}}
    assert evaluate({"q": {"a": 1}}, {}, ["MAP"], intersection=True) == {"MAP": {"all": 0.0}}
    assert evaluate({"q": {"a": 1}}, {}, ["MAP"]) == {"MAP": {"q": 0.0, "all": 0.0}}


def test_duplicate_spellings_evaluated_once_in_given_order():
    res = evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["ndcg@10", "MAP", "nDCG@10", "map"])
    assert list(res) == ["nDCG@10", "MAP"]
    assert evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, []) == {}


def test_query_id_all_is_reserved():
    with pytest.raises(ValueError, match="reserved"):
        evaluate({"all": {"a": 1}}, {"all": {"a": 1.0}}, ["MAP"])


def test_query_ids_that_trec_eval_mistakes_for_its_cache():
    # bare pytrec_eval serves "no_query" the previous query's cached results
    evaluate({"x": {"a": 1, "b": 1, "c": 1}}, {"x": {"a": 1.0, "b": 0.9, "c": 0.8}}, ["P@3"])
    qrels = {"no_query": {"z": 1}, "no query": {"z": 1}, "no_query#pooljudge0": {"z": 2}}
    run = {q: {"a": 1.0, "b": 0.9, "z": 0.1} for q in qrels}
    res = evaluate(qrels, run, ["P@3", "MAP", "Judged@3", "nDCG_exp@3"])
    for q in qrels:
        assert res["P@3"][q] == pytest.approx(1 / 3)
        assert res["MAP"][q] == pytest.approx(1 / 3)
        assert res["Judged@3"][q] == pytest.approx(1 / 3)
        assert res["nDCG_exp@3"][q] == pytest.approx(0.5)
    assert set(res["MAP"]) == {*qrels, "all"} and list(res["MAP"])[-1] == "all"


def test_type_errors_are_explained():
    with pytest.raises(TypeError, match="scores"):
        evaluate({"q": {"a": 1}}, {"q": {"a": "high"}}, ["MAP"])  # type: ignore[dict-item]


def test_all_negative_query_scores_zero_and_does_not_hang():
    # bare pytrec_eval loops forever on this sequence (stale trec_eval state
    # for a query whose judgments are all negative); run it in a child so a
    # regression fails instead of hanging the suite
    code = """
from core.metrics import evaluate
qrels = {"a": {"x": 3, "y": 2, "z": 1}, "b": {"x": -1, "y": -2}, "c": {"x": -1}}
run = {"a": {"x": 1.0, "y": 0.5}, "b": {"x": 1.0, "y": 0.5, "z": 0.2}, "c": {"x": 1.0}}
for order in (["a", "b", "c"], ["b", "a", "c"], ["c", "b", "a"]):
    res = evaluate(qrels, {q: run[q] for q in order}, ["nDCG", "nDCG@2", "MAP", "P@2", "Judged@2"])
    assert res["nDCG"]["b"] == res["nDCG@2"]["c"] == res["MAP"]["b"] == res["P@2"]["c"] == 0.0
    assert res["Judged@2"]["b"] == 1.0 and res["Judged@2"]["c"] == 0.5
print("ok")
"""
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


# ---------------------------------------------------------------- measures


def test_mrr_cutoff_boundary():
    qrels = {"at3": {"r": 1}, "at4": {"r": 1}}
    run = {
        "at3": {"x1": 4.0, "x2": 3.0, "r": 2.0, "x4": 1.0},
        "at4": {"x1": 4.0, "x2": 3.0, "x3": 2.0, "r": 1.0},
    }
    res = evaluate(qrels, run, ["RR", "MRR@3", "RR@3", "MRR", "MRR@4"])
    assert res["RR"]["at3"] == pytest.approx(1 / 3) and res["RR"]["at4"] == 0.25
    assert res["MRR@3"]["at3"] == pytest.approx(1 / 3)
    assert res["MRR@3"]["at4"] == 0.0
    assert res["RR@3"] == res["MRR@3"]
    assert res["MRR"] == res["RR"]
    assert res["MRR@4"]["at4"] == 0.25
    assert res["MRR@3"]["all"] == pytest.approx(1 / 6)


def test_mrr_boundary_at_large_ranks():
    # 1/k is not exact in binary; the integer rank comparison must still hold
    for k in (3, 7, 10, 49, 100, 999):
        docs = {f"d{i:04d}": float(2000 - i) for i in range(1, k + 2)}
        qrels = {"exact": {f"d{k:04d}": 1}, "next": {f"d{k + 1:04d}": 1}}
        res = evaluate(qrels, {"exact": docs, "next": docs}, [f"MRR@{k}"])
        assert res[f"MRR@{k}"]["exact"] == pytest.approx(1 / k)
        assert res[f"MRR@{k}"]["next"] == 0.0


def test_ndcg_linear_and_exp_by_hand():
    qrels = {"q": {"a": 3, "b": 0, "c": 1, "d": 2, "e": -1}}  # d never retrieved
    run = {"q": {"c": 4.0, "a": 3.0, "e": 2.0, "b": 1.0, "n": 0.5}}
    res = evaluate(qrels, run, ["nDCG@3", "nDCG", "nDCG_exp@3", "nDCG_exp", "nDCG_exp@1"])
    # ranking c(1) a(3) e(-1) b(0) n(unjudged)
    dcg_lin = 1 / math.log2(2) + 3 / LOG2_3
    assert one(res, "nDCG@3") == pytest.approx(dcg_lin / (3 + 2 / LOG2_3 + 1 / 2), abs=1e-12)
    assert one(res, "nDCG") == pytest.approx(dcg_lin / (3 + 2 / LOG2_3 + 1 / 2), abs=1e-12)
    dcg_exp = (2**1 - 1) + (2**3 - 1) / LOG2_3
    idcg_exp = (2**3 - 1) + (2**2 - 1) / LOG2_3 + (2**1 - 1) / 2
    assert one(res, "nDCG_exp@3") == pytest.approx(dcg_exp / idcg_exp, abs=1e-12)
    assert one(res, "nDCG_exp") == pytest.approx(dcg_exp / idcg_exp, abs=1e-12)
    assert one(res, "nDCG_exp@1") == pytest.approx(1 / 7, abs=1e-12)


def test_ndcg_exp_equals_linear_for_binary_grades_and_rejects_huge_grades():
    qrels = {"q": {"a": 1, "b": 0, "c": 1}}
    run = {"q": {"a": 1.0, "b": 2.0, "c": 0.5}}
    res = evaluate(qrels, run, ["nDCG@2", "nDCG_exp@2"])
    assert one(res, "nDCG@2") == one(res, "nDCG_exp@2")
    with pytest.raises(ValueError, match="nDCG_exp"):
        evaluate({"q": {"a": MAX_EXP_GRADE + 1}}, run, ["nDCG_exp@10"])
    evaluate({"q": {"a": MAX_EXP_GRADE + 1}}, run, ["nDCG@10"])  # linear is fine
    with pytest.raises(TypeError, match="int"):
        evaluate({"q": {"a": 2.5}}, run, ["nDCG_exp@10"])  # type: ignore[dict-item]


def test_judged_at_k():
    qrels = {"q": {"a": 0, "b": 2, "c": -1, "unretrieved": 1}}
    run = {"q": {"x": 5.0, "a": 4.0, "y": 3.0, "c": 2.0, "b": 1.0}}
    res = evaluate(qrels, run, ["Judged@1", "Judged@2", "Judged@5", "Judged@10"])
    assert one(res, "Judged@1") == 0.0
    assert one(res, "Judged@2") == 0.5
    assert one(res, "Judged@5") == pytest.approx(3 / 5)  # negative grades count as judged
    assert one(res, "Judged@10") == pytest.approx(3 / 10)  # denominator k, like P@k
    # ties in trec_eval order: y > x, so y (unjudged) first
    tie = evaluate({"q": {"x": 0}}, {"q": {"x": 1.0, "y": 1.0}}, ["Judged@1"])
    assert one(tie, "Judged@1") == 0.0


def test_accuracy_is_success_under_its_own_name():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"x": 2.0, "a": 1.0}, "q2": {"x": 2.0, "y": 1.5, "b": 1.0}}
    res = evaluate(qrels, run, ["accuracy@2", "Success@2", "Accuracy@1"])
    assert list(res) == ["Accuracy@2", "Success@2", "Accuracy@1"]
    assert res["Accuracy@2"] == res["Success@2"] == {"q1": 1.0, "q2": 0.0, "all": 0.5}
    assert res["Accuracy@1"]["all"] == 0.0


# ---------------------------------------------------------------- formatting


def test_format_tsv_and_json():
    res = {
        "P@1": {"q10": 1.0, "q2": 0.0, "q1": 0.5, "all": 0.5},
        "MAP": {"b": 0.123456, "a": 1.0, "all": 0.561728},
    }
    assert format_tsv(res, per_query=True) == (
        "P@1\tq1\t0.5000\nP@1\tq2\t0.0000\nP@1\tq10\t1.0000\nP@1\tall\t0.5000\n"
        "MAP\ta\t1.0000\nMAP\tb\t0.1235\nMAP\tall\t0.5617\n"
    )
    assert format_tsv(res, per_query=False, digits=2) == "P@1\tall\t0.50\nMAP\tall\t0.56\n"
    with pytest.raises(ValueError):
        format_tsv(res, per_query=False, digits=-1)
    full = json.loads(format_json(res, per_query=True))
    assert list(full["P@1"]) == ["q1", "q2", "q10", "all"]
    assert full["MAP"]["b"] == 0.123456
    assert json.loads(format_json(res, per_query=False)) == {"P@1": {"all": 0.5}, "MAP": {"all": 0.561728}}


def test_format_roundtrip_from_evaluate():
    res = evaluate({"7": {"a": 1}, "11": {"a": 1}}, {"7": {"a": 1.0}}, ["P@1"])
    assert format_tsv(res, per_query=True) == "P@1\t7\t1.0000\nP@1\t11\t0.0000\nP@1\tall\t0.5000\n"


# ---------------------------------------------------------------- reference implementations


def trec_order(docs: dict[str, float]) -> list[str]:
    """Score descending in single precision, then docid descending."""
    scores32 = dict(zip(docs, array("f", docs.values()).tolist()))
    ids = sorted(docs, reverse=True)
    ids.sort(key=lambda d: -scores32[d])  # stable: keeps docid descending within ties
    return ids


def ref_rr_at(ranked, judged, level, k):
    for i, d in enumerate(ranked[:k], 1):
        if judged.get(d, 0) >= level:
            return 1 / i
    return 0.0


def ref_ndcg(ranked, judged, k, gain):
    gains = [gain(judged[d]) if d in judged else 0.0 for d in ranked[:k]]
    dcg = sum(g / math.log2(i + 1) for i, g in enumerate(gains, 1))
    ideal = sorted((gain(g) for g in judged.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 1) for i, g in enumerate(ideal, 1))
    return dcg / idcg if idcg > 0 else 0.0


def ref_judged(ranked, judged, k):
    return sum(1 for d in ranked[:k] if d in judged) / k


def lin_gain(g):
    return float(g) if g > 0 else 0.0


def exp_gain(g):
    return float(2**g - 1) if g > 0 else 0.0


NATIVE = {  # our spelling -> pytrec_eval measure, output key
    "MAP": ("map", "map"),
    "RR": ("recip_rank", "recip_rank"),
    "P@1": ("P.1", "P_1"),
    "P@5": ("P.5", "P_5"),
    "P@10": ("P.10", "P_10"),
    "R@5": ("recall.5", "recall_5"),
    "R@20": ("recall.20", "recall_20"),
    "Rprec": ("Rprec", "Rprec"),
    "Success@1": ("success.1", "success_1"),
    "Accuracy@3": ("success.3", "success_3"),
    "nDCG@3": ("ndcg_cut.3", "ndcg_cut_3"),
    "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10"),
    "nDCG": ("ndcg", "ndcg"),
}


def check_against_references(qrels, run, levels, *, with_exp=True):
    """Every native measure equals bare pytrec_eval; the others equal the references."""
    extra = ["MRR@1", "MRR@3", "MRR@10", "Judged@1", "Judged@5", "Judged@10", "Judged@50"]
    if with_exp:
        extra += ["nDCG_exp@3", "nDCG_exp@10", "nDCG_exp"]
    judged_qids = [q for q, d in qrels.items() if d]
    # bare pytrec_eval must not see all-negative queries (it can hang on them)
    safe_qrels = {q: d for q, d in qrels.items() if d and max(d.values()) >= 0}
    for level in levels:
        res = evaluate(qrels, run, list(NATIVE) + extra, level=level)
        bare = pytrec_eval.RelevanceEvaluator(safe_qrels, {m for m, _ in NATIVE.values()}, relevance_level=level)
        ref = bare.evaluate(run)
        for name, (_, key) in NATIVE.items():
            per = res[name]
            assert set(per) == set(judged_qids) | {"all"}
            for q in judged_qids:
                expected = ref[q][key] if q in ref else 0.0
                assert per[q] == pytest.approx(expected, abs=1e-9), (name, level, q)
            assert per["all"] == pytest.approx(sum(per[q] for q in judged_qids) / len(judged_qids), abs=1e-12)
        for q in judged_qids:
            ranked = trec_order(run.get(q, {}))
            judged = qrels[q]
            for k in (1, 3, 10):
                assert res[f"MRR@{k}"][q] == pytest.approx(ref_rr_at(ranked, judged, level, k), abs=1e-9)
            for k in (1, 5, 10, 50):
                assert res[f"Judged@{k}"][q] == pytest.approx(ref_judged(ranked, judged, k), abs=1e-9)
            for k in (3, 10):
                # the linear reference double-checks the documented formula
                assert res[f"nDCG@{k}"][q] == pytest.approx(ref_ndcg(ranked, judged, k, lin_gain), abs=1e-9)
                if with_exp:
                    assert res[f"nDCG_exp@{k}"][q] == pytest.approx(ref_ndcg(ranked, judged, k, exp_gain), abs=1e-9)
            if with_exp:
                assert res["nDCG_exp"][q] == pytest.approx(ref_ndcg(ranked, judged, 10**9, exp_gain), abs=1e-9)
            assert res["RR"][q] == pytest.approx(ref_rr_at(ranked, judged, level, 10**9), abs=1e-9)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_randomized_against_pytrec_eval_and_references(seed):
    rng = random.Random(seed)
    alphabet = ["a", "b", "Z", "é", "中", "0", "9", " ", ":"]
    qrels, run = {}, {}
    for i in range(200):
        qid = f"q{i}"
        pool = list({"".join(rng.choices(alphabet, k=rng.randint(1, 3))) for _ in range(60)})
        judged = rng.sample(pool, rng.randint(1, min(25, len(pool))))
        if i % 37 == 5:
            qrels[qid] = {d: rng.choice((-1, -2)) for d in judged}  # all negative
        else:
            qrels[qid] = {d: rng.choices((-1, 0, 1, 2, 3), weights=(1, 5, 3, 2, 1))[0] for d in judged}
        if i % 10 == 3:
            continue  # missing from the run
        retrieved = rng.sample(pool, rng.randint(0, min(40, len(pool))))
        run[qid] = {d: rng.choice((0.0, 0.5, 1.0, 1.5, 2.0)) for d in retrieved}  # heavy ties
    run["not-judged"] = {"a": 1.0}
    qrels["no-judgments"] = {}
    check_against_references(qrels, run, levels=(1, 2, 3))


# ---------------------------------------------------------------- shared data (ir_measures test files)


def read_trec(path: Path, columns: int) -> list[list[str]]:
    rows = [line.split() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert all(len(r) == columns for r in rows), path
    return rows


def load_pair(folder: Path, stem: str):
    qrels: dict[str, dict[str, int]] = {}
    for qid, _, doc, grade in read_trec(folder / f"{stem}.qrels", 4):
        qrels.setdefault(qid, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for qid, _, doc, _rank, score, _tag in read_trec(folder / f"{stem}.run", 6):
        assert doc not in run.setdefault(qid, {})
        run[qid][doc] = float(score)
    return qrels, run


@pytest.fixture
def ir_measures_tests(shared_data) -> Path:
    folder = shared_data / "ir_measures-tests"
    if not folder.is_dir():
        pytest.skip("ir_measures-tests is not in ../shared/data")
    return folder


@pytest.mark.shared_data
def test_cwl_files_match_cwl_eval_values(ir_measures_tests):
    qrels, run = load_pair(ir_measures_tests, "cwl")
    res = evaluate(qrels, run, ["MAP", "P@1", "P@5", "P@10", "P@20", "RR"])
    # values from ir_measures' test_cwl_eval.py (a manual run of cwl-eval)
    expected = {
        "MAP": (0.7087, 0.7438, 0.3068),
        "P@1": (1.0, 1.0, 0.0),
        "P@5": (0.6, 0.6, 0.0),
        "P@10": (0.5, 0.6, 0.4),
        "P@20": (0.25, 0.3, 0.2),
        "RR": (1.0, 1.0, 0.1667),
    }
    for name, values in expected.items():
        for qid, value in zip(("T1", "T2", "T3"), values):
            assert res[name][qid] == pytest.approx(value, abs=1e-4), (name, qid)
    check_against_references(qrels, run, levels=(1,))


@pytest.mark.shared_data
def test_compat_files_match_pytrec_eval(ir_measures_tests):
    qrels, run = load_pair(ir_measures_tests, "compat")
    assert max(g for d in qrels.values() for g in d.values()) > MAX_EXP_GRADE
    check_against_references(qrels, run, levels=(1, 2, 4), with_exp=False)
    with pytest.raises(ValueError, match="nDCG_exp"):
        evaluate(qrels, run, ["nDCG_exp@10"])
    # with grades capped at 3 nDCG_exp is fine and matches the reference
    capped = {q: {d: min(g, 3) for d, g in docs.items()} for q, docs in qrels.items()}
    check_against_references(capped, run, levels=(1,))


# ---------------------------------------------------------------- grade and cutoff ranges (issue 10)


@pytest.mark.parametrize("grade", [2**31, -(2**31) - 1, 2**32 + 1, 10**20, 2**70])
def test_grade_outside_trec_eval_int_is_refused(grade):
    # 2**32 + 1 used to score silently as grade 1 and 10**20 to raise SystemError inside pytrec_eval
    qrels = {"q0": {"a": 1}, "q1": {"d1": 1, "d2": grade}}
    with pytest.raises(ValueError) as info:
        evaluate(qrels, {"q1": {"d1": 1.0}}, ["P@1"])
    assert str(info.value) == f"grade {grade} of query 'q1', document 'd2' is outside -2147483648..2147483647"


def test_grade_range_ends_evaluate():
    qrels = {"q": {"a": -(2**31), "b": 1}}
    assert one(evaluate(qrels, {"q": {"a": 2.0, "b": 1.0}}, ["P@1"]), "P@1") == 0.0


def test_large_grade_warns_about_trec_eval_memory():
    # trec_eval allocates 8 bytes per grade level up to the largest grade
    with pytest.warns(RuntimeWarning, match="the largest grade is 2000000: .* about 15 MiB"):
        got = evaluate({"q": {"a": 2_000_000}}, {"q": {"a": 1.0}}, ["nDCG@10"])
    assert one(got, "nDCG@10") == 1.0


@pytest.mark.parametrize("text", ["P@99999999999999999999", "P@2147483648", "nDCG@99999999999999999999"])
def test_cutoff_beyond_trec_eval_int_is_refused(text):
    name = text.split("@")[0]
    with pytest.raises(ValueError) as info:
        parse_measure(text)
    cutoff = text.split("@")[1]
    assert str(info.value) == (
        f"{name}: the cutoff must be a positive integer (at most 2147483647), got {cutoff} (in {text!r})"
    )


def test_largest_cutoff_is_accepted():
    assert parse_measure("P@2147483647") == Measure("P", 2147483647)


def test_level_beyond_trec_eval_int_is_refused():
    with pytest.raises(ValueError, match=r"level must be an integer >= 1 \(at most 2147483647\), got 2147483648"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["P@1"], level=2**31)
    with pytest.raises(ValueError, match=r"rel must be an integer >= 1 \(at most 2147483647\)"):
        parse_measure(f"P(rel={2**40})@10")


@pytest.mark.parametrize("cutoff", ["1.5", "", "abc", "1e3", "٣", "0x10", "10 5"])
def test_malformed_cutoff_names_the_measure_and_the_range(cutoff):
    text = f"P@{cutoff}"
    with pytest.raises(ValueError) as info:
        parse_measure(text)
    assert str(info.value) == (
        f"P: the cutoff must be a positive integer (at most 2147483647), got {cutoff!r} (in {text!r})"
    )


@pytest.mark.parametrize("cutoff", ["0", "-1", "-99999999999999999999"])
def test_cutoff_below_one_names_the_range(cutoff):
    with pytest.raises(ValueError) as info:
        parse_measure(f"MRR@{cutoff}")
    assert str(info.value) == (
        f"MRR: the cutoff must be a positive integer (at most 2147483647), got {int(cutoff)} (in 'MRR@{cutoff}')"
    )


def test_cutoff_of_thousands_of_digits_is_refused_without_converting_it():
    # int() of more than 4300 digits raises its own ValueError about sys.set_int_max_str_digits
    digits = "9" * 5000
    with pytest.raises(ValueError) as info:
        parse_measure(f"P@{digits}")
    assert str(info.value) == (
        "P: the cutoff must be a positive integer (at most 2147483647), got 99999999999999999999... "
        f"(a 5000-digit number) (in 'P@{'9' * 28}...')"
    )
    with pytest.raises(ValueError) as info:
        parse_measure(f"P(rel={digits})@10")
    assert str(info.value) == (
        "P: rel must be an integer >= 1 (at most 2147483647), got 99999999999999999999... "
        f"(a 5000-digit number) (in 'P(rel={'9' * 24}...')"
    )
    assert parse_measure("P@" + "0" * 5000 + "7") == Measure("P", 7)  # leading zeros: still 7, as trec_eval reads it


def test_malformed_rel_names_the_range():
    with pytest.raises(ValueError) as info:
        parse_measure("P(rel=x)@10")
    assert str(info.value) == "P: rel must be an integer >= 1 (at most 2147483647), got 'x' (in 'P(rel=x)@10')"
