"""core.analysis.query_groups / failing_queries: the pure parts of the Metrics page's groups and of error sampling."""

from __future__ import annotations

import pytest

from core.analysis import GROUP_ATTRIBUTES, failing_queries, metrics_by_group, query_groups
from core.types import Query

QUERIES = [
    Query("q1", "高血压的诊断标准", split="dev", domain="medical"),
    Query("q2", "how to bake bread", split="test", type="how-to", language="en"),
    Query("q3", "故宫是哪年开始建造的", split="test", domain="", language=None),
]


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [
        ("split", {"q1": "dev", "q2": "test", "q3": "test"}),
        ("type", {"q1": "unknown", "q2": "how-to", "q3": "unknown"}),
        ("domain", {"q1": "medical", "q2": "unknown", "q3": "unknown"}),  # "" counts as missing
        ("language", {"q1": "zh", "q2": "en", "q3": "zh"}),  # stored "en" kept, the others detected
    ],
)
def test_query_groups_by_each_attribute(attribute: str, expected: dict[str, str]) -> None:
    assert attribute in GROUP_ATTRIBUTES
    assert query_groups(QUERIES, attribute) == expected


def test_query_groups_stored_language_wins_over_detection_and_unknown_is_named() -> None:
    # a Chinese text stored as "en" stays "en": detection only fills a missing language
    assert query_groups([Query("q", "糖尿病", language="en")], "language") == {"q": "en"}
    assert query_groups(QUERIES, "type", unknown="?") == {"q1": "?", "q2": "how-to", "q3": "?"}


def test_query_groups_refuses_other_attributes() -> None:
    with pytest.raises(ValueError, match="attribute must be one of split, type, domain, language, got 'text'"):
        query_groups(QUERIES, "text")


def test_query_groups_feed_metrics_by_group() -> None:
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": {"d1": 1.0}, "q2": {"d9": 1.0, "d2": 0.5}, "q3": {"d9": 1.0}}
    by_split = metrics_by_group(qrels, run, ["RR"], query_groups(QUERIES, "split"))
    assert by_split == {"dev": {"n": 1, "RR": 1.0}, "test": {"n": 2, "RR": 0.25}}


def test_failing_queries_from_core_is_the_one_db_re_exports() -> None:
    from db import error_analysis

    assert error_analysis.failing_queries is failing_queries
    qrels = {"q1": {"d1": 2}, "q2": {"d2": 1}, "q3": {"d3": 0}}
    run = {"q1": {"d1": 0.9}, "q2": {"d2": 0.9}}
    assert failing_queries(qrels, run, k=1) == ["q2", "q3"]  # q2's passage is only grade 1
    assert failing_queries(qrels, run, k=1, level=1) == ["q3"]  # q3 is judged but missing from the run
    assert failing_queries(qrels, run, k=1, level=1, answerable_only=True) == []
