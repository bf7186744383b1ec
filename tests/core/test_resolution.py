"""Tests for core.resolution: the T2Ranking 3 (+1) annotator protocol, case by case."""

from __future__ import annotations

import itertools

import pytest

from core.resolution import (
    BINARY,
    Resolution,
    apply_override,
    resolutions_to_qrels,
    resolve,
)


def test_unanimous() -> None:
    assert resolve([2, 2, 2]) == Resolution("resolved", 2, "unanimous", 3, {2: 3})


def test_two_one_majority() -> None:
    assert resolve([3, 1, 3]) == Resolution("resolved", 3, "majority", 3, {1: 1, 3: 2})


def test_three_way_split_needs_fourth() -> None:
    r = resolve([0, 3, 1])
    assert r == Resolution("needs_fourth", None, None, 3, {0: 1, 1: 1, 3: 1})
    assert not r.is_final


def test_fourth_label_breaks_the_tie_adjudicated() -> None:
    assert resolve([0, 3, 1, 3]) == Resolution("resolved", 3, "adjudicated", 4, {0: 1, 1: 1, 3: 2})
    # order does not matter
    assert resolve([3, 0, 3, 1]).grade == 3


def test_fourth_label_all_different_excluded() -> None:
    r = resolve([0, 1, 2, 3])
    reason = "4 labels, no majority: 0, 1, 2, 3"  # an exclusion always says why (issue 20)
    assert r == Resolution("excluded", None, "excluded", 4, {0: 1, 1: 1, 2: 1, 3: 1}, reason)
    assert r.is_final


def test_two_two_tie_excluded() -> None:
    reason = "4 labels, no majority: 1, 1, 2, 2"
    assert resolve([1, 2, 1, 2]) == Resolution("excluded", None, "excluded", 4, {1: 2, 2: 2}, reason)


def test_four_labels_with_a_three_label_majority_stays_majority() -> None:
    # Any three of [2, 2, 2, 0] agree at least 2-1, so the fourth was not needed.
    assert resolve([2, 0, 2, 2]) == Resolution("resolved", 2, "majority", 4, {0: 1, 2: 3})
    assert resolve([1, 1, 1, 1]).method == "unanimous"


@pytest.mark.parametrize("labels", [[], [2], [2, 2], [0, 3]])
def test_fewer_than_three_is_pending(labels: list[int]) -> None:
    r = resolve(labels)
    assert (r.state, r.grade, r.method, r.n_labels) == ("pending", None, None, len(labels))
    assert not r.is_final


def test_every_three_label_combination_exhaustively() -> None:
    for labels in itertools.product(range(4), repeat=3):
        r = resolve(labels)
        distinct = len(set(labels))
        if distinct == 1:
            assert (r.state, r.method, r.grade) == ("resolved", "unanimous", labels[0])
        elif distinct == 2:
            winner = max(set(labels), key=labels.count)
            assert (r.state, r.method, r.grade) == ("resolved", "majority", winner)
        else:
            assert r.state == "needs_fourth"


def test_binary_labels() -> None:
    assert resolve([1, 0, 1], levels=BINARY) == Resolution("resolved", 1, "majority", 3, {0: 1, 1: 2})
    assert resolve([0, 0, 0], levels=BINARY).method == "unanimous"
    assert resolve([0, 1], levels=BINARY).state == "pending"
    assert resolve([0, 1, 0, 1], levels=BINARY).state == "excluded"
    with pytest.raises(ValueError, match="allowed levels"):
        resolve([0, 2, 1], levels=BINARY)


def test_five_annotators() -> None:
    assert resolve([1, 1, 1, 2, 3], required=5).method == "majority"
    assert resolve([1, 1, 2, 2, 3], required=5).state == "needs_fourth"  # i.e. one more
    assert resolve([1, 1, 2, 2, 3], required=5).is_final is False
    assert resolve([1, 1, 2, 2, 3, 1], required=5) == Resolution("resolved", 1, "adjudicated", 6, {1: 3, 2: 2, 3: 1})
    assert resolve([1, 1, 2, 2, 3, 3], required=5).state == "excluded"
    assert resolve([1, 1, 1, 1], required=5).state == "pending"


def test_two_annotators_third_breaks_tie() -> None:
    assert resolve([1, 2], required=2).state == "needs_fourth"
    assert resolve([1, 2, 1], required=2) == Resolution("resolved", 1, "adjudicated", 3, {1: 2, 2: 1})


def test_invalid_labels_and_required() -> None:
    with pytest.raises(ValueError, match="allowed levels"):
        resolve([4, 4, 4])
    with pytest.raises(ValueError, match="integer"):
        resolve([True, 1, 1])
    with pytest.raises(ValueError, match="integer"):
        resolve([1.0, 1, 1])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="required"):
        resolve([1, 1, 1], required=0)


def test_override_requires_a_reason() -> None:
    r = resolve([0, 1, 2, 3])
    with pytest.raises(ValueError, match="reason"):
        apply_override(r, 2, "")
    with pytest.raises(ValueError, match="reason"):
        apply_override(r, 2, "   ")
    o = apply_override(r, 2, "  passage answers the question in its last sentence ")
    assert o == Resolution(
        "resolved",
        2,
        "overridden",
        4,
        {0: 1, 1: 1, 2: 1, 3: 1},
        "passage answers the question in its last sentence",
    )
    assert r.state == "excluded"  # the original is untouched


def test_override_can_exclude_and_validates_grade() -> None:
    o = apply_override(resolve([3, 3, 3]), None, "duplicate of another passage")
    assert (o.state, o.grade, o.method) == ("excluded", None, "overridden")
    with pytest.raises(ValueError, match="allowed levels"):
        apply_override(resolve([3, 3, 3]), 5, "typo")
    with pytest.raises(ValueError, match="allowed levels"):
        apply_override(resolve([1, 1, 1], levels=BINARY), 2, "x", levels=BINARY)


def test_resolutions_to_qrels_keeps_only_final_grades() -> None:
    res = {
        ("q1", "a"): resolve([2, 2, 1]),
        ("q1", "b"): resolve([0, 1, 2]),  # needs fourth
        ("q1", "c"): resolve([0, 1, 2, 3]),  # excluded
        ("q2", "a"): apply_override(resolve([0, 0]), 3, "expert decision"),
        ("q3", "z"): resolve([1]),  # pending
    }
    assert resolutions_to_qrels(res) == {"q1": {"a": 2}, "q2": {"a": 3}}
