"""Acceptance: 20 processes writing 200 labels each into one store (SQLite, PostgreSQL) lose and duplicate nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.engine import Store
from db.importer import import_collection
from db.models import FinalLabel, Judgment
from db.pools import save_pool
from db.users import add_user

REPO = Path(__file__).resolve().parents[2]
WORKERS = 20
# 20 x 200 is the SQLite acceptance figure.  On PostgreSQL a label costs a few more round trips, so
# 20 x 30 keeps the run short: every worker still labels every pair, racing the 19 others on it.
LABELS = {"sqlite": 200, "postgresql": 30}


# Each writer is a separate interpreter (not a multiprocessing child), so nothing from the
# test process is shared with it: only the store (the SQLite file, or the PostgreSQL database).
WORKER = """
import sys
from sqlalchemy import select
from db.labelling import record_judgment
from db.engine import Store
from db.models import Assignment, User

url, username = sys.argv[1], sys.argv[2]
store = Store(url, upgrade=False)
with store.read() as s:
    uid = s.scalar(select(User.id).where(User.username == username))
    ids = list(s.scalars(select(Assignment.id).where(Assignment.user_id == uid).order_by(Assignment.id)))
for n, aid in enumerate(ids):
    with store.write() as s:
        record_judgment(s, uid, aid, (n + uid) % 4, elapsed_ms=1)
store.dispose()
print(len(ids))
"""


@pytest.mark.slow  # twenty writer processes: 192 s measured (SQLite, on a loaded machine)
def test_twenty_writers_lose_and_duplicate_nothing(store_url):
    url = store_url
    store = Store(url)
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
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, name],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=600)
        results.append((proc.returncode, out.strip(), err.strip()[-500:]))
    assert [r for r in results if r[0] != 0] == []  # no writer failed ("database is locked" included)
    assert [int(out) for _, out, _ in results] == [labels] * WORKERS
    with store.read() as s:
        total = s.scalar(select(func.count()).select_from(Judgment))
        distinct = s.scalar(select(func.count(func.distinct(Judgment.assignment_id))))
        per_user = dict(s.execute(select(Judgment.user_id, func.count()).group_by(Judgment.user_id)).all())
        finals = s.scalar(select(func.count()).select_from(FinalLabel))
    store.dispose()
    assert total == distinct == WORKERS * labels
    assert sorted(per_user.values()) == [labels] * WORKERS
    assert finals == labels  # every pair resolved once, by whichever writer came last
