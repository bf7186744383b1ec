"""Tests for core.formats.qa_jsonl (query + positive/negative passages JSON lines)."""

from __future__ import annotations

import gzip
import hashlib
import json
import unicodedata
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.qa_jsonl import read_qa_jsonl, text_passage_id
from core.types import Passage, QrelEntry, Query

SHARED = Path(__file__).resolve().parents[3].parent / "shared" / "data"

P1 = "2022年1月1日，印控克什米尔地区的瓦希诺德维寺发生踩踏事件，造成12人死亡。"
P2 = "当地官员透露，事件发生在寺庙外，大批民众聚集庆贺新年。"
N1 = "印度新德里今日气温较低，出行请注意保暖。"
EN = "The stampede at the Vaishno Devi shrine killed 12 people."

LINES = [
    {"id": 0, "query": "瓦希诺德维寺踩踏事故死亡人数", "answer": ["12人"], "positive": [P1, P2, P1], "negative": [N1]},
    {"id": 1, "query": "How many people died in the stampede?", "answer": [["12", "twelve"]], "positive": [EN, P1], "negative": [P2, N1, N1]},
]


def _pid(text: str) -> str:
    return "p" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def _write(path: Path, lines: list[object]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    return path


def test_text_passage_id_is_sha1_of_nfc_text() -> None:
    assert text_passage_id("hello") == "paaf4c61ddcc5e8a2"
    assert text_passage_id(P1) == _pid(P1)
    decomposed = unicodedata.normalize("NFD", "café")
    assert decomposed != "café"
    assert text_passage_id(decomposed) == text_passage_id("café") == _pid("café")


def test_reads_passages_queries_qrels(tmp_path: Path) -> None:
    path = _write(tmp_path / "qa.jsonl", LINES)
    src = read_qa_jsonl(path)
    name = str(path)

    passages = list(src.passages())
    assert passages == [
        Passage(_pid(P1), P1, language="zh"),
        Passage(_pid(P2), P2, language="zh"),
        Passage(_pid(N1), N1, language="zh"),
        Passage(_pid(EN), EN, language="en"),
    ]
    assert [p.origin for p in passages] == [f"{name}:1", f"{name}:1", f"{name}:1", f"{name}:2"]

    queries = list(src.queries())
    assert queries == [
        Query("0", "瓦希诺德维寺踩踏事故死亡人数", split="test", language="zh", answers=["12人"]),
        Query("1", "How many people died in the stampede?", split="test", language="en", answers=[["12", "twelve"]]),
    ]
    assert [q.origin for q in queries] == [f"{name}:1", f"{name}:2"]

    qrels = list(src.qrels())
    assert qrels == [
        QrelEntry("0", _pid(P1), 1),
        QrelEntry("0", _pid(P2), 1),
        QrelEntry("0", _pid(N1), 0),
        QrelEntry("1", _pid(EN), 1),
        QrelEntry("1", _pid(P1), 1),  # P1 is positive for 1 and 0: fine
        QrelEntry("1", _pid(P2), 0),  # P2 positive for 0, negative for 1: fine
        QrelEntry("1", _pid(N1), 0),  # listed twice, judged once
    ]
    # streams are re-iterable
    assert list(src.passages()) == passages
    assert src.language is None


def test_positive_grade_and_split(tmp_path: Path) -> None:
    src = read_qa_jsonl(_write(tmp_path / "qa.jsonl", LINES), positive_grade=3, split="dev")
    assert {(q.query_id, q.grade) for q in src.qrels()} == {("0", 3), ("0", 0), ("1", 3), ("1", 0)}
    assert {q.split for q in src.queries()} == {"dev"}
    with pytest.raises(ValueError, match="positive_grade"):
        read_qa_jsonl(tmp_path / "qa.jsonl", positive_grade=0)
    with pytest.raises(ValueError, match="split"):
        read_qa_jsonl(tmp_path / "qa.jsonl", split="validation")


def test_missing_answer_gives_none(tmp_path: Path) -> None:
    path = _write(tmp_path / "qa.jsonl", [{"id": "q", "query": "什么", "positive": [P1], "negative": []}])
    assert [q.answers for q in read_qa_jsonl(path).queries()] == [None]


def test_gzip_and_file_object(tmp_path: Path) -> None:
    plain = _write(tmp_path / "qa.jsonl", LINES)
    gz = tmp_path / "qa.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    expected = list(read_qa_jsonl(plain).qrels())
    assert list(read_qa_jsonl(gz).qrels()) == expected
    with open(plain, "rb") as fh:
        src = read_qa_jsonl(fh)
        assert list(src.qrels()) == expected
        assert len(list(src.passages())) == 4  # second pass rewinds the file object


def test_nfc_normalised_text_is_stored(tmp_path: Path) -> None:
    nfd = unicodedata.normalize("NFD", "Café au lait")
    path = _write(tmp_path / "qa.jsonl", [{"id": 1, "query": "q", "positive": [nfd], "negative": ["Café au lait x"]}])
    first = next(read_qa_jsonl(path).passages())
    assert first.text == "Café au lait" and first.id == _pid("Café au lait")


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        (
            '{"id": 1, "query": "q", "positive": ["a"], "negative": []}\n{"id": 2, "query": "q2", "posit',
            2,
            "invalid JSON",
        ),
        (
            '{"id": 1, "query": "q", "positive": ["same"], "negative": ["x", "same"]}\n',
            1,
            "both positive and negative",
        ),
        (
            '{"id": 1, "query": "q", "positive": ["a"], "negative": []}\n\n{"id": 1, "query": "r", "positive": ["b"], "negative": []}\n',
            3,
            "duplicate query id '1' (first at line 1)",
        ),
        ('{"id": 1, "query": "q", "positive": "a", "negative": []}\n', 1, "'positive' must be a list"),
        ('{"id": 1, "query": "q", "positive": ["a", "  "], "negative": []}\n', 1, "positive[1] is an empty passage text"),
        ('{"id": 1, "query": "q", "positive": ["a"]}\n', 1, "missing field 'negative'"),
        ('{"id": 1, "query": "q", "answer": [3], "positive": ["a"], "negative": []}\n', 1, "answer[0] must be a string or a list of strings"),
        ('{"id": null, "query": "q", "positive": ["a"], "negative": []}\n', 1, "field 'id' must be a string"),
        ('[1, 2]\n', 1, "expected a JSON object"),
        ("", 1, "file is empty"),
    ],
)
def test_malformed(tmp_path: Path, content: str, line: int, phrase: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    src = read_qa_jsonl(path)
    with pytest.raises(FormatError) as info:
        list(src.qrels())
    assert info.value.path == str(path)
    assert info.value.line == line
    assert phrase in info.value.message


def test_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": 1, "query": "q", "positive": ["a"], "negative": []}\n{"id": 2, "query": "\xff\xfe"}\n')
    with pytest.raises(FormatError) as info:
        list(read_qa_jsonl(path).queries())
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert "invalid UTF-8" in info.value.message


def test_missing_file_fails_at_call_time(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_qa_jsonl(tmp_path / "nope.jsonl")
    assert (info.value.path, info.value.line, info.value.message) == (str(tmp_path / "nope.jsonl"), None, "file not found")


@pytest.mark.shared_data
def test_rgb_zh() -> None:
    path = SHARED / "rgb-zh" / "zh_refine.json"
    if not path.exists():
        pytest.skip("../shared/data/rgb-zh is absent")
    raw = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    occurrences = [t for o in raw for t in o["positive"] + o["negative"]]
    distinct = {unicodedata.normalize("NFC", t) for t in occurrences}
    assert len(occurrences) == 7715
    assert len(distinct) == 7337

    src = read_qa_jsonl(path)
    queries = list(src.queries())
    assert len(queries) == 300
    assert all(q.answers for q in queries)
    assert [q.answers for q in queries] == [o["answer"] for o in raw]
    assert all(q.language == "zh" for q in queries)

    passages = list(src.passages())
    assert len(passages) == len(distinct)
    assert {p.text for p in passages} == distinct
    assert len({p.id for p in passages}) == len(passages)

    qrels = list(src.qrels())
    expected = {
        (str(o["id"]), _pid(unicodedata.normalize("NFC", t)), g)
        for o in raw
        for key, g in (("positive", 1), ("negative", 0))
        for t in o[key]
    }
    assert len(qrels) == len(expected)
    assert {(q.query_id, q.doc_id, q.grade) for q in qrels} == expected
