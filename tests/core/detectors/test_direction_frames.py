"""Direction frames beyond "from A to B" (issue 22): a reversal is a syntactic mismatch, the same direction is clean."""

from __future__ import annotations

import pytest

from core.detectors import detect_syntactic_mismatch, suggest

REVERSED = [
    # English: convert / translate / change X to|into Y, "X to Y" conversions, "X-to-Y"
    ("how to convert pdf to word", "Convert Word to PDF online in seconds.", ["pdf", "word"], ["Word", "PDF"]),
    (
        "translate english into spanish",
        "Our tool translates Spanish into English instantly.",
        ["english", "spanish"],
        ["Spanish", "English"],
    ),
    (
        "change celsius to fahrenheit",
        "To change Fahrenheit to Celsius, subtract 32.",
        ["celsius", "fahrenheit"],
        ["Fahrenheit", "Celsius"],
    ),
    ("usd to eur exchange rate", "Today's EUR to USD exchange rate is 1.08.", ["usd", "eur"], ["EUR", "USD"]),
    ("kg to lbs", "The lbs to kg formula: divide by 2.2046.", ["kg", "lbs"], ["lbs", "kg"]),
    ("best mp4-to-mp3 converter", "A free MP3-to-MP4 converter adds a still image.", ["mp4", "mp3"], ["MP3", "MP4"]),
    # Chinese: 把A翻译成B, A翻译成B, A成B, 从A到B, A飞往B, A至B, A到B, A转B, A换成B
    ("把中文翻译成英文", "如何把英文翻译成中文：打开翻译软件即可。", ["中文", "英文"], ["英文", "中文"]),
    ("英文翻译成中文的软件", "这款软件可以将中文翻译成英文。", ["英文", "中文"], ["中文", "英文"]),
    ("人民币换成美元", "美元换成人民币需要到银行办理。", ["人民币", "美元"], ["美元", "人民币"]),
    ("mp4转mp3", "mp3转mp4的方法很简单。", ["mp4", "mp3"], ["mp3", "mp4"]),
    ("繁体字转换成简体字", "简体字转换成繁体字可以用Word。", ["繁体字", "简体字"], ["简体字", "繁体字"]),
    ("从北京到上海的高铁", "从上海到北京的高铁每天有几十趟。", ["北京", "上海"], ["上海", "北京"]),
    ("北京飞往上海的航班", "上海飞往北京的航班今日取消。", ["北京", "上海"], ["上海", "北京"]),
    ("北京至上海高速", "上海至北京高速全长1262公里。", ["北京", "上海"], ["上海", "北京"]),
    ("成都到重庆多少公里", "重庆到成都的距离约300公里。", ["成都", "重庆"], ["重庆", "成都"]),
]


@pytest.mark.parametrize("query, passage, q_ends, p_ends", REVERSED)
def test_a_reversed_frame_is_a_syntactic_mismatch(query, passage, q_ends, p_ends) -> None:
    [s] = detect_syntactic_mismatch(query, passage)
    assert [e.lower() for e in s.evidence["query"]] == q_ends
    assert list(s.evidence["passage"]) == p_ends
    assert sorted(passage[a:b] for a, b in s.spans) == sorted(p_ends)
    assert s.category == "syntactic_mismatch"
    assert [x.category for x in suggest(query, passage)].count("syntactic_mismatch") == 1


SAME_DIRECTION = [
    ("how to convert pdf to word", "Convert PDF to Word online in seconds."),
    ("translate english into spanish", "Translate English into Spanish with one click."),
    ("usd to eur exchange rate", "The USD to EUR exchange rate is 0.92."),
    ("mp4-to-mp3 converter", "An MP4-to-MP3 converter extracts the audio."),
    ("把中文翻译成英文", "把中文翻译成英文可以用翻译软件。"),
    ("人民币换成美元", "人民币换成美元需要到银行办理。"),
    ("mp4转mp3", "mp4转mp3的方法很简单。"),
    ("北京飞往上海的航班", "北京飞往上海的航班今日取消。"),
    ("北京至上海高速", "北京至上海高速全长1262公里。"),
    ("成都到重庆多少公里", "成都到重庆的距离约300公里。"),
    # both directions stated: the passage covers the query's, not a reversal
    ("pdf to word", "Convert Word to PDF or PDF to Word."),
    ("上海到北京", "上海到北京和北京到上海都有直达车。"),
    # words that look like frames but are not
    ("how to make a face-to-face meeting work", "Meetings in person work better than calls."),
    ("找不到工作怎么办", "工作难找，怎么办？"),
    ("完成作业需要多久", "作业完成需要一个小时。"),
]


@pytest.mark.parametrize("query, passage", SAME_DIRECTION)
def test_the_same_direction_is_clean(query, passage) -> None:
    assert detect_syntactic_mismatch(query, passage) == []


def test_the_relation_names_the_frame() -> None:
    [s] = detect_syntactic_mismatch("把中文翻译成英文", "如何把英文翻译成中文")
    assert s.evidence["relation"] == "翻译成"
    [s] = detect_syntactic_mismatch("convert pdf to word", "convert Word to PDF")
    assert s.evidence["relation"] == "convert-to"
    [s] = detect_syntactic_mismatch("flights from Beijing to Shanghai", "flights from Shanghai to Beijing")
    assert s.evidence["relation"] == "from-to"
