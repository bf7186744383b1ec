"""Direction frames beyond "from A to B", read by :mod:`~core.detectors.syntax`.

A frame is a directed relation A -> B stated by a construction:

English
    ``convert/translate/change/turn/switch/export/exchange/transfer A to|into B``
    (relation ``convert-to``); ``A to B`` followed by a conversion noun
    (``USD to EUR exchange rate``, ``lbs to kg formula``) or with both ends
    known units, currencies, file formats or languages, or both short codes
    (``kg to lbs``) (relation ``to``); ``A-to-B`` (``mp4-to-mp3``; relation
    ``to``), the fixed idioms (``face-to-face``, ``up-to-date``) left out.
Chinese
    ``[把|将] A 翻译成/译成/转换成/换算成/兑换成/换成/转成/改成/变成... B`` (the
    ``A成B`` family, relation = the verb) and ``A 转 B`` with 转 a jieba word
    of its own (so 转发 or 旋转 are not frames).  ``从A到B``, ``A飞往B``,
    ``A至B`` and ``A到B`` are the verbs of motion of :mod:`~core.detectors.syntax`.

The ends of a Chinese frame are read from the text on each side of the verb,
cut at punctuation and at the words that open a frame (把, 将, 从, 如何...):
the last content word before the verb and the first after it, by jieba
part-of-speech tags.  The segments are tagged apart from the verb because
jieba merges across it (``中文翻译`` + ``成``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.detectors.base import Norm, Span, pos_tokens

Relation = tuple[str, str, str, str, Span, Span, str]
"""``(key_a, key_b, surface_a, surface_b, span_a, span_b, relation)`` of a directed relation A -> B."""

_W = r"[^\W_][\w'’+#]*"
_STOP = (
    r"(?=\s+(?:on|in|at|for|by|via|with|without|using|and|or|is|are|was|online|free|instantly|easily|quickly|"
    r"format|formats|files?|documents?|conversion|converter|calculator|exchange|rates?|formula|chart|table|"
    r"translation|translator|dictionary|subtract|multiply|divide|add|takes?|costs?)\b|\s*[.,;:!?()]|\s*$)"
)
_EN_VERB = re.compile(
    r"\b(?:convert(?:s|ed|ing)?|translat(?:e|es|ed|ing)|chang(?:e|es|ed|ing)|turn(?:s|ed|ing)?|"
    r"switch(?:es|ed|ing)?|export(?:s|ed|ing)?|exchang(?:e|es|ed|ing)|transfer(?:s|red|ring)?)\s+"
    rf"(?:(?:a|an|the|my|your|from)\s+)?(?P<a>{_W}(?:\s+{_W}){{0,3}}?)\s+(?:to|into)\s+"
    rf"(?P<b>{_W}(?:\s+{_W}){{0,3}}?){_STOP}",
    re.IGNORECASE,
)
_EN_CUED = re.compile(
    rf"(?<![\w-])(?P<a>{_W})\s+to\s+(?P<b>{_W})(?=\s+(?:conversions?|converters?|calculators?|exchange|rates?|"
    r"formulas?|charts?|tables?|translations?|translators?|dictionary)\b)",
    re.IGNORECASE,
)
_EN_BARE = re.compile(rf"(?<![\w-])(?P<a>{_W})\s+to\s+(?P<b>{_W})(?![\w-])", re.IGNORECASE)
_EN_HYPHEN = re.compile(r"(?<![\w-])(?P<a>[^\W_]+)-to-(?P<b>[^\W_]+)(?![\w-])", re.IGNORECASE)
# Units, currencies, file formats and languages that a bare "A to B" converts between (a rule's list:
# the embedding-alignment detector has none).
_CONVERTIBLE = frozenset(
    "celsius fahrenheit kelvin kg kilograms kilogram lbs lb pounds pound ounces oz grams gram g mg tons "
    "km kilometers kilometres miles mile meters metres meter metre feet foot ft inches inch in cm mm yards yd "
    "liters litres liter litre gallons gallon ml cups cup quarts pints mph kph knots joules calories kcal "
    "watts hp horsepower kwh bytes kb mb gb tb bits hours minutes seconds days weeks months years "
    "usd eur gbp jpy cny rmb yuan dollars dollar euros euro yen won rupees rupee inr aud cad chf hkd krw "
    "pdf word docx doc jpg jpeg png gif svg mp3 mp4 wav avi mov mkv csv xlsx excel txt html json xml epub "
    "english spanish french german chinese japanese korean italian portuguese russian arabic hindi dutch "
    "binary decimal hex hexadecimal octal roman".split()
)
_NOT_ENDS = frozenset(
    "a an the how what when where who why which this that it to be is are was from go come back up down "
    "in on at of for with me you him her us them i we they my your our their its do does did can could "
    "want need have has had going used able due face day peer end door head point year ready easy hard right "
    "made business person hand nose toe wall coast sea cheek bumper mouth".split()
)


def _en_ok(a: str, b: str, *, bare: bool) -> bool:
    la, lb = a.lower(), b.lower()
    if la == lb or la.split()[0] in _NOT_ENDS or lb.split()[0] in _NOT_ENDS:
        return False
    if not bare:
        return True
    return (la in _CONVERTIBLE and lb in _CONVERTIBLE) or (
        len(la) <= 4 and len(lb) <= 4 and la.isalnum() and lb.isalnum() and not la.isdigit() and not lb.isdigit()
    )


def en_frames(text: str, key: Callable[[str], str]) -> list[Relation]:
    """English conversion frames of ``text`` (verb frames first; later patterns skip the text they covered)."""
    out: list[Relation] = []
    taken: list[Span] = []
    for pattern, name in ((_EN_VERB, "convert-to"), (_EN_HYPHEN, "to"), (_EN_CUED, "to"), (_EN_BARE, "to")):
        for m in pattern.finditer(text):
            a, b = m.group("a"), m.group("b")
            span = (m.start("a"), m.end("b"))
            if any(span[0] < e and s < span[1] for s, e in taken):
                continue
            if not _en_ok(a, b, bare=pattern is _EN_BARE):
                continue
            out.append((key(a), key(b), a, b, m.span("a"), m.span("b"), name))
            taken.append(span)
    return out


_ZH_VERBS = (
    "翻译成 翻译为 翻成 译成 译为 转换成 转换为 转化成 转化为 换算成 换算为 兑换成 兑换为 折合成 "
    "切换成 切换为 转成 转为 换成 改成 改为 变成 变为"
).split()
_ZH_VERB = re.compile("|".join(sorted(_ZH_VERBS, key=len, reverse=True)))
_ZH_BREAK = re.compile(r"[\s,.;:!?()\[\]，。；：！？、（）《》“”\"'【】]")
_ZH_OPENERS = re.compile("把|将|从|由|如何|怎么|怎样|可以|能够|需要|要|想|用|的")
_CONTENT_FLAGS = ("n", "eng", "a", "l", "i", "q", "j", "b", "m", "s", "f", "z")


def _content(word: str, flag: str) -> bool:
    return flag.startswith(_CONTENT_FLAGS) and word not in ("的", "是", "了") and not word.isdigit()


def _zh_end(norm: Norm, lo: int, hi: int, *, last: bool) -> tuple[str, Span] | None:
    """The content word of ``norm.text[lo:hi]`` nearest the verb (last before it, first after it)."""
    segment = norm.text[lo:hi]
    cut = list(_ZH_BREAK.finditer(segment))
    if last:
        start = cut[-1].end() if cut else 0
        openers = list(_ZH_OPENERS.finditer(segment, start))
        start = openers[-1].end() if openers else start
        segment, base = segment[start:], lo + start
    else:
        first = _ZH_BREAK.search(segment)
        segment, base = segment[: first.start()] if first else segment, lo
    tokens = [(w, (base + s, base + e)) for w, f, (s, e) in pos_tokens(segment) if _content(w, f)]
    if not tokens:
        return None
    word, (s, e) = tokens[-1] if last else tokens[0]
    return word, norm.span(s, e)


def zh_frames(text: str, key: Callable[[str], str]) -> list[Relation]:
    """Chinese ``A成B``-family and ``A转B`` frames of ``text``."""
    norm = Norm(text)
    verbs = [(m.start(), m.end(), m.group()) for m in _ZH_VERB.finditer(norm.text)]
    at = 0
    for word, _, _ in pos_tokens(norm.text):  # 转 as a jieba word of its own
        start = norm.text.find(word, at)
        at = start + len(word) if start >= 0 else at
        if word == "转" and start >= 0 and not any(s <= start < e for s, e, _ in verbs):
            verbs.append((start, start + 1, "转"))
    out: list[Relation] = []
    for start, end, verb in sorted(verbs):
        a = _zh_end(norm, 0, start, last=True)
        b = _zh_end(norm, end, len(norm.text), last=False)
        if a is not None and b is not None and a[0] != b[0]:
            out.append((key(a[0]), key(b[0]), a[0], b[0], a[1], b[1], verb))
    return out
