"""``coreference``: the passage opens with a reference whose antecedent is earlier in the document (DAPR).

The passage opens with a pronoun or definite reference (``It``, ``He``,
``The company``, ``该``, ``他``, ``这``...) and an earlier chunk of the
document (or, failing that, the title) shares a term with the query or
contains the title: that chunk is the evidence of the antecedent.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.detectors.base import (
    ZH_PARTICLES,
    Detector,
    Evidence,
    Span,
    Suggestion,
    check_str,
    contains,
    shorten,
    unique,
)
from core.text import Analyzer, analyzer_for


@dataclass(frozen=True, slots=True, eq=False)
class CoreferenceEvidence(Evidence):
    """Evidence of ``coreference``: the opening reference, where its antecedent is (chunk index, ``None`` for
    the title), that text (cut to 300 characters) and the terms it shares with the query."""

    reference: str = ""
    antecedent_chunk: int | None = None
    antecedent: str = ""
    matched: tuple[str, ...] = ()

    def summary(self) -> str:
        where = "the title" if self.antecedent_chunk is None else f"earlier passage {self.antecedent_chunk}"
        return f"'{self.reference}' refers back to {where}: {shorten(str(self.antecedent or ''), 80)}"


_EN_PRONOUN = re.compile(
    r"(?:It|He|She|They|Its|His|Her|Their|Them|This|These|That|Those|"
    r"(?:The|This|That|These|Those)\s+(?:company|companies|city|town|village|country|state|band|group|film|movie|"
    r"book|novel|album|song|single|team|club|building|tower|bridge|river|lake|mountain|island|station|school|"
    r"university|college|game|series|show|player|singer|actor|actress|artist|writer|author|region|area|park|"
    r"church|museum|war|battle|party|species|organization|organisation|program|programme|project|ship|"
    r"aircraft|vehicle|system|site|structure|church|network|channel|event|tournament|championship|league|"
    r"law|act|treaty|disease|character|family|king|queen|president|emperor|house|festival|award))\b"
)
_ZH_PRONOUN = re.compile(
    r"(?!其他|其中|其实|其次|此外|那么|这么|那样|这样|他人)(?:他们|她们|它们|该|此|其|他|她|它|这|那)"
)
_LEADING = re.compile(r"[\s\"'“”‘’«»「」『』《》()（）\[\]【】\-–—:：,，.。]*")


def _opening_reference(passage: str) -> tuple[str, Span] | None:
    start = _LEADING.match(passage).end()  # type: ignore[union-attr]
    for pattern in (_EN_PRONOUN, _ZH_PRONOUN):
        m = pattern.match(passage, start)
        if m:
            return m.group(), m.span()
    return None


def detect_coreference(
    query: str,
    passage: str,
    *,
    title: str = "",
    earlier_chunks: Sequence[str] = (),
    analyzer: Analyzer | None = None,
) -> list[Suggestion]:
    """The passage opens with a reference whose antecedent is earlier in the document (DAPR, coreference).

    Parameters
    ----------
    query, passage : str
        The pair.
    title : str, optional
        The document title.
    earlier_chunks : sequence of str, optional
        The texts of the passages that come before this one in the document,
        in document order.
    analyzer : Analyzer, optional
        The mixed Chinese analyzer by default.

    Returns
    -------
    list of Suggestion
        At most one ``coreference`` suggestion, evidence
        ``{"reference": "It", "antecedent_chunk": i or None, "antecedent": text,
        "matched": [terms]}``: the first earlier chunk that contains the
        title or shares a query term, or the title itself (``antecedent_chunk``
        ``None``) when no earlier chunk does but the title shares a query
        term.  Span on the reference.
    """
    check_str("query", query), check_str("passage", passage), check_str("title", title)
    if isinstance(earlier_chunks, str):
        raise TypeError("earlier_chunks must be a sequence of str, not a str")
    ref = _opening_reference(passage)
    if ref is None:
        return []
    analyzer = analyzer or analyzer_for("mixed")
    q_terms = set(analyzer.tokenize(query)) - ZH_PARTICLES
    for i, chunk in enumerate(earlier_chunks):
        check_str(f"earlier_chunks[{i}]", chunk)
        matched = unique(t for t in analyzer.tokenize(chunk) if t in q_terms)
        if title.strip() and contains(chunk, title.strip()):
            matched = unique([title.strip(), *matched])
        if matched:
            return [Suggestion("coreference", CoreferenceEvidence(ref[0], i, chunk[:300], tuple(matched)), [ref[1]])]
    matched = unique(t for t in analyzer.tokenize(title) if t in q_terms)
    if matched:
        return [Suggestion("coreference", CoreferenceEvidence(ref[0], None, title, tuple(matched)), [ref[1]])]
    return []


DETECTOR = Detector(
    "coreference",
    "coreference",
    ("query", "passage", "title", "earlier_chunks", "analyzer"),
    (),
    lambda pair: detect_coreference(
        pair.query, pair.passage, title=pair.title, earlier_chunks=pair.earlier_chunks, analyzer=pair.analyzer
    ),
    CoreferenceEvidence,
)
