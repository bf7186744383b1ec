"""An annotator's way around their own work (issue 11, "Annotator navigation"), on SQLite and PostgreSQL.

Skipped items come back at the end of their package in a later session, flagged items are not served
again (they wait in the reviewers' queue), relabels append, adjudication items are listed in
"My packages", and the overall progress and time left come from the user's own log.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from core.types import CollectionSource, Passage, Query
from db.access import Forbidden, StaleSubmission
from db.assignments import create_assignments
from db.labelling import next_item, record_judgment
from db.models import Assignment, FinalLabel, Judgment, Package, PassageRecord, utcnow
from db.navigation import history, median_seconds, open_own_item, overview
from db.package_qc import MyPackage, my_packages
from db.pools import save_pool
from db.review_progress import flagged
from db.users import add_user

DOCS = [f"d{i}" for i in range(6)]


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage text {d}") for d in DOCS]),
        queries=lambda: iter([Query("q1", "first query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        from db.importer import import_collection

        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in DOCS}}, method="depth")
        users = {n: add_user(s, n, "correct horse", "annotator").id for n in ("ann1", "ann2", "ann3", "ann4")}
        # two packages of three for each annotator, every pair to ann1, ann2 and ann3
        create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=3, package_size=3)
    return store, users


def _serve(store, uid):
    with store.read() as s:
        return next_item(s, uid)


def _package_order(store, uid) -> list[list[int]]:
    """The user's assignment ids per package, in serving order."""
    with store.read() as s:
        rows = s.execute(
            select(Assignment.package_id, Assignment.id)
            .where(Assignment.user_id == uid)
            .order_by(Assignment.package_id, Assignment.order_index, Assignment.id)
        ).all()
    packages: dict[int, list[int]] = {}
    for pid, aid in rows:
        packages.setdefault(pid, []).append(aid)
    return list(packages.values())


def _first_pair(session, uid):
    """``(query_id, passage_id)`` of the user's first assignment."""
    return session.execute(
        select(Assignment.query_id, Assignment.passage_id)
        .where(Assignment.user_id == uid)
        .order_by(Assignment.id)
        .limit(1)
    ).one()


def _judge(store, uid, aid, grade=None, action="label", **kw):
    with store.write() as s:
        return record_judgment(s, uid, aid, grade, action=action, **kw)


def test_a_skipped_item_comes_back_at_the_end_of_its_package_in_a_new_session(world):
    store, users = world
    uid = users["ann1"]
    (a, b, c), (d, _e, _f) = _package_order(store, uid)
    assert _serve(store, uid).assignment_id == a
    _judge(store, uid, a, action="skip")
    # a new session (nothing passed in): the log alone says a was skipped
    assert _serve(store, uid).assignment_id == b
    _judge(store, uid, b, 2)
    assert _serve(store, uid).assignment_id == c
    _judge(store, uid, c, 1)
    item = _serve(store, uid)
    assert (item.assignment_id, item.position, item.done, item.total) == (a, 1, 2, 3)  # before the next package
    _judge(store, uid, a, 0)
    assert _serve(store, uid).assignment_id == d


def test_a_flagged_item_is_not_served_again_and_waits_for_the_reviewers(world):
    store, users = world
    uid = users["ann1"]
    (a, b, c), (d, e, f) = _package_order(store, uid)
    _judge(store, uid, a, action="flag", note="which tower?")
    served = []
    while (item := _serve(store, uid)) is not None:
        served.append(item.assignment_id)
        _judge(store, uid, item.assignment_id, 2)
    assert served == [b, c, d, e, f]  # a never came back
    with store.read() as s:
        queue = flagged(s, "c")
        mine = overview(s, uid)
    assert [(q.annotator, q.note, q.purpose) for q in queue] == [("ann1", "which tower?", "label")]
    assert (mine.done, mine.total, mine.flagged, mine.left, mine.packages) == (5, 6, 1, 0, 2)
    # the annotator may still open it from their own list and label it
    with store.read() as s:
        item, standing = open_own_item(s, uid, a)
    assert (item.assignment_id, standing, item.position) == (a, None, 1)
    _judge(store, uid, a, 3)
    with store.read() as s:
        assert overview(s, uid).flagged == 0 and overview(s, uid).done == 6


@pytest.mark.slow
def test_relabel_appends_and_re_resolves(world):
    store, users = world
    a1, a2, a3 = (users[n] for n in ("ann1", "ann2", "ann3"))
    with store.read() as s:
        pair = _first_pair(s, a1)
        aids = {
            u: s.scalar(
                select(Assignment.id).where(
                    Assignment.user_id == u, Assignment.query_id == pair[0], Assignment.passage_id == pair[1]
                )
            )
            for u in (a1, a2, a3)
        }
    for u, g in ((a1, 1), (a2, 2), (a3, 2)):
        _judge(store, u, aids[u], g)
    with pytest.raises(StaleSubmission, match="already labelled"):  # a plain second label is refused
        _judge(store, a1, aids[a1], 3)
    resolution = _judge(store, a1, aids[a1], 2, relabel=True, token="t-relabel")
    assert (resolution.grade, resolution.method) == (2, "unanimous")
    assert _judge(store, a1, aids[a1], 2, relabel=True, token="t-relabel") is None  # the same submission: once
    with store.read() as s:
        log = s.execute(
            select(Judgment.action, Judgment.grade).where(Judgment.assignment_id == aids[a1]).order_by(Judgment.id)
        ).all()
        final = s.execute(
            select(FinalLabel.grade, FinalLabel.method).where(
                FinalLabel.query_id == pair[0], FinalLabel.passage_id == pair[1]
            )
        ).one()
        item, standing = open_own_item(s, a1, aids[a1])
    assert [tuple(r) for r in log] == [("label", 1), ("label", 2)]  # both kept, append-only
    assert tuple(final) == (2, "unanimous") and standing == 2
    with pytest.raises(Forbidden):
        with store.read() as s:
            open_own_item(s, a2, aids[a1])
    # a closed package takes no relabel
    with store.write() as s:
        s.execute(update(Package).where(Package.user_id == a1).values(status="submitted"))
    with pytest.raises(StaleSubmission, match="takes no more labels"):
        _judge(store, a1, aids[a1], 3, relabel=True)


def test_history_is_in_first_handled_order_with_the_standing_label(world):
    store, users = world
    uid = users["ann1"]
    (a, b, c), _rest = _package_order(store, uid)
    _judge(store, uid, a, 1)
    _judge(store, uid, b, action="skip")
    _judge(store, uid, c, action="flag")
    _judge(store, uid, a, 3, relabel=True)  # a relabel does not move a to the end
    with store.read() as s:
        entries = history(s, uid)
        last_two = history(s, uid, limit=2)
        other = history(s, users["ann4"])
    assert [(e.assignment_id, e.grade, e.mark, e.open) for e in entries] == [
        (a, 3, None, True),
        (b, None, "skip", True),
        (c, None, "flag", True),
    ]
    assert entries[0].query == "first query" and entries[0].passage.startswith("passage text")
    assert [e.assignment_id for e in last_two] == [b, c]
    assert other == []


def test_my_packages_lists_adjudication_items(world):
    store, users = world
    a1, a2, a3, a4 = (users[n] for n in ("ann1", "ann2", "ann3", "ann4"))
    with store.read() as s:
        pair = _first_pair(s, a1)
    for u, g in ((a1, 0), (a2, 1), (a3, 2)):  # a three-way split: a 4th annotator from the pool's own set
        with store.read() as s:
            aid = s.scalar(
                select(Assignment.id).where(
                    Assignment.user_id == u, Assignment.query_id == pair[0], Assignment.passage_id == pair[1]
                )
            )
        _judge(store, u, aid, g)
    with store.write() as s:  # the adjudication goes to ann4 here whatever the pool rule picks
        s.execute(update(Assignment).where(Assignment.purpose == "fourth").values(user_id=a4))
        fourth = s.scalar(select(Assignment.id).where(Assignment.purpose == "fourth"))
    if fourth is None:  # nobody eligible: give it to ann4 by hand, as an admin's reassignment would
        with store.write() as s:
            s.add(
                Assignment(
                    query_id=pair[0], passage_id=pair[1], user_id=a4, package="ann4-adjudication", purpose="fourth"
                )
            )
    with store.read() as s:
        listed = my_packages(s, a4)
        item = next_item(s, a4)
    assert listed == [MyPackage(id=None, name="adjudication", status="open", done=0, total=1, purpose="fourth")]
    assert item.purpose == "fourth"
    _judge(store, a4, item.assignment_id, 1)
    with store.read() as s:
        assert my_packages(s, a4) == [
            MyPackage(id=None, name="adjudication", status="done", done=1, total=1, purpose="fourth")
        ]
        assert [p.purpose for p in my_packages(s, a1)] == ["label", "label"]


def test_overview_estimates_time_left_from_own_timestamps(world):
    store, users = world
    uid = users["ann1"]
    order = [aid for package in _package_order(store, uid) for aid in package]
    start = utcnow() - timedelta(hours=3)
    with store.write() as s:  # judgments 10 s, then 30 s apart, then a three-hour break that must not count
        for aid, grade, offset in zip(order[:3], (0, 1, 2), (0, 10, 40), strict=True):
            a = s.get(Assignment, aid)
            s.add(
                Judgment(
                    assignment_id=aid,
                    query_id=a.query_id,
                    passage_id=a.passage_id,
                    user_id=uid,
                    action="label",
                    grade=grade,
                    created_at=start + timedelta(seconds=offset),
                )
            )
    _judge(store, uid, order[3], 3)  # now: hours after the third
    with store.read() as s:
        mine = overview(s, uid)
    assert (mine.done, mine.total, mine.left, mine.flagged, mine.packages) == (4, 6, 2, 0, 2)
    assert mine.median_s == 20.0 and mine.eta_s == 40.0
    with store.read() as s:
        fresh = overview(s, users["ann4"])
    assert (fresh.done, fresh.total, fresh.left, fresh.median_s, fresh.eta_s) == (0, 0, 0, None, None)


def test_median_seconds_leaves_out_breaks():
    t0 = utcnow()
    assert median_seconds([]) is None and median_seconds([t0]) is None
    assert median_seconds([t0, t0 + timedelta(seconds=5), t0 + timedelta(seconds=12)]) == 6.0
    assert median_seconds([t0, t0 + timedelta(seconds=601)]) is None  # only a break
    assert median_seconds([t0, t0 + timedelta(seconds=90), t0 + timedelta(seconds=30)], break_s=100) == 45.0


def test_passages_texts_only(world):
    # history shows texts only: no run, rank, score or other annotator
    store, users = world
    uid = users["ann1"]
    aid = _package_order(store, uid)[0][0]
    _judge(store, uid, aid, 2)
    with store.read() as s:
        [entry] = history(s, uid)
        passage = s.scalar(
            select(PassageRecord.text)
            .join(Assignment, Assignment.passage_id == PassageRecord.id)
            .where(Assignment.id == aid)
        )
    assert set(vars(entry)) == {"assignment_id", "package", "query", "passage", "grade", "mark", "open"}
    assert entry.passage == passage
