"""``syntactic_mismatch``: the passage states the query's directed relation backwards (DuReader-retrieval).

Directed relations are the conversion frames of :mod:`~core.detectors.direction`
(``convert A to B``, ``A to B``, ``A-to-B``, ``A翻译成B``, ``A换成B``,
``A转B``...) and "from A to B": English ``from A to B`` (A and B runs of
capitalised words when they start with a capital, so "from Shanghai to
Beijing depart hourly" reads B as "Beijing"; else up to four words ending
before a preposition, a verb of travel or punctuation); Chinese
``[从] A (怎么|坐...)* 去/到/回/至/往/飞/前往... B`` over jieba POS tokens, A
and B being nouns.  Fires when the passage states the reverse ``(B, A)`` of a
query relation and never the relation itself.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from core.detectors.base import Detector, Evidence, Span, Suggestion, check_str, pos_tokens
from core.detectors.direction import Relation, en_frames, zh_frames
from core.lang import has_cjk_ideograph
from core.text import Analyzer, analyzer_for


@dataclass(frozen=True, slots=True, eq=False)
class SyntacticEvidence(Evidence):
    """Evidence of ``syntactic_mismatch``: the query's ``[A, B]``, the passage's ``[B, A]``."""

    query: tuple[str, ...] = ()
    passage: tuple[str, ...] = ()
    relation: str = "from-to"

    def summary(self) -> str:
        if len(self.query) == 2 and len(self.passage) == 2:
            return f"query: {self.query[0]} → {self.query[1]}; passage: {self.passage[0]} → {self.passage[1]}"
        return Evidence.summary(self)


_ZH_MOTION = frozenset(
    {"去", "到", "回", "至", "往", "飞", "前往", "开往", "飞往", "回到", "到达", "抵达", "返回", "去往"}
)
_EN_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,3}?)\s+to\s+"
    r"(?P<b>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,3}?)"
    r"(?=\s+(?:on|in|at|for|by|via|with|and|or|is|are|was|takes?|tomorrow|today|"
    r"departs?|leaves?|runs?|costs?|covers?|goes)\b|\s*[.,;:!?()]|\s*$)",
    re.IGNORECASE,
)
# Capitalised ends ("from Shanghai to New York City ...") end where the capitalised words end, whatever
# follows; the pattern above needs a known word or punctuation after B, and a verb it does not know
# ("depart every hour") would run into B.
_NAME = r"[A-Z][\w'’-]*(?:\s+(?:(?:of|de|la|upon)\s+)?[A-Z][\w'’-]*){0,3}"
_EN_FROM_TO_NAMES = re.compile(rf"\b(?i:from)\s+(?P<a>{_NAME})\s+(?i:to)\s+(?P<b>{_NAME})(?![\w'’-])")


def _is_noun(word: str, flag: str) -> bool:
    return (flag.startswith("n") or flag == "eng") and len(word) >= 2 and word not in _ZH_MOTION


def _en_relations(text: str, key: Callable[[str], str]) -> list[Relation]:
    """English "from A to B": capitalised ends first, then the general pattern where they found none."""
    out: list[Relation] = []
    taken: list[Span] = []
    for pattern in (_EN_FROM_TO_NAMES, _EN_FROM_TO):
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            a, b = m.group("a"), m.group("b")
            out.append((key(a), key(b), a, b, m.span("a"), m.span("b"), "from-to"))
            taken.append(m.span())
    return out


def _nearest_noun(toks: list[tuple[str, str, Span]], positions: range) -> tuple[str, str, Span] | None:
    """The first noun token at ``positions``, stopping at punctuation."""
    for j in positions:
        w, f, _ = toks[j]
        if f == "x":
            return None
        if _is_noun(w, f):
            return toks[j]
    return None


def _zh_relations(text: str, key: Callable[[str], str]) -> list[Relation]:
    """Chinese "[从] A ... 去/到/回... B" over jieba POS tokens: the nouns nearest to a verb of motion."""
    out: list[Relation] = []
    toks = pos_tokens(text)
    for i, (word, _, _) in enumerate(toks):
        if word not in _ZH_MOTION:
            continue
        src = _nearest_noun(toks, range(i - 1, max(-1, i - 5), -1))
        dst = _nearest_noun(toks, range(i + 1, min(len(toks), i + 4)))
        if src is not None and dst is not None and src[0] != dst[0]:
            out.append((key(src[0]), key(dst[0]), src[0], dst[0], src[2], dst[2], "from-to"))
    return out


def _relations(text: str, analyzer: Analyzer) -> list[Relation]:
    """Directed relations of ``text``, their ends keyed by their analyzer terms."""

    def key(s: str) -> str:
        return " ".join(analyzer.tokenize(s)) or s.lower()

    zh = zh_frames(text, key) + _zh_relations(text, key) if has_cjk_ideograph(text) else []
    return en_frames(text, key) + _en_relations(text, key) + zh


def _same_end(x: str, y: str) -> bool:
    """Two keyed ends name the same place, one maybe longer ("new york" and "new york city")."""
    return x == y or x.startswith(y + " ") or y.startswith(x + " ")


def detect_syntactic_mismatch(query: str, passage: str, *, analyzer: Analyzer | None = None) -> list[Suggestion]:
    """The passage states a query's directed relation backwards (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.
    analyzer : Analyzer, optional
        Used to compare the two ends of a relation (stemmed terms); the
        mixed Chinese analyzer by default.

    Returns
    -------
    list of Suggestion
        At most one ``syntactic_mismatch`` suggestion, evidence
        ``{"query": [A, B], "passage": [B, A], "relation": ...}`` (the
        passage's frame: ``"from-to"``, ``"convert-to"``, ``"to"`` or the
        Chinese verb, e.g. ``"翻译成"``), spans on B and A in the passage.

    Examples
    --------
    >>> detect_syntactic_mismatch("台北怎么去瑞芳", "从瑞芳回台北可以坐火车")[0].evidence["passage"]
    ['瑞芳', '台北']
    """
    check_str("query", query), check_str("passage", passage)
    analyzer = analyzer or analyzer_for("mixed")
    q_rel = _relations(query, analyzer)
    if not q_rel:
        return []
    p_rel = _relations(passage, analyzer)
    for qa, qb, qsa, qsb, *_ in q_rel:
        if any(_same_end(qa, pa) and _same_end(qb, pb) for pa, pb, *_ in p_rel):
            continue
        for pa, pb, psa, psb, spa, spb, name in p_rel:
            if _same_end(pa, qb) and _same_end(pb, qa):
                evidence = SyntacticEvidence((qsa, qsb), (psa, psb), name)
                return [Suggestion("syntactic_mismatch", evidence, sorted([spa, spb]))]
    return []


DETECTOR = Detector(
    "syntax",
    "syntactic_mismatch",
    ("query", "passage", "analyzer"),
    (),
    lambda pair: detect_syntactic_mismatch(pair.query, pair.passage, analyzer=pair.analyzer),
    SyntacticEvidence,
)
