"""``main_topic``: query terms found in the document title but not in the passage (DAPR)."""

from __future__ import annotations

from dataclasses import dataclass

from core.detectors.base import ZH_PARTICLES, Detector, Evidence, Suggestion, check_str, listing, unique
from core.text import Analyzer, analyzer_for


@dataclass(frozen=True, slots=True, eq=False)
class MainTopicEvidence(Evidence):
    """Evidence of ``main_topic``: the document title and the query words it holds that the passage lacks."""

    title: str = ""
    terms: tuple[str, ...] = ()

    def summary(self) -> str:
        return f"query terms {listing(self.terms)} are in the title '{self.title}' but not in the passage"


def detect_main_topic(query: str, passage: str, title: str, *, analyzer: Analyzer | None = None) -> list[Suggestion]:
    """Query terms that are in the document title but not in the passage (DAPR, main topic).

    Returns
    -------
    list of Suggestion
        At most one ``main_topic`` suggestion, evidence
        ``{"title": title, "terms": [query words]}`` (the query's surface
        words, in query order), no spans.
    """
    check_str("query", query), check_str("passage", passage), check_str("title", title)
    if not title.strip():
        return []
    analyzer = analyzer or analyzer_for("mixed")
    title_terms = set(analyzer.tokenize(title))
    passage_terms = set(analyzer.tokenize(passage))
    missing = [
        (t, s, e)
        for t, s, e in analyzer.tokenize_with_offsets(query)
        if t in title_terms and t not in passage_terms and t not in ZH_PARTICLES
    ]
    if not missing:
        return []
    return [Suggestion("main_topic", MainTopicEvidence(title, tuple(unique(query[s:e] for _, s, e in missing))), [])]


DETECTOR = Detector(
    "main_topic",
    "main_topic",
    ("query", "passage", "title", "analyzer"),
    ("title",),
    lambda pair: detect_main_topic(pair.query, pair.passage, pair.title, analyzer=pair.analyzer),
    MainTopicEvidence,
)
