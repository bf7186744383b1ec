"""Judged pairs without a final label, by reason; an exclusion after a 4th differing label says why."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from db.models import FinalLabel, PassageRecord
from db.resolution import freeze_qrels, live_qrels
from db.unresolved import counts_by_reason, median_labels, summary, unresolved_pairs
from tests.db.unresolved_helpers import build_unresolved


def test_every_judged_pair_left_out_is_counted_with_its_reason(store):
    build_unresolved(store)
    with store.read() as s:
        assert live_qrels(s, "c") == {"q1": {"d0": 3}}
        pairs = unresolved_pairs(s, "c")
    assert [(p.query_id, p.doc_id, p.reason, p.labels, p.detail) for p in pairs] == [
        ("q1", "d1", "waiting for a 4th label", {"ann1": 0, "ann2": 1, "ann3": 2}, ""),
        (
            "q1",
            "d2",
            "excluded after a 4th differing label",
            {"ann1": 0, "ann2": 1, "ann3": 2, "ann4": 3},
            "4 labels, no majority: 0, 1, 2, 3",
        ),
        ("q1", "d3", "flagged", {"ann2": 2, "ann3": 2}, ""),
        ("q1", "d4", "waiting for more labels", {"ann1": 1}, ""),
    ]
    assert counts_by_reason(pairs) == {
        "waiting for a 4th label": 1,
        "excluded after a 4th differing label": 1,
        "flagged": 1,
        "waiting for more labels": 1,
    }
    assert summary(pairs, 1) == (
        "1 pairs with a final label (only resolved pairs are exported: the default); 4 judged pairs without one "
        "left out: 1 waiting for a 4th label, 1 excluded after a 4th differing label, 1 flagged, "
        "1 waiting for more labels"
    )
    # the lower median of the labels so far: d1 0,1,2 -> 1; d2 0,1,2,3 -> 1; d3 2,2 -> 2; d4 -> 1
    assert median_labels(pairs) == {"q1": {"d1": 1, "d2": 1, "d3": 2, "d4": 1}}


def test_the_exclusion_stores_its_reason(store):
    build_unresolved(store)
    with store.read() as s:
        row = s.execute(
            select(FinalLabel.method, FinalLabel.grade, FinalLabel.reason)
            .join(PassageRecord, PassageRecord.id == FinalLabel.passage_id)
            .where(PassageRecord.ext_id == "d2")
        ).one()
    assert tuple(row) == ("excluded", None, "4 labels, no majority: 0, 1, 2, 3")


@pytest.mark.slow
def test_a_frozen_version_counts_pairs_resolved_after_it(store):
    users = build_unresolved(store)
    with store.write() as s:
        assert freeze_qrels(s, "c", "v1") == 1
    from db.labelling import record_judgment
    from tests.db.unresolved_helpers import _assignment

    with store.write() as s:  # ann1 answers the flag: d3 resolves to 2 after the freeze
        record_judgment(s, users["ann1"], _assignment(s, users["ann1"], "d3"), 2)
    from db.queries import stored_qrels

    with store.read() as s:
        pairs = unresolved_pairs(s, "c", stored_qrels(s, "c", "v1"))
        live = unresolved_pairs(s, "c")
    assert [(p.doc_id, p.reason) for p in pairs if p.doc_id == "d3"] == [("d3", "resolved after this version")]
    assert [p.doc_id for p in live] == ["d1", "d2", "d4"]
