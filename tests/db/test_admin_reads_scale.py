"""Issue 20: what the Admin page's tabs read on every run costs the same on a small and a large store.

A tab switch reruns the open tab.  The Quality control tab asks which packages wait on flagged items and reads
the QC marker (the key of its background tables); the Qrels tab reads the qrels marker.  None of these may walk
every judgment or final label of the store.  Work is counted in SQLite virtual-machine instructions
(``sqlite3.Connection.set_progress_handler``), exact and independent of the machine's load, on the benchmark's
generated store (``benchmarks.page_budget_store``) at 100 and 1,000 pairs.
"""

from __future__ import annotations

import pytest
from sqlalchemy import event, func, select

from benchmarks.page_budget_store import COLLECTION
from db.markers import qc_marker, qrels_marker
from db.models import FinalLabel, Judgment, Package
from db.qc_rounds import waiting_on_flags
from tests.db.sqlite_work import generated_stores, vm_steps

pytestmark = pytest.mark.slow  # two generated stores: about 3 s


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    yield from generated_stores(tmp_path_factory.mktemp)


def test_the_flag_check_does_not_walk_every_judgment(stores):
    steps = {}
    for queries, store in stores.items():
        steps[queries], waiting = vm_steps(store, waiting_on_flags)
        assert waiting == []  # the generated store has labels and no flag
    assert steps[100] <= 1.5 * steps[10] + 2_000, steps  # ten times the judgments: the same work


def test_the_qc_marker_does_not_walk_every_judgment(stores):
    steps = {}
    for queries, store in stores.items():
        steps[queries], marker = vm_steps(store, qc_marker)
        with store.read() as session:
            packages = session.scalar(select(func.count(Package.id)))
            assert session.scalar(select(func.count(Judgment.id))) > 25 * queries  # labels there are
        assert marker == (0, 0, 0, (("open", packages),))  # no QC review, no round, every package open
    assert steps[100] <= 1.5 * steps[10] + 2_000, steps


def test_the_qrels_marker_reads_only_an_index_of_final_labels(stores):
    """Counting a collection's final labels is linear; it reads the index alone, not every row's page."""
    store = stores[100]
    statements: list[tuple[str, object]] = []

    def keep(conn, cursor, statement, parameters, context, executemany) -> None:
        statements.append((statement, parameters))

    event.listen(store.engine, "before_cursor_execute", keep)
    try:
        with store.read() as session:
            marker = qrels_marker(session, COLLECTION)
    finally:
        event.remove(store.engine, "before_cursor_execute", keep)
    with store.read() as session:
        finals = session.scalar(select(func.count(FinalLabel.id)))
        last = session.scalar(select(func.max(Judgment.id)))
        plans = [
            row[-1]
            for statement, parameters in statements
            if "final_labels" in statement
            for row in session.connection().exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters)
        ]
    assert finals > 500 and marker[1:4] == (last, 0, finals), marker
    assert plans == ["SEARCH final_labels USING COVERING INDEX ix_final_labels_decided (collection_id=?)"]
