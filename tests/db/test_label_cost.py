"""Storing one label stays cheap: it runs under the store's write lock, so its CPU bounds how fast a team labels.

The work is counted in Python function calls (``cProfile``), which is exact and does not depend on the
machine's load, in a process that has stored labels already (statement caches warm, as in a server).  Building
the label's SQL statements anew on every call (the open condition, the resolution reads) costs about
7,000 to 9,000 calls per label; statements built once and bound to each label's ids cost a third of that.
``benchmarks/bench_record_judgment.py`` measures the CPU time on a large store.
"""

from __future__ import annotations

import cProfile
import pstats

from sqlalchemy import func, select

from db.assignments import create_assignments
from db.labelling import record_judgment
from db.models import Assignment, FinalLabel, Judgment
from db.vocab import Purpose
from tests.db.labelling_helpers import add_accounts, import_two_queries

ANNOTATORS = ("ann1", "ann2", "ann3")
# Python calls one label may cost.  Measured with statements built once: 1,945 for a pair's first label and
# 2,671 for the label that decides it on SQLite, 3,035 and 3,917 on PostgreSQL; built on each call they cost
# 7,307 and 8,116 (SQLite), 8,397 and 9,362 (PostgreSQL).
MOST_CALLS = {"first label": 4_500, "deciding label": 5_500}


def _pairs(store, ids: dict[str, int]) -> list[dict[str, int]]:
    """``{username: assignment id}`` of each pair of pool ``p``, in assignment order."""
    users = {uid: name for name, uid in ids.items()}
    pairs: dict[tuple[int, int], dict[str, int]] = {}
    with store.read() as s:
        for aid, q, p, uid in s.execute(
            select(Assignment.id, Assignment.query_id, Assignment.passage_id, Assignment.user_id)
            .where(Assignment.purpose == Purpose.LABEL)
            .order_by(Assignment.id)
        ):
            pairs.setdefault((q, p), {})[users[uid]] = aid
    return list(pairs.values())


def _calls(store, user_id: int, assignment_id: int, grade: int) -> int:
    """Python function calls that storing one label (one write transaction) ran."""
    profile = cProfile.Profile()
    with store.write() as s:
        profile.enable()
        record_judgment(s, user_id, assignment_id, grade, elapsed_ms=1)
        profile.disable()
    return pstats.Stats(profile).total_calls  # type: ignore[attr-defined]  # set by Stats, not in its stubs


def test_a_label_costs_a_bounded_number_of_python_calls(store):
    with store.write() as s:
        import_two_queries(s)
        ids = add_accounts(s, ANNOTATORS)
        create_assignments(s, "c", "p", annotators=list(ANNOTATORS), seed=7)
    pairs = _pairs(store, ids)
    # warm: two pairs decided the same way as the measured one
    for pair in pairs[:2]:
        for name in ANNOTATORS:
            _calls(store, ids[name], pair[name], 2)
    measured = pairs[2]
    calls = {"first label": _calls(store, ids["ann1"], measured["ann1"], 2)}
    _calls(store, ids["ann2"], measured["ann2"], 2)
    calls["deciding label"] = _calls(store, ids["ann3"], measured["ann3"], 2)
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(Judgment)) == 9
        finals = s.execute(select(FinalLabel.grade, FinalLabel.method, FinalLabel.n_labels)).all()
    assert finals == [(2, "unanimous", 3)] * 3  # the three pairs, each decided by its three equal labels
    assert all(calls[k] <= MOST_CALLS[k] for k in calls), calls
