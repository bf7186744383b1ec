"""Chinese numerals inside words (issue 22): grade levels, editions, sessions, counts with measure words."""

from __future__ import annotations

import pytest

from core.detectors import detect_numeral_mismatch, suggest

DIFFERENT = [
    ("一年级数学上册教案", "三年级数学上册教案（人教版）", "1", "3", "三年级"),
    ("二年级语文期末试卷", "五年级语文期末试卷及答案", "2", "5", "五年级"),
    ("新概念英语第三版", "新概念英语第五版已经出版", "3", "5", "第五"),
    ("第十二届全运会在哪里举办", "第十四届全运会在陕西举办", "12", "14", "第十四"),
    ("三星级酒店的标准", "五星级酒店的评定标准", "3", "5", "五星级"),
    ("二胎政策什么时候开始", "三孩政策于2021年实施", "2", "3", "三孩"),
    ("一线城市有哪些", "二线城市名单", "1", "2", "二线"),
    ("二十四节气是什么", "七十二候是什么", "24", "72", "七十二"),
    ("三年级上学期", "3年级下学期 和 4年级", None, None, None),  # a twin (3) is there: silent, see below
]


@pytest.mark.parametrize("query, passage, q_value, p_value, marked", [d for d in DIFFERENT if d[2]])
def test_numerals_inside_words_that_differ(query, passage, q_value, p_value, marked) -> None:
    [s] = detect_numeral_mismatch(query, passage)
    assert s.evidence["query"] == [q_value] and s.evidence["passage"] == [p_value]
    assert [passage[a:b] for a, b in s.spans] == [marked]
    assert "numeral_mismatch" in {x.category for x in suggest(query, passage)}


@pytest.mark.parametrize(
    "query, passage",
    [
        ("三年级数学", "3年级数学练习题"),  # the same value in digits
        ("三年级上学期", "3年级下学期 和 4年级"),
        ("第三版", "第3版"),
        ("第十二届全运会", "第12届全运会"),
        ("二十四节气", "24节气的由来"),
        ("一年级数学", "一年级数学有一个单元讲加法"),  # 一个 is an article, not a count to compare
        ("一个人去旅行", "两个人的旅行"),  # 个 is not a measure word read here: articles stay out
        ("一年级学生", "学生一天要睡十个小时"),  # a grade is not compared with hours
    ],
)
def test_near_twins_with_the_same_value_are_clean(query, passage) -> None:
    assert detect_numeral_mismatch(query, passage) == []
