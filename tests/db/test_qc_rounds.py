"""QC round 2 reviews only items round 1 did not sample, plus the label the annotator kept, by a new reviewer."""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select

from core.qc import round_seed, sample_for_qc
from db.assignments import create_assignments
from db.labelling import next_item, record_judgment
from db.models import Assignment, Package, PassageRecord, QcItem, QcRound, QueryRecord, User
from db.package_qc import close_qc_round, resubmit_package, start_qc_round
from db.review_progress import qc_history
from db.rework import qc_round_tables, relabel_disputed
from db.users import add_user
from tests.db.labelling_helpers import DOCS, PASSWORD, add_accounts, import_two_queries, only_package
from tests.db.seeded import BACKENDS, seed_once, store_copy

TRUTH = {d: (3 if int(d[1:]) % 2 else 0) for d in DOCS}
WRONG = 1  # differs from every true grade (0 or 3)


def _doc_of(s, assignment_id: int) -> str:
    a = s.get_one(Assignment, assignment_id)
    return s.get_one(PassageRecord, a.passage_id).ext_id


def _round1_docs(store, package: int) -> list[str]:
    """The passages round 1 will sample (the default seed 0), computed before anything is labelled."""
    with store.read() as s:
        name = s.get_one(Package, package).name
        pairs = s.execute(select(Assignment.query_id, Assignment.passage_id).where(Assignment.package_id == package))
        keys = [(str(q), str(p)) for q, p in pairs]
        chosen = sample_for_qc(keys, size=5, seed=round_seed(0, name, 1))
        return sorted(s.get_one(PassageRecord, int(p)).ext_id for _q, p in chosen)


def _own(store, user_id: int) -> dict[str, int]:
    with store.read() as s:
        rows = s.execute(
            select(PassageRecord.ext_id, Assignment.id)
            .join(Assignment, Assignment.passage_id == PassageRecord.id)
            .where(Assignment.user_id == user_id, Assignment.purpose == "label")
        )
        return dict(rows.all())


def _review(store, user_id: int, grades: dict[str, int]) -> list[str]:
    """The reviewer labels every QC item served with ``grades[doc]``; returns the docs served, in order."""
    served = []
    while (item := _next(store, user_id)) is not None:
        with store.read() as s:
            doc = _doc_of(s, item.assignment_id)
        served.append(doc)
        with store.write() as s:
            record_judgment(s, user_id, item.assignment_id, grades[doc])
    return served


def _next(store, user_id):
    with store.read() as s:
        return next_item(s, user_id)


def _rework(store):
    """ann1's 10-pair package: round 1 (5 pairs, all wrong) fails; 4 relabelled, d-kept kept; resubmitted."""
    with store.write() as s:
        import_two_queries(s)
        users = add_accounts(s, ("ann1",))
        users["rev3"] = add_user(s, "rev3", PASSWORD, "reviewer").id
        create_assignments(s, "c", "p", annotators=["ann1"], per_pair=1, seed=7, package_size=10)
    ann, package = users["ann1"], only_package(store, users["ann1"])
    sampled, own = _round1_docs(store, package), _own(store, ann)
    for doc in DOCS:
        with store.write() as s:
            record_judgment(s, ann, own[doc], WRONG if doc in sampled else TRUTH[doc])
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=5, by=users["admin"])
    for rev in ("rev1", "rev2"):
        assert sorted(_review(store, users[rev], TRUTH)) == sampled
    with store.write() as s:
        assert close_qc_round(s, round1)["decision"] == "revise"
    kept = sampled[0]
    for doc in sampled:
        with store.write() as s:
            relabel_disputed(s, ann, own[doc], WRONG if doc == kept else TRUTH[doc])
    with store.write() as s:
        resubmit_package(s, ann, package)
    return users, package, sampled, kept


@pytest.fixture(scope="module", params=BACKENDS)
def reworked_seed(request):
    """The resubmitted package (:func:`_rework`), built once per backend for the module."""
    yield from seed_once(request, _rework)


@pytest.fixture
def reworked(reworked_seed, request):
    """``(store, users, package, sampled, kept)``: a store of the test's own holding :func:`_rework`'s package."""
    for store in store_copy(reworked_seed, request):
        yield (store, *reworked_seed.value)


def _sampled(s, round_id: int) -> set[str]:
    rows = s.execute(
        select(PassageRecord.ext_id)
        .join(QcItem, QcItem.passage_id == PassageRecord.id)
        .where(QcItem.qc_round_id == round_id)
    )
    return set(rows.scalars())


def _round2_reviewers(s, package_name: str, doc: str) -> list[str]:
    rows = s.execute(
        select(User.username)
        .join(Assignment, Assignment.user_id == User.id)
        .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
        .where(Assignment.package == f"qc-{package_name}-r2", PassageRecord.ext_id == doc)
        .order_by(User.username)
    )
    return list(rows.scalars())


@pytest.mark.slow
def test_round_two_reviews_only_new_items_plus_the_kept_one_by_a_new_reviewer(reworked):
    store, users, package, sampled, kept = reworked
    with store.write() as s:  # the default seed, as the Admin page's form
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2", "rev3"], sample_size=5, by=users["admin"])
    fresh = sorted(set(DOCS) - set(sampled))
    with store.read() as s:
        assert _sampled(s, round2) == set(fresh) | {kept}
        assert _round2_reviewers(s, "ann1-p001", kept) == ["rev3"]  # rev1 and rev2 reviewed it in round 1
        assert _round2_reviewers(s, "ann1-p001", fresh[0]) == ["rev1", "rev2", "rev3"]
    # rev3 sees the kept item first, with the annotator's label and note
    first = _next(store, users["rev3"])
    with store.read() as s:
        assert _doc_of(s, first.assignment_id) == kept
    assert first.note == "The annotator kept label 1 after the last review. Their note: kept after QC round 1."
    assert sorted(_review(store, users["rev1"], TRUTH)) == fresh
    assert sorted(_review(store, users["rev2"], TRUTH)) == fresh
    # rev3 agrees with the kept label: that review decides it, rev1's and rev2's old labels (3 or 0) do not
    assert sorted(_review(store, users["rev3"], {**TRUTH, kept: WRONG})) == sorted([*fresh, kept])
    with store.read() as s:  # rev1 and rev2 reviewed the kept item in round 1 only: round 2 counts 5 of 6 for them
        assert qc_history(s, package)[1].reviewed == {"rev1": 5, "rev2": 5, "rev3": 6}
    with store.write() as s:
        result = close_qc_round(s, round2)
    assert (result["n_checked"], result["accuracy"], result["decision"]) == (6, 1.0, "pass")
    with store.read() as s:
        assert s.get_one(Package, package).status == "passed"
        assert [t.items for t in qc_round_tables(s, package)][1] == []


@pytest.mark.slow
def test_the_kept_label_fails_again_only_on_the_new_reviewers_word(reworked):
    store, users, package, sampled, kept = reworked
    with store.write() as s:
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2", "rev3"], sample_size=5)
    for rev in ("rev1", "rev2", "rev3"):
        _review(store, users[rev], TRUTH)
    with store.write() as s:
        result = close_qc_round(s, round2)
    assert (result["n_checked"], result["decision"]) == (6, "revise")
    with store.read() as s:
        [item] = qc_round_tables(s, package)[1].items
    assert (item.passage_id, item.annotator_label, item.reviewer_labels) == (kept, WRONG, {"rev3": TRUTH[kept]})


@pytest.mark.slow
def test_a_kept_label_without_a_new_reviewer_is_refused_and_nothing_is_stored(reworked):
    store, users, package, _sampled, kept = reworked
    with store.read() as s:
        before = s.scalar(select(func.count()).select_from(Assignment))
    with pytest.raises(ValueError) as refused:  # outside the write: the refusal rolls it back
        with store.write() as s:
            start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=5)
    query = "q1" if kept in DOCS[:5] else "q2"
    assert str(refused.value) == (
        f"the annotator kept their label on {query} / {kept}: it needs a reviewer who has not reviewed it "
        "(rev1, rev2 did); add one to this round"
    )
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(QcRound).where(QcRound.package_id == package)) == 1
        assert s.scalar(select(func.count()).select_from(Assignment)) == before
        assert s.get_one(Package, package).status == "submitted"
        assert s.scalar(select(QueryRecord.ext_id).where(QueryRecord.ext_id == query)) == query


@pytest.mark.slow
def test_a_label_changed_to_another_grade_than_the_reviewers_goes_to_a_new_reviewer_too(store):
    """Relabelled, but not to the reviewers' grade: the disagreement stands, so a new reviewer decides it."""
    with store.write() as s:
        import_two_queries(s)
        users = add_accounts(s, ("ann1",))
        users["rev3"] = add_user(s, "rev3", PASSWORD, "reviewer").id
        create_assignments(s, "c", "p", annotators=["ann1"], per_pair=1, seed=7, package_size=10)
    ann, package = users["ann1"], only_package(store, users["ann1"])
    sampled, own = _round1_docs(store, package), _own(store, ann)
    for doc in DOCS:
        with store.write() as s:
            record_judgment(s, ann, own[doc], WRONG if doc == sampled[0] else TRUTH[doc])
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=5)
    for rev in ("rev1", "rev2"):
        _review(store, users[rev], TRUTH)
    with store.write() as s:
        assert close_qc_round(s, round1)["decision"] == "revise"
    with store.write() as s:  # 1 -> 2: still not the reviewers' 0 or 3
        relabel_disputed(s, ann, own[sampled[0]], 2, note="partly about the tower")
    with store.write() as s:
        resubmit_package(s, ann, package)
    with store.write() as s:
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2", "rev3"], sample_size=5)
    with store.read() as s:
        assert sampled[0] in _sampled(s, round2)
        assert _round2_reviewers(s, "ann1-p001", sampled[0]) == ["rev3"]
    first = _next(store, users["rev3"])
    assert first.note == (
        "The annotator changed their label from 1 to 2 after the last review. Their note: partly about the tower."
    )


def _read_counting(store, read):
    """``(SQL statements run, result)`` of ``read(session)`` in a read transaction."""
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args) -> None:
        statements.append(statement)

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        with store.read() as s:
            result = read(s)
    finally:
        event.remove(store.engine, "before_cursor_execute", count)
    return len(statements), result


@pytest.mark.slow
def test_qc_history_reads_the_reviewers_of_every_round_in_the_same_queries(reworked):
    store, users, package, _sampled_docs, kept = reworked
    one_round, [first] = _read_counting(store, lambda s: qc_history(s, package))
    assert first.reviewed == {"rev1": 5, "rev2": 5}
    with store.write() as s:
        start_qc_round(s, package, reviewers=["rev1", "rev2", "rev3"], sample_size=5, by=users["admin"])
    _review(store, users["rev3"], {**TRUTH, kept: WRONG})
    two_rounds, rows = _read_counting(store, lambda s: qc_history(s, package))
    # the reviewers of all rounds come from the same reads: a round more costs no query more
    assert two_rounds == one_round
    assert [row.reviewed for row in rows] == [{"rev1": 5, "rev2": 5, "rev3": 1}, {"rev1": 0, "rev2": 0, "rev3": 6}]
