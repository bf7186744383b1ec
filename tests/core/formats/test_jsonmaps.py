"""Tests for core.formats.jsonmaps: JSON qrels maps, ranked-list runs and LeCaRD folders."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.jsonmaps import (
    LECARD_ASCENDING_RUNS,
    read_json_qrels,
    read_json_ranked_run,
    read_lecard,
)
from core.types import QrelEntry, Query, RunEntry


def text(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


PRETTY_QRELS = """{
  "q1": {
    "<dbpedia:Arènes>": 3,
    "d2": 0
  },
  "q2": {"d2": -1}
}
"""


def test_json_qrels_pretty_printed_with_lines(tmp_path: Path) -> None:
    path = text(tmp_path / "labels.json", PRETTY_QRELS)
    entries = list(read_json_qrels(path).qrels())
    assert entries == [QrelEntry("q1", "<dbpedia:Arènes>", 3), QrelEntry("q1", "d2", 0), QrelEntry("q2", "d2", -1)]
    assert [e.origin for e in entries] == [f"{path}:3", f"{path}:4", f"{path}:6"]


def test_json_qrels_gzip(tmp_path: Path) -> None:
    path = tmp_path / "labels.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write('{"1": {"2": 1}}')
    assert list(read_json_qrels(path).qrels()) == [QrelEntry("1", "2", 1)]


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        ('{\n  "q1": {\n    "d1": 1,\n    "d1": 2\n  }\n}\n', 4, "key 'd1' appears twice in the same JSON object"),
        ('{\n  "q1": {"d1": 1},\n  "q1": {"d2": 1}\n}\n', 3, "key 'q1' appears twice"),
        ('{\n  "q1": {\n    "d1": "2"\n  }\n}\n', 3, "document 'd1' must be an integer, got \"2\""),
        ('{"q1": {"d1": 2.0}}', 1, "must be an integer, got 2.0"),
        ('{"q1": {"d1": true}}', 1, "must be an integer, got true"),
        ('{\n  "q1": ["d1"]\n}', 2, "judgments of query 'q1' must be an object {docid: grade}, got list"),
        ('{\n  "q1": {"d1": 1},\n  "q2": {"d2": 1\n', 3, "invalid JSON: Expecting ',' delimiter"),
        ("[1, 2]", 1, "expected a JSON object {qid: {docid: grade}}, got list"),
        ("{}", 1, "no judgments"),
        ("\n  \n", 1, "file is empty"),
        ('{"q1": {"": 1}}', 1, "document id is empty"),
        ('{"q1": {"d": 1}}\n{"q2": {"d": 1}}\n', 2, "found several"),
    ],
)
def test_json_qrels_malformed(tmp_path: Path, content: str, line: int, phrase: str) -> None:
    path = text(tmp_path / "labels.json", content)
    with pytest.raises(FormatError) as info:
        list(read_json_qrels(path).qrels())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


def test_json_qrels_missing_and_bad_utf8(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_json_qrels(tmp_path / "none.json")
    assert (info.value.path, info.value.line) == (str(tmp_path / "none.json"), None)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"q1":\n {"d\xe9": 1}}')
    with pytest.raises(FormatError) as info:
        list(read_json_qrels(bad).qrels())
    assert (info.value.path, info.value.line) == (str(bad), 2)
    assert "invalid UTF-8" in info.value.message


def test_ranked_run_scores_follow_list_order(tmp_path: Path) -> None:
    path = text(tmp_path / "bm25_top3.json", '{"q1": [30, "d:b", 10], "q2": ["x"], "q3": []}')
    source = read_json_ranked_run(path)
    assert list(source.runs) == ["bm25_top3"]
    assert list(source.runs["bm25_top3"]()) == [
        RunEntry("q1", "30", 3.0),
        RunEntry("q1", "d:b", 2.0),
        RunEntry("q1", "10", 1.0),
        RunEntry("q2", "x", 1.0),
    ]
    assert list(read_json_ranked_run(path, name="mine").runs) == ["mine"]
    reversed_run = read_json_ranked_run(path, reverse=True).runs["bm25_top3"]
    assert [(e.doc_id, e.score) for e in reversed_run()][:3] == [("10", 3.0), ("d:b", 2.0), ("30", 1.0)]


def test_ranked_run_json_lines_gives_one_run_per_line(tmp_path: Path) -> None:
    path = text(tmp_path / "bert.json", '{"q1": [1, 2]}\n{"q1": [2, 1]}\n')
    source = read_json_ranked_run(path)
    assert list(source.runs) == ["bert_1", "bert_2"]
    assert list(source.runs["bert_2"]()) == [RunEntry("q1", "2", 2.0), RunEntry("q1", "1", 1.0)]
    assert next(source.runs["bert_2"]()).origin == f"{path}:2"


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        ('{\n  "q1": [1, 2, 1]\n}', 2, "document '1' is listed twice for query 'q1' (positions 1 and 3)"),
        ('{"q1": [1, true]}', 1, "document id at position 2 of query 'q1' must be a string or an integer, got true"),
        ('{"q1": [1, 2.5]}', 1, "must be a string or an integer, got 2.5"),
        ('{\n  "q1": [1],\n  "q2": {"d": 1}\n}', 3, "ranking of query 'q2' must be a list of document ids, got dict"),
        ('{"q1": [1]}\n{"q1": [1, 1]}\n', 2, "listed twice"),
        ('["q1", [1]]', 1, "expected a JSON object {qid: [docid, ...]}, got list"),
    ],
)
def test_ranked_run_malformed(tmp_path: Path, content: str, line: int, phrase: str) -> None:
    path = text(tmp_path / "run.json", content)
    with pytest.raises(FormatError) as info:
        for stream in read_json_ranked_run(path).runs.values():
            list(stream())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


def test_ranked_run_syntax_error_is_raised_at_read_time(tmp_path: Path) -> None:
    path = text(tmp_path / "run.json", '{"q1": [1, 2,\n  3}\n')
    with pytest.raises(FormatError) as info:
        read_json_ranked_run(path)
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert "invalid JSON" in info.value.message


def make_lecard(root: Path) -> Path:
    text(
        root / "query.json",
        json.dumps({"path": "a.json", "ridx": 5, "q": "被告人甲", "crime": ["盗窃"]}, ensure_ascii=False)
        + "\n"
        + json.dumps({"path": "b.json", "ridx": -7, "q": "被告人乙", "crime": []}, ensure_ascii=False),
    )
    text(root / "label_top30_dict.json", '{"5": {"11": 3, "12": 0}, "-7": {"13": 2}}')
    text(root / "prediction" / "lm_top3.json", '{"5": [11, 12, 99], "-7": [13]}')
    text(root / "prediction" / "bm25_top100.json", '{"5": [99, 12, 11], "-7": [13]}')
    text(root / "golden_labels.json", "{}")
    return root


def test_lecard_hand_folder(tmp_path: Path) -> None:
    root = make_lecard(tmp_path / "lecard")
    source = read_lecard(root)
    assert source.language == "zh"
    assert list(source.passages()) == []
    queries = list(source.queries())
    assert queries == [Query("5", "被告人甲", language="zh"), Query("-7", "被告人乙", language="zh")]
    assert queries[1].origin == f"{root / 'query.json'}:2"
    assert list(source.qrels()) == [QrelEntry("5", "11", 3), QrelEntry("5", "12", 0), QrelEntry("-7", "13", 2)]
    assert sorted(source.runs) == ["bm25_top100", "lm_top3"]
    # bm25_top100 is stored worst-first in LeCaRD and is reversed on reading
    assert [(e.doc_id, e.score) for e in source.runs["bm25_top100"]() if e.query_id == "5"] == [
        ("11", 3.0),
        ("12", 2.0),
        ("99", 1.0),
    ]
    assert [(e.doc_id, e.score) for e in source.runs["lm_top3"]() if e.query_id == "5"] == [
        ("11", 3.0),
        ("12", 2.0),
        ("99", 1.0),
    ]
    as_stored = read_lecard(root, ascending_runs=())
    assert next(as_stored.runs["bm25_top100"]()).doc_id == "99"


@pytest.mark.parametrize(
    ("line_text", "phrase"),
    [
        ('{"ridx": 9, "q": ""}', "field 'q' (the query text) must be a non-empty string"),
        ('{"ridx": 9, "q": 12}', "field 'q' (the query text) must be a non-empty string, got 12"),
        ('{"q": "x"}', "missing field 'ridx'"),
        ('{"ridx": 5, "q": "again"}', "duplicate query ridx '5' (first at line 1)"),
        ('{"ridx": 9, "q": "x"', "invalid JSON"),
    ],
)
def test_lecard_malformed_query_file(tmp_path: Path, line_text: str, phrase: str) -> None:
    root = make_lecard(tmp_path / "lecard")
    path = root / "query.json"
    path.write_text('{"ridx": 5, "q": "x"}\n' + line_text + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        list(read_lecard(root).queries())
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert phrase in info.value.message


def test_lecard_missing_labels(tmp_path: Path) -> None:
    root = make_lecard(tmp_path / "lecard")
    (root / "label_top30_dict.json").unlink()
    with pytest.raises(FormatError) as info:
        read_lecard(root)
    assert (info.value.path, info.value.line) == (str(root / "label_top30_dict.json"), None)
    assert "missing label_top30_dict.json" in info.value.message


@pytest.mark.shared_data
def test_lecard_real_data(shared_data: Path) -> None:
    folder = shared_data / "lecard"
    source = read_lecard(folder)
    queries = list(source.queries())
    assert len(queries) == 107
    assert len({q.id for q in queries}) == 107
    assert queries[0].id == "5156" and queries[0].language == "zh"

    with open(folder / "label_top30_dict.json", encoding="utf-8") as fh:
        raw = json.load(fh)
    independent = sum(len(docs) for docs in raw.values())
    qrels = list(source.qrels())
    assert len(qrels) == independent == 3228
    assert {e.grade for e in qrels} == {0, 1, 2, 3}
    assert {e.query_id for e in qrels} == {q.id for q in queries}

    # 5 prediction files; bert.json holds 4 rankings (JSON lines) of 20 queries each
    assert len(list((folder / "prediction").glob("*.json"))) == 5
    assert sorted(source.runs) == [
        "bert_1",
        "bert_2",
        "bert_3",
        "bert_4",
        "bm25_top100",
        "combined_top100",
        "lm_top100",
        "tfidf_top100",
    ]
    runs = {name: list(stream()) for name, stream in source.runs.items()}
    assert len({e.query_id for e in runs["bm25_top100"]}) == 107
    assert len(runs["bm25_top100"]) == 107 * 101
    assert len(runs["combined_top100"]) == 107 * 100
    assert {len({e.query_id for e in runs[f"bert_{k}"]}) for k in range(1, 5)} == {20}

    # Why bm25/tfidf are reversed: after reading, judged documents sit at the top of every run,
    # as LeCaRD's metrics.py assumes when it reverses those two lists.
    judged = {(e.query_id, e.doc_id) for e in qrels}
    for name in ("bm25_top100", "tfidf_top100", "lm_top100", "combined_top100"):
        by_query: dict[str, list[str]] = {}
        for e in sorted(runs[name], key=lambda e: (e.query_id, -e.score)):
            by_query.setdefault(e.query_id, []).append(e.doc_id)
        top = sum((q, d) in judged for q, docs in by_query.items() for d in docs[:30])
        bottom = sum((q, d) in judged for q, docs in by_query.items() for d in docs[-30:])
        assert top > bottom, name
    assert set(LECARD_ASCENDING_RUNS) == {"bm25_top100", "tfidf_top100"}
