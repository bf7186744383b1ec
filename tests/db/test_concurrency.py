"""Acceptance: 20 processes writing 200 labels each into one SQLite store lose and duplicate nothing."""

from __future__ import annotations

import multiprocessing as mp

from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.annotation import create_assignments, record_judgment
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.models import Assignment, FinalLabel, Judgment, User
from db.pools import save_pool
from db.users import add_user

WORKERS = 20
LABELS = 200


def _worker(url: str, username: str, queue) -> None:
    try:
        store = Store(url, upgrade=False)
        with store.read() as s:
            uid = s.scalar(select(User.id).where(User.username == username))
            ids = list(s.scalars(select(Assignment.id).where(Assignment.user_id == uid).order_by(Assignment.id)))
        for n, aid in enumerate(ids):
            with store.write() as s:
                record_judgment(s, uid, aid, (n + uid) % 4, elapsed_ms=1)
        store.dispose()
        queue.put((username, len(ids), None))
    except Exception as exc:  # reported to the parent, which fails the test with it
        queue.put((username, 0, repr(exc)))


def test_twenty_writers_lose_and_duplicate_nothing(tmp_path):
    url = sqlite_url(tmp_path / "shared.db")
    store = Store(url)
    docs = [f"d{i}" for i in range(LABELS)]
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
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(url, name, queue)) for name in names]
    for p in procs:
        p.start()
    results = [queue.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    errors = [(name, err) for name, _, err in results if err]
    assert errors == []
    assert sorted(n for _, n, _ in results) == [LABELS] * WORKERS
    with store.read() as s:
        total = s.scalar(select(func.count()).select_from(Judgment))
        distinct = s.scalar(select(func.count(func.distinct(Judgment.assignment_id))))
        per_user = dict(s.execute(select(Judgment.user_id, func.count()).group_by(Judgment.user_id)).all())
        finals = s.scalar(select(func.count()).select_from(FinalLabel))
    store.dispose()
    assert total == distinct == WORKERS * LABELS
    assert sorted(per_user.values()) == [LABELS] * WORKERS
    assert finals == LABELS  # every pair resolved once, by whichever writer came last
