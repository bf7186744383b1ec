"""The QC tables' package progress is counted in SQL and returns exactly what the plain replay gives.

The reference below is the definition: every package annotator's own log on the package's assignments,
replayed with :func:`db.own_judgments.standing_by_assignment` and :func:`db.own_judgments.own_log`.  The
faster reads in :mod:`db.package_progress` must match it, row for row and in the same order, on SQLite and
PostgreSQL, and read a row per package (and per assignment with an undo or a flag), not one per label.
"""

from __future__ import annotations

from collections import Counter

import pytest
from sqlalchemy import event, select

from db.labelling import record_judgment, undo_last
from db.markers import package_marker, qc_marker
from db.models import Assignment, Package, PassageRecord, QcRound, QueryRecord
from db.own_judgments import own_log
from db.package_qc import close_qc_round, start_qc_round
from db.qc_rounds import waiting_on_flags
from db.review_progress import package_overview
from db.vocab import JudgmentAction
from tests.db.labelling_helpers import DOCS
from tests.db.test_review import _act, _ids, judged, judged_seed, world  # noqa: F401  # fixtures: every resolution case


def _reference_labelled(s) -> Counter[int]:
    labelled: Counter[int] = Counter()
    for package in s.scalars(select(Package)):
        ids = list(s.scalars(select(Assignment.id).where(Assignment.package_id == package.id)))
        labelled[package.id] = len(own_log(s, package.user_id, ids)[0])
    return +labelled


def _reference_waiting(s) -> list[tuple]:
    out = []
    for package in s.scalars(select(Package).order_by(Package.name)):
        rows = s.execute(
            select(Assignment.id, QueryRecord.ext_id, PassageRecord.ext_id)
            .join(QueryRecord, QueryRecord.id == Assignment.query_id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(Assignment.package_id == package.id)
        ).all()
        labelled, marks = own_log(s, package.user_id, [r[0] for r in rows])
        flagged = sorted((q, d) for aid, q, d in rows if marks.get(aid) == JudgmentAction.FLAG)
        if flagged and len(labelled) + len(flagged) == len(rows):
            out.append((package.name, len(labelled), len(rows), flagged))
    return out


def _waiting(s, user_id=None) -> list[tuple]:
    return [(w.name, w.labelled, w.total, w.flagged) for w in waiting_on_flags(s, user_id)]


@pytest.fixture
def flagged_world(judged):  # noqa: F811
    """``judged`` plus: ann1 labels d8 and d9 and flags d7 (its package waits on that flag); ann3 flags d8,
    labels it and undoes the label (plainly unlabelled: the label cleared the flag); ann2 labels d9 and undoes
    twice (d9's label, then d6's)."""
    store, u = judged
    _act(store, u["ann1"], "d8", 2)
    _act(store, u["ann1"], "d9", 0)
    _act(store, u["ann1"], "d7", action="flag", note="unclear")
    _act(store, u["ann3"], "d8", action="flag")
    _act(store, u["ann3"], "d8", 1)
    with store.write() as s:
        undo_last(s, u["ann3"])
    _act(store, u["ann2"], "d9", 3)
    with store.write() as s:
        undo_last(s, u["ann2"])
        undo_last(s, u["ann2"])
    return store, u


@pytest.mark.slow
def test_package_progress_equals_the_replay(flagged_world):
    store, u = flagged_world
    with store.read() as s:
        rows = package_overview(s)
        expected = _reference_labelled(s)
        assert package_overview(s, "c") == rows
        waiting = _waiting(s)
        assert waiting == _reference_waiting(s)
        assert _waiting(s, u["ann1"]) == waiting and _waiting(s, u["ann3"]) == []
    assert [(r.name, r.labelled, r.total) for r in rows] == [
        ("ann1-p001", 9, 10),
        ("ann2-p001", 5, 10),
        ("ann3-p001", 7, 10),
    ]
    assert {r.id: r.labelled for r in rows} == expected
    assert waiting == [("ann1-p001", 9, 10, [("q2", "d7")])]


@pytest.mark.slow
def test_a_flag_answered_by_a_label_releases_the_package(flagged_world):
    store, u = flagged_world
    _act(store, u["ann1"], "d7", 1)
    with store.read() as s:
        assert _waiting(s) == _reference_waiting(s) == []
        [row] = [r for r in package_overview(s) if r.annotator == "ann1"]
    assert (row.labelled, row.total, row.finished) == (10, 10, True)


def _rows_read(store, read):
    """``(rows the SELECT statements of read(session) returned, its result)``, counted by running each again."""
    statements: list[tuple] = []

    def note(_conn, _cursor, statement, parameters, *_args) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            statements.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", note)
    try:
        with store.read() as s:
            result = read(s)
    finally:
        event.remove(store.engine, "before_cursor_execute", note)
    with store.read() as s:
        conn = s.connection()
        rows = sum(
            conn.exec_driver_sql(f"SELECT count(*) FROM ({statement}) AS counted", parameters).scalar_one()
            for statement, parameters in statements
        )
    return rows, result


@pytest.mark.slow
def test_a_label_more_reads_no_row_more(flagged_world):
    store, u = flagged_world
    before = {
        "packages": _rows_read(store, package_overview),
        "waiting": _rows_read(store, waiting_on_flags),
    }
    for doc in DOCS[7:9]:  # two labels more, on items without an undo or a flag
        _act(store, u["ann2"], doc, 1)
    after = {
        "packages": _rows_read(store, package_overview),
        "waiting": _rows_read(store, waiting_on_flags),
    }
    assert [r.labelled for r in after["packages"][1]] == [9, 7, 7]
    assert after["waiting"][1] == before["waiting"][1] and len(after["waiting"][1]) == 1
    assert {k: rows for k, (rows, _result) in after.items()} == {k: rows for k, (rows, _r) in before.items()}


@pytest.mark.slow
def test_the_qc_key_moves_with_qc_only(flagged_world):
    store, u = flagged_world
    for doc in ("d7", "d8", "d9"):
        _act(store, u["ann3"], doc, 2)
    with store.read() as s:
        qc, progress = qc_marker(s), package_marker(s)
        package = s.scalar(select(Package.id).where(Package.user_id == u["ann3"]))
    _act(store, u["ann2"], "d7", 2)  # a label outside QC: the package table's key moves, the QC tables' not
    with store.read() as s:
        assert qc_marker(s) == qc and package_marker(s) != progress
        progress = package_marker(s)
    with store.write() as s:
        start_qc_round(s, package, reviewers=["rev1", "rev2"], sample_size=2, seed=1)
    with store.read() as s:
        assert qc_marker(s) != qc and package_marker(s) != progress
        qc = qc_marker(s)
    for reviewer in ("rev1", "rev2"):
        with store.read() as s:
            sampled = s.execute(
                select(Assignment.id, Assignment.passage_id).where(
                    Assignment.user_id == u[reviewer], Assignment.purpose == "qc"
                )
            ).all()
        assert len(sampled) == 2
        for aid, _p in sampled:
            with store.write() as s:
                record_judgment(s, u[reviewer], aid, 2)
            with store.read() as s:  # a QC review changes the reviewed counts: the key moves
                assert qc_marker(s) != qc
                qc = qc_marker(s)
    with store.write() as s:
        close_qc_round(s, s.scalar(select(QcRound.id).where(QcRound.package_id == package)))
    with store.read() as s:  # the decision
        assert qc_marker(s) != qc
