"""``numeral_mismatch``: a number, year or ordinal of the query differs from the passage's (DuReader-retrieval).

Numbers are read from Arabic digits (full-width ones through NFKC, ``1,000``
and ``3.5`` included) and Chinese numerals (digit by digit, ``二〇一六`` ->
2016, or positional, ``二十三`` -> 23; single characters such as ``一`` are
ignored, they are mostly articles).  A number is a *year* when it is an
integer between 1000 and 2999, else a *number*.  Ordinals are their own kind:
Chinese ``第`` + numeral (``第三届``, ``第5次``, a single character counts
here) and English ``3rd``/``5th`` or ``third``/``fifth`` (first to
twentieth).  Fires when, for one kind, the query has a value the passage
lacks **and** the passage has a value of the same kind the query lacks (a
year is never compared with a count, nor an ordinal with a count).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

import cn2an

from core.detectors.base import Detector, Evidence, Norm, Span, Suggestion, check_str, listing, unique


@dataclass(frozen=True, slots=True, eq=False)
class NumeralEvidence(Evidence):
    """Evidence of ``numeral_mismatch``: the query's values missing from the passage, the passage's extra ones."""

    query: tuple[str, ...] = ()
    passage: tuple[str, ...] = ()
    query_text: tuple[str, ...] | None = None  # the numbers as written, when a measure word is involved
    passage_text: tuple[str, ...] | None = None
    optional: ClassVar[frozenset[str]] = frozenset({"query_text", "passage_text"})

    def summary(self) -> str:
        if self.query_text and self.passage_text:
            return f"query has {listing(self.query_text)}; passage has {listing(self.passage_text)}"
        return f"query has {listing(self.query)}; passage has {listing(self.passage)}"


_ARABIC = re.compile(r"(?<![0-9.])(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
_ZH_DIGITS = {
    "〇": 0,
    "○": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_ZH_NUMERAL = re.compile("[〇○零一二两三四五六七八九十百千万]+")


def _parse_zh_numeral(s: str, *, single: bool = False) -> int | None:
    """Value of a Chinese numeral (``cn2an``'s "smart" reading: 三千五 = 3500), or ``None`` when not a number.

    A single character is read only with ``single`` (before a measure word or
    after 第): alone it is mostly an article (一个, 一些).
    """
    if not s or (len(s) < 2 and not single):
        return None
    try:
        value = cn2an.cn2an(s.replace("○", "〇"), "smart")
    except (ValueError, KeyError, IndexError):  # not a well-formed numeral: 三五十, 千千
        return None
    return int(value) if float(value).is_integer() else None


# Ordinals, their own kind: "the 3rd session" is not "3 sessions".  Chinese 第 + numeral reads a single
# character too (第三届), which the plain numerals skip as a likely article.  "second" is left out of the
# English words: it is as often the unit of time ("a second").
_ZH_ORDINAL = re.compile("第([0-9]+|[〇○零一二两三四五六七八九十百千万]+)")
_EN_ORDINAL_WORDS = {
    w: i
    for i, w in enumerate(
        "_ _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
        "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        1,
    )
    if w != "_"
}
# "first" is left out too: on real pairs it is mostly a superlative ("the first people to climb", "the first
# Roman emperor") compared with an unrelated "18th century" (dev half of the real pairs).
_EN_ORDINAL = re.compile(
    r"(?<![^\W_])(?:([0-9]+)(?:st|nd|rd|th)|(" + "|".join(_EN_ORDINAL_WORDS) + r"))(?![^\W_])", re.IGNORECASE
)


def _ordinal_value(digits: str | None, word: str) -> int | None:
    if digits is not None and digits.isascii() and digits.isdigit():
        return int(digits)
    if word.lower() in _EN_ORDINAL_WORDS:
        return _EN_ORDINAL_WORDS[word.lower()]
    return _parse_zh_numeral(word, single=True)  # 第三: one character counts after 第


def _ordinals(text: str) -> list[tuple[int, str, Span]]:
    """``(start, value, span)`` of the ordinals of normalised ``text``; spans in ``text``'s offsets."""
    out = []
    for m in _ZH_ORDINAL.finditer(text):
        n = _ordinal_value(m.group(1), m.group(1))
        if n is not None:
            out.append((m.start(), str(n), m.span()))
    for m in _EN_ORDINAL.finditer(text):
        n = _ordinal_value(m.group(1), m.group(2) or "")
        if n is not None:
            out.append((m.start(), str(n), m.span()))
    return out


def _arabic_value(match: str) -> tuple[str, str]:
    """``(value, kind)`` of an Arabic number as :data:`_ARABIC` matched it."""
    raw = match.replace(",", "")
    if "." in raw:
        return (format(float(raw), "g") if len(raw) < 16 else raw), "number"
    n = int(raw)
    is_year = "," not in match and len(raw) == 4 and 1000 <= n <= 2999  # "1,000" is a count
    return str(n), ("year" if is_year else "number")


# Measure words after a numeral, and the kind of count each makes (胎 and 孩 both count children): 三年级 is a
# grade, 第三版 an ordinal.  A single-character numeral is read before one of them (一年级, 三孩), where it
# is no article.  个, 种, 些, 天 and 年 are left out: 一个, 一种, 一天 are mostly articles or idioms, and 年
# is as often a duration as a year.
_MEASURES = {
    "年级": "grade",
    "级": "level",
    "星级": "star",
    "版": "edition",
    "届": "session",
    "期": "issue",
    "季": "season",
    "号线": "line",
    "楼": "floor",
    "层": "floor",
    "线": "tier",
    "胎": "child",
    "孩": "child",
    "册": "volume",
    "章": "chapter",
    "集": "episode",
    "班": "class",
    "等奖": "prize",
    "环": "ring",
    "倍": "times",
    "岁": "age",
    "周年": "anniversary",
    "室": "room",
}
_MEASURE = re.compile("|".join(sorted(_MEASURES, key=len, reverse=True)))

Number = tuple[str, str, Span, str]
"""``(value, kind, original span, surface)``: kind ``year``, ``number``, ``ordinal`` or ``measure:<kind>``."""


def _measured(text: str, end: int) -> tuple[str, int] | None:
    """``("measure:<kind>", end of the measure word)`` when a measure word starts at ``end`` of ``text``."""
    m = _MEASURE.match(text, end)
    return (f"measure:{_MEASURES[m.group()]}", m.end()) if m else None


def numbers(text: str) -> list[Number]:
    """The numbers of ``text`` in text order: ``(value, kind, original span, surface)`` (see :data:`Number`).

    A number before a measure word (三年级, 3年级, 二胎) is of kind
    ``measure:<kind>`` and its span and surface take the measure word in.
    """
    norm = Norm(text)
    ordinals = _ordinals(norm.text)
    found: list[tuple[int, str, str, Span]] = [(sp[0], v, "ordinal", sp) for _, v, sp in ordinals]

    def in_ordinal(s: int, e: int) -> bool:
        return any(s < oe and os < e for _, _, (os, oe) in ordinals)

    for m in _ARABIC.finditer(norm.text):
        if not in_ordinal(*m.span()):
            value, kind = _arabic_value(m.group())
            measured = _measured(norm.text, m.end())
            kind, end = measured if measured else (kind, m.end())
            found.append((m.start(), value, kind, (m.start(), end)))
    for m in _ZH_NUMERAL.finditer(norm.text):
        if in_ordinal(*m.span()):
            continue
        measured = _measured(norm.text, m.end())
        n = _parse_zh_numeral(m.group(), single=measured is not None)
        if n is None:
            continue
        digit_by_digit = len(m.group()) == 4 and all(ch in _ZH_DIGITS for ch in m.group())
        kind, end = measured if measured else ("year" if digit_by_digit and 1000 <= n <= 2999 else "number", m.end())
        found.append((m.start(), str(n), kind, (m.start(), end)))
    found.sort(key=lambda x: x[0])
    out = []
    for _, v, k, (s, e) in found:
        start, end = norm.span(s, e)
        out.append((v, k, (start, end), text[start:end]))
    return out


# A plain number right after a word is part of a name (Apollo 12, Formula 1, G20, U19, x-15, 神舟十四号): it is
# compared only with the same name's numbers, not with the passage's dates and amounts.  A number after a bound
# word (above 5) is a range's end, which a passage's values inside the range do not contradict.
_NAME_BEFORE = re.compile(r"([A-Za-z]+)[ -]?$")
_ZH_NAME_BEFORE = re.compile(r"([\u4e00-\u9fff]{2})$")
_BOUND_BEFORE = re.compile(r"(?:above|below|over|under|than|beyond|exceeding)\s+$", re.IGNORECASE)


def _slotted(text: str, found: list[Number]) -> list[Number]:
    """``found`` with each plain number after a name given the kind ``name:<name>``, bounds dropped."""
    out = []
    for value, kind, (start, end), surface in found:
        before = text[max(0, start - 24) : start]
        if kind == "number" and _BOUND_BEFORE.search(before):
            continue
        latin = _NAME_BEFORE.search(before)
        zh = _ZH_NAME_BEFORE.search(before) if text.startswith("号", end) else None
        if kind == "number" and (latin or zh):
            kind = f"name:{(latin or zh).group(1).lower()}"  # type: ignore[union-attr]
        out.append((value, kind, (start, end), surface))
    return out


def detect_numeral_mismatch(query: str, passage: str) -> list[Suggestion]:
    """Numbers or years of the query that differ from the passage's (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.

    Returns
    -------
    list of Suggestion
        At most one ``numeral_mismatch`` suggestion, evidence
        ``{"query": [...], "passage": [...]}`` (the query's numbers missing
        from the passage and the passage's numbers of the same kind missing
        from the query, as normalised strings: ``"２０１６"`` -> ``"2016"``),
        spans on those passage numbers.

    Examples
    --------
    >>> detect_numeral_mismatch("最近有什么好听的歌2016", "2017年最好听的歌曲")[0].evidence.as_dict()
    {'query': ['2016'], 'passage': ['2017']}
    """
    check_str("query", query), check_str("passage", passage)
    q, p = _slotted(query, numbers(query)), _slotted(passage, numbers(passage))
    q_missing: list[tuple[str, str]] = []
    p_extra: list[tuple[str, str]] = []
    spans: list[Span] = []
    for kind in unique(k for _, k, _, _ in q):
        qv = {v for v, k, _, _ in q if k == kind}
        pv = {v for v, k, _, _ in p if k == kind}
        missing = [(v, t) for v, k, _, t in q if k == kind and v not in pv]
        extra = [(v, t, sp) for v, k, sp, t in p if k == kind and v not in qv]
        if missing and extra:
            q_missing.extend(missing)
            p_extra.extend((v, t) for v, t, _ in extra)
            spans.extend(sp for _, _, sp in extra)
    if not q_missing:
        return []
    q_pairs, p_pairs = unique_pairs(q_missing), unique_pairs(p_extra)
    # the words are kept when a measure word says what the number counts (三年级 against 五年级)
    measured = any(t != v for v, t in q_pairs + p_pairs) and any(k.startswith("measure:") for _, k, _, _ in q + p)
    evidence = NumeralEvidence(
        tuple(v for v, _ in q_pairs),
        tuple(v for v, _ in p_pairs),
        tuple(t for _, t in q_pairs) if measured else None,
        tuple(t for _, t in p_pairs) if measured else None,
    )
    return [Suggestion("numeral_mismatch", evidence, sorted(spans))]


def unique_pairs(items: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(value, surface)`` pairs, the first of each value kept."""
    return list({v: (v, t) for v, t in reversed(items)}.values())[::-1]


DETECTOR = Detector(
    "numerals",
    "numeral_mismatch",
    ("query", "passage"),
    (),
    lambda pair: detect_numeral_mismatch(pair.query, pair.passage),
    NumeralEvidence,
)
