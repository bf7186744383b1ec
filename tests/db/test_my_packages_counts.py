"""db.package_qc.my_packages counts each package's labelled items in SQL: only assignments with an undo are replayed.

Replaying the whole log of an annotator's packages took 2.3-2.9 CPU-s per call on the page-budget store (16
packages of about 940 items), on every run of the Annotate page; the SQL counts give the replay's numbers.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

import db.own_judgments
from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import record_judgment, undo_last
from db.models import Assignment
from db.package_qc import MyPackage, my_packages, package_progress
from db.pools import save_pool
from db.users import add_user

DOCS = [f"d{i}" for i in range(8)]


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage text {d}") for d in DOCS]),
        queries=lambda: iter([Query("q1", "first query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in DOCS}}, method="depth")
        ann = add_user(s, "ann", "correct horse", "annotator").id
        create_assignments(s, "c", "p", annotators=["ann"], per_pair=1, seed=3, package_size=4)
    with store.read() as s:
        rows = s.execute(
            select(Assignment.package_id, Assignment.id).where(Assignment.user_id == ann).order_by(Assignment.id)
        ).all()
    packages: dict[int, list[int]] = {}
    for pid, aid in rows:
        packages.setdefault(pid, []).append(aid)
    return store, ann, list(packages.values())


def _judge(store, uid, aid, grade=None, action="label", **kw):
    with store.write() as s:
        record_judgment(s, uid, aid, grade, action=action, **kw)


def test_my_packages_replays_only_the_assignments_with_an_undo(world, monkeypatch):
    store, ann, ((a, b, c, d), (e, f, _g, _h)) = world
    _judge(store, ann, a, 2)
    _judge(store, ann, b, 1)
    _judge(store, ann, b, 3, relabel=True)  # a relabel: still one labelled item
    _judge(store, ann, c, None, action="flag")  # flagged: not labelled
    _judge(store, ann, d, None, action="skip")
    _judge(store, ann, e, 0)
    _judge(store, ann, f, 1)
    with store.write() as s:
        assert undo_last(s, ann) == f  # f's label withdrawn: replayed, not labelled
    replayed: list[list[int]] = []
    real = db.own_judgments.standing_labels

    def spy(session, user_id, assignment_ids=None):
        replayed.append(sorted(assignment_ids or []))
        return real(session, user_id, assignment_ids)

    monkeypatch.setattr("db.package_progress.standing_labels", spy)
    monkeypatch.setattr("db.package_qc.standing_labels", spy)
    with store.read() as s:
        listed = my_packages(s, ann)
        progress = [package_progress(s, p.id) for p in listed if p.id is not None]
    ids = [p.id for p in listed]
    assert listed == [
        MyPackage(id=ids[0], name="ann-p001", status="open", done=2, total=4, purpose="label"),
        MyPackage(id=ids[1], name="ann-p002", status="open", done=1, total=4, purpose="label"),
    ]
    assert progress == [(2, 4), (1, 4)]
    assert replayed == [[f], [f]]  # once by my_packages, once by package_progress of the second package
