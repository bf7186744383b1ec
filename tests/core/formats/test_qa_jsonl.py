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
    {
        "id": 1,
        "query": "How many people died in the stampede?",
        "answer": [["12", "twelve"]],
        "positive": [EN, P1],
        "negative": [P2, N1, N1],
    },
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
        (
            '{"id": 1, "query": "q", "positive": ["a", "  "], "negative": []}\n',
            1,
            "positive[1] is an empty passage text",
        ),
        ('{"id": 1, "query": "q", "positive": ["a"]}\n', 1, "missing field 'negative'"),
        (
            '{"id": 1, "query": "q", "answer": [3], "positive": ["a"], "negative": []}\n',
            1,
            "answer[0] must be a string or a list of strings",
        ),
        ('{"id": null, "query": "q", "positive": ["a"], "negative": []}\n', 1, "field 'id' must be a string"),
        ("[1, 2]\n", 1, "expected a JSON object"),
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
    assert (info.value.path, info.value.line, info.value.message) == (
        str(tmp_path / "nope.jsonl"),
        None,
        "file not found",
    )


@pytest.mark.slow  # reads the real RGB zh files
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


# --------------------------------------------------------------------------- RGB's other published shapes
#
# RGB (Chen et al., 2024) publishes three shapes of the same record: the refine
# files (above), the counterfactual files (en_fact / zh_fact: ``answer`` a plain
# string or a list, plus ``fakeanswer`` and ``positive_wrong``) and the
# information-integration files (zh_int: ``positive`` one list per part of a
# multi-part answer, extra keys such as the misspelled ``asnwer1``).  The
# records below are written in those shapes; the texts are made up.

F_P1 = "The 2021 final was played at Raymond James Stadium in Tampa, Florida, home of the Buccaneers."
F_P2 = "Tampa, Florida hosted the championship game on February 7, 2021."
F_W1 = "The 2021 final was played at Raymond James Stadium in Glendale, Arizona, home of the Buccaneers."
F_W2 = "Glendale, Arizona hosted the championship game on February 7, 2021."
F_N1 = "Tickets for next year's game in Las Vegas go on sale in the autumn."
G_P1 = "The album was released on July 21 2017 by an independent label."
G_W1 = "The album was released on June 3 2016 by an independent label."

FACT_LINES = [
    {
        "id": 0,
        "query": "Where was the 2021 final played?",
        "answer": "Tampa, Florida",
        "fakeanswer": "Glendale, Arizona",
        "positive_wrong": [F_W1, F_W2],
        "positive": [F_P1, F_P2],
        "negative": [F_N1],
    },
    # answer as a list of alternatives; a positive_wrong text identical to a positive one (the
    # counterfactual edit left it unchanged, as on two lines of RGB's en_fact.json)
    {
        "id": 1,
        "query": "When was the album released?",
        "answer": [["July 21 2017", "Jul 21, 2017"]],
        "fakeanswer": "June 3 2016",
        "positive_wrong": [G_W1, G_P1],
        "positive": [G_P1],
        "negative": [F_N1],
    },
]

I_A1 = "甲市统计局公布，2021年末全市常住人口为1313851人，约131万人。"
I_A2 = "据甲市人口普查结果，常住人口131万，比十年前增长一成。"
I_B1 = "乙市2021年末常住人口187万，其中城镇人口占七成。"
I_N1 = "甲市今年夏季气温偏高，请市民注意防暑降温。"
I_C1 = "第七届议会议员宣誓仪式于1月3日上午在议会大楼举行。"
I_D1 = "议会首次会议定于1月12日上午11时召开。"
I_D2 = "1月12日，新一届议会举行首次会议，议员就民生问题提问。"
I_N2 = "议会大楼对公众开放参观，需提前网上预约。"

INT_LINES = [
    {
        "id": 0,
        "query": "2021年甲市和乙市的常住人口",
        "answer": [["1313851", "131万"], ["187万", "186.35万"]],
        "asnwer1": [["1313851", "131万"]],
        "answer2": [["187万", "186.35万"]],
        "positive": [[I_A1, I_A2], [I_B1, I_A1]],
        "negative": [I_N1],
    },
    {
        "id": 1,
        "query": "第七届议会宣誓仪式和首次会议的日期",
        "answer": ["1月3日", "1月12日"],
        "asnwer1": ["1月3日"],
        "answer2": ["1月12日"],
        "ansewr3": "x",
        "positive": [[I_C1], [I_D1, I_D2]],
        "negative": [I_N1, I_N2],
    },
]


def test_fact_shape_answer_string_and_positive_wrong(tmp_path: Path) -> None:
    path = _write(tmp_path / "en_fact.json", FACT_LINES)
    name = str(path)
    src = read_qa_jsonl(path)

    queries = list(src.queries())
    assert [q.answers for q in queries] == [["Tampa, Florida"], [["July 21 2017", "Jul 21, 2017"]]]
    assert [q.id for q in queries] == ["0", "1"]

    passages = list(src.passages())
    assert [p.text for p in passages] == [F_P1, F_P2, F_N1, F_W1, F_W2, G_P1, G_W1]
    assert [p.origin for p in passages] == [
        f"{name}:1",
        f"{name}:1",
        f"{name}:1",
        f"{name}:1 positive_wrong",
        f"{name}:1 positive_wrong",
        f"{name}:2",
        f"{name}:2 positive_wrong",
    ]

    qrels = list(src.qrels())
    assert [(q.query_id, q.doc_id, q.grade) for q in qrels] == [
        ("0", _pid(F_P1), 1),
        ("0", _pid(F_P2), 1),
        ("0", _pid(F_N1), 0),
        ("0", _pid(F_W1), 0),
        ("0", _pid(F_W2), 0),
        ("1", _pid(G_P1), 1),
        ("1", _pid(F_N1), 0),
        ("1", _pid(G_W1), 0),
    ]
    assert [q.origin for q in qrels] == [
        f"{name}:1",
        f"{name}:1",
        f"{name}:1",
        f"{name}:1 positive_wrong",
        f"{name}:1 positive_wrong",
        f"{name}:2",
        f"{name}:2",
        f"{name}:2 positive_wrong",
    ]
    # fakeanswer and positive_wrong are known keys: no "ignored key" note; the positive text repeated
    # under positive_wrong is the one thing to tell
    assert src.notes == [
        f"positive_wrong texts also listed as positive for the same query keep their positive grade: "
        f"1 text on 1 line (first: {name}:2)"
    ]


def test_int_shape_positive_parts_and_answer_parts(tmp_path: Path) -> None:
    path = _write(tmp_path / "zh_int.json", INT_LINES)
    name = str(path)
    src = read_qa_jsonl(path, positive_grade=2)

    queries = list(src.queries())
    assert [q.answers for q in queries] == [
        [["1313851", "131万"], ["187万", "186.35万"]],
        ["1月3日", "1月12日"],
    ]
    assert {q.language for q in queries} == {"zh"}

    passages = list(src.passages())
    assert [p.text for p in passages] == [I_A1, I_A2, I_B1, I_N1, I_C1, I_D1, I_D2, I_N2]

    qrels = list(src.qrels())
    assert [(q.query_id, q.doc_id, q.grade) for q in qrels] == [
        ("0", _pid(I_A1), 2),
        ("0", _pid(I_A2), 2),
        ("0", _pid(I_B1), 2),
        ("0", _pid(I_N1), 0),
        ("1", _pid(I_C1), 2),
        ("1", _pid(I_D1), 2),
        ("1", _pid(I_D2), 2),
        ("1", _pid(I_N1), 0),
        ("1", _pid(I_N2), 0),
    ]
    assert src.notes == [
        f"ignored key 'asnwer1' on 2 lines (first: {name}:1)",
        f"ignored key 'answer2' on 2 lines (first: {name}:1)",
        f"ignored key 'ansewr3' on 1 line (first: {name}:2)",
    ]


def test_notes_are_added_once_however_often_the_streams_are_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "zh_int.json", INT_LINES)
    src = read_qa_jsonl(path)
    assert src.notes == []  # nothing read yet
    for _ in range(2):
        list(src.passages())
        list(src.queries())
        list(src.qrels())
    assert len(src.notes) == 3
    # a pass stopped half-way says nothing yet: the counts would be partial
    fresh = read_qa_jsonl(path)
    next(fresh.queries())
    assert fresh.notes == []


def test_refine_shape_has_no_notes(tmp_path: Path) -> None:
    src = read_qa_jsonl(_write(tmp_path / "qa.jsonl", LINES))
    list(src.qrels())
    assert src.notes == []


def test_multi_part_answer_drives_prelabels_and_the_false_negative_detector(tmp_path: Path) -> None:
    from core.detectors import detect_false_negative
    from core.prelabel import answer_strings, prelabel

    src = read_qa_jsonl(_write(tmp_path / "zh_int.json", INT_LINES))
    query = next(src.queries())
    assert answer_strings(query.answers) == ["1313851", "131万", "187万", "186.35万"]
    candidates = {p.doc_id: p.answer for p in prelabel(query.answers, [(_pid(t), t) for t in (I_A1, I_B1, I_N1)])}
    # one passage per part of the answer: both parts count
    assert candidates == {_pid(I_A1): "1313851", _pid(I_B1): "187万"}
    found = detect_false_negative(label=0, rank=3, answers=query.answers, passage=I_B1)
    assert [(s.evidence["answer"], s.spans) for s in found] == [
        ("187万", [(I_B1.index("187万"), I_B1.index("187万") + 4)])
    ]
    assert detect_false_negative(label=0, rank=3, answers=query.answers, passage=I_N1) == []

    fact = read_qa_jsonl(_write(tmp_path / "en_fact.json", FACT_LINES))
    first = next(fact.queries())
    assert prelabel(first.answers, [(_pid(F_P1), F_P1), (_pid(F_N1), F_N1)])[0].doc_id == _pid(F_P1)
    assert [
        s.evidence["answer"] for s in detect_false_negative(label=None, rank=1, answers=first.answers, passage=F_P2)
    ] == ["Tampa, Florida"]
