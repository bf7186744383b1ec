"""The detectors' precision/recall table on benchmarks/data/detector_pairs.jsonl, counted exactly.

The labelled pairs are written for this table (Chinese and English, each
labelled with the categories that truly apply); ``benchmarks/bench_detectors.py``
prints the same table and the README quotes it.  The exact TP/FP/FN per
category are asserted, so a change to a detector shows here as a changed
count: update the table (and the README) when the change is an improvement.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from core.detectors import detect_numeral_mismatch, detect_syntactic_mismatch

REPO = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_detectors", REPO / "benchmarks" / "bench_detectors.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_detectors", module)
    spec.loader.exec_module(module)
    return module


bench = _bench()


# --------------------------------------------------------------------------- ordinals and from-to, missed before


@pytest.mark.parametrize(
    "query, passage, q_value, p_value, marked",
    [
        ("第三届进博会什么时候举办", "第五届中国国际进口博览会于2022年11月在上海举办。", "3", "5", "第五"),
        ("第3次全国人口普查", "第七次全国人口普查结果", "3", "7", "第七"),
        ("第二十三届冬奥会", "第２４届冬奥会", "23", "24", "第２４"),  # full-width digits through NFKC
        (
            "who won the third season of the voice",
            "The fifth season of The Voice was won by Jordan Smith.",
            "3",
            "5",
            "fifth",
        ),
        ("the 3rd Olympic Games", "The 21st Olympic Games", "3", "21", "21st"),
    ],
)
def test_ordinals_that_differ_are_a_numeral_mismatch(query, passage, q_value, p_value, marked) -> None:
    [s] = detect_numeral_mismatch(query, passage)
    assert s.evidence == {"query": [q_value], "passage": [p_value]}
    assert [passage[a:b] for a, b in s.spans] == [marked]


@pytest.mark.parametrize(
    "query, passage",
    [
        ("第三届进博会成交额", "第三届进博会累计意向成交726.2亿美元。"),
        ("第3届进博会", "第三届进博会"),
        ("when was the 3rd Olympic Games", "The third Olympic Games took place in St. Louis in 1904."),
        ("第三届进博会", "进博会共举办了5次"),  # an ordinal is not compared with a count
    ],
)
def test_equal_ordinals_are_silent(query, passage) -> None:
    assert detect_numeral_mismatch(query, passage) == []


def test_english_from_to_reversal_with_a_verb_after_the_passage_end() -> None:
    passage = "Daily flights from Shanghai to Beijing depart every hour."
    [s] = detect_syntactic_mismatch("flights from Beijing to Shanghai", passage)
    assert s.evidence == {"query": ["Beijing", "Shanghai"], "passage": ["Shanghai", "Beijing"], "relation": "from-to"}
    assert [passage[a:b] for a, b in s.spans] == ["Shanghai", "Beijing"]
    assert (
        detect_syntactic_mismatch("flights from Beijing to Shanghai", "Flights from Beijing to Shanghai depart hourly.")
        == []
    )


def test_english_from_to_reversal_with_a_longer_passage_end() -> None:
    [s] = detect_syntactic_mismatch(
        "distance from new york to boston", "The drive from Boston to New York City covers about 215 miles."
    )
    assert s.evidence["passage"] == ["Boston", "New York City"]


# --------------------------------------------------------------------------- the table


# (labelled pairs, TP, FP, FN) per category, as benchmarks/bench_detectors.py prints them and the README quotes
TABLE = {
    "numeral_mismatch": (6, 6, 0, 0),
    "entity_mismatch": (5, 4, 0, 1),
    "syntactic_mismatch": (6, 6, 0, 0),
    "term_overlap": (4, 3, 0, 1),
    "typo": (4, 3, 0, 1),
    "false_negative": (3, 3, 1, 0),
    "main_topic": (6, 5, 0, 1),
    "coreference": (4, 4, 0, 0),
    "acronym": (4, 3, 0, 1),
    "overall": (42, 37, 1, 5),
}
# the pairs the detectors get wrong, each a known limit of a rule (see the pair's "note" in the data file)
WRONG = {
    "ent-en-city": ({"entity_mismatch"}, set()),  # a single sentence-initial name is not read as one
    "ovl-zh-cold": ({"term_overlap"}, set()),  # jieba keeps 水果店 and 感冒药 whole: only 什么 is shared
    "typo-en-recieve": ({"typo"}, set()),  # a transposition is two edits
    "fn-en-irrelevant": (set(), {"false_negative"}),  # without reference answers any unjudged top passage is one
    "topic-zh-palace": ({"main_topic"}, set()),  # jieba keeps 故宫博物院 whole in the title, 故宫 in the query
    "acr-en-gdp": ({"acronym"}, set()),  # an acronym the document never defines
}


@pytest.fixture(scope="module")
def scored():
    pairs = bench.load_pairs()
    rows, wrong = bench.score_table(pairs)
    return pairs, rows, wrong


def test_the_labelled_set(scored) -> None:
    pairs, _, _ = scored
    assert len(pairs) == 61
    assert {p["lang"] for p in pairs} == {"zh", "en"}
    assert sum(not p["expected"] for p in pairs) == 23  # pairs no category applies to
    # the cases the detectors missed before ordinals and English from-to reversals were read
    ids = {p["id"] for p in pairs}
    assert {"num-zh-ordinal-session", "num-en-ordinal-word", "syn-en-flights", "syn-en-drive", "syn-en-bus"} <= ids


def test_precision_recall_table_counts(scored) -> None:
    _, rows, wrong = scored
    assert {r.category: (r.pairs, r.tp, r.fp, r.fn) for r in rows} == TABLE
    assert {pid: (expected, got) for pid, expected, got in wrong} == WRONG
    overall = rows[-1]
    assert (round(overall.precision, 4), round(overall.recall, 4)) == (round(37 / 38, 4), round(37 / 42, 4))


def test_the_printed_table_is_the_readme_one(scored, capsys) -> None:
    pairs, rows, _ = scored
    assert bench.main(["--quiet"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == bench.markdown(rows, len(pairs))
    assert "| syntactic_mismatch | 6 | 6 | 0 | 0 | 1.00 | 1.00 |" in printed
    assert "| **overall** | 42 | 37 | 1 | 5 | 0.97 | 0.88 |" in printed
    assert printed in (REPO / "README.md").read_text(encoding="utf-8")
