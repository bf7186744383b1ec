"""An archived pool stops its work like an archived collection; archived items read by name carry a notice."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from db.access import StaleSubmission
from db.archive import archive, restore
from db.archive_state import archived_note
from db.assignments import create_assignments
from db.labelling import next_item, record_judgment
from db.models import Judgment
from db.pools import save_pool
from tests.db.test_archive import DOCS, world  # noqa: F401  # the shared fixture


@pytest.mark.slow
def test_an_archived_pool_serves_no_items_and_takes_no_labels_until_restored(world):  # noqa: F811
    store, users = world
    with store.write() as s:
        save_pool(s, "c", "p2", {"q2": {d: [] for d in DOCS[3:]}}, method="depth")
        create_assignments(s, "c", "p2", annotators=["ann1", "ann2", "ann3"], seed=8)
    with store.read() as s:
        item = next_item(s, users["ann1"])
        stored = s.scalar(select(func.count()).select_from(Judgment))
    assert item is not None and item.package.startswith("ann1-")
    with store.write() as s:
        archive(s, "pool", "p2", collection="c", by="x")
    with store.read() as s:
        assert next_item(s, users["ann1"]) is None
    with pytest.raises(StaleSubmission, match=r"^Not stored: its pool 'p2' is archived \(restore it to go on\)\.$"):
        with store.write() as s:
            record_judgment(s, users["ann1"], item.assignment_id, 1, elapsed_ms=900)
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(Judgment)) == stored
    with store.write() as s:
        restore(s, "pool", "p2", collection="c")
    with store.read() as s:
        assert next_item(s, users["ann1"]).assignment_id == item.assignment_id
    with store.write() as s:
        record_judgment(s, users["ann1"], item.assignment_id, 1, elapsed_ms=900)
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(Judgment)) == stored + 1


def test_an_archived_collection_run_or_version_read_by_name_says_so(world):  # noqa: F811
    store, _users = world
    with store.read() as s:
        assert archived_note(s, "c", run="bm25", qrels="v1") == ""
        assert archived_note(s, "no such collection") == ""
    with store.write() as s:
        archive(s, "run", "bm25", collection="c", by="x")
        archive(s, "collection", "c", by="admin")
    with store.read() as s:
        note = archived_note(s, "c", run="bm25", qrels="v1")
    assert note.startswith("collection 'c' is archived (by admin at ")
    assert "it is read all the same (`pooljudge restore collection 'c'` shows it again)." in note
    assert note.endswith("(`pooljudge restore run 'bm25' -c 'c'` shows it again).")
    assert "qrels version" not in note
