"""The list of detectors :func:`suggest` runs, and :func:`suggest` itself.

Adding a detector is one module (its evidence class, its function and a
:class:`~core.detectors.base.Detector` entry) plus one line in
:data:`DETECTORS`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from core.detectors import (
    acronyms,
    alignment,
    coreference,
    entities,
    false_negatives,
    main_topic,
    numerals,
    syntax,
    terms,
    typos,
)
from core.detectors.base import Detector, Evidence, Pair, Suggestion, check_str, resolve_language
from core.text import Analyzer, analyzer_for

DETECTORS: tuple[Detector, ...] = (
    numerals.DETECTOR,
    entities.DETECTOR,
    syntax.DETECTOR,
    terms.DETECTOR,
    typos.DETECTOR,
    false_negatives.DETECTOR,
    main_topic.DETECTOR,
    coreference.DETECTOR,
    acronyms.DETECTOR,
    alignment.DETECTOR,
)
"""Every detector, in the order :func:`suggest` runs them (the fallback alignment detector last)."""


def detector_of(category: str, detector: str | None = None) -> Detector | None:
    """The detector named ``detector``, else the first rule detector suggesting ``category`` (``None``: none)."""
    for d in DETECTORS:
        if d.name == detector:
            return d
    return next((d for d in DETECTORS if d.category == category and not d.fallback), None)


def evidence_class(category: str, detector: str | None = None) -> type[Evidence] | None:
    """The :class:`~core.detectors.base.Evidence` class of ``category``'s detector (``None`` when it has none).

    ``detector`` (a stored suggestion's detector name) picks the class when two detectors suggest one category.
    """
    found = detector_of(category, detector)
    return found.evidence if found is not None else None


def read_evidence(category: str, evidence: Mapping[str, Any], detector: str | None = None) -> Mapping[str, Any]:
    """Stored evidence (a dict from the db) as its detector's typed evidence; other dicts are returned as they are.

    Tags stored before evidence was typed or before suggestions named their
    detector, and analysts' tags (``{"note": ...}``), read the same way.
    """
    cls = evidence_class(category, detector)
    return evidence if cls is None or isinstance(evidence, cls) else cls.from_dict(evidence)


def suggest(
    query: str,
    passage: str,
    *,
    label: int | None = None,
    score: float | None = None,
    rank: int | None = None,
    title: str = "",
    earlier_chunks: Sequence[str] = (),
    language: str | None = None,
    term_frequencies: Mapping[str, int] | None = None,
    analyzer: Analyzer | None = None,
    overlap_threshold: float = 0.5,
    depth: int = 10,
    answers: Any = None,
    lexicon: Mapping[str, str] | None = None,
    encoder: Any = None,
) -> list[Suggestion]:
    """Run every detector applicable to one (query, passage) pair.

    Loops over :data:`DETECTORS`, running each whose required inputs
    (``Detector.requires``) are given: term overlap needs ``label``, typos
    ``term_frequencies``, false negative ``rank``, main topic ``title``, the
    embedding alignment ``encoder``.  A fallback detector's suggestion is
    dropped when a rule detector already suggested its category.  Each
    suggestion names its detector (``Suggestion.detector``).

    Parameters
    ----------
    query, passage, label, score, rank, title, earlier_chunks, term_frequencies
        The :class:`~core.detectors.base.Pair` fields of the same names (documented there), as are
        ``overlap_threshold``, ``depth``, ``answers``, ``lexicon`` and ``encoder``.
    language : {"en", "zh", "mixed"} or None, optional
        Detected from the texts when ``None``.
    analyzer : Analyzer, optional
        Defaults to :func:`core.text.analyzer_for` of the language.

    Returns
    -------
    list of Suggestion
        Sorted by category id (stable within a category).
    """
    check_str("query", query), check_str("passage", passage), check_str("title", title)
    lang = resolve_language(language, query, passage)
    pair = Pair(
        query, passage, analyzer or analyzer_for("en" if lang == "en" else "zh"), lang, label, score, rank, title,
        earlier_chunks, term_frequencies, overlap_threshold, depth, answers, lexicon, encoder,
    )  # fmt: skip
    return _run(pair)


def _run(pair: Pair) -> list[Suggestion]:
    """Every applicable detector on ``pair``, each suggestion named by its detector, a fallback's only new ones."""
    out: list[Suggestion] = []
    for detector in DETECTORS:
        if detector.applies(pair):
            given = {s.category for s in out}
            found = [s for s in detector.run(pair) if not (detector.fallback and s.category in given)]
            out += [dataclasses.replace(s, detector=detector.name) for s in found]
    return sorted(out, key=lambda s: s.category)
