"""db.markers.qrels_marker changes with what the Admin page's Qrels tab shows, and only then."""

from __future__ import annotations

from db.labelling import record_judgment
from db.markers import qrels_marker
from db.models import Assignment
from db.resolution import override_label
from tests.db.unresolved_helpers import _assignment, build_unresolved


def _marker(store) -> tuple:
    with store.read() as s:
        return qrels_marker(s, "c")


def test_the_marker_changes_with_a_label_an_override_and_a_final_label_only(store):
    users = build_unresolved(store)
    before = _marker(store)
    assert _marker(store) == before  # reading changes nothing
    with store.write() as s:
        record_judgment(s, users["ann1"], _assignment(s, users["ann1"], "d5"), 2)
    after_label = _marker(store)
    assert after_label != before
    with store.write() as s:
        a = s.get_one(Assignment, _assignment(s, users["ann1"], "d1"))
        override_label(s, users["admin"], a.query_id, a.passage_id, 2, "the passage answers it")
    after_override = _marker(store)
    assert after_override != after_label
    # the override decided d1: a final label more than d0's (unanimous) and d2's (excluded)
    assert after_override[3] == after_label[3] + 1 == 3
