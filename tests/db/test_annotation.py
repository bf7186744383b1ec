"""The annotation workflow in the store: assignment, blind items, resolution with a 4th annotator, overrides, QC."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from db.access import Forbidden, SignedOut, StaleSubmission
from db.adjudication import set_pool_adjudicators
from db.assignments import create_assignments
from db.labelling import next_item, record_judgment, undo_last
from db.models import Assignment, FinalLabel, Judgment, Package, PassageRecord, QcRound, QueryRecord
from db.package_qc import close_qc_round, resubmit_package, start_qc_round
from db.pools import save_pool
from db.queries import stored_qrels
from db.resolution import freeze_qrels, live_qrels, override_label
from db.users import set_active, set_role
from tests.db.labelling_helpers import DOCS, add_accounts, import_two_queries, only_package, query_of, review_all
from tests.db.seeded import BACKENDS, seed_once, store_copy


def _world(store):
    with store.write() as s:
        import_two_queries(s)
        users = add_accounts(s, ("ann1", "ann2", "ann3", "ann4"))
        # ann4 labels none of pool p: it adjudicates p's splits because an admin listed it (issue 11)
        set_pool_adjudicators(s, "c", "p", ["ann4"])
    return users


@pytest.fixture(scope="module", params=BACKENDS)
def world_seed(request):
    """The two-query pool and its accounts (:func:`_world`), built once per backend for the module."""
    yield from seed_once(request, _world)


@pytest.fixture
def world(world_seed, request):
    """``(store, users)``: a store of the test's own holding :func:`_world`'s pool and accounts."""
    for store in store_copy(world_seed, request):
        yield store, world_seed.value


def _assign(store, **kw):
    with store.write() as s:
        return create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=7, **kw)


def _ann1_first_item(world, **kw):
    """Assign the pool (``kw`` to :func:`_assign`), then the item ann1 is served first: ``(store, users, ann1, item)``."""
    store, users = world
    _assign(store, **kw)
    with store.read() as s:
        return store, users, users["ann1"], next_item(s, users["ann1"])


def _ann1_labels_every_pair(store, users):
    """ann1 labels every pair of its one 10-pair package 1; returns the package id."""
    _assign(store, package_size=10)
    for d in DOCS:
        _label(store, users["ann1"], query_of(d), d, 1)
    return only_package(store, users["ann1"])


def _pair_ids(store, qid, did):
    with store.read() as s:
        q = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == qid))
        d = s.scalar(select(PassageRecord.id).where(PassageRecord.ext_id == did))
    return q, d


def _assignment(store, user_id, qid, did):
    q, d = _pair_ids(store, qid, did)
    with store.read() as s:
        return s.scalar(
            select(Assignment.id).where(
                Assignment.user_id == user_id, Assignment.query_id == q, Assignment.passage_id == d
            )
        )


def _label(store, user_id, qid, did, grade, **kw):
    with store.write() as s:
        return record_judgment(s, user_id, _assignment(store, user_id, qid, did), grade, elapsed_ms=900, **kw)


def _final(store, qid, did):
    q, d = _pair_ids(store, qid, did)
    with store.read() as s:
        row = s.scalar(select(FinalLabel).where(FinalLabel.query_id == q, FinalLabel.passage_id == d))
        return None if row is None else (row.grade, row.method, row.n_labels)


def test_every_pair_gets_three_distinct_annotators_in_packages(world):
    store, users = world
    summary = _assign(store, package_size=4)
    assert (summary.pairs, summary.tasks) == (10, 30)
    assert summary.per_annotator == {"ann1": 10, "ann2": 10, "ann3": 10}
    assert summary.packages == [
        "ann1-p001",
        "ann1-p002",
        "ann1-p003",
        "ann2-p001",
        "ann2-p002",
        "ann2-p003",
        "ann3-p001",
        "ann3-p002",
        "ann3-p003",
    ]
    with store.read() as s:
        holders = {}
        for q, d, u in s.execute(select(Assignment.query_id, Assignment.passage_id, Assignment.user_id)):
            holders.setdefault((q, d), set()).add(u)
    assert all(len(h) == 3 for h in holders.values()) and len(holders) == 10
    # adding the pool again changes nothing: every pair already has its three annotators
    assert _assign(store).tasks == 0


def test_items_are_blind_and_owned(world):
    store, users = world
    _assign(store)
    with store.read() as s:
        item = next_item(s, users["ann1"])
    assert set(vars(item)) == {
        "assignment_id",
        "query",
        "query_language",
        "title",
        "passage",
        "passage_language",
        "package",
        "position",
        "total",
        "done",
        "purpose",
        "scale",
        "note",  # only a QC reviewer of a label kept after rework sees one (db.qc_rounds.annotator_note)
    }
    assert item.note == ""
    assert item.passage.startswith("passage text") and (item.done, item.total, item.position) == (0, 10, 1)
    with pytest.raises(Forbidden):
        with store.write() as s:
            record_judgment(s, users["ann4"], item.assignment_id, 2)
    with pytest.raises(ValueError, match="grade must be one of"):
        with store.write() as s:
            record_judgment(s, users["ann1"], item.assignment_id, 7)
    with store.write() as s:
        record_judgment(s, users["ann1"], item.assignment_id, 2)
    with store.read() as s:
        after = next_item(s, users["ann1"])
    assert after.assignment_id != item.assignment_id and after.done == 1 and after.position == 2


@pytest.mark.slow
def test_resolution_cases_through_the_store(world):
    store, users = world
    _assign(store)
    a1, a2, a3, a4 = (users[f"ann{i}"] for i in range(1, 5))
    for u in (a1, a2, a3):
        _label(store, u, "q1", "d0", 3)
    assert _final(store, "q1", "d0") == (3, "unanimous", 3)
    for u, g in ((a1, 2), (a2, 2), (a3, 0)):
        _label(store, u, "q1", "d1", g)
    assert _final(store, "q1", "d1") == (2, "majority", 3)
    # 1-1-1: a fourth annotator (ann4, the only one left) is assigned automatically
    for u, g in ((a1, 0), (a2, 1), (a3, 2)):
        resolution = _label(store, u, "q1", "d2", g)
    assert resolution.state == "needs_fourth" and _final(store, "q1", "d2") is None
    with store.read() as s:
        fourth = next_item(s, a4)
    assert fourth.purpose == "fourth" and fourth.passage == "passage text d2"
    _label(store, a4, "q1", "d2", 1)
    assert _final(store, "q1", "d2") == (1, "adjudicated", 4)
    # 1-1-1 then a fourth distinct label: excluded
    for u, g in ((a1, 0), (a2, 1), (a3, 2)):
        _label(store, u, "q1", "d3", g)
    _label(store, a4, "q1", "d3", 3)
    assert _final(store, "q1", "d3") == (None, "excluded", 4)
    # a reviewer overrides with a reason
    q, d = _pair_ids(store, "q1", "d3")
    with pytest.raises(Forbidden):
        with store.write() as s:
            override_label(s, a1, q, d, 2, "I know better")
    with pytest.raises(ValueError, match="needs a reason"):
        with store.write() as s:
            override_label(s, users["rev1"], q, d, 2, "  ")
    with store.write() as s:
        override_label(s, users["rev1"], q, d, 2, "passage answers the question in its second sentence")
    assert _final(store, "q1", "d3") == (2, "overridden", 4)
    # undo takes a decided pair back to pending
    with store.write() as s:
        assert undo_last(s, a3) == _assignment(store, a3, "q1", "d3")
    with store.write() as s:
        assert undo_last(s, a3) == _assignment(store, a3, "q1", "d2")
    assert _final(store, "q1", "d2") == (1, "majority", 3)  # the 4th label (1) now joins ann2's 1
    with store.read() as s:
        assert live_qrels(s, "c") == {"q1": {"d0": 3, "d1": 2, "d2": 1, "d3": 2}}
    with store.write() as s:
        assert freeze_qrels(s, "c", "round-1", note="after first pass") == 4
    with store.read() as s:
        assert stored_qrels(s, "c", "round-1") == {"q1": {"d0": 3, "d1": 2, "d2": 1, "d3": 2}}


@pytest.mark.slow  # a whole QC cycle: over 2 s on each store
def test_qc_cycle_returns_a_package_with_planted_errors_then_passes(world):
    store, users = world
    _assign(store, package_size=10)
    ann = users["ann1"]
    truth = {d: (3 if int(d[1:]) % 2 else 0) for d in DOCS}
    wrong = {"d0", "d3"}  # planted errors: 8/10 = 0.8 < 0.93
    for d in DOCS:
        qid = query_of(d)
        _label(store, ann, qid, d, (truth[d] + 1) % 4 if d in wrong else truth[d])
    package = only_package(store, ann)
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=10, seed=1)

    review_all(store, users, truth)
    with store.write() as s:
        result = close_qc_round(s, round1)
    assert (result["accuracy"], result["n_checked"], result["decision"]) == (0.8, 10, "revise")
    with store.read() as s:
        assert s.get(Package, package).status == "revise"
    for d in wrong:  # the annotator revises the returned package (a deliberate relabel)
        _label(store, ann, query_of(d), d, truth[d], relabel=True)
    with store.write() as s:
        resubmit_package(s, ann, package)
    # round 1 reviewed every pair and both errors now follow the reviewers: round 2 has nothing to review
    # (no pair is reviewed twice, db.qc_rounds) and the package passes at once
    with store.write() as s:
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=10, seed=1)
    with store.read() as s:
        assert next_item(s, users["rev1"]) is None
        assert (s.get(QcRound, round2).status, s.get(QcRound, round2).n_checked) == ("passed", 0)
        assert s.get(Package, package).status == "passed"


def test_binary_scale_has_its_own_levels_and_never_needs_a_fourth(world):
    store, users = world
    _assign(store, scale="binary")
    with pytest.raises(ValueError, match="annotated on the binary scale"):
        _assign(store, scale="graded")
    a1, a2, a3 = (users[f"ann{i}"] for i in range(1, 4))
    with store.read() as s:
        assert next_item(s, a1).scale == "binary"
    with pytest.raises(ValueError, match=r"grade must be one of \[0, 1\]"):
        _label(store, a1, "q1", "d0", 2)
    for u, g in ((a1, 1), (a2, 0), (a3, 1)):
        resolution = _label(store, u, "q1", "d0", g)
    assert resolution.state == "resolved" and _final(store, "q1", "d0") == (1, "majority", 3)


# --------------------------------------------------------------------------- labels bound to what was shown


def _judgments(store):
    """Every stored judgment as (user id, qid, docid, action, grade), oldest first."""
    with store.read() as s:
        return [
            (u, q, d, a, g)
            for u, q, d, a, g in s.execute(
                select(Judgment.user_id, QueryRecord.ext_id, PassageRecord.ext_id, Judgment.action, Judgment.grade)
                .join(QueryRecord, QueryRecord.id == Judgment.query_id)
                .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
                .order_by(Judgment.id)
            )
        ]


@pytest.mark.slow
def test_a_second_tab_on_a_labelled_item_is_refused_and_stores_nothing(world):
    store, users, ann, shown = _ann1_first_item(world)  # both tabs render this item, each with its own token
    with store.write() as s:
        record_judgment(s, ann, shown.assignment_id, 3, token="tab-1")
    with pytest.raises(StaleSubmission, match="already labelled"):
        with store.write() as s:
            record_judgment(s, ann, shown.assignment_id, 0, token="tab-2")
    with pytest.raises(StaleSubmission):  # a skip of the same stale item is refused too
        with store.write() as s:
            record_judgment(s, ann, shown.assignment_id, None, action="skip", token="tab-2")
    q, d = _shown_pair(store, shown.assignment_id)
    assert _judgments(store) == [(ann, q, d, "label", 3)]


def _shown_pair(store, assignment_id):
    with store.read() as s:
        return s.execute(
            select(QueryRecord.ext_id, PassageRecord.ext_id)
            .join(Assignment, Assignment.query_id == QueryRecord.id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(Assignment.id == assignment_id)
        ).one()


def test_the_same_submission_twice_stores_one_judgment(world):
    store, users, ann, shown = _ann1_first_item(world)
    with store.write() as s:
        first = record_judgment(s, ann, shown.assignment_id, 2, token="t1")
    with store.write() as s:
        again = record_judgment(s, ann, shown.assignment_id, 2, token="t1")
    assert first is not None and first.state == "pending" and again is None
    q, d = _shown_pair(store, shown.assignment_id)
    assert _judgments(store) == [(ann, q, d, "label", 2)]
    with store.read() as s:
        assert s.scalar(select(Judgment.submission_token)) == "t1"
    # after an undo the same item is shown again with a fresh token, and that label is stored
    with store.write() as s:
        assert undo_last(s, ann) == shown.assignment_id
    with store.write() as s:
        record_judgment(s, ann, shown.assignment_id, 1, token="t2")
    assert _judgments(store) == [(ann, q, d, "label", 2), (ann, q, d, "undo", None), (ann, q, d, "label", 1)]


def test_a_disabled_or_demoted_account_stores_nothing(world):
    store, users, ann, shown = _ann1_first_item(world)
    with store.write() as s:
        set_active(s, "ann1", False)
    for call in (
        lambda s: record_judgment(s, ann, shown.assignment_id, 3, token="t"),
        lambda s: record_judgment(s, ann, shown.assignment_id, None, action="flag", note="x"),
        lambda s: undo_last(s, ann),
    ):
        with pytest.raises(SignedOut, match="signed out"):
            with store.write() as s:
                call(s)
    assert _judgments(store) == []
    with store.write() as s:
        set_active(s, "ann1", True)
        record_judgment(s, ann, shown.assignment_id, 3)
        set_active(s, "rev1", False)
    q, d = _shown_pair(store, shown.assignment_id)
    with pytest.raises(SignedOut):  # a disabled reviewer cannot override
        with store.write() as s:
            override_label(s, users["rev1"], *_pair_ids(store, q, d), 1, "reason")
    with pytest.raises(SignedOut, match="may not assign work"):  # nor can a non-admin assign work
        with store.write() as s:
            create_assignments(s, "c", "p", annotators=["ann4"], by=users["rev2"])
    assert _judgments(store) == [(ann, q, d, "label", 3)]


def test_wrong_owner_and_closed_package_are_refused(world):
    store, users, ann, shown = _ann1_first_item(world, package_size=10)
    with pytest.raises(Forbidden, match="not assigned to you"):
        with store.write() as s:
            record_judgment(s, users["ann2"], shown.assignment_id, 1, token="x")
    with store.write() as s:
        s.get(Package, s.get(Assignment, shown.assignment_id).package_id).status = "submitted"
    with pytest.raises(StaleSubmission, match="is submitted and takes no more labels"):
        with store.write() as s:
            record_judgment(s, ann, shown.assignment_id, 1, token="y")
    with store.read() as s:
        assert next_item(s, ann) is None  # what is not accepted is not served either
    assert _judgments(store) == []


def test_an_adjudication_arriving_meanwhile_never_takes_the_shown_items_label(world):
    store, users = world
    _assign(store)
    a1, a2, a3, a4 = (users[f"ann{i}"] for i in range(1, 5))
    with store.write() as s:  # ann4 holds one pair of a second pool, so it has an item on screen
        save_pool(s, "c", "p2", {"q1": {"d0": []}}, method="depth")
        create_assignments(s, "c", "p2", annotators=["ann4"], per_pair=4, seed=7)
    with store.read() as s:
        shown = next_item(s, a4)
    shown_pair = _shown_pair(store, shown.assignment_id)
    assert shown.purpose == "label" and tuple(shown_pair) == ("q1", "d0")
    other, qid = "d1", "q1"
    for u, g in ((a1, 0), (a2, 1), (a3, 2)):  # a three-way split: ann4 gets the adjudication now
        _label(store, u, qid, other, g)
    with store.write() as s:
        record_judgment(s, a4, shown.assignment_id, 3, token="shown")
    with store.read() as s:
        after = next_item(s, a4)
    assert _judgments(store)[-1] == (a4, *shown_pair, "label", 3)
    assert after.purpose == "fourth" and after.passage == f"passage text {other}"


def test_qc_labels_need_a_reviewer_and_an_open_round(world):
    store, users = world
    package = _ann1_labels_every_pair(store, users)
    with store.write() as s:
        round_id = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=2, seed=1, by=users["admin"])
    with store.read() as s:
        item = next_item(s, users["rev1"])
    with store.write() as s:
        set_role(s, "rev1", "annotator")
    with pytest.raises(SignedOut, match="may not label qc items"):
        with store.write() as s:
            record_judgment(s, users["rev1"], item.assignment_id, 1)
    with store.write() as s:
        set_role(s, "rev1", "reviewer")
        s.get(QcRound, round_id).status = "revise"
    with pytest.raises(StaleSubmission, match="quality review of this item is closed"):
        with store.write() as s:
            record_judgment(s, users["rev1"], item.assignment_id, 1)
    with store.read() as s:
        assert next_item(s, users["rev1"]) is None


@pytest.mark.slow
def test_every_other_write_checks_the_acting_account(world):
    store, users = world
    package = _ann1_labels_every_pair(store, users)
    refused = [
        (users["rev1"], lambda s, by: start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=2, by=by)),
        (users["rev1"], lambda s, by: freeze_qrels(s, "c", "v1", user_id=by)),
        (users["ann2"], lambda s, by: create_assignments(s, "c", "p", annotators=["ann4"], by=by)),
    ]
    for by, call in refused:  # a reviewer or annotator may not do an admin's writes
        with pytest.raises(SignedOut, match="may not"):
            with store.write() as s:
                call(s, by)
    with store.write() as s:
        set_active(s, "admin", False)
    with pytest.raises(SignedOut, match="signed out"):  # nor may a disabled admin
        with store.write() as s:
            start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=2, by=users["admin"])
    with store.write() as s:
        set_active(s, "admin", True)
        round_id = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=2, by=users["admin"])
    with pytest.raises(SignedOut):
        with store.write() as s:
            close_qc_round(s, round_id, by=users["rev2"])
    with store.write() as s:
        s.get(Package, package).status = "revise"
        set_active(s, "ann1", False)
    with pytest.raises(SignedOut):  # a disabled annotator cannot hand a package back
        with store.write() as s:
            resubmit_package(s, users["ann1"], package)
    with store.read() as s:
        assert s.get(Package, package).status == "revise"
        assert s.scalar(select(func.count()).select_from(QcRound)) == 1


def test_a_split_with_nobody_left_to_adjudicate_keeps_the_label_and_waits_for_a_reviewer(world):
    """Only the three labellers are active: the third label is stored, and the pair waits in the adjudication queue."""
    from db.review import adjudication_queue

    store, users = world
    with store.write() as s:
        set_active(s, "ann4", False)
    _assign(store)
    for name, grade in (("ann1", 0), ("ann2", 1), ("ann3", 3)):
        _label(store, users[name], "q1", "d0", grade)
    q, d = _pair_ids(store, "q1", "d0")
    with store.read() as s:
        assert (
            s.scalar(select(func.count()).select_from(Judgment).where(Judgment.query_id == q, Judgment.passage_id == d))
            == 3
        )
        assert s.scalar(select(func.count()).select_from(Assignment).where(Assignment.purpose == "fourth")) == 0
        waiting = [(p.qid, p.docid, p.fourth) for p in adjudication_queue(s, "c")]
    assert waiting == [("q1", "d0", None)]
    assert _final(store, "q1", "d0") is None
