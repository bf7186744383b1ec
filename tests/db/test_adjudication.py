"""Adjudication stays within a pool: its own annotators or its adjudicator list; admins reassign; bulk actions.

Issue 11: all 11 MS MARCO adjudications went to an annotator who had only
ever been given the Chinese demo pool (the 4th was the least loaded account
of the whole store).  Here two pools have disjoint annotator sets and an
idle annotator with no work at all (the old rule's pick every time).
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.access import Forbidden, SignedOut
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import next_item, record_judgment
from db.models import Assignment, FinalLabel, LabelOverride, PassageRecord, QueryRecord, User
from db.pools import save_pool
from db.queries import NotFound
from db.users import add_user, set_active

EN = [f"en{i}" for i in range(1, 6)]
ZH = [f"zh{i}" for i in range(1, 6)]
EN_DOCS = ["d0", "d1", "d2", "d3"]
ZH_DOCS = ["d4", "d5", "d6", "d7"]


def _qid(doc):
    return "q1" if doc in EN_DOCS else "q2"


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage {d}", title="T") for d in EN_DOCS + ZH_DOCS]),
        queries=lambda: iter([Query("q1", "english query"), Query("q2", "中文查询")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "en", {"q1": {d: [] for d in EN_DOCS}}, method="depth")
        save_pool(s, "c", "zh", {"q2": {d: [] for d in ZH_DOCS}}, method="depth")
        users = {n: add_user(s, n, "correct horse", "annotator").id for n in [*EN, *ZH, "idle"]}
        users |= {n: add_user(s, n, "correct horse", "reviewer").id for n in ("rev1", "rev2")}
        users |= {n: add_user(s, n, "correct horse", "admin").id for n in ("boss", "boss2")}
        create_assignments(s, "c", "en", annotators=EN, seed=3, package_size=10)
        create_assignments(s, "c", "zh", annotators=ZH, seed=3, package_size=10)
    return store, users


def _pair(s, doc):
    q = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == _qid(doc)))
    d = s.scalar(select(PassageRecord.id).where(PassageRecord.ext_id == doc))
    return q, d


def _holders(store, doc, purpose="label"):
    with store.read() as s:
        q, d = _pair(s, doc)
        return sorted(
            s.scalars(
                select(User.username)
                .join(Assignment, Assignment.user_id == User.id)
                .where(Assignment.query_id == q, Assignment.passage_id == d, Assignment.purpose == purpose)
            )
        )


def _label(store, users, name, doc, grade):
    with store.write() as s:
        q, d = _pair(s, doc)
        aid = s.scalar(
            select(Assignment.id).where(
                Assignment.user_id == users[name], Assignment.query_id == q, Assignment.passage_id == d
            )
        )
        return record_judgment(s, users[name], aid, grade)


def _split(store, users, doc):
    """The pair's three labellers give 0, 1, 2: a three-way split."""
    for name, grade in zip(_holders(store, doc), (0, 1, 2)):
        _label(store, users, name, doc, grade)


@pytest.mark.slow
def test_splits_go_only_to_their_own_pools_annotators(world):
    store, users = world
    for doc in EN_DOCS + ZH_DOCS:
        _split(store, users, doc)
    fourths = {doc: _holders(store, doc, "fourth") for doc in EN_DOCS + ZH_DOCS}
    assert all(len(f) == 1 for f in fourths.values())
    for doc in EN_DOCS:
        assert fourths[doc][0] in set(EN) - set(_holders(store, doc)), doc
    for doc in ZH_DOCS:
        assert fourths[doc][0] in set(ZH) - set(_holders(store, doc)), doc
    with store.read() as s:  # the idle annotator (least loaded of the store) never gets one
        assert s.scalar(select(func.count()).select_from(Assignment).where(Assignment.user_id == users["idle"])) == 0


@pytest.mark.slow
def test_the_adjudicator_list_wins_and_an_inactive_list_leaves_the_pair_waiting(world):
    from db.adjudication import pool_adjudicators, set_pool_adjudicators
    from db.review import adjudication_queue

    store, users = world
    with store.write() as s:
        assert set_pool_adjudicators(s, "c", "en", ["rev2", "rev1"], by=users["boss"]) == ["rev1", "rev2"]
        assert set_pool_adjudicators(s, "c", "zh", ["idle"]) == ["idle"]
    with store.read() as s:
        assert pool_adjudicators(s, "c", "en") == ["rev1", "rev2"] and pool_adjudicators(s, "c", "zh") == ["idle"]
    _split(store, users, "d0")
    assert _holders(store, "d0", "fourth")[0] in ("rev1", "rev2")  # not one of the two en annotators left
    _split(store, users, "d4")
    assert _holders(store, "d4", "fourth") == ["idle"]  # the list wins even over the pool's own annotators
    with store.write() as s:
        set_active(s, "idle", False)
    _split(store, users, "d5")  # the list's only member is disabled: the pair waits, it does not fall back
    assert _holders(store, "d5", "fourth") == []
    with store.read() as s:
        assert [(p.qid, p.docid, p.fourth) for p in adjudication_queue(s, "c") if p.docid == "d5"] == [
            ("q2", "d5", None)
        ]
    with store.write() as s:  # an empty list: the pool's own annotators adjudicate again
        assert set_pool_adjudicators(s, "c", "en", []) == []
    _split(store, users, "d1")
    assert _holders(store, "d1", "fourth")[0] in set(EN) - set(_holders(store, "d1"))


def test_setting_the_adjudicator_list_is_checked(world):
    from db.adjudication import pool_adjudicators, set_pool_adjudicators

    store, users = world
    with pytest.raises(SignedOut, match="this reviewer account may not choose adjudicators"):
        with store.write() as s:
            set_pool_adjudicators(s, "c", "en", ["rev1"], by=users["rev1"])
    with pytest.raises(NotFound, match="no accounts named nobody"):
        with store.write() as s:
            set_pool_adjudicators(s, "c", "en", ["rev1", "nobody"])
    with store.write() as s:
        set_active(s, "rev2", False)
    with pytest.raises(ValueError, match="^not active accounts that may adjudicate: rev2$"):
        with store.write() as s:
            set_pool_adjudicators(s, "c", "en", ["rev2"])
    with pytest.raises(NotFound, match="no pool named 'nope'"):
        with store.write() as s:
            set_pool_adjudicators(s, "c", "nope", [])
    with store.read() as s:
        assert pool_adjudicators(s, "c", "en") == []


@pytest.mark.slow
def test_an_admin_reassigns_an_open_adjudication_within_the_pool(world):
    from db.adjudication import assign_adjudication, eligible_adjudicators

    store, users = world
    _split(store, users, "d0")
    labellers = _holders(store, "d0")
    [first] = _holders(store, "d0", "fourth")
    [other] = sorted(set(EN) - set(labellers) - {first})
    with store.read() as s:
        q, d = _pair(s, "d0")
        assert eligible_adjudicators(s, q, d) == [other]
        old_aid = s.scalar(
            select(Assignment.id).where(Assignment.user_id == users[first], Assignment.purpose == "fourth")
        )
    # refused: an annotator of the other pool, a labeller, the holder, a reviewer, a disabled admin
    for target, message in (
        ("zh1", f"zh1 may not adjudicate q1 / d0 (eligible: {other})"),
        (labellers[0], f"{labellers[0]} may not adjudicate q1 / d0 (eligible: {other})"),
        (first, f"{first} may not adjudicate q1 / d0 (eligible: {other})"),
    ):
        with pytest.raises(ValueError) as err:
            with store.write() as s:
                assign_adjudication(s, users["boss"], q, d, target)
        assert str(err.value) == message
    with pytest.raises(NotFound, match="no account named 'ghost'"):
        with store.write() as s:
            assign_adjudication(s, users["boss"], q, d, "ghost")
    with pytest.raises(SignedOut, match="this reviewer account may not assign adjudications"):
        with store.write() as s:
            assign_adjudication(s, users["rev1"], q, d, other)
    with store.write() as s:
        set_active(s, "boss2", False)
    with pytest.raises(SignedOut, match="signed out"):
        with store.write() as s:
            assign_adjudication(s, users["boss2"], q, d, other)
    assert _holders(store, "d0", "fourth") == [first]  # nothing changed by any refusal
    with store.write() as s:
        assert assign_adjudication(s, users["boss"], q, d, other) == first
    assert _holders(store, "d0", "fourth") == [other]
    # the previous holder's page can no longer store a label on it; the new holder gets it first
    with pytest.raises(Forbidden):
        with store.write() as s:
            record_judgment(s, users[first], old_aid, 1)
    with store.read() as s:
        item = next_item(s, users[other])
        assert (item.purpose, item.assignment_id, item.passage) == ("fourth", old_aid, "passage d0")
        assert next_item(s, users[first]).purpose == "label"  # their own package, not the adjudication
    with store.write() as s:
        record_judgment(s, users[other], old_aid, 1)
    with store.read() as s:
        final = s.scalar(select(FinalLabel).where(FinalLabel.query_id == q, FinalLabel.passage_id == d))
        assert (final.grade, final.method, final.n_labels) == (1, "adjudicated", 4)
    # labelled now: no more reassigning
    with pytest.raises(ValueError) as err:
        with store.write() as s:
            assign_adjudication(s, users["boss"], q, d, first)
    assert str(err.value) == f"q1 / d0: its adjudication is already labelled (by {other})"


@pytest.mark.slow
def test_bulk_assignment_of_waiting_pairs_is_all_or_nothing(world):
    from db.adjudication import assign_adjudications, set_pool_adjudicators

    store, users = world
    with store.write() as s:
        set_pool_adjudicators(s, "c", "en", ["rev1"])
        set_active(s, "rev1", False)
    _split(store, users, "d0")
    _split(store, users, "d1")
    _split(store, users, "d4")  # zh: goes to a zh annotator
    assert _holders(store, "d0", "fourth") == _holders(store, "d1", "fourth") == []  # waiting
    with store.write() as s:
        set_active(s, "rev1", True)
    with store.read() as s:
        pairs = [_pair(s, doc) for doc in ("d0", "d1")]
        zh_pair = _pair(s, "d4")
        d2 = _pair(s, "d2")
    with pytest.raises(ValueError) as err:  # rev1 is not eligible for the zh pair: nothing stored
        with store.write() as s:
            assign_adjudications(s, users["boss"], [*pairs, zh_pair], "rev1")
    assert str(err.value).startswith("rev1 may not adjudicate q2 / d4 (eligible: ")
    assert _holders(store, "d0", "fourth") == []
    with pytest.raises(ValueError, match=r"^q1 / d2: not waiting for adjudication \(it is pending\)$"):
        with store.write() as s:
            assign_adjudications(s, users["boss"], [d2], "rev1")
    with pytest.raises(ValueError, match="pairs is empty"):
        with store.write() as s:
            assign_adjudications(s, users["boss"], [], "rev1")
    with store.write() as s:
        assert assign_adjudications(s, users["boss"], pairs, "rev1") == 2
    assert _holders(store, "d0", "fourth") == _holders(store, "d1", "fourth") == ["rev1"]
    with store.read() as s:
        item = next_item(s, users["rev1"])
        assert item.purpose == "fourth" and item.package == "rev1-adjudication"


def test_bulk_override_with_one_reason_is_one_transaction(world):
    from db.adjudication import override_labels

    store, users = world
    _split(store, users, "d0")
    with store.read() as s:
        a, b, c = (_pair(s, doc) for doc in ("d0", "d1", "d5"))
    with pytest.raises(ValueError, match="an override needs a reason"):
        with store.write() as s:
            override_labels(s, users["rev1"], [(*a, 2)], "  ")
    with pytest.raises(
        ValueError, match=r"^q2 / d5: label 7 is not one of the allowed levels \[0, 1, 2, 3\]$"
    ):  # the third is refused: none stored
        with store.write() as s:
            override_labels(s, users["rev1"], [(*a, 2), (*b, None), (*c, 7)], "batch check")
    with pytest.raises(SignedOut, match="this annotator account may not override final labels"):
        with store.write() as s:
            override_labels(s, users["en1"], [(*a, 2)], "batch check")
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(LabelOverride)) == 0
    with store.write() as s:
        results = override_labels(s, users["rev1"], [(*a, 2), (*b, None), (*c, 0)], "  batch check ")
    assert [(r.state, r.grade, r.method) for r in results] == [
        ("resolved", 2, "overridden"),
        ("excluded", None, "overridden"),
        ("resolved", 0, "overridden"),
    ]
    with store.read() as s:
        rows = s.execute(
            select(LabelOverride.grade, LabelOverride.reason, LabelOverride.user_id).order_by(LabelOverride.id)
        ).all()
        assert [tuple(r) for r in rows] == [
            (2, "batch check", users["rev1"]),
            (-1, "batch check", users["rev1"]),
            (0, "batch check", users["rev1"]),
        ]
        finals = s.execute(
            select(FinalLabel.grade, FinalLabel.method, FinalLabel.reason).order_by(FinalLabel.passage_id)
        ).all()
        assert [tuple(f) for f in finals] == [
            (2, "overridden", "batch check"),
            (None, "overridden", "batch check"),
            (0, "overridden", "batch check"),
        ]
    # the split pair's open adjudication is settled by the override: it can no longer be reassigned
    from db.adjudication import assign_adjudication

    with pytest.raises(ValueError, match="^q1 / d0: a reviewer has already decided this pair$"):
        with store.write() as s:
            assign_adjudication(s, users["boss"], *a, "en1")
