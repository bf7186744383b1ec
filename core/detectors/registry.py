"""The list of detectors :func:`suggest` runs, and :func:`suggest` itself.

Adding a detector is one module (its evidence class, its function and a
:class:`~core.detectors.base.Detector` entry) plus one line in
:data:`DETECTORS`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.detectors import acronyms, coreference, entities, false_negatives, main_topic, numerals, syntax, terms, typos
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
)
"""Every detector, in the order :func:`suggest` runs them."""


def evidence_class(category: str) -> type[Evidence] | None:
    """The :class:`~core.detectors.base.Evidence` class of ``category``'s detector (``None`` when it has none)."""
    for detector in DETECTORS:
        if detector.category == category:
            return detector.evidence
    return None


def read_evidence(category: str, evidence: Mapping[str, Any]) -> Mapping[str, Any]:
    """Stored evidence (a dict from the db) as its detector's typed evidence; other dicts are returned as they are.

    Tags stored before evidence was typed, and analysts' tags (``{"note": ...}``), read the same way.
    """
    cls = evidence_class(category)
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
) -> list[Suggestion]:
    """Run every detector applicable to one (query, passage) pair.

    Loops over :data:`DETECTORS`, running each whose required inputs
    (``Detector.requires``) are given: term overlap needs ``label``, typos
    ``term_frequencies``, false negative ``rank``, main topic ``title``.

    Parameters
    ----------
    query, passage, label, score, rank, title, earlier_chunks, term_frequencies, overlap_threshold, depth, answers
        The :class:`~core.detectors.base.Pair` fields of the same names (documented there).
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
        query,
        passage,
        analyzer or analyzer_for("en" if lang == "en" else "zh"),
        lang,
        label=label,
        score=score,
        rank=rank,
        title=title,
        earlier_chunks=earlier_chunks,
        term_frequencies=term_frequencies,
        overlap_threshold=overlap_threshold,
        depth=depth,
        answers=answers,
    )
    out = [s for detector in DETECTORS if detector.applies(pair) for s in detector.run(pair)]
    return sorted(out, key=lambda s: s.category)
