"""Tests for core.formats.dureader (DuReader 2.0 MRC -> passage retrieval collection)."""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.dureader import read_dureader, split_paragraphs
from core.types import Passage, QrelEntry, Query

BASE = "故宫博物院建立于1925年，是在明清两代皇宫及其收藏的基础上建立起来的中国综合性博物馆，也是中国最大的古代文化艺术博物馆。"


def exact(n: int, base: str = BASE) -> str:
    """A realistic Chinese text of exactly ``n`` characters."""
    text = (base * (n // len(base) + 1))[:n]
    assert len(text) == n and text == text.strip()
    return text


L256 = exact(256)
L257 = exact(257, "紫禁城是中国明清两代的皇家宫殿，旧称紫禁城，位于北京中轴线的中心。")
L300 = exact(300, "故宫南北长961米，东西宽753米，四面围有高10米的城墙，城外有宽52米的护城河。")
A100 = exact(100, "故宫开放时间：旺季8:30至17:00，淡季8:30至16:30，停止售票时间为闭馆前一小时。")
B156 = exact(156, "除法定节假日和暑期外，故宫博物院实行周一全天闭馆。游客请提前在官方网站实名预约购票。")

DOC_TICKETS = {
    "title": "故宫门票多少钱_百度知道",
    "paragraphs": ["故宫门票旺季60元，淡季40元。", "  学生凭学生证半价。\n", ""],
    "bs_rank_pos": 0,
    "is_selected": True,
    "most_related_para": 0,
}
SAMPLE = [
    {
        "question_id": 1001,
        "question": "故宫门票多少钱",
        "question_type": "DESCRIPTION",
        "fact_or_opinion": "FACT",
        "answers": ["旺季（4月1日至10月31日）60元，淡季40元。"],
        "documents": [
            DOC_TICKETS,
            {
                "title": "故宫博物院参观须知",
                "paragraphs": [L256, "开放时间为8:30至17:00。", L300, "周一全天闭馆。"],
                "bs_rank_pos": 1,
                "is_selected": False,
                "most_related_para": 2,
            },
        ],
    },
    {
        "question_id": 1002,
        "question": "故宫周一开放吗",
        "question_type": "YES_NO",
        "fact_or_opinion": "FACT",
        "answers": ["不开放，故宫周一闭馆（法定节假日除外）。"],
        "yesno_answers": ["No"],
        "documents": [
            {**DOC_TICKETS, "is_selected": False},
            {"title": "故宫开放时间", "paragraphs": [A100, B156], "is_selected": True, "most_related_para": 1},
            {"title": "空白页面", "paragraphs": ["", "   "], "is_selected": False, "most_related_para": 0},
            {"title": "紫禁城", "paragraphs": [L257, "故宫周一闭馆。"], "is_selected": True, "most_related_para": 1},
        ],
    },
    {
        "question_id": "q-1003",
        "question": "故宫在哪个区",
        "question_type": "ENTITY",
        "fact_or_opinion": "FACT",
        "documents": [{"title": "故宫地址", "paragraphs": ["故宫位于北京市东城区景山前街4号。"]}],
    },
]


def pid(text: str) -> str:
    return "p" + hashlib.sha1(text.encode("utf-8")).hexdigest()[:16]


def did(title: str, paragraphs: list[str]) -> str:
    payload = json.dumps([title, *(p.strip() for p in paragraphs)], ensure_ascii=False)
    return "d" + hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]


def write(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_split_paragraphs_rule() -> None:
    assert split_paragraphs([L256]) == [(L256, [0])]  # exactly max_chars: one passage
    assert split_paragraphs([L256, "开放"]) == [(L256 + "开放", [0, 1])]  # just over: closed after
    assert split_paragraphs([L257, "开放"]) == [(L257, [0]), ("开放", [1])]
    assert split_paragraphs([A100, B156]) == [(A100 + B156, [0, 1])]  # 256 in total
    assert split_paragraphs([A100, B156, "。"]) == [(A100 + B156 + "。", [0, 1, 2])]
    assert split_paragraphs(["", "  "]) == []
    assert split_paragraphs(["aaaa", "bb", "c", "dddddd"], max_chars=5) == [("aaaabb", [0, 1]), ("cdddddd", [2, 3])]
    with pytest.raises(ValueError, match="max_chars"):
        split_paragraphs(["a"], max_chars=0)


def test_passages(tmp_path: Path) -> None:
    path = write(tmp_path / "search.dev.json", SAMPLE)
    src = read_dureader(path)
    name = str(path)
    doc_tickets = did(DOC_TICKETS["title"], DOC_TICKETS["paragraphs"])
    doc_rules = did("故宫博物院参观须知", [L256, "开放时间为8:30至17:00。", L300, "周一全天闭馆。"])
    doc_hours = did("故宫开放时间", [A100, B156])
    doc_zijin = did("紫禁城", [L257, "故宫周一闭馆。"])
    doc_addr = did("故宫地址", ["故宫位于北京市东城区景山前街4号。"])
    tickets = "故宫门票旺季60元，淡季40元。学生凭学生证半价。"
    expected = [
        Passage(pid(tickets), tickets, "", doc_tickets, 0, "zh"),
        Passage(pid(L256 + "开放时间为8:30至17:00。"), L256 + "开放时间为8:30至17:00。", "", doc_rules, 0, "zh"),
        Passage(pid(L300), L300, "", doc_rules, 1, "zh"),
        Passage(pid("周一全天闭馆。"), "周一全天闭馆。", "", doc_rules, 2, "zh"),
        Passage(pid(A100 + B156), A100 + B156, "", doc_hours, 0, "zh"),
        Passage(pid(L257), L257, "", doc_zijin, 0, "zh"),
        Passage(pid("故宫周一闭馆。"), "故宫周一闭馆。", "", doc_zijin, 1, "zh"),
        Passage(pid("故宫位于北京市东城区景山前街4号。"), "故宫位于北京市东城区景山前街4号。", "", doc_addr, 0, "zh"),
    ]
    passages = list(src.passages())
    assert passages == expected
    assert [p.origin for p in passages] == [f"{name}:{n}" for n in (1, 1, 1, 1, 2, 2, 2, 3)]
    # every passage but the last of its document is longer than 256 characters
    # (the 256-character document is one passage; a 256-character paragraph plus
    # a 16-character one make one passage of 272)
    assert [len(p.text) for p in passages] == [25, 272, 300, 7, 256, 257, 7, 17]
    # the content-derived id is stable (a literal, not recomputed)
    assert passages[0].id == "p" + hashlib.sha1(tickets.encode()).hexdigest()[:16]
    assert passages[0].id == "p38fcd40b3a403d41"
    assert src.language == "zh"


def test_keep_titles(tmp_path: Path) -> None:
    src = read_dureader(write(tmp_path / "d.json", SAMPLE), remove_titles=False)
    passages = list(src.passages())
    assert len(passages) == 8
    first = passages[0]
    assert first.title == "故宫门票多少钱_百度知道"
    assert first.text == "故宫门票旺季60元，淡季40元。学生凭学生证半价。"  # title never in the text
    assert first.id == pid("故宫门票多少钱_百度知道\n" + first.text)
    assert [p.title for p in passages[1:4]] == ["故宫博物院参观须知"] * 3


def test_max_chars_option(tmp_path: Path) -> None:
    src = read_dureader(write(tmp_path / "d.json", SAMPLE[2:]), max_chars=5)
    assert [p.text for p in src.passages()] == ["故宫位于北京市东城区景山前街4号。"]
    src = read_dureader(write(tmp_path / "d.json", SAMPLE[:1]), max_chars=10)
    assert [p.text for p in src.passages()][:2] == ["故宫门票旺季60元，淡季40元。", "学生凭学生证半价。"]


def test_queries_and_split(tmp_path: Path) -> None:
    path = write(tmp_path / "search.dev.json", SAMPLE)
    queries = list(read_dureader(path).queries())
    assert queries == [
        Query(
            "1001",
            "故宫门票多少钱",
            "dev",
            "DESCRIPTION",
            language="zh",
            answers=["旺季（4月1日至10月31日）60元，淡季40元。"],
        ),
        Query(
            "1002",
            "故宫周一开放吗",
            "dev",
            "YES_NO",
            language="zh",
            answers=["不开放，故宫周一闭馆（法定节假日除外）。"],
        ),
        Query("q-1003", "故宫在哪个区", "dev", "ENTITY", language="zh", answers=None),
    ]
    assert queries[2].origin == f"{path}:3"
    assert {q.split for q in read_dureader(path, split="train").queries()} == {"train"}
    other = write(tmp_path / "zhidao.test1.json", SAMPLE)
    assert {q.split for q in read_dureader(other).queries()} == {"test"}
    plain = write(tmp_path / "sample.json", SAMPLE)
    assert {q.split for q in read_dureader(plain).queries()} == {"test"}
    with pytest.raises(ValueError, match="split"):
        read_dureader(plain, split="valid")


def test_qrels(tmp_path: Path) -> None:
    path = write(tmp_path / "d.json", SAMPLE)
    assert list(read_dureader(path).qrels()) == []  # no qrels by default
    qrels = list(read_dureader(path, selected_grade=2).qrels())
    assert qrels == [
        QrelEntry("1001", pid("故宫门票旺季60元，淡季40元。学生凭学生证半价。"), 2),
        QrelEntry("1002", pid(A100 + B156), 2),
        QrelEntry("1002", pid("故宫周一闭馆。"), 2),
    ]
    assert [q.origin for q in qrels] == [f"{path}:1", f"{path}:2", f"{path}:2"]


def test_gzip(tmp_path: Path) -> None:
    plain = write(tmp_path / "d.json", SAMPLE)
    gz = tmp_path / "search.train.json.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    src = read_dureader(gz)
    assert list(src.passages()) == list(read_dureader(plain).passages())
    assert {q.split for q in src.queries()} == {"train"}


def _line(**changes: object) -> dict[str, object]:
    record = json.loads(json.dumps(SAMPLE[0]))
    record.update(changes)
    return record


@pytest.mark.parametrize(
    ("records", "line", "phrase", "stream"),
    [
        ([_line(question_type="HOW")], 1, "question_type must be one of DESCRIPTION, ENTITY, YES_NO", "queries"),
        ([{k: v for k, v in SAMPLE[0].items() if k != "documents"}], 1, "missing field 'documents'", "passages"),
        (
            [_line(documents=[{"title": "t", "paragraphs": "正文"}])],
            1,
            "documents[0].paragraphs must be a list of strings",
            "passages",
        ),
        (
            [_line(documents=[{"title": "t", "paragraphs": ["正文", 3]}])],
            1,
            "documents[0].paragraphs[1] must be a string",
            "passages",
        ),
        ([_line(documents=[{"title": "t"}])], 1, "documents[0] has no 'paragraphs'", "passages"),
        ([SAMPLE[0], SAMPLE[1], _line()], 3, "duplicate question_id '1001' (first at line 1)", "queries"),
        (
            [_line(documents=[{"paragraphs": ["正文"], "is_selected": "yes"}])],
            1,
            "is_selected must be true or false",
            "passages",
        ),
        ([_line(answers="12人")], 1, "'answers' must be a list of strings", "queries"),
        ([_line(question="  ")], 1, "field 'question' is empty", "queries"),
    ],
)
def test_malformed(tmp_path: Path, records: list[object], line: int, phrase: str, stream: str) -> None:
    path = write(tmp_path / "bad.json", records)
    with pytest.raises(FormatError) as info:
        list(getattr(read_dureader(path), stream)())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


def test_truncated_json(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    text = json.dumps(SAMPLE[0], ensure_ascii=False) + "\n" + json.dumps(SAMPLE[1], ensure_ascii=False)[:120] + "\n"
    path.write_text(text, encoding="utf-8")
    src = read_dureader(path)
    with pytest.raises(FormatError) as info:
        list(src.passages())
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert "invalid JSON" in info.value.message


@pytest.mark.parametrize(
    ("document", "phrase"),
    [
        ({"title": "t", "paragraphs": ["正文"], "is_selected": True}, "selected but has no 'most_related_para'"),
        (
            {"title": "t", "paragraphs": ["正文"], "is_selected": True, "most_related_para": 3},
            "most_related_para is 3, expected an index into its 1 paragraphs",
        ),
        (
            {"title": "t", "paragraphs": ["正文", " "], "is_selected": True, "most_related_para": 1},
            "is an empty paragraph",
        ),
    ],
)
def test_selected_without_usable_most_related_para(tmp_path: Path, document: dict[str, object], phrase: str) -> None:
    path = write(tmp_path / "bad.json", [SAMPLE[2], _line(question_id=7, documents=[document])])
    src = read_dureader(path, selected_grade=1)
    assert len(list(src.passages())) == 2  # only the qrels need most_related_para
    with pytest.raises(FormatError) as info:
        list(src.qrels())
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert phrase in info.value.message


def test_missing_and_empty_file(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_dureader(tmp_path / "missing.json")
    assert (info.value.line, info.value.message) == (None, "file not found")
    empty = tmp_path / "empty.json"
    empty.write_text("")
    with pytest.raises(FormatError) as info:
        list(read_dureader(empty).queries())
    assert (info.value.path, info.value.line, info.value.message) == (str(empty), 1, "file is empty")
