"""The embedding-alignment detector: a salient query phrase whose closest passage phrase is another of its kind.

The rule detectors stop where their vocabulary stops.  This one has no word
list: it splits query and passage into candidate phrases (:func:`phrases`),
embeds them with the collection's encoder, and for each salient query phrase
absent from the passage takes its most similar passage phrase.  A mismatch
is a counterpart

* of the same kind: both numbers of one kind (years, ordinals, counts, the
  same measure word), both names (capitalised spans, jieba proper nouns), or
  both the modifier of the same head noun (小米 and 华为 before 手机, 三星堆 and
  殷墟 before 遗址: the slot of a Chinese compound);
* close: cosine at least ``threshold`` (the counterpart is about the same
  sort of thing), yet below ``equivalent`` and not the same text or value
  (it is another one).  Both are read on the encoder's own scale: a cosine
  ``c`` counts as ``(c - b) / (1 - b)`` where ``b`` is the encoder's mean
  cosine between unrelated probe phrases (:meth:`PhraseCache.baseline`),
  because encoders differ there (all-MiniLM-L6-v2 ~0.20, multilingual-e5-small
  ~0.82: every pair of e5 phrases is "similar" in raw cosine).

Numbers, and names that differ only in their number (iPhone 13 against
iPhone 12), are ``numeral_mismatch``; other names and slots
``entity_mismatch``.  The evidence gives both phrases, their kind and cosine.
In :func:`core.detectors.suggest` it runs only with an ``encoder`` and after
the rules, adding a category only when no rule gave it (a rule's evidence is
exact).  Phrase vectors are cached per encoder (:class:`PhraseCache`) and
encoded in one batch per pair, or per pool with :func:`detect_alignment_batch`;
a pair where no mismatch is possible (every query phrase is in the passage, or
the passage has no phrase of an absent one's kind) encodes nothing.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.detectors.base import (
    Detector,
    Evidence,
    Norm,
    Span,
    Suggestion,
    check_str,
    contains,
    pos_tokens,
    resolve_language,
)
from core.detectors.entities import EN_NOT_NAMES
from core.detectors.numerals import numbers
from core.lang import has_cjk_ideograph

DEFAULT_THRESHOLD = 0.25
"""Lowest rescaled cosine of a counterpart that counts as "the same sort of thing" (see the README)."""
DEFAULT_EQUIVALENT = 0.85
"""Rescaled cosine from which two different strings are read as the same phrase (spelling variants)."""
# Unrelated phrases (topics, scripts and kinds apart) whose mean cosine is an encoder's baseline.
_PROBES = (
    "water 1999 Paris guitar Microsoft photosynthesis 长江 手机 唐朝 三年级 basketball invoice Einstein 咖啡 税率"
).split()


@dataclass(frozen=True, slots=True, eq=False)
class AlignmentEvidence(Evidence):
    """Evidence of the alignment detector: the query phrase, its closest passage phrase, their kind and cosine."""

    query_phrase: str = ""
    passage_phrase: str = ""
    kind: str = ""
    cosine: float = 0.0  # raw cosine
    threshold: float = 0.0  # the raw cosine the rescaled threshold stands for, with this encoder
    detector: str = "alignment"

    def summary(self) -> str:
        if self.kind.startswith("slot:"):
            what = f"both before '{self.kind[5:]}'"
        else:
            what = "both numbers" if self.kind.startswith("number") else "both names"
        return (
            f"embedding alignment: query phrase '{self.query_phrase}' is closest to passage phrase "
            f"'{self.passage_phrase}' ({what}, cosine {self.cosine:.2f} >= {self.threshold:.2f})"
        )


@dataclass(frozen=True, slots=True)
class Phrase:
    """A candidate phrase: its text as written, kind, original span and, for a number, its value."""

    text: str
    kind: str
    span: Span
    value: str | None = None


# --------------------------------------------------------------------------- phrases

_NAME_WORD = r"(?:[A-Z][A-Za-z0-9'’&-]*|[a-z]+[A-Z][A-Za-z0-9'’&-]*)"  # Latin letters only: not into CJK text
_EN_NAME = re.compile(rf"{_NAME_WORD}(?:\s+(?:(?:of|de|la|von|van)\s+)?{_NAME_WORD})*(?:\s+[0-9]+[A-Za-z]?\b)?")
_HEAD_FLAGS = ("n", "vn")
_MODIFIER_FLAGS = ("n", "eng", "m", "j", "l", "i", "b")
_PROPER = ("nr", "ns", "nt", "nz")


def _en_names(text: str) -> list[Phrase]:
    """Capitalised or camel-case runs (a trailing number kept: iPhone 13), leading function words dropped."""
    out = []
    for m in _EN_NAME.finditer(text):
        words = list(re.finditer(r"\S+", m.group()))
        while words and words[0].group().lower() in EN_NOT_NAMES:
            words.pop(0)
        if words and not words[0].group().isdigit():
            s, e = m.start() + words[0].start(), m.end()
            out.append(Phrase(text[s:e], "name", (s, e)))
    return out


def _is_numeral(word: str) -> bool:
    return bool(numbers(word)) and len(numbers(word)[0][3]) == len(word)


def _zh_names(text: str) -> list[Phrase]:
    """jieba proper nouns as names, and the modifier of a head noun as that head's slot (小米 in 小米手机)."""
    out = []
    toks = pos_tokens(text)
    for i, (word, flag, span) in enumerate(toks):
        head = toks[i + 1] if i + 1 < len(toks) else None
        modifier = flag.startswith(_MODIFIER_FLAGS) and (len(word) >= 2 or flag == "eng") and not _is_numeral(word)
        if modifier and head is not None and head[1].startswith(_HEAD_FLAGS) and len(head[0]) >= 2:
            out.append(Phrase(word, f"slot:{head[0]}", span))
        elif flag.startswith(_PROPER) and len(word) >= 2:
            out.append(Phrase(word, "name", span))
    return out


def phrases(text: str, language: str | None = None) -> list[Phrase]:
    """The candidate phrases of ``text``: numbers, names and (Chinese) slots, in text order.

    Parameters
    ----------
    text : str
    language : {"en", "zh", "mixed"} or None, optional
        ``None`` reads Chinese phrases when ``text`` has CJK ideographs.

    Returns
    -------
    list of Phrase
        Kinds ``number:<kind>`` (:func:`core.detectors.numerals.numbers`),
        ``name`` and ``slot:<head noun>``.
    """
    check_str("text", text)
    out = [Phrase(t, f"number:{k}", sp, v) for v, k, sp, t in numbers(text)]
    out += _en_names(text)
    if language in ("zh", "mixed") or (language is None and has_cjk_ideograph(text)):
        out += _zh_names(text)
    out.sort(key=lambda p: p.span)
    return out


# --------------------------------------------------------------------------- the encoder


class PhraseCache:
    """Unit phrase vectors from an encoder, cached by text and encoded in batches.

    Parameters
    ----------
    encoder : TextEncoder
        Anything with ``encode(texts, kind=...) -> (n, dim) array``
        (:class:`core.retrieval.encoder.BiEncoder`).  Phrases are encoded as
        queries on both sides, so the two sides are comparable.
    max_size : int
        The cache is emptied when it holds more phrases.
    """

    def __init__(self, encoder: Any, max_size: int = 200_000) -> None:
        self.encoder = encoder
        self.max_size = max_size
        self._vectors: dict[str, np.ndarray] = {}
        self._baseline: float | None = None
        self._lock = threading.Lock()

    def add(self, texts: Sequence[str]) -> None:
        """Encode, in one batch, the texts not cached yet."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if not missing:
                return
            if len(self._vectors) + len(missing) > self.max_size:
                self._vectors.clear()
            rows = np.asarray(self.encoder.encode(missing, kind="query"), dtype=np.float32)
            norms = np.linalg.norm(rows, axis=1, keepdims=True)
            unit = (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)
            self._vectors.update(zip(missing, unit, strict=True))

    def baseline(self) -> float:
        """The encoder's mean cosine between unrelated probe phrases (computed once)."""
        if self._baseline is None:
            vectors = self.matrix(list(_PROBES))
            sims = vectors @ vectors.T
            n = len(_PROBES)
            self._baseline = float((sims.sum() - np.trace(sims)) / (n * n - n))
        return self._baseline

    def raw(self, rescaled: float) -> float:
        """The raw cosine that a rescaled one stands for with this encoder."""
        base = self.baseline()
        return base + rescaled * (1.0 - base)

    def matrix(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), dim)`` unit vectors (encoding what is missing)."""
        self.add(texts)
        return np.stack([self._vectors[t] for t in texts])


_CACHES: weakref.WeakKeyDictionary[Any, PhraseCache] = weakref.WeakKeyDictionary()
_CACHES_LOCK = threading.Lock()


def phrase_cache(encoder: Any) -> PhraseCache:
    """``encoder`` itself when it is a :class:`PhraseCache`, else the one cache kept for it."""
    if isinstance(encoder, PhraseCache):
        return encoder
    with _CACHES_LOCK:
        try:
            cache = _CACHES.get(encoder)
        except TypeError:  # not weak-referenceable: a fresh cache each call
            return PhraseCache(encoder)
        if cache is None:
            cache = _CACHES[encoder] = PhraseCache(encoder)
        return cache


# --------------------------------------------------------------------------- the detector


def _key(text: str) -> str:
    return Norm(text).text.casefold()


def _present(q: Phrase, passage: str, p_phrases: Sequence[Phrase]) -> bool:
    """The query phrase is in the passage: the same value for a number; for a name, its text, or a passage
    name inside it or around it (Tesla for Nikola Tesla: a shorter mention of the same name, not another one).
    """
    if q.value is not None:
        return any(p.kind == q.kind and p.value == q.value for p in p_phrases)
    key = _key(q.text)
    return contains(passage, q.text) or any(
        p.value is None and (_key(p.text) in key or key in _key(p.text)) for p in p_phrases
    )


def _category(q: Phrase, p: Phrase) -> str:
    if q.value is not None:
        return "numeral_mismatch"
    q_digits, p_digits = re.findall(r"[0-9]+", q.text), re.findall(r"[0-9]+", p.text)
    same_words = re.sub(r"[0-9]+", "#", _key(q.text)) == re.sub(r"[0-9]+", "#", _key(p.text))
    return "numeral_mismatch" if q_digits and p_digits and q_digits != p_digits and same_words else "entity_mismatch"


Plan = tuple[list[Phrase], list[Phrase]]
"""The salient query phrases absent from the passage, and the passage's phrases."""


def _plan(query: str, passage: str, language: str) -> Plan | None:
    """What to compare for one pair, or ``None`` when no mismatch is possible (nothing then needs encoding).

    None when every query phrase is in the passage, or no passage phrase has the kind of an absent one.
    """
    q_phrases, p_phrases = phrases(query, language), phrases(passage, language)
    salient = [q for q in q_phrases if not _present(q, passage, p_phrases)]
    if not {q.kind for q in salient} & {p.kind for p in p_phrases}:
        return None
    return salient, p_phrases


def _align(plan: Plan, cache: PhraseCache, threshold: float, equivalent: float) -> list[Suggestion]:
    """The mismatches of one pair, at most one per category (the closest counterpart)."""
    salient, p_phrases = plan
    sims = cache.matrix([q.text for q in salient]) @ cache.matrix([p.text for p in p_phrases]).T
    low, high = cache.raw(threshold), cache.raw(equivalent)
    best: dict[str, tuple[float, Suggestion]] = {}
    for i, q in enumerate(salient):
        j = int(np.argmax(sims[i]))
        p, cos = p_phrases[j], float(sims[i, j])
        if p.kind != q.kind or not low <= cos < high or _key(p.text) == _key(q.text):
            continue
        category = _category(q, p)
        evidence = AlignmentEvidence(q.text, p.text, q.kind, round(cos, 4), round(low, 4))
        if category not in best or cos > best[category][0]:
            best[category] = (cos, Suggestion(category, evidence, [p.span]))
    return [s for _, s in sorted(best.values(), key=lambda x: x[1].category)]


def detect_alignment_mismatch(
    query: str,
    passage: str,
    encoder: Any,
    *,
    language: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    equivalent: float = DEFAULT_EQUIVALENT,
) -> list[Suggestion]:
    """Salient query phrases whose closest passage phrase is a different one of the same kind.

    Parameters
    ----------
    query, passage : str
        The pair.
    encoder : TextEncoder or PhraseCache
        The collection's encoder (its phrase vectors are cached, see :func:`phrase_cache`).
    language : {"en", "zh", "mixed"} or None, optional
        ``None`` detects it.
    threshold, equivalent : float, optional
        The band of a mismatch, ``threshold <= rescaled cosine < equivalent``
        (rescaled by the encoder's baseline, :meth:`PhraseCache.baseline`).

    Returns
    -------
    list of Suggestion
        At most one ``numeral_mismatch`` and one ``entity_mismatch``, each
        with :class:`AlignmentEvidence` and a span on the passage phrase.
    """
    return detect_alignment_batch(
        [(query, passage)], encoder, language=language, threshold=threshold, equivalent=equivalent
    )[0]


def detect_alignment_batch(
    pairs: Sequence[tuple[str, str]],
    encoder: Any,
    *,
    language: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    equivalent: float = DEFAULT_EQUIVALENT,
) -> list[list[Suggestion]]:
    """:func:`detect_alignment_mismatch` over many pairs, every new phrase encoded in one batch.

    Parameters
    ----------
    pairs : sequence of (query, passage)
    encoder, language, threshold, equivalent
        As for :func:`detect_alignment_mismatch`.

    Returns
    -------
    list of list of Suggestion
        One list per pair, in order.
    """
    cache = phrase_cache(encoder)
    plans = []
    for query, passage in pairs:
        lang = resolve_language(language, check_str("query", query), check_str("passage", passage))
        plans.append(_plan(query, passage, lang))
    cache.add([p.text for plan in plans if plan is not None for side in plan for p in side])
    return [[] if plan is None else _align(plan, cache, threshold, equivalent) for plan in plans]


DETECTOR = Detector(
    "alignment",
    "entity_mismatch",
    ("query", "passage", "language", "encoder"),
    ("encoder",),
    lambda pair: detect_alignment_mismatch(pair.query, pair.passage, pair.encoder, language=pair.language),
    AlignmentEvidence,
    fallback=True,
)
"""Suggests ``entity_mismatch`` or ``numeral_mismatch``; only with an encoder, and only categories no rule gave."""
