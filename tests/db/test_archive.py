"""Archive, restore and rename (issue 11): hidden from listings, judgments untouched, undone exactly."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.access import SignedOut
from db.archive import archive, list_items, rename, restore
from db.assignments import create_assignments
from db.importer import import_collection, save_run
from db.labelling import record_judgment
from db.models import Assignment, Judgment, Package
from db.pools import list_pools, save_pool
from db.queries import NotFound, iter_judgments, list_collections, list_runs, relevance_levels, stored_qrels
from db.resolution import freeze_qrels
from db.users import add_user, set_active

DOCS = [f"d{i}" for i in range(6)]


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage text {d}") for d in DOCS]),
        queries=lambda: iter([Query("q1", "first query"), Query("q2", "second query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        import_collection(s, source, name="other", format="t", location="m")
        save_run(s, "c", "bm25", {"q1": {"d0": 2.0, "d1": 1.0}})
        save_pool(s, "c", "p", {"q1": {d: [] for d in DOCS[:3]}}, method="depth")
        users = {n: add_user(s, n, "correct horse", "annotator").id for n in ("ann1", "ann2", "ann3")}
        users["admin"] = add_user(s, "admin", "correct horse", "admin").id
        users["rev"] = add_user(s, "rev", "correct horse", "reviewer").id
        create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=7)
    with store.write() as s:
        for user in ("ann1", "ann2", "ann3"):
            for aid in s.scalars(
                select(Assignment.id).where(Assignment.user_id == users[user]).order_by(Assignment.id)
            ):
                record_judgment(s, users[user], aid, 2, elapsed_ms=900)
        freeze_qrels(s, "c", "v1")
    return store, users


def _counts(store):
    with store.read() as s:
        return (
            s.scalar(select(func.count()).select_from(Judgment)),
            len(list(iter_judgments(s, "c"))),
            stored_qrels(s, "c", "v1"),
            sorted(s.scalars(select(Package.status))),
        )


def test_archiving_a_collection_hides_it_and_restoring_brings_it_back_with_its_judgments(world):
    store, users = world
    before = _counts(store)
    assert before[0] == 9 and before[1] == 9 and before[2] == {"q1": {"d0": 2, "d1": 2, "d2": 2}}
    with store.write() as s:
        item = archive(s, "collection", "c", acting_user_id=users["admin"])
    assert (item.kind, item.name, item.archived_by, item.archived) == ("collection", "c", "admin", True)
    with store.read() as s:
        assert [c.name for c in list_collections(s)] == ["other"]
        assert relevance_levels(s) == (("other", 2),)
        [shown] = [i for i in list_items(s, archived_only=True)]
        assert (shown.kind, shown.name, shown.archived_by) == ("collection", "c", "admin")
    assert _counts(store) == before  # hidden, not deleted: judgments and frozen qrels readable by name
    with store.write() as s:
        restore(s, "collection", "c", acting_user_id=users["admin"])
    with store.read() as s:
        assert [c.name for c in list_collections(s)] == ["c", "other"]
        assert list_items(s, archived_only=True) == []
    assert _counts(store) == before


def test_archived_runs_pools_and_qrels_versions_leave_the_listings(world):
    store, _ = world
    with store.write() as s:
        archive(s, "run", "bm25", collection="c", by="alice (cli)")
        archive(s, "pool", "p", collection="c", by="alice (cli)")
        archive(s, "qrels", "v1", collection="c", by="alice (cli)")
    with store.read() as s:
        [info] = [c for c in list_collections(s) if c.name == "c"]
        assert (info.runs, info.qrels_versions) == ([], [])
        assert list_runs(s, "c") == [] and list_pools(s, "c") == []
        assert stored_qrels(s, "c") == {}  # the default (newest shown) version skips an archived one
        assert stored_qrels(s, "c", "v1") == {"q1": {"d0": 2, "d1": 2, "d2": 2}}
        assert sorted((i.kind, i.name, i.archived_by) for i in list_items(s, archived_only=True)) == [
            ("pool", "p", "alice (cli)"),
            ("qrels", "v1", "alice (cli)"),
            ("run", "bm25", "alice (cli)"),
        ]
    with store.write() as s:
        for kind, name in (("run", "bm25"), ("pool", "p"), ("qrels", "v1")):
            restore(s, kind, name, collection="c")
    with store.read() as s:
        [info] = [c for c in list_collections(s) if c.name == "c"]
        assert (info.runs, info.qrels_versions, [p.name for p in list_pools(s, "c")]) == (["bm25"], ["v1"], ["p"])


def test_archive_and_restore_refuse_what_makes_no_sense(world):
    store, users = world
    with store.write() as s:
        archive(s, "collection", "c", by="x")
    with pytest.raises(
        ValueError, match=r"^collection 'c' is already archived \(by x at \d{4}-\d\d-\d\d \d\d:\d\d UTC\)$"
    ):
        with store.write() as s:
            archive(s, "collection", "c", by="y")
    with pytest.raises(ValueError, match=r"^collection 'other' is not archived$"):
        with store.write() as s:
            restore(s, "collection", "other")
    with pytest.raises(NotFound, match=r"^no run named 'nope' in collection 'c' \(runs: bm25\)$"):
        with store.write() as s:
            archive(s, "run", "nope", collection="c")
    with pytest.raises(ValueError, match=r"^a run belongs to a collection: name it \(--collection\)$"):
        with store.write() as s:
            archive(s, "run", "bm25")
    with pytest.raises(ValueError, match=r"^kind must be one of collection, pool, run, qrels, got 'judgment'$"):
        with store.write() as s:
            archive(s, "judgment", "x", collection="c")


def test_every_action_rechecks_the_acting_account_in_the_write(world):
    store, users = world
    with pytest.raises(SignedOut, match="this reviewer account may not archive a collection; nothing was stored"):
        with store.write() as s:
            archive(s, "collection", "c", acting_user_id=users["rev"])
    with store.write() as s:
        set_active(s, "admin", False)
    for action in (
        lambda s: archive(s, "collection", "c", acting_user_id=users["admin"]),
        lambda s: restore(s, "collection", "c", acting_user_id=users["admin"]),
        lambda s: rename(s, "collection", "c", "d", acting_user_id=users["admin"]),
    ):
        with pytest.raises(SignedOut, match="signed out"):
            with store.write() as s:
                action(s)
    with store.read() as s:
        assert [c.name for c in list_collections(s)] == ["c", "other"]


def test_rename_checks_the_name_and_refuses_a_clash(world):
    store, users = world
    before = _counts(store)
    with store.write() as s:
        rename(s, "collection", "c", "renamed", acting_user_id=users["admin"])
        rename(s, "run", "bm25", "bm25-k1", collection="renamed")
        rename(s, "qrels", "v1", "first", collection="renamed")
        rename(s, "pool", "p", "pool-1", collection="renamed")
    with store.read() as s:
        [info] = [c for c in list_collections(s) if c.name == "renamed"]
        assert (info.runs, info.qrels_versions, [p.name for p in list_pools(s, "renamed")]) == (
            ["bm25-k1"],
            ["first"],
            ["pool-1"],
        )
        assert len(list(iter_judgments(s, "renamed"))) == before[1]
        assert stored_qrels(s, "renamed", "first") == before[2]
    with store.write() as s:
        archive(s, "collection", "other", by="x")
    with pytest.raises(
        ValueError, match=r"^a collection named 'other' already exists \(archived\); nothing was renamed$"
    ):
        with store.write() as s:
            rename(s, "collection", "renamed", "other")
    with pytest.raises(ValueError, match=r"^new run name must not be empty$"):
        with store.write() as s:
            rename(s, "run", "bm25-k1", "", collection="renamed")
    with pytest.raises(ValueError, match=r"^new collection name ' x' has leading or trailing whitespace; remove it$"):
        with store.write() as s:
            rename(s, "collection", "renamed", " x")
    with store.read() as s:
        assert [i.name for i in list_items(s) if i.kind == "collection"] == ["other", "renamed"]


@pytest.mark.slow
def test_an_archived_collection_serves_no_items_and_takes_no_labels_until_restored(world):
    from db.access import StaleSubmission
    from db.labelling import next_item

    store, users = world
    with store.write() as s:
        save_pool(s, "c", "p2", {"q2": {d: [] for d in DOCS[3:]}}, method="depth")
        create_assignments(s, "c", "p2", annotators=["ann1", "ann2", "ann3"], seed=8)
    with store.read() as s:
        item = next_item(s, users["ann1"])
    assert item is not None
    with store.write() as s:
        archive(s, "collection", "c", by="x")
    with store.read() as s:
        assert next_item(s, users["ann1"]) is None
    with pytest.raises(StaleSubmission, match=r"^Not stored: its collection is archived \(restore it to go on\)\.$"):
        with store.write() as s:
            record_judgment(s, users["ann1"], item.assignment_id, 1, elapsed_ms=900)
    with store.write() as s:
        restore(s, "collection", "c")
    with store.read() as s:
        assert next_item(s, users["ann1"]).assignment_id == item.assignment_id
    with store.write() as s:
        record_judgment(s, users["ann1"], item.assignment_id, 1, elapsed_ms=900)
    assert _counts(store)[0] == 10
