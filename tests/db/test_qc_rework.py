"""The QC rework loop in the store: disputed items with the reviewers' labels and notes, relabel, resubmit, next round."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.qc import round_seed
from core.types import CollectionSource, Passage, Query
from db.access import Forbidden, StaleSubmission
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import next_item, record_judgment
from db.models import Assignment, Judgment, Package, PassageRecord, QcItem, QcRound, QueryRecord
from db.package_qc import close_qc_round, resubmit_package, start_qc_round
from db.pools import save_pool
from db.rework import (
    disputed_items,
    qc_round_tables,
    relabel_disputed,
    rework_packages,
    round_disagreements,
    unanswered,
)
from db.users import add_user
from tests.db.labelling_helpers import DOCS, add_accounts, import_two_queries, only_package, query_of, review_all
from tests.db.seeded import BACKENDS, seed_once, store_copy

TRUTH = {d: (3 if int(d[1:]) % 2 else 0) for d in DOCS}
WRONG = {"d0": 2, "d3": 1, "d7": 0}  # planted errors: 7/10 = 0.7 < 0.93


def _loop(store):
    """ann1's finished 10-pair package with three planted errors, reviewed in full by rev1 and rev2 (round 1)."""
    with store.write() as s:
        import_two_queries(s, passage="passage <b>text</b> {doc}", queries=("first <i>query</i>", "second query"))
        users = add_accounts(s, ("ann1", "ann2"))
        create_assignments(s, "c", "p", annotators=["ann1"], per_pair=1, seed=7, package_size=10)
    for d in DOCS:
        _label(store, users["ann1"], d, WRONG.get(d, TRUTH[d]))
    package = only_package(store, users["ann1"])
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=10, seed=1, by=users["admin"])
    notes = {("rev1", "d0"): "the passage <b>answers</b> nothing", ("rev2", "d3"): "off topic"}
    _review(store, users, notes)
    with store.write() as s:
        result = close_qc_round(s, round1, by=users["admin"])
    return users, package, round1, result


@pytest.fixture(scope="module", params=BACKENDS)
def loop_seed(request):
    """The reviewed round 1 (:func:`_loop`), built once per backend for the module."""
    yield from seed_once(request, _loop)


@pytest.fixture
def loop(loop_seed, request):
    """``(store, users, package, round1, result)``: a store of the test's own holding :func:`_loop`'s round 1."""
    for store in store_copy(loop_seed, request):
        yield (store, *loop_seed.value)


def _ids(s, doc):
    q = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == query_of(doc)))
    d = s.scalar(select(PassageRecord.id).where(PassageRecord.ext_id == doc))
    return q, d


def _assignment(store, user_id, doc, purpose="label"):
    with store.read() as s:
        q, d = _ids(s, doc)
        return s.scalar(
            select(Assignment.id).where(
                Assignment.user_id == user_id,
                Assignment.query_id == q,
                Assignment.passage_id == d,
                Assignment.purpose == purpose,
            )
        )


def _label(store, user_id, doc, grade, **kw):
    with store.write() as s:
        return record_judgment(s, user_id, _assignment(store, user_id, doc), grade, **kw)


def _review(store, users, notes=None):
    """Both reviewers label every QC item they are served with the truth (with ``notes[(reviewer, doc)]``)."""
    review_all(store, users, TRUTH, notes)


@pytest.mark.slow
def test_a_package_with_planted_errors_returns_exactly_its_disagreements(loop):
    store, users, package, round1, result = loop
    assert (result["accuracy"], result["n_checked"], result["decision"]) == (0.7, 10, "revise")
    with store.read() as s:
        items = disputed_items(s, users["ann1"], package)
        assert s.get(Package, package).status == "revise"
    assert [(i.query_id, i.passage_id, i.annotator_label, i.reviewer_labels, i.consensus, i.notes) for i in items] == [
        ("q1", "d0", 2, {"rev1": 0, "rev2": 0}, 0, {"rev1": "the passage <b>answers</b> nothing"}),
        ("q1", "d3", 1, {"rev1": 3, "rev2": 3}, 3, {"rev2": "off topic"}),
        ("q2", "d7", 0, {"rev1": 3, "rev2": 3}, 3, {}),
    ]
    # the texts as stored (the screen escapes them), nothing answered yet, the current label is the old one
    assert [(i.query, i.passage, i.title, i.round_no, i.current_label, i.answered, i.scale) for i in items][0] == (
        "first <i>query</i>",
        "passage <b>text</b> d0",
        "T",
        1,
        2,
        False,
        "graded",
    )
    with store.read() as s:
        assert [i.assignment_id for i in items] == [_assignment(store, users["ann1"], d) for d in ("d0", "d3", "d7")]
        [rework] = rework_packages(s, users["ann1"])
        assert (rework.name, rework.round_no, rework.accuracy, rework.answered, len(rework.items)) == (
            "ann1-p001",
            1,
            0.7,
            0,
            3,
        )
        assert rework_packages(s, users["ann2"]) == []
        with pytest.raises(Forbidden, match="this package is not yours"):
            disputed_items(s, users["ann2"], package)


def _check_nothing_left(s, package, round1, round2):
    """Round 2 has its own seed, no sample and no review assignments, and is passed at once."""
    r1, r2 = s.get(QcRound, round1), s.get(QcRound, round2)
    assert (r2.round_no, r2.seed) == (2, round_seed(1, "ann1-p001", 2)) and r2.seed != r1.seed
    assert (r2.status, r2.sample_size, r2.n_checked, r2.accuracy) == ("passed", 0, 0, None)
    assert s.scalar(select(func.count()).select_from(QcItem).where(QcItem.qc_round_id == round2)) == 0
    assert s.scalar(select(func.count()).select_from(Assignment).where(Assignment.package == "qc-ann1-p001-r2")) == 0


def _check_round_tables_as_decided(s, package, round1):
    """Every round's table stays as it was decided (round 1: three disagreements, round 2: none)."""
    tables = qc_round_tables(s, package)
    assert [(t.round_no, t.status, t.accuracy, t.n_checked, t.annotator) for t in tables] == [
        (1, "revise", 0.7, 10, "ann1"),
        (2, "passed", None, 0, "ann1"),
    ]
    assert [(i.passage_id, i.annotator_label, i.reviewer_labels) for i in tables[0].items] == [
        ("d0", 2, {"rev1": 0, "rev2": 0}),
        ("d3", 1, {"rev1": 3, "rev2": 3}),
        ("d7", 0, {"rev1": 3, "rev2": 3}),
    ]
    assert tables[1].items == []
    assert round_disagreements(s, round1) == tables[0].items


@pytest.mark.slow
def test_resubmit_is_refused_until_every_disputed_item_is_answered_then_the_next_round_passes(loop):
    store, users, package, round1, _ = loop
    ann = users["ann1"]
    with store.write() as s:
        with pytest.raises(ValueError) as refused:
            resubmit_package(s, ann, package)
    assert str(refused.value) == (
        "package ann1-p001 was not resubmitted: 3 disputed item(s) not yet relabelled or "
        "confirmed (q1 / d0, q1 / d3, q2 / d7)"
    )
    with store.read() as s:
        assert s.get(Package, package).status == "revise"
    # relabel d0 and d3 (a repeat of the same render token stores nothing more)
    with store.write() as s:
        assert relabel_disputed(s, ann, _assignment(store, ann, "d0"), 0, token="t0") is True
    with store.write() as s:
        assert relabel_disputed(s, ann, _assignment(store, ann, "d0"), 0, token="t0") is False
    with store.write() as s:
        assert relabel_disputed(s, ann, _assignment(store, ann, "d3"), 3, token="t3") is True
    with store.write() as s:
        with pytest.raises(ValueError, match=r"1 disputed item\(s\) not yet relabelled or confirmed \(q2 / d7\)$"):
            resubmit_package(s, ann, package)
    # an item the reviewers agreed with is not part of the rework; another annotator cannot touch it
    with store.write() as s:
        with pytest.raises(StaleSubmission, match="the reviewers did not dispute this item"):
            relabel_disputed(s, ann, _assignment(store, ann, "d1"), 0)
    with store.write() as s:
        with pytest.raises(Forbidden, match="not assigned to you"):
            relabel_disputed(s, users["ann2"], _assignment(store, ann, "d7"), 3)
    with store.write() as s:
        assert relabel_disputed(s, ann, _assignment(store, ann, "d7"), 3) is True
    with store.read() as s:
        items = disputed_items(s, ann, package)
        assert [(i.passage_id, i.annotator_label, i.current_label, i.answered) for i in items] == [
            ("d0", 2, 0, True),
            ("d3", 1, 3, True),
            ("d7", 0, 3, True),
        ]
        assert unanswered(s, package) == []
        # append-only: ann1 has 10 first labels and 3 relabels, nothing was changed in place
        assert s.scalar(select(func.count()).select_from(Judgment).where(Judgment.user_id == ann)) == 13
    with store.write() as s:
        resubmit_package(s, ann, package)
    with store.read() as s:
        assert s.get(Package, package).status == "submitted"
    # round 1 reviewed all ten pairs and every disputed label now follows the reviewers: round 2 has nothing
    # to sample (db.qc_rounds) and passes at once, with no new review
    with store.write() as s:
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=8, seed=1, by=users["admin"])
    with store.read() as s:
        _check_nothing_left(s, package, round1, round2)
    with store.read() as s:
        assert s.get(Package, package).status == "passed"
        assert disputed_items(s, ann, package) == [] and rework_packages(s, ann) == []
        _check_round_tables_as_decided(s, package, round1)


@pytest.mark.slow
def test_confirming_a_label_unchanged_counts_as_answered(loop):
    store, users, package, _round1, _ = loop
    ann = users["ann1"]
    for doc, grade in (("d0", 2), ("d3", 1), ("d7", 0)):  # the annotator stands by all three labels
        with store.write() as s:
            assert relabel_disputed(s, ann, _assignment(store, ann, doc), grade) is True
    with store.read() as s:
        notes = s.scalars(
            select(Judgment.note).where(Judgment.user_id == ann, Judgment.note != "").order_by(Judgment.id)
        ).all()
        assert notes == ["kept after QC round 1"] * 3
        assert [(i.current_label, i.answered) for i in disputed_items(s, ann, package)] == [
            (2, True),
            (1, True),
            (0, True),
        ]
    with store.write() as s:
        resubmit_package(s, ann, package)
    with store.write() as s:  # once resubmitted, the item takes no more rework labels
        with pytest.raises(StaleSubmission, match="not returned for revision"):
            relabel_disputed(s, ann, _assignment(store, ann, "d0"), 0)


def _keep_d7(store, users, package):
    """The annotator relabels d0 and d3 as the reviewers said, keeps d7, and resubmits."""
    for doc in WRONG:
        with store.write() as s:
            grade = WRONG[doc] if doc == "d7" else TRUTH[doc]
            relabel_disputed(s, users["ann1"], _assignment(store, users["ann1"], doc), grade)
    with store.write() as s:
        resubmit_package(s, users["ann1"], package)


@pytest.mark.slow
def test_round_tables_refuse_a_round_under_review(loop):
    store, users, package, _round1, _ = loop
    _keep_d7(store, users, package)
    with store.write() as s:  # round 1 sampled all ten: round 2 is the kept d7, for a reviewer new to it
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2", "admin"], sample_size=3, seed=1)
    with store.read() as s:
        with pytest.raises(ValueError, match=f"QC round {round2} is still under review"):
            round_disagreements(s, round2)
        assert [t.round_no for t in qc_round_tables(s, package)] == [1]


@pytest.mark.slow
def test_no_new_round_while_a_package_is_returned_or_under_review(loop):
    store, users, package, _round1, _ = loop
    with store.write() as s:
        with pytest.raises(ValueError) as returned:
            start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=3, seed=1)
    assert str(returned.value) == "package ann1-p001 is returned for revision: its annotator resubmits it first"
    _keep_d7(store, users, package)
    with store.write() as s:
        start_qc_round(s, package, reviewers=["rev1", "rev2", "admin"], sample_size=3, seed=1)
    with store.write() as s:
        with pytest.raises(ValueError) as reviewing:
            start_qc_round(s, package, reviewers=["rev1", "rev2", "admin"], sample_size=3, seed=1)
    assert str(reviewing.value) == "package ann1-p001 is under review: close its open round first"
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(QcRound).where(QcRound.package_id == package)) == 2


@pytest.mark.slow
def test_a_reviewer_who_flags_a_qc_item_gets_it_back_and_the_round_closes(store):
    """A flag on a QC item is the reviewer's note: the item comes back after the rest, so the round can close."""
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage {d}") for d in DOCS[:4]]),
        queries=lambda: iter([Query("q1", "first query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in DOCS[:4]}}, method="depth")
        users = {n: add_user(s, n, "correct horse", "annotator").id for n in ("ann1",)}
        users |= {n: add_user(s, n, "correct horse", "reviewer").id for n in ("rev1", "rev2")}
        users["admin"] = add_user(s, "admin", "correct horse", "admin").id
        create_assignments(s, "c", "p", annotators=["ann1"], per_pair=1, seed=7, package_size=4)
    for d in DOCS[:4]:
        _label(store, users["ann1"], d, TRUTH[d])
    package = only_package(store, users["ann1"])
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=4, seed=1, by=users["admin"])
    with store.read() as s:
        first = next_item(s, users["rev1"])
    with store.write() as s:
        record_judgment(s, users["rev1"], first.assignment_id, None, action="flag", note="unsure: ask the lead")
    served = []
    while True:
        with store.read() as s:
            item = next_item(s, users["rev1"])
        if item is None:
            break
        served.append(item.assignment_id)
        with store.write() as s:
            record_judgment(s, users["rev1"], item.assignment_id, TRUTH[item.passage.split()[-1]])
    assert len(served) == 4 and served[-1] == first.assignment_id  # the flagged item came back, last
    _review(store, {"rev1": users["rev1"], "rev2": users["rev2"]})
    with store.write() as s:
        result = close_qc_round(s, round1, by=users["admin"])
    assert (result["n_checked"], result["decision"]) == (4, "pass")


def test_a_package_with_a_flagged_item_says_why_it_cannot_start_qc(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage {d}") for d in DOCS[:3]]),
        queries=lambda: iter([Query("q1", "first query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in DOCS[:3]}}, method="depth")
        ann = add_user(s, "ann1", "correct horse", "annotator").id
        for r in ("rev1", "rev2"):
            add_user(s, r, "correct horse", "reviewer")
        create_assignments(s, "c", "p", annotators=["ann1"], per_pair=1, seed=7, package_size=3)
    _label(store, ann, "d0", 3)
    _label(store, ann, "d1", 0)
    with store.write() as s:
        record_judgment(s, ann, _assignment(store, ann, "d2"), None, action="flag", note="which city?")
    package = only_package(store, ann)
    with pytest.raises(ValueError, match=r"not finished \(2/3 labelled; 1 flagged item\(s\) wait for the annotator"):
        with store.write() as s:
            start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=3, seed=1)
    _label(store, ann, "d2", 2)  # from 'My earlier items', after the reviewer's answer
    with store.write() as s:
        assert start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=3, seed=1) > 0
