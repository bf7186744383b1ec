"""The browser queue's store side (issue 20): the next K items in serving order, and answers stored once each."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from db.access import SignedOut, StaleSubmission
from db.assignments import create_assignments
from db.labelling import next_item, next_items, record_judgment
from db.models import Judgment
from db.queue import Answer, StaleToken, parse_answers, store_answer
from db.users import set_active
from tests.db.labelling_helpers import add_accounts, import_two_queries


@pytest.fixture
def world(store):
    with store.write() as s:
        import_two_queries(s)
        users = add_accounts(s, ["ann"])
        create_assignments(s, "c", "p", annotators=["ann"], per_pair=1, seed=2, package_size=6)
    return store, users


def _docs(items) -> list[str]:
    return [i.passage.split()[-1] for i in items]


def _labels(store, uid) -> list[tuple]:
    with store.read() as s:
        return [
            tuple(r)
            for r in s.execute(
                select(Judgment.assignment_id, Judgment.action, Judgment.grade, Judgment.submission_token)
                .where(Judgment.user_id == uid)
                .order_by(Judgment.id)
            )
        ]


def test_next_items_follow_the_serving_order_skipped_last_in_their_package(world):
    store, users = world
    ann = users["ann"]
    with store.read() as s:
        five = next_items(s, ann, 5)
        first = next_item(s, ann)
    assert len(five) == 5 and first is not None and five[0].assignment_id == first.assignment_id
    assert len({i.assignment_id for i in five}) == 5
    with store.write() as s:
        record_judgment(s, ann, five[0].assignment_id, None, action="skip")
        record_judgment(s, ann, five[1].assignment_id, 2)
    with store.read() as s:
        after = next_items(s, ann, 10)
    # the labelled item is gone; the skipped one comes after the rest of its package (5 items: 3 left + it)
    ids = [i.assignment_id for i in after]
    assert five[1].assignment_id not in ids and len(ids) == 9 and after[0].total == 5
    assert ids[:3] == [i.assignment_id for i in five[2:5]]
    assert ids[3] == five[0].assignment_id and after[3].package == after[0].package
    assert after[4].package != after[0].package  # the second package follows


def test_answers_are_stored_once_each_with_their_token_and_refusals_store_nothing(world):
    store, users = world
    ann = users["ann"]
    with store.read() as s:
        items = next_items(s, ann, 3)
    issued = {f"t{i}": item.assignment_id for i, item in enumerate(items)}
    answers = parse_answers(
        [
            {"assignment_id": items[0].assignment_id, "token": "t0", "action": "label", "grade": 3, "elapsed_ms": 5},
            {"assignment_id": items[1].assignment_id, "token": "t1", "action": "skip", "grade": None},
        ]
    )
    for answer in answers + answers:  # the whole batch resent after a rerun: stored once
        with store.write() as s:
            store_answer(s, ann, answer, issued)
    assert _labels(store, ann) == [
        (items[0].assignment_id, "label", 3, "t0"),
        (items[1].assignment_id, "skip", None, "t1"),
    ]

    # a token issued for another item, or never issued: refused, nothing stored
    for token in ("t0", "nope"):
        with pytest.raises(StaleToken), store.write() as s:
            store_answer(s, ann, Answer(items[2].assignment_id, token, "label", 1), issued)
    # a second token on an item already labelled (another tab's press): refused as already labelled
    issued["t9"] = items[0].assignment_id
    with pytest.raises(StaleSubmission, match="already labelled"), store.write() as s:
        store_answer(s, ann, Answer(items[0].assignment_id, "t9", "label", 0), issued)
    # a disabled account stores nothing, whatever it sends
    with store.write() as s:
        set_active(s, "ann", False)
    with pytest.raises(SignedOut), store.write() as s:
        store_answer(s, ann, Answer(items[2].assignment_id, "t2", "label", 1), issued)
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(Judgment)) == 2


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("x", "answers must be a list"),
        ([{"assignment_id": True, "token": "t", "action": "label", "grade": 1}], "answer 1: assignment_id"),
        ([{"assignment_id": 1, "token": "", "action": "label", "grade": 1}], "answer 1: token"),
        ([{"assignment_id": 1, "token": "t", "action": "undo", "grade": 1}], "answer 1: action"),
        ([{"assignment_id": 1, "token": "t", "action": "label", "grade": 1.5}], "answer 1: grade"),
        ([{"assignment_id": 1, "token": "t", "action": "label", "grade": 1, "elapsed_ms": -1}], "elapsed_ms"),
    ],
)
def test_malformed_answers_are_refused_by_field(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_answers(raw)
