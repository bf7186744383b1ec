"""Automatic error-category suggestions for (query, passage) pairs, with evidence.

When a retriever ranks a passage wrongly, or an annotator labels it, it helps
to know *why* the pair is hard.  This package holds an error taxonomy and
small, transparent detectors that suggest categories for a pair and say what
they saw (``evidence``) and where in the passage (``spans``).  They are
*suggestions* for a human to confirm, not verdicts: every rule is a heuristic
chosen to be explainable and to stay silent on a clean pair.

Layout
------
:mod:`~core.detectors.taxonomy`
    :class:`Category`, :data:`TAXONOMY` (DuReader-retrieval Table 10 merged
    with DAPR's NQ-hard categories) and :func:`merge_categories`.
:mod:`~core.detectors.base`
    :class:`Suggestion`, the :class:`Evidence` base class, the registry's
    :class:`Pair` and :class:`Detector`, shared text helpers.
one module per detector family
    :mod:`~core.detectors.numerals`, :mod:`~core.detectors.entities`,
    :mod:`~core.detectors.syntax` (from-to relations and the conversion
    frames of :mod:`~core.detectors.direction`), :mod:`~core.detectors.names`
    (the kinded Chinese name list and a collection's lexicon, read by the
    entity detector), :mod:`~core.detectors.alignment` (the embedding
    alignment: no word list, needs the collection's encoder),
    :mod:`~core.detectors.terms` (term overlap), :mod:`~core.detectors.typos`,
    :mod:`~core.detectors.false_negatives`, :mod:`~core.detectors.main_topic`,
    :mod:`~core.detectors.coreference`, :mod:`~core.detectors.acronyms`.
    Each holds its rules (in its docstring), its typed evidence (a frozen
    dataclass with ``as_dict()``/``from_dict()``, readable as the dict stored
    in the db) and its ``DETECTOR`` registry entry.
:mod:`~core.detectors.registry`
    :data:`DETECTORS`, the list :func:`suggest` loops over.  A new detector
    is a new module plus one line there.

Every detector takes plain strings (and optional plain extras), returns a
``list[Suggestion]`` and never raises on odd text (empty strings, emoji,
control characters); only arguments of the wrong *type* raise.  Categories
without a detector (``modifier_mismatch``, ``other``, ``self_contained``,
``multi_hop``) are for annotators to assign by hand.  ``benchmarks/bench_detectors.py``
prints each detector's precision and recall on a labelled set of pairs.
"""

from __future__ import annotations

from core.detectors.acronyms import AcronymEvidence, detect_acronym
from core.detectors.alignment import AlignmentEvidence, detect_alignment_mismatch
from core.detectors.base import Detector, Evidence, Pair, Suggestion
from core.detectors.coreference import CoreferenceEvidence, detect_coreference
from core.detectors.entities import EntityEvidence, detect_entity_mismatch
from core.detectors.false_negatives import (
    FalseNegativeCandidate,
    FalseNegativeEvidence,
    detect_false_negative,
    false_negative_candidates,
)
from core.detectors.main_topic import MainTopicEvidence, detect_main_topic
from core.detectors.names import load_lexicon
from core.detectors.numerals import NumeralEvidence, detect_numeral_mismatch
from core.detectors.registry import DETECTORS, evidence_class, read_evidence, suggest
from core.detectors.syntax import SyntacticEvidence, detect_syntactic_mismatch
from core.detectors.taxonomy import TAXONOMY, Category, category_ids, merge_categories
from core.detectors.terms import TermOverlapEvidence, detect_term_overlap
from core.detectors.typos import TypoEvidence, detect_typos, levenshtein, typo_term_frequencies, typo_words

__all__ = [
    "DETECTORS",
    "TAXONOMY",
    "AcronymEvidence",
    "AlignmentEvidence",
    "Category",
    "CoreferenceEvidence",
    "Detector",
    "EntityEvidence",
    "Evidence",
    "FalseNegativeCandidate",
    "FalseNegativeEvidence",
    "MainTopicEvidence",
    "NumeralEvidence",
    "Pair",
    "Suggestion",
    "SyntacticEvidence",
    "TermOverlapEvidence",
    "TypoEvidence",
    "category_ids",
    "detect_acronym",
    "detect_alignment_mismatch",
    "detect_coreference",
    "detect_entity_mismatch",
    "detect_false_negative",
    "detect_main_topic",
    "detect_numeral_mismatch",
    "detect_syntactic_mismatch",
    "detect_term_overlap",
    "detect_typos",
    "evidence_class",
    "false_negative_candidates",
    "levenshtein",
    "load_lexicon",
    "merge_categories",
    "read_evidence",
    "suggest",
    "typo_term_frequencies",
    "typo_words",
]
