"""Active selection (T2Ranking §4.4): keep the pairs the cross-encoder is unsure about, count what it saved."""

from __future__ import annotations

import pytest

from core.pooling import Contribution, select_uncertain


def pool_of(docs_per_query: dict[str, list[str]]):
    """A pool where every document came from one run, at its list position."""
    return {
        q: {d: [Contribution("r", rank, 1.0 / rank)] for rank, d in enumerate(docs, start=1)}
        for q, docs in docs_per_query.items()
    }


POOL = pool_of({"q1": ["a", "b", "c", "d", "e"], "q2": ["f", "g", "h"]})
PROBS = {
    "q1": {"a": 0.95, "b": 0.9, "c": 0.5, "d": 0.1, "e": 0.05},
    "q2": {"f": 0.3, "g": 0.91, "h": 0.09},
}


def test_keeps_the_band_inclusive_and_reports_the_confident_pairs():
    selection, report = select_uncertain(POOL, PROBS, 0.1, 0.9)
    # 0.9 and 0.1 are on the band's ends: kept (inclusive); most probable first
    assert selection == {"q1": ["b", "c", "d"], "q2": ["f"]}
    assert report.confident_relevant == {"q1": ["a"], "q2": ["g"]}
    assert report.confident_irrelevant == {"q1": ["e"], "q2": ["h"]}
    assert (report.kept, report.saved, report.total) == (4, 4, 8)
    assert report.as_dict() == {
        "kept": 4,
        "confident_relevant": 2,
        "confident_irrelevant": 2,
        "saved": 4,
        "pairs": 8,
        "band": [0.1, 0.9],
    }


def test_a_narrower_band_keeps_fewer():
    selection, report = select_uncertain(POOL, PROBS, 0.2, 0.6)
    assert selection == {"q1": ["c"], "q2": ["f"]}
    assert report.confident_relevant == {"q1": ["a", "b"], "q2": ["g"]}
    assert report.confident_irrelevant == {"q1": ["d", "e"], "q2": ["h"]}
    assert report.as_dict()["saved"] == 6


def test_unscored_pairs_are_kept_after_the_scored_ones_and_ties_go_by_doc_id_descending():
    pool = pool_of({"q1": ["x", "y", "z", "w"], "q3": ["u"]})
    selection, report = select_uncertain(pool, {"q1": {"x": 0.5, "y": 0.5}}, 0.1, 0.9)
    assert selection == {"q1": ["y", "x", "z", "w"], "q3": ["u"]}
    assert (report.kept, report.saved) == (5, 0)


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (0.9, 0.1, "0 <= low < high <= 1"),
        (0.5, 0.5, "0 <= low < high <= 1"),
        (-0.1, 0.5, "0 <= low < high <= 1"),
        (0.1, 1.5, "0 <= low < high <= 1"),
    ],
)
def test_a_bad_band_is_refused(low, high, message):
    with pytest.raises(ValueError, match=message):
        select_uncertain(POOL, PROBS, low, high)


def test_a_probability_outside_0_1_is_refused():
    with pytest.raises(ValueError, match=r"query 'q1', document 'a': probability 3.0 is not in \[0, 1\]"):
        select_uncertain(POOL, {"q1": {"a": 3.0}}, 0.1, 0.9)
