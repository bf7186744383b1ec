"""``acronym``: an acronym of the query or passage that the document expands elsewhere (DAPR).

An acronym is defined in the document (``International Space Station
(ISS)`` or ``ISS (International Space Station)``, in the title, an earlier
chunk or the passage).  Fires when the acronym occurs in the query or the
passage and the passage does not carry both the acronym and its expansion.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.detectors.base import Detector, Evidence, Suggestion, check_str, contains, find_all


@dataclass(frozen=True, slots=True, eq=False)
class AcronymEvidence(Evidence):
    """Evidence of ``acronym``: the acronym, its expansion, where it is defined and where it occurs."""

    acronym: str = ""
    expansion: str = ""
    defined_in: str = ""  # "title", "earlier_chunk" or "passage"
    chunk_index: int | None = None
    in_query: bool = False
    in_passage: bool = False

    def summary(self) -> str:
        return f"{self.acronym} = {self.expansion} (defined in {self.defined_in})"


_ACRONYM = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Za-z0-9&]{1,9}(?![A-Za-z0-9])")
_PAREN_AFTER = re.compile(r"\(\s*([A-Z][A-Za-z0-9&]{1,9})\s*\)")
_PAREN_LONG = re.compile(r"(?<![A-Za-z0-9])([A-Z][A-Za-z0-9&]{1,9})\s*\(([^()]{3,120})\)")
_MINOR = frozenset({"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "&", "de", "du", "la"})
_EXP_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*(?:-[A-Za-z0-9]+)*")


def _acronym_letters(acr: str) -> str:
    return "".join(ch for ch in acr if ch.isupper())


def _is_acronym(token: str) -> bool:
    return len(_acronym_letters(token)) >= 2 and sum(ch.isupper() for ch in token) * 2 >= len(token)


def _initials_match(words: list[str], letters: str) -> bool:
    initials = "".join(w[0].upper() for w in words if w.lower() not in _MINOR)
    if initials == letters:
        return True
    # hyphenated words may give one initial per part ("Self-Contained Underwater ..." )
    parts = "".join(p[0].upper() for w in words if w.lower() not in _MINOR for p in w.split("-") if p)
    return parts == letters


def _definitions(text: str) -> dict[str, str]:
    """``{acronym: expansion}`` defined in ``text`` as ``Long Form (ACR)`` or ``ACR (Long Form)``."""
    out: dict[str, str] = {}
    for m in _PAREN_AFTER.finditer(text):
        acr = m.group(1)
        letters = _acronym_letters(acr)
        if not _is_acronym(acr):
            continue
        before = list(_EXP_WORD.finditer(text[max(0, m.start() - 300) : m.start()]))
        offset = max(0, m.start() - 300)
        for k in range(1, min(len(before), 2 * len(letters) + 2) + 1):
            words = [w.group() for w in before[-k:]]
            if words[0].lower() in _MINOR:
                continue
            if _initials_match(words, letters):
                s, e = before[-k].start() + offset, before[-1].end() + offset
                out.setdefault(acr, text[s:e])
                break
    for m in _PAREN_LONG.finditer(text):
        acr, inner = m.group(1), m.group(2).strip()
        if _is_acronym(acr) and acr not in out and _initials_match(_EXP_WORD.findall(inner), _acronym_letters(acr)):
            out[acr] = inner
    return out


def _has_acronym(text: str, acr: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(acr)}(?![A-Za-z0-9])", text, re.IGNORECASE) is not None


def detect_acronym(
    query: str,
    passage: str,
    *,
    title: str = "",
    earlier_chunks: Sequence[str] = (),
) -> list[Suggestion]:
    """An acronym of the query or passage that the document expands (DAPR, acronym).

    Parameters
    ----------
    query, passage : str
        The pair (the query may write the acronym in lower case).
    title : str, optional
        The document title.
    earlier_chunks : sequence of str, optional
        The passages before this one in the document.

    Returns
    -------
    list of Suggestion
        One ``acronym`` suggestion per acronym, evidence ``{"acronym",
        "expansion", "defined_in": "title" | "earlier_chunk" | "passage",
        "chunk_index", "in_query", "in_passage"}``, spans on the acronym and
        its expansion in the passage.  Silent when the passage carries both
        the acronym and its expansion.
    """
    check_str("query", query), check_str("passage", passage), check_str("title", title)
    if isinstance(earlier_chunks, str):
        raise TypeError("earlier_chunks must be a sequence of str, not a str")
    sources: list[tuple[str, int | None, str]] = [("title", None, title)]
    for i, chunk in enumerate(earlier_chunks):
        sources.append(("earlier_chunk", i, check_str(f"earlier_chunks[{i}]", chunk)))
    sources.append(("passage", None, passage))
    defs: dict[str, tuple[str, str, int | None]] = {}
    for where, idx, text in sources:
        for acr, exp in _definitions(text).items():
            defs.setdefault(acr, (exp, where, idx))
    out: list[Suggestion] = []
    for acr, (exp, where, idx) in defs.items():
        in_query, in_passage = _has_acronym(query, acr), _has_acronym(passage, acr)
        exp_in_passage = contains(passage, exp)
        if not (in_query or in_passage) or (in_passage and exp_in_passage):
            continue
        spans = [sp for sp in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(acr)}(?![A-Za-z0-9])", passage)]
        all_spans = sorted({m.span() for m in spans} | set(find_all(passage, exp)))
        out.append(Suggestion("acronym", AcronymEvidence(acr, exp, where, idx, in_query, in_passage), all_spans))
    return out


DETECTOR = Detector(
    "acronyms",
    "acronym",
    ("query", "passage", "title", "earlier_chunks"),
    (),
    lambda pair: detect_acronym(pair.query, pair.passage, title=pair.title, earlier_chunks=pair.earlier_chunks),
    AcronymEvidence,
)
