"""The annotation workflow in the store: assignment, blind items, resolution with a 4th annotator, overrides, QC."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.types import CollectionSource, Passage, Query
from db.annotation import (
    Forbidden,
    close_qc_round,
    create_assignments,
    freeze_qrels,
    live_qrels,
    next_item,
    override_label,
    record_judgment,
    resubmit_package,
    start_qc_round,
    undo_last,
)
from db.importer import import_collection
from db.models import Assignment, FinalLabel, Package, Passage as PassageRow, QueryRecord
from db.pools import save_pool
from db.queries import load_qrels
from db.users import add_user

DOCS = [f"d{i}" for i in range(10)]


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage text {d}", title="T") for d in DOCS]),
        queries=lambda: iter([Query("q1", "first query"), Query("q2", "second query")]),
        qrels=lambda: iter(()),
    )
    pool = {"q1": {d: [] for d in DOCS[:5]}, "q2": {d: [] for d in DOCS[5:]}}
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", pool, method="depth")
        users = {name: add_user(s, name, "correct horse", "annotator").id for name in ("ann1", "ann2", "ann3", "ann4")}
        users |= {name: add_user(s, name, "correct horse", "reviewer").id for name in ("rev1", "rev2")}
    return store, users


def _assign(store, **kw):
    with store.write() as s:
        return create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=7, **kw)


def _pair_ids(store, qid, did):
    with store.read() as s:
        q = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == qid))
        d = s.scalar(select(PassageRow.id).where(PassageRow.ext_id == did))
    return q, d


def _assignment(store, user_id, qid, did):
    q, d = _pair_ids(store, qid, did)
    with store.read() as s:
        return s.scalar(select(Assignment.id).where(Assignment.user_id == user_id, Assignment.query_id == q, Assignment.passage_id == d))


def _label(store, user_id, qid, did, grade):
    with store.write() as s:
        return record_judgment(s, user_id, _assignment(store, user_id, qid, did), grade, elapsed_ms=900)


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
    assert summary.packages == ["ann1-p001", "ann1-p002", "ann1-p003", "ann2-p001", "ann2-p002", "ann2-p003",
                                "ann3-p001", "ann3-p002", "ann3-p003"]
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
    assert set(vars(item)) == {"assignment_id", "query", "query_language", "title", "passage", "passage_language",
                               "package", "position", "total", "done", "purpose", "scale"}
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
        assert load_qrels(s, "c", "round-1") == {"q1": {"d0": 3, "d1": 2, "d2": 1, "d3": 2}}


def test_qc_cycle_returns_a_package_with_planted_errors_then_passes(world):
    store, users = world
    _assign(store, package_size=10)
    ann = users["ann1"]
    truth = {d: (3 if int(d[1:]) % 2 else 0) for d in DOCS}
    wrong = {"d0", "d3"}  # planted errors: 8/10 = 0.8 < 0.93
    for d in DOCS:
        qid = "q1" if d in DOCS[:5] else "q2"
        _label(store, ann, qid, d, (truth[d] + 1) % 4 if d in wrong else truth[d])
    with store.read() as s:
        package = s.scalar(select(Package.id).where(Package.user_id == ann))
    with store.write() as s:
        round1 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=10, seed=1)

    def review():
        for rev in ("rev1", "rev2"):
            while True:
                with store.read() as s:
                    item = next_item(s, users[rev])
                if item is None:
                    break
                d = item.passage.split()[-1]
                with store.write() as s:
                    record_judgment(s, users[rev], item.assignment_id, truth[d])

    review()
    with store.write() as s:
        result = close_qc_round(s, round1)
    assert (result["accuracy"], result["n_checked"], result["decision"]) == (0.8, 10, "revise")
    with store.read() as s:
        assert s.get(Package, package).status == "revise"
    for d in wrong:  # the annotator revises the returned package
        _label(store, ann, "q1" if d in DOCS[:5] else "q2", d, truth[d])
    with store.write() as s:
        resubmit_package(s, ann, package)
    with store.write() as s:
        round2 = start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=10, seed=1)
    review()  # the reviewers' earlier labels on the same pairs still stand
    with store.write() as s:
        result = close_qc_round(s, round2)
    assert (result["accuracy"], result["decision"]) == (1.0, "pass")
    with store.read() as s:
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
