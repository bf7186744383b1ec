"""Labelling under import: 40 annotator processes label (undoing 20%) while a 500k-passage import runs.

Every annotator is a separate interpreter sharing only the store (a SQLite
file, or a PostgreSQL URL given with ``--url``).  Each one walks its own
assignments the way the Annotate page does: it reads the item outside any
write lock, stores the label in one short write transaction, and for one
label in five withdraws it (undo) and labels again.  Meanwhile
``pooljudge import`` loads a generated MS MARCO TSV into another collection.

At the end the store is checked against what every worker says it did:

* lost: judgments a worker committed that the store does not hold;
* duplicated: judgments the store holds beyond what the workers committed,
  and assignments with more than one standing label;
* locked: write transactions that failed with "database is locked" (or any
  other error), and the write latency percentiles over every write.

Prints e.g.::

    sqlite: 40 workers x 100 labels (20% undone) during a 500,000-passage import (71.3 s)
      lost 0, duplicated 0, locked 0, other errors 0
      write latency: p50 9 ms, p95 48 ms, p99 120 ms, max 410 ms  (target p99 < 1000 ms)

Usage: python benchmarks/bench_label_under_import.py [--url URL | --postgres] [--workers 40] [--labels 100]
                                                      [--passages 500000] [--undo 0.2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.import_helpers import generate_msmarco_tsv, start_import  # noqa: E402

# One annotator.  Prints one JSON line: what it committed and how long each write transaction took.
WORKER = r"""
import json, random, secrets, sys, time
from sqlalchemy import select
from db.labelling import next_item, record_judgment, undo_last
from db.engine import Store
from db.models import User
from core.scale import GRADES

url, username, undo_rate, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
rng = random.Random(seed)
store = Store(url, upgrade=False)
with store.read() as s:
    uid = s.scalar(select(User.id).where(User.username == username))
labels = undos = locked = other = 0
items = set()
latencies, errors = [], []

def write(action):
    global locked, other
    start = time.perf_counter()
    try:
        with store.write() as s:
            result = action(s)
    except Exception as exc:  # every failure is counted, none is retried: a retry would hide it
        if "locked" in str(exc).lower():
            locked += 1
        else:
            other += 1
        errors.append(f"{type(exc).__name__}: {str(exc)[:200]}")
        return False, None
    latencies.append(time.perf_counter() - start)
    return True, result

while True:
    with store.read() as s:
        item = next_item(s, uid)
    if item is None:
        break
    grade = rng.choice(GRADES)
    ok, _ = write(lambda s: record_judgment(s, uid, item.assignment_id, grade, token=secrets.token_hex(8), elapsed_ms=1))
    if not ok:
        break
    labels += 1
    items.add(item.assignment_id)
    if rng.random() < undo_rate:
        ok, undone = write(lambda s: undo_last(s, uid))
        if not ok:
            break
        undos += undone is not None
        ok, _ = write(lambda s: record_judgment(s, uid, item.assignment_id, GRADES[(GRADES.index(grade) + 1) % len(GRADES)],
                                                token=secrets.token_hex(8), elapsed_ms=1))
        if not ok:
            break
        labels += 1
store.dispose()
print(json.dumps({"user": username, "items": len(items), "labels": labels, "undos": undos, "locked": locked, "other": other,
                  "latencies": latencies, "errors": errors[:3]}))
"""


def prepare(url: str, workers: int, labels: int) -> None:
    """A small collection whose pool gives every annotator ``labels`` assignments, 3 annotators per pair."""
    from core.types import CollectionSource, Passage, Query
    from db.assignments import create_assignments
    from db.engine import Store
    from db.importer import import_collection
    from db.pools import save_pool
    from db.users import add_user

    pairs = workers * labels // 3
    queries = [f"q{i}" for i in range(max(1, pairs // 10))]
    pool = {q: {} for q in queries}
    for i in range(pairs):
        pool[queries[i % len(queries)]][f"d{i}"] = []
    source = CollectionSource(
        passages=lambda: iter([Passage(f"d{i}", f"passage number {i}") for i in range(pairs)]),
        queries=lambda: iter([Query(q, f"query {q}") for q in queries]),
        qrels=lambda: iter(()),
    )
    store = Store(url)
    with store.write() as s:
        import_collection(s, source, name="labelling", format="generated", location="bench")
        save_pool(s, "labelling", "round1", pool, method="depth")
        for i in range(workers):
            add_user(s, f"ann{i:02d}", "correct horse battery", "annotator")
        create_assignments(s, "labelling", "round1", per_pair=3, seed=7, package_size=10_000)
    store.dispose()


def check(url: str, reports: list[dict]) -> dict[str, int]:
    from sqlalchemy import func, select

    from core.judgments import Event, current_labels
    from db.engine import Store
    from db.models import Judgment, User

    store = Store(url, upgrade=False)
    with store.read() as s:
        ids = dict(s.execute(select(User.username, User.id)).all())
        stored = dict(s.execute(select(Judgment.user_id, func.count()).group_by(Judgment.user_id)).all())
        events = [
            Event(aid, uid, action, grade)
            for aid, uid, action, grade in s.execute(
                select(Judgment.assignment_id, Judgment.user_id, Judgment.action, Judgment.grade).order_by(Judgment.id)
            )
        ]
    store.dispose()
    standing: dict[int, int] = {}
    for by_user in current_labels(events).values():
        for uid in by_user:
            standing[uid] = standing.get(uid, 0) + 1
    lost = duplicated = 0
    for report in reports:
        uid = ids[report["user"]]
        committed = report["labels"] + report["undos"]
        held = stored.get(uid, 0)
        lost += max(0, committed - held)
        duplicated += max(0, held - committed)
        # every item the worker labelled ends with exactly one standing label (adjudications created
        # after a worker finished are assigned but were never shown, so they are not counted)
        lost += max(0, report["items"] - standing.get(uid, 0))
        duplicated += max(0, standing.get(uid, 0) - report["items"])
    return {"lost": lost, "duplicated": duplicated}


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="store URL (default: a fresh SQLite file); a PostgreSQL database must be empty")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="start a throwaway PostgreSQL cluster (tests/pgcluster.py; fsync off) and use a new database on it",
    )
    parser.add_argument("--workers", type=int, default=40)
    parser.add_argument("--labels", type=int, default=100, help="assignments per worker")
    parser.add_argument("--passages", type=int, default=500_000, help="passages in the concurrent import")
    parser.add_argument("--undo", type=float, default=0.2, help="share of labels withdrawn and labelled again")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="pooljudge-load-"))
    cluster = None
    if args.postgres:
        from tests.pgcluster import Cluster, Databases, bin_dir

        if bin_dir() is None:
            parser.error("PostgreSQL is not installed (make postgresql)")
        cluster = Cluster(bin_dir())
        args.url = Databases(cluster.start()).create(migrated=False)
    try:
        return run(args, work)
    finally:
        if cluster is not None:
            cluster.stop()


def start_workers(url: str, args: argparse.Namespace, env: dict[str, str]) -> list[subprocess.Popen]:
    """One annotator interpreter per ``--workers``, each labelling its own assignments (``WORKER``)."""
    return [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, url, f"ann{i:02d}", str(args.undo), str(i)],
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(args.workers)
    ]


def collect_reports(workers: list[subprocess.Popen]) -> tuple[list[dict], list[str]]:
    """Wait for every worker: the JSON reports of those that finished, the stderr tails of those that crashed."""
    reports, crashed = [], []
    for proc in workers:
        out, err = proc.communicate(timeout=3600)
        if proc.returncode != 0 or not out.strip():
            crashed.append(err.strip()[-400:])
        else:
            reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports, crashed


def print_latencies(reports: list[dict]) -> None:
    """Percentiles of every worker's write transactions, against the 1 s target for p99."""
    latencies = sorted(x * 1000 for r in reports for x in r["latencies"])
    if not latencies:
        return
    p99 = percentile(latencies, 99)
    print(
        f"  write latency over {len(latencies)} writes: p50 {percentile(latencies, 50):.0f} ms, "
        f"p95 {percentile(latencies, 95):.0f} ms, p99 {p99:.0f} ms, max {latencies[-1]:.0f} ms "
        f"(target p99 < 1000 ms: {'met' if p99 < 1000 else 'MISSED'})"
    )


def run(args: argparse.Namespace, work: Path) -> int:
    url = args.url or f"sqlite:///{work / 'store.db'}"
    backend = url.split(":", 1)[0].split("+", 1)[0]
    tsv = work / "big.tsv"
    generate_msmarco_tsv(tsv, args.passages, prefix="p")
    prepare(url, args.workers, args.labels)

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    importer = start_import(url, tsv, "big", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.perf_counter()
    time.sleep(1.0)  # let the import get into its stride before the annotators start
    reports, crashed = collect_reports(start_workers(url, args, env))
    labelling_done = time.perf_counter() - start
    _out, import_err = importer.communicate(timeout=3600)
    import_seconds = time.perf_counter() - start + 1.0

    counts = check(url, reports)
    locked = sum(r["locked"] for r in reports)
    other = sum(r["other"] for r in reports) + len(crashed)
    labels = sum(r["labels"] for r in reports)
    undos = sum(r["undos"] for r in reports)
    print(
        f"{backend}: {args.workers} workers x {args.labels} labels ({args.undo:.0%} undone) during a "
        f"{args.passages:,}-passage import ({import_seconds:.1f} s, exit {importer.returncode}); labelling took "
        f"{labelling_done:.1f} s"
    )
    print(
        f"  {labels} labels and {undos} undos committed; lost {counts['lost']}, duplicated {counts['duplicated']}, "
        f"locked {locked}, other errors {other}"
    )
    print_latencies(reports)
    for message in [e for r in reports for e in r["errors"]][:5] + crashed[:3]:
        print(f"  error: {message}")
    if importer.returncode != 0:
        print(f"  import failed: {import_err.strip()[-400:]}")
    ok = importer.returncode == 0 and counts == {"lost": 0, "duplicated": 0} and locked == 0 and other == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
