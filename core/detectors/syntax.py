"""``syntactic_mismatch``: the passage states the query's directed relation backwards (DuReader-retrieval).

Directed relations "from A to B": English ``from A to B`` (A and B runs of
capitalised words when they start with a capital, so "from Shanghai to
Beijing depart hourly" reads B as "Beijing"; else up to four words ending
before a preposition, a verb of travel or punctuation); Chinese
``[从] A (怎么|坐...)* 去/到/回/至/往/飞/前往... B`` over jieba POS tokens, A
and B being nouns.  Fires when the passage states the reverse ``(B, A)`` of a
query relation and never the relation itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.detectors.base import Detector, Evidence, Span, Suggestion, check_str, pos_tokens
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


_ZH_MOTION = frozenset({"去", "到", "回", "至", "往", "飞", "前往", "开往", "飞往", "回到", "到达", "抵达", "返回", "去往"})
_EN_FROM_TO = re.compile(
    r"\bfrom\s+(?P<a>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,3}?)\s+to\s+"
    r"(?P<b>[^\W\d_][\w'’-]*(?:\s+[^\W\d_][\w'’-]*){0,3}?)"
    r"(?=\s+(?:on|in|at|for|by|via|with|and|or|is|are|was|takes?|tomorrow|today)\b|\s*[.,;:!?()]|\s*$)",
    re.IGNORECASE,
)


def _is_noun(word: str, flag: str) -> bool:
    return (flag.startswith("n") or flag == "eng") and len(word) >= 2 and word not in _ZH_MOTION


def _relations(text: str, analyzer: Analyzer) -> list[tuple[str, str, str, str, Span, Span]]:
    """Directed relations ``(key_a, key_b, surface_a, surface_b, span_a, span_b)`` of ``text``."""
    out: list[tuple[str, str, str, str, Span, Span]] = []

    def key(s: str) -> str:
        return " ".join(analyzer.tokenize(s)) or s.lower()

    for m in _EN_FROM_TO.finditer(text):
        a, b = m.group("a"), m.group("b")
        out.append((key(a), key(b), a, b, m.span("a"), m.span("b")))
    if has_cjk_ideograph(text):
        toks = pos_tokens(text)
        for i, (word, flag, _) in enumerate(toks):
            if word not in _ZH_MOTION:
                continue
            src = None
            for j in range(i - 1, max(-1, i - 5), -1):
                w, f, _ = toks[j]
                if f == "x":
                    break
                if _is_noun(w, f):
                    src = toks[j]
                    break
            dst = None
            for j in range(i + 1, min(len(toks), i + 4)):
                w, f, _ = toks[j]
                if f == "x":
                    break
                if _is_noun(w, f):
                    dst = toks[j]
                    break
            if src is not None and dst is not None and src[0] != dst[0]:
                out.append((key(src[0]), key(dst[0]), src[0], dst[0], src[2], dst[2]))
    return out


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
        ``{"query": [A, B], "passage": [B, A], "relation": "from-to"}``,
        spans on B and A in the passage.

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
    forward = {(a, b) for a, b, *_ in p_rel}
    for qa, qb, qsa, qsb, _, _ in q_rel:
        if (qa, qb) in forward:
            continue
        for pa, pb, psa, psb, spa, spb in p_rel:
            if (pa, pb) == (qb, qa):
                return [Suggestion("syntactic_mismatch",
                                   SyntacticEvidence((qsa, qsb), (psa, psb)),
                                   sorted([spa, spb]))]
    return []


DETECTOR = Detector("syntax", "syntactic_mismatch", ("query", "passage", "analyzer"), (),
                    lambda pair: detect_syntactic_mismatch(pair.query, pair.passage, analyzer=pair.analyzer),
                    SyntacticEvidence)
