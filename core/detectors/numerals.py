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

from core.detectors.base import Detector, Evidence, Norm, Span, Suggestion, check_str, listing, unique


@dataclass(frozen=True, slots=True, eq=False)
class NumeralEvidence(Evidence):
    """Evidence of ``numeral_mismatch``: the query's values missing from the passage, the passage's extra ones."""

    query: tuple[str, ...] = ()
    passage: tuple[str, ...] = ()

    def summary(self) -> str:
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
_ZH_UNITS = {"十": 10, "百": 100, "千": 1000}
_ZH_NUMERAL = re.compile("[〇○零一二两三四五六七八九十百千万]+")


def _parse_zh_numeral(s: str) -> int | None:
    """Value of a Chinese numeral, or ``None`` when it is not read as a number."""
    if len(s) < 2:
        return None
    if all(ch in _ZH_DIGITS for ch in s):  # digit by digit: 二〇一六
        return int("".join(str(_ZH_DIGITS[ch]) for ch in s))
    total, section, digit = 0, 0, None
    for i, ch in enumerate(s):
        if ch in _ZH_DIGITS:
            if digit is not None and _ZH_DIGITS[ch] != 0 and digit != 0:
                return None  # two non-zero digits in a row in a positional numeral
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            if digit is None:
                if not (ch == "十" and i == 0):
                    return None
                digit = 1  # 十二 = 12
            section += digit * _ZH_UNITS[ch]
            digit = None
        else:  # 万
            if digit is None and section == 0:
                return None
            total += (section + (digit or 0)) * 10_000
            section, digit = 0, None
    return total + section + (digit or 0)


# Ordinals, their own kind: "the 3rd session" is not "3 sessions".  Chinese 第 + numeral reads a single
# character too (第三届), which the plain numerals skip as a likely article.  "second" is left out of the
# English words: it is as often the unit of time ("a second").
_ZH_ORDINAL = re.compile("第([0-9]+|[〇○零一二两三四五六七八九十百千万]+)")
_EN_ORDINAL_WORDS = {
    w: i
    for i, w in enumerate(
        "first _ third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
        "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split(),
        1,
    )
    if w != "_"
}
_EN_ORDINAL = re.compile(
    r"(?<![^\W_])(?:([0-9]+)(?:st|nd|rd|th)|(" + "|".join(_EN_ORDINAL_WORDS) + r"))(?![^\W_])", re.IGNORECASE
)


def _ordinal_value(digits: str | None, word: str) -> int | None:
    if digits is not None and digits.isascii() and digits.isdigit():
        return int(digits)
    if word.lower() in _EN_ORDINAL_WORDS:
        return _EN_ORDINAL_WORDS[word.lower()]
    if len(word) == 1:  # 第三: one character, which _parse_zh_numeral leaves out
        return _ZH_DIGITS.get(word, _ZH_UNITS.get(word))
    return _parse_zh_numeral(word)


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


def _numbers(text: str) -> list[tuple[str, str, Span]]:
    """``(value, kind, span)`` of the numbers of ``text`` (kind ``year``, ``number`` or ``ordinal``), in text order."""
    norm = Norm(text)
    ordinals = _ordinals(norm.text)
    found: list[tuple[int, str, str, Span]] = [(at, v, "ordinal", norm.span(*sp)) for at, v, sp in ordinals]

    def in_ordinal(s: int, e: int) -> bool:
        return any(s < oe and os < e for _, _, (os, oe) in ordinals)

    for m in _ARABIC.finditer(norm.text):
        if not in_ordinal(*m.span()):
            found.append((m.start(), *_arabic_value(m.group()), norm.span(*m.span())))
    for m in _ZH_NUMERAL.finditer(norm.text):
        n = _parse_zh_numeral(m.group())
        if n is None or in_ordinal(*m.span()):
            continue
        digit_by_digit = len(m.group()) == 4 and all(ch in _ZH_DIGITS for ch in m.group())
        kind = "year" if digit_by_digit and 1000 <= n <= 2999 else "number"
        found.append((m.start(), str(n), kind, norm.span(*m.span())))
    found.sort(key=lambda x: x[0])
    return [(v, k, sp) for _, v, k, sp in found]


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
    q, p = _numbers(query), _numbers(passage)
    q_missing: list[str] = []
    p_extra: list[str] = []
    spans: list[Span] = []
    for kind in ("year", "number", "ordinal"):
        qv = {v for v, k, _ in q if k == kind}
        pv = {v for v, k, _ in p if k == kind}
        missing = [v for v, k, _ in q if k == kind and v not in pv]
        extra = [(v, sp) for v, k, sp in p if k == kind and v not in qv]
        if missing and extra:
            q_missing.extend(missing)
            p_extra.extend(v for v, _ in extra)
            spans.extend(sp for _, sp in extra)
    if not q_missing:
        return []
    evidence = NumeralEvidence(tuple(unique(q_missing)), tuple(unique(p_extra)))
    return [Suggestion("numeral_mismatch", evidence, sorted(spans))]


DETECTOR = Detector(
    "numerals",
    "numeral_mismatch",
    ("query", "passage"),
    (),
    lambda pair: detect_numeral_mismatch(pair.query, pair.passage),
    NumeralEvidence,
)
