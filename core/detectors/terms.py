"""``term_overlap``: a passage that shares most query terms yet is labelled low (DuReader-retrieval).

Share of the query's distinct analyzer terms (a few Chinese particles removed)
found in the passage.  Fires when the share is at least ``threshold`` (0.5)
**and** the pair's label is low (0 or 1): the pair looks relevant lexically
but is not.  Silent without a label.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.detectors.base import ZH_PARTICLES, Detector, Evidence, Suggestion, check_str, listing, unique
from core.text import Analyzer, analyzer_for
from core.validators import is_integer, real_number


@dataclass(frozen=True, slots=True, eq=False)
class TermOverlapEvidence(Evidence):
    """Evidence of ``term_overlap``: the share of query terms in the passage, which, how many, the label."""

    overlap: float = 0.0
    shared: tuple[str, ...] = ()
    query_terms: int = 0
    label: int | None = None

    def summary(self) -> str:
        if not isinstance(self.overlap, (int, float)):
            return Evidence.summary(self)
        return f"{self.overlap:.0%} of the query terms in the passage ({listing(self.shared)}); label {self.label}"


def _content_terms(text: str, analyzer: Analyzer) -> list[tuple[str, int, int]]:
    return [t for t in analyzer.tokenize_with_offsets(text) if t[0] not in ZH_PARTICLES]


def detect_term_overlap(
    query: str,
    passage: str,
    *,
    label: int | None,
    threshold: float = 0.5,
    max_label: int = 1,
    analyzer: Analyzer | None = None,
) -> list[Suggestion]:
    """High lexical overlap with a low label: over-sensitivity to term overlap (DuReader-retrieval Table 10).

    Parameters
    ----------
    query, passage : str
        The pair.
    label : int or None
        The pair's graded label; the detector is silent when ``None`` or
        above ``max_label``.
    threshold : float, optional
        Minimum share of the query's distinct content terms found in the
        passage (default 0.5).
    max_label : int, optional
        Highest label counted as low (default 1: "on topic but does not meet
        the need").
    analyzer : Analyzer, optional
        The mixed Chinese analyzer by default.

    Returns
    -------
    list of Suggestion
        At most one ``term_overlap`` suggestion, evidence
        ``{"overlap": share, "shared": [...], "query_terms": n, "label": label}``,
        spans on the shared terms in the passage.
    """
    check_str("query", query), check_str("passage", passage)
    real_number(threshold, "threshold", low=0, high=1, low_open=True)
    if label is not None and not is_integer(label):
        raise TypeError(f"label must be an int or None, got {type(label).__name__}")
    if label is None or label > max_label:
        return []
    analyzer = analyzer or analyzer_for("mixed")
    q_terms = unique(t for t, _, _ in _content_terms(query, analyzer))
    if not q_terms:
        return []
    p_terms = _content_terms(passage, analyzer)
    p_set = {t for t, _, _ in p_terms}
    shared = [t for t in q_terms if t in p_set]
    share = len(shared) / len(q_terms)
    if not shared or share < threshold:
        return []
    wanted = set(shared)
    spans = sorted({(s, e) for t, s, e in p_terms if t in wanted})
    return [Suggestion("term_overlap", TermOverlapEvidence(round(share, 4), tuple(shared), len(q_terms), label), spans)]


DETECTOR = Detector(
    "terms",
    "term_overlap",
    ("query", "passage", "label", "overlap_threshold", "analyzer"),
    ("label",),
    lambda pair: detect_term_overlap(
        pair.query, pair.passage, label=pair.label, threshold=pair.overlap_threshold, analyzer=pair.analyzer
    ),
    TermOverlapEvidence,
)
