"""Acceptance: 20 processes writing 200 labels each into one store (SQLite, PostgreSQL) lose and duplicate nothing."""

from __future__ import annotations

import os

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.engine import Store
from db.importer import import_collection
from db.models import FinalLabel, Judgment
from db.pools import save_pool
from db.users import add_user
from tests.db.forked import run_forked
from tests.db.processes import PRELOAD

WORKERS = 20
# 20 x 200 is the SQLite acceptance figure.  On PostgreSQL a label costs a few more round trips, so
# 20 x 30 keeps the run short: every worker still labels every pair, racing the 19 others on it.
LABELS = {"sqlite": 200, "postgresql": 30}


# Each writer is a separate OS process, forked from one helper interpreter that imported the project
# once (not from the test process): nothing from the test process is shared with it, only the store
# (the SQLite file, or the PostgreSQL database).  Each opens its own Store.


@pytest.mark.slow  # twenty writer processes: 192 s measured (SQLite, on a loaded machine)
def test_twenty_writers_lose_and_duplicate_nothing(store_url):
    url = store_url
    store = Store(url, upgrade=False)  # the template is at the newest schema already
    labels = LABELS[store.engine.dialect.name]
    docs = [f"d{i}" for i in range(labels)]
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"text {d}") for d in docs]),
        queries=lambda: iter([Query("q", "query")]),
        qrels=lambda: iter(()),
    )
    names = [f"ann{i:02d}" for i in range(WORKERS)]
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q": {d: [] for d in docs}}, method="depth")
        for name in names:
            add_user(s, name, "correct horse", "annotator")
        create_assignments(s, "c", "p", per_pair=WORKERS, seed=1)
    writers = run_forked(
        "tests.db.processes:label_all", [(url, name) for name in names], preload=PRELOAD["label_all"], timeout=600
    )
    assert [(w.exitcode, w.error) for w in writers if w.exitcode != 0] == []  # none failed ("database is locked"...)
    assert len({w.pid for w in writers} - {os.getpid()}) == WORKERS  # twenty processes of their own
    assert [w.result for w in writers] == [labels] * WORKERS
    with store.read() as s:
        total = s.scalar(select(func.count()).select_from(Judgment))
        distinct = s.scalar(select(func.count(func.distinct(Judgment.assignment_id))))
        per_user = dict(s.execute(select(Judgment.user_id, func.count()).group_by(Judgment.user_id)).all())
        finals = s.scalar(select(func.count()).select_from(FinalLabel))
    store.dispose()
    assert total == distinct == WORKERS * labels
    assert sorted(per_user.values()) == [labels] * WORKERS
    assert finals == labels  # every pair resolved once, by whichever writer came last
