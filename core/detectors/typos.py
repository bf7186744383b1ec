"""``typo``: a query word one edit away from a frequent collection term (DuReader-retrieval).

A query word (lowercased, Latin words and CJK words of 3+ characters) at
Levenshtein distance 1 from a frequent collection term (count at least
``min_count``) that is itself rare (count at most ``ratio`` times the
term's).  Glued words are split around a frequent term they contain
(``"iponeiPhone"`` -> ``"ipone"`` + ``"iphone"``) and the pieces checked.
:func:`typo_term_frequencies` counts a collection's words the way the
detector reads them (the store calls it).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from core.detectors.base import Detector, Evidence, Suggestion, check_str, find_all
from core.lang import has_cjk_ideograph, is_cjk_ideograph
from core.text import jieba_tokenizer, normalize_with_offsets


@dataclass(frozen=True, slots=True, eq=False)
class TypoEvidence(Evidence):
    """Evidence of ``typo``: the misspelt piece, its correction, their distance, the correction's count, the query word."""

    query_term: str = ""
    correction: str = ""
    distance: int = 1
    frequency: int = 0
    word: str = ""

    def summary(self) -> str:
        return f"'{self.query_term}' may be a typo of '{self.correction}' (used {self.frequency} times)"


def levenshtein(a: str, b: str, *, max_distance: int | None = None) -> int:
    """Levenshtein edit distance (insertions, deletions, substitutions, each cost 1).

    Written here because neither ``rapidfuzz`` nor ``python-Levenshtein`` is
    a dependency of pooljudge (checked with ``pip list``); a two-row dynamic
    programme is enough for query words.

    Parameters
    ----------
    a, b : str
        The strings.
    max_distance : int, optional
        Stop early and return ``max_distance + 1`` once the distance is known
        to exceed it.

    Returns
    -------
    int

    Examples
    --------
    >>> levenshtein("ipone", "iphone")
    1
    """
    check_str("a", a), check_str("b", b)
    if max_distance is not None and abs(len(a) - len(b)) > max_distance:
        return max_distance + 1
    if len(a) < len(b):
        a, b = b, a
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        if max_distance is not None and min(cur) > max_distance:
            return max_distance + 1
        prev = cur
    return prev[-1]


_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'’]*")


def typo_words(text: str) -> list[str]:
    """The lowercased Latin words of ``text``: the words :func:`typo_term_frequencies` counts.

    Examples
    --------
    >>> typo_words("iPhone 15 won't boot")
    ['iphone', "won't", 'boot']
    """
    return [m.group().lower() for m in _LATIN_WORD.finditer(text)]


def typo_term_frequencies(texts: Iterable[str]) -> dict[str, int]:
    """Counts of the lowercased Latin words of ``texts``: the ``term_frequencies`` :func:`detect_typos` wants.

    One pass over ``texts`` (any iterable, e.g. a stream of a collection's
    queries, titles and passages).  Chinese words are not counted, so typo
    suggestions from such a table are for Latin-script words only.

    Examples
    --------
    >>> typo_term_frequencies(["iPhone screenshot", "iphone ipone"])
    {'iphone': 2, 'screenshot': 1, 'ipone': 1}
    """
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(typo_words(text))
    return dict(counts)


def _query_words(query: str) -> list[tuple[str, str]]:
    """``(lowercased word, surface)`` candidates for typo checks: Latin words and CJK words of 3+ chars."""
    norm = normalize_with_offsets(query)[0]
    out = [(m.group().lower(), m.group()) for m in _LATIN_WORD.finditer(norm)]
    if has_cjk_ideograph(norm):  # every CJK block (core.lang.CJK_RANGES), Extension A included
        for word in jieba_tokenizer().cut(norm):
            if len(word) >= 3 and all(map(is_cjk_ideograph, word)):
                out.append((word, word))
    return out


class _Vocabulary:
    """The collection counts as :func:`detect_typos` reads them: the frequent terms by length, and lookups."""

    def __init__(self, counts: Mapping[str, int], min_count: int, ratio: float, min_length: int) -> None:
        self.counts, self.min_count, self.ratio, self.min_length = counts, min_count, ratio, min_length
        self.frequent: dict[int, list[tuple[str, int]]] = {}
        for term, count in counts.items():
            if isinstance(term, str) and isinstance(count, int) and count >= min_count and len(term) >= min_length:
                self.frequent.setdefault(len(term), []).append((term.lower(), count))

    def count_of(self, word: str) -> int:
        c = self.counts.get(word, 0)
        return c if isinstance(c, int) else 0

    def pieces(self, word: str) -> list[str]:
        """``word``, and when it is rare the pieces around a frequent term glued inside it."""
        pieces = [word]
        if self.count_of(word) < self.min_count:
            for terms in self.frequent.values():
                for term, _ in terms:
                    i = word.find(term)
                    if i >= 0 and term != word:
                        pieces.extend(p for p in (word[:i], word[i + len(term) :]) if p)
        return pieces

    def correction(self, piece: str) -> tuple[str, int] | None:
        """The most frequent term one edit from ``piece`` that is far more frequent than it, with its count."""
        if len(piece) < self.min_length - 1 or piece.isdigit():
            return None
        best: tuple[str, int] | None = None
        for n in (len(piece) - 1, len(piece), len(piece) + 1):
            for term, count in self.frequent.get(n, ()):
                if (
                    term != piece
                    and self.count_of(piece) <= self.ratio * count
                    and levenshtein(piece, term, max_distance=1) == 1
                    and (best is None or count > best[1])
                ):
                    best = (term, count)
        return best


def detect_typos(
    query: str,
    passage: str,
    term_frequencies: Mapping[str, int],
    *,
    min_count: int = 5,
    ratio: float = 0.1,
    min_length: int = 4,
) -> list[Suggestion]:
    """Query words one edit away from a frequent collection term (DuReader-retrieval Table 10, typos).

    Parameters
    ----------
    query, passage : str
        The pair (spans point at the corrected term in the passage, if there).
    term_frequencies : mapping of str to int
        Collection counts of lowercased surface words (``"iphone": 120``);
        only terms of at least ``min_length`` characters counted at least
        ``min_count`` times are corrections.
    min_count : int, optional
        Minimum count of a correction (default 5).
    ratio : float, optional
        A word is a typo only when its own count is at most ``ratio`` times
        the correction's (default 0.1), so two frequent spellings are left alone.
    min_length : int, optional
        Minimum length of the correction (default 4): one edit on a short word
        is too often another word.

    Returns
    -------
    list of Suggestion
        One ``typo`` suggestion per typo, evidence
        ``{"query_term", "correction", "distance", "frequency", "word"}``
        (``word`` is the query word the typo was found in).
    """
    check_str("query", query), check_str("passage", passage)
    if not isinstance(term_frequencies, Mapping):
        raise TypeError("term_frequencies must be a mapping of term to count")
    if min_count < 1 or not 0 <= ratio < 1 or min_length < 1:
        raise ValueError("min_count and min_length must be >= 1 and ratio in [0, 1)")
    vocabulary = _Vocabulary(term_frequencies, min_count, ratio, min_length)
    if not vocabulary.frequent:
        return []
    out: list[Suggestion] = []
    seen: set[str] = set()
    for word, surface in _query_words(query):
        for piece in vocabulary.pieces(word):
            found = None if piece in seen else vocabulary.correction(piece)
            if found is None:
                continue
            seen.add(piece)
            term, count = found
            out.append(Suggestion("typo", TypoEvidence(piece, term, 1, count, surface), find_all(passage, term)))
    return out


DETECTOR = Detector(
    "typos",
    "typo",
    ("query", "passage", "term_frequencies"),
    ("term_frequencies",),
    lambda pair: detect_typos(pair.query, pair.passage, pair.term_frequencies or {}),
    TypoEvidence,
)
