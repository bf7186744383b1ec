"""What every detector shares: the :class:`Suggestion` it returns, the :class:`Evidence` base of its
typed evidence, and the text helpers (NFKC offsets, substring tests, jieba part-of-speech tags).

The helpers are public within the package (no leading underscore) because
several detector modules use them; they are not re-exported by
:mod:`core.detectors`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from core.lang import detect_language
from core.text import Analyzer, jieba_tokenizer, normalize_with_offsets

Span = tuple[int, int]
E = TypeVar("E", bound="Evidence")

# --------------------------------------------------------------------------- evidence


class Evidence(Mapping[str, Any]):
    """Base of the detectors' typed evidence (frozen dataclasses), read as the plain dict stored in the db.

    A subclass is a ``@dataclass(frozen=True, slots=True, eq=False)`` whose
    fields are the evidence keys (lists held as tuples, so the value is
    immutable).  It is also a read-only mapping over :meth:`as_dict`, so
    ``suggestion.evidence["query"]`` and ``suggestion.evidence == {...}`` read
    as they did when the evidence was a dict (``eq=False`` keeps the
    mapping's equality).
    """

    __slots__ = ()
    optional: ClassVar[frozenset[str]] = frozenset()
    """Fields left out of :meth:`as_dict` when ``None`` (they were absent from the old dicts)."""

    def as_dict(self) -> dict[str, Any]:
        """The JSON-ready dict stored in the db (tuples as lists, optional ``None`` fields left out)."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.name in self.optional:
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls: type[E], data: Mapping[str, Any]) -> E:
        """Read stored evidence back: unknown keys are ignored, missing ones take the field defaults."""
        names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in names}
        return cls(**kwargs)

    def summary(self) -> str:
        """One line of plain text saying what the evidence holds (the error page shows it; the caller escapes it)."""
        return "; ".join(f"{k}: {listing(v)}" for k, v in self.as_dict().items())

    def __getitem__(self, key: str) -> Any:
        return self.as_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.as_dict())

    def __len__(self) -> int:
        return len(self.as_dict())

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.as_dict()!r})"


# --------------------------------------------------------------------------- suggestions


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suggested error category for one (query, passage) pair.

    Parameters
    ----------
    category : str
        A :class:`Category` id.
    evidence : Evidence or dict
        What the detector saw: the detector's typed :class:`Evidence` (a
        read-only mapping), or a plain JSON-serialisable dict.
    spans : list of (int, int)
        Character spans ``(start, end)`` into the *passage* to highlight;
        may be empty.
    detector : str
        The name of the :class:`Detector` that made it (set by
        :func:`core.detectors.suggest`; "" when a detector function is called
        directly).  Stored with the evidence, because two detectors may
        suggest one category with differently shaped evidence.
    """

    category: str
    evidence: Mapping[str, Any] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)
    detector: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (spans as lists; ``detector`` only when set), for JSON."""
        ev = self.evidence.as_dict() if isinstance(self.evidence, Evidence) else dict(self.evidence)
        out = {"category": self.category, "evidence": ev, "spans": [list(s) for s in self.spans]}
        if self.detector:
            out["detector"] = self.detector
        return out


def listing(items: Any) -> str:
    """``items`` as text: a list or tuple joined by ", " ("-" when empty), ``None`` as "-", else ``str``."""
    if isinstance(items, (list, tuple)):
        return ", ".join(str(x) for x in items) or "-"
    return "-" if items is None else str(items)


def shorten(text: str | None, width: int = 120) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis ("" for None)."""
    if not text:
        return ""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: max(width - 1, 0)] + "…"


def check_str(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    return value


def resolve_language(language: str | None, *texts: str) -> str:
    if language is None:
        return "zh" if any(detect_language(t) == "zh" for t in texts if t) else "en"
    if language not in ("en", "zh", "mixed"):
        raise ValueError(f"language must be 'en', 'zh', 'mixed' or None, got {language!r}")
    return "en" if language == "en" else "zh"


class Norm:
    """NFKC-normalised text with a map back to the original offsets."""

    __slots__ = ("ends", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text, self.starts, self.ends = normalize_with_offsets(text)

    def span(self, s: int, e: int) -> Span:
        if self.starts is None or self.ends is None or e <= s:
            return (s, e)
        return (self.starts[s], self.ends[e - 1])


def find_all(haystack: str, needle: str) -> list[Span]:
    """Case-insensitive occurrences of ``needle`` in ``haystack`` (original offsets)."""
    if not needle:
        return []
    norm = Norm(haystack)
    low, pat = norm.text.lower(), normalize_with_offsets(needle)[0].lower()
    out: list[Span] = []
    if len(low) != len(norm.text) or not pat:  # lowercasing changed lengths: give up on spans
        return out
    i = low.find(pat)
    while i >= 0:
        out.append(norm.span(i, i + len(pat)))
        i = low.find(pat, i + len(pat))
    return out


def contains(haystack: str, needle: str) -> bool:
    return bool(needle) and normalize_with_offsets(needle)[0].lower() in normalize_with_offsets(haystack)[0].lower()


def unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --------------------------------------------------------------------------- Chinese POS

_POS_LOCK = threading.Lock()
_POS: Any = None


def _pos_tokenizer() -> Any:
    """A private ``jieba.posseg.POSTokenizer`` over core.text's private jieba tokenizer."""
    global _POS
    if _POS is None:
        with _POS_LOCK:
            if _POS is None:
                import jieba.posseg

                _POS = jieba.posseg.POSTokenizer(jieba_tokenizer())
    return _POS


def pos_tokens(text: str) -> list[tuple[str, str, Span]]:
    """``(word, flag, original span)`` of jieba POS tagging of the NFKC form of ``text``."""
    norm = Norm(text)
    out: list[tuple[str, str, Span]] = []
    pos = 0
    for pair in _pos_tokenizer().cut(norm.text):
        word, flag = pair.word, pair.flag
        start = norm.text.find(word, pos)
        if start < 0:
            continue
        pos = start + len(word)
        out.append((word, flag, norm.span(start, pos)))
    return out


# Chinese particles left out of term comparisons (term overlap, main topic, coreference).
ZH_PARTICLES = frozenset("了的吗呢吧啊呀么着过地得是在和与及或也都就很")


# --------------------------------------------------------------------------- the registry's types


@dataclass(frozen=True, slots=True)
class Pair:
    """One (query, passage) pair and everything a detector may read about it (see :func:`core.detectors.suggest`).

    ``language`` is resolved (``"en"`` or ``"zh"``) and ``analyzer`` set by
    :func:`~core.detectors.suggest` before any detector runs.

    Attributes
    ----------
    query, passage : str
        The pair.
    label, score, rank : int, float, int, optional
        The pair's graded label (0-3) if judged, retrieval score and 1-based rank.
    title, earlier_chunks : str, sequence of str, optional
        The document title; the texts of the passages before this one in its document.
    term_frequencies : mapping, optional
        Collection word counts, for typos.
    overlap_threshold, depth : float, int, optional
        See :func:`~core.detectors.terms.detect_term_overlap`; the rank cut-off for false-negative candidates.
    answers : str or list, optional
        The query's reference answers: a false-negative candidate must then
        contain one (see :func:`~core.detectors.false_negatives.detect_false_negative`).
    lexicon : mapping, optional
        A collection's own names, ``{name: kind}``, added to the packaged name
        list (see :mod:`~core.detectors.names`).
    encoder : TextEncoder or PhraseCache, optional
        The collection's encoder, enabling the embedding-alignment detector
        (:mod:`~core.detectors.alignment`).
    """

    query: str
    passage: str
    analyzer: Analyzer
    language: str = "en"
    label: int | None = None
    score: float | None = None
    rank: int | None = None
    title: str = ""
    earlier_chunks: Sequence[str] = ()
    term_frequencies: Mapping[str, int] | None = None
    overlap_threshold: float = 0.5
    depth: int = 10
    answers: Any = None
    lexicon: Mapping[str, str] | None = None
    encoder: Any = None

    def has(self, name: str) -> bool:
        """Whether input ``name`` was given: not ``None`` and, for a string, not blank."""
        value = getattr(self, name)
        return value is not None and not (isinstance(value, str) and not value.strip())


@dataclass(frozen=True, slots=True)
class Detector:
    """A registry entry: one detector, the category it suggests and the pair inputs it reads.

    Parameters
    ----------
    name : str
        The detector's name (its module's family, e.g. ``"numerals"``).
    category : str
        The :class:`~core.detectors.taxonomy.Category` id of its suggestions.
    inputs : tuple of str
        The :class:`Pair` fields it reads.
    requires : tuple of str
        The inputs without which it does not run (:meth:`Pair.has`), e.g.
        ``("label",)`` for term overlap.
    run : callable
        ``run(pair) -> list[Suggestion]``.
    evidence : type
        The :class:`Evidence` class of its suggestions.
    fallback : bool
        Its suggestions only add categories no rule detector gave the pair
        (the embedding-alignment detector: a rule's evidence is exact, so it
        wins).
    """

    name: str
    category: str
    inputs: tuple[str, ...]
    requires: tuple[str, ...]
    run: Callable[[Pair], list[Suggestion]]
    evidence: type[Evidence]
    fallback: bool = False

    def applies(self, pair: Pair) -> bool:
        """Whether every required input of ``pair`` was given."""
        return all(pair.has(name) for name in self.requires)
