"""CPU per stored label: :func:`db.labelling.record_judgment`, one write transaction each, on a copy of a store.

Every label is stored while the store's write lock is held, so its CPU time bounds how many labels a team
(or the app's labelling threads) can store per second.  The store is copied to a temporary folder first
(the original is never written); the open labelling assignments are shuffled with a fixed seed and
labelled one per transaction, as the labeller of ``benchmarks/bench_page_budget.py`` does.  Printed: the
process's CPU time (user + sys) per label, and per empty write transaction (the floor: ``BEGIN
IMMEDIATE`` and ``COMMIT`` alone)::

    record_judgment: 950 labels, 5.0 CPU-ms per label (empty write transaction: 0.6 CPU-ms), 15.7 ms wall

Usage: python benchmarks/bench_record_judgment.py --store STORE.db [--labels 2000] [--url URL]
(``--url`` names a scratch PostgreSQL database holding the same data instead of copying a SQLite file.)
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import select, text  # noqa: E402

from core.scale import GRADES  # noqa: E402
from db.engine import Store, sqlite_url  # noqa: E402
from db.labelling import record_judgment  # noqa: E402
from db.models import Assignment, Judgment  # noqa: E402
from db.vocab import Purpose  # noqa: E402


def open_assignments(store: Store, seed: int) -> list[tuple[int, int]]:
    """``(assignment id, user id)`` of every labelling assignment nobody judged yet, shuffled with ``seed``."""
    with store.read() as s:
        judged = set(s.scalars(select(Judgment.assignment_id)))
        todo = [
            (aid, uid)
            for aid, uid in s.execute(
                select(Assignment.id, Assignment.user_id).where(Assignment.purpose == Purpose.LABEL)
            )
            if aid not in judged
        ]
    random.Random(seed).shuffle(todo)
    return todo


def cpu_ms_per_label(store: Store, todo: list[tuple[int, int]], seed: int) -> tuple[int, float, float]:
    """``(labels stored, CPU ms per label, wall ms per label)`` storing one label per write transaction."""
    rng = random.Random(seed)
    stored = 0
    cpu, wall = time.process_time(), time.perf_counter()
    for aid, uid in todo:
        try:
            with store.write() as s:
                record_judgment(s, uid, aid, rng.choice(GRADES), elapsed_ms=rng.randint(1500, 9000))
        except (ValueError, LookupError, PermissionError):
            continue  # a closed package or an archived pool: refused, nothing stored
        stored += 1
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return stored, 1000 * cpu / max(stored, 1), 1000 * wall / max(stored, 1)


def empty_write_ms(store: Store, n: int = 500) -> float:
    """CPU ms of one write transaction that reads one row and stores nothing: the floor of any write."""
    cpu = time.process_time()
    for _ in range(n):
        with store.write() as s:
            s.execute(text("SELECT 1"))
    return 1000 * (time.process_time() - cpu) / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--store", type=Path, help="a SQLite store to copy (never written)")
    parser.add_argument("--url", help="a scratch store URL to label in place instead (it is written)")
    parser.add_argument("--labels", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if (args.store is None) == (args.url is None):
        parser.error("give exactly one of --store and --url")
    with tempfile.TemporaryDirectory(prefix="bench-record-") as tmp:
        url = args.url
        if args.store is not None:
            copy = Path(tmp) / "store.db"
            shutil.copyfile(args.store, copy)
            url = sqlite_url(str(copy))
        store = Store(url)
        todo = open_assignments(store, args.seed)[: args.labels]
        # a few labels first: the statement caches and the connection are warm, as in a long-running server
        warm, todo = todo[:50], todo[50:]
        cpu_ms_per_label(store, warm, args.seed)
        stored, cpu_ms, wall_ms = cpu_ms_per_label(store, todo, args.seed)
        floor = empty_write_ms(store)
        store.dispose()
    print(
        f"record_judgment: {stored} labels, {cpu_ms:.1f} CPU-ms per label "
        f"(empty write transaction: {floor:.1f} CPU-ms), {wall_ms:.1f} ms wall"
    )


if __name__ == "__main__":
    main()
