"""Import throughput, peak memory, and how long another writer waits during the import.

Generates an MS MARCO TSV, runs ``pooljudge import`` in a child process (so its
peak RSS is measured alone) against a fresh SQLite store, and meanwhile this
process keeps writing one small row every 50 ms in its own short transaction,
as an annotator's label would, and times each of those writes.  An import
that holds the write lock while it reads its input makes that writer wait for
the whole import; a staged import keeps every wait to a chunk's duration.
Prints e.g. (this 2-core machine, loaded by other work; before the staged import,
the same run took 18.2 s and the other writer's max wait was 16.06 s)::

    import: 500,000 passages in 12.0 s = 41,818 passages/s (CPU 6.9 s); peak RSS 115 MB (input file 157 MB, store 189 MB)
    another writer during the import: 167 writes, max wait 0.11 s, p99 0.06 s, median 0.001 s

Usage: python benchmarks/bench_import.py [--passages N] [--keep DIR] [--no-probe]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.import_helpers import generate_msmarco_tsv, start_import  # noqa: E402


def probe_writes(url: str, importer: subprocess.Popen, interval: float = 0.05) -> list[float]:
    """Write one login-throttle row per ``interval`` until ``importer`` exits; the seconds each write took."""
    from sqlalchemy import insert

    from db.engine import Store
    from db.models import LoginThrottle

    store = Store(url, upgrade=False)
    waits = []
    n = 0
    while importer.poll() is None:
        t = time.perf_counter()
        with store.write() as s:
            s.execute(insert(LoginThrottle).values(key=f"bench-probe:{n}", failures=0))
        waits.append(time.perf_counter() - t)
        n += 1
        time.sleep(interval)
    store.dispose()
    return waits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="folder to keep the generated files in")
    parser.add_argument("--no-probe", action="store_true", help="do not measure another writer's waits")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="pooljudge-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    tsv = workdir / "collection.tsv"
    if not tsv.exists() or sum(1 for _ in open(tsv, "rb")) != args.passages:
        t = time.perf_counter()
        generate_msmarco_tsv(tsv, args.passages)
        print(
            f"generated {args.passages:,} passages ({tsv.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s"
        )
    db = workdir / "bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    url = f"sqlite:///{db.resolve()}"
    subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "--db", url, "db", "upgrade"], check=True, capture_output=True, cwd=REPO
    )
    start = time.perf_counter()
    importer = start_import(url, tsv, "bench")
    waits = [] if args.no_probe else probe_writes(url, importer)
    if importer.wait() != 0:
        sys.exit(f"import failed with exit status {importer.returncode}")
    elapsed = time.perf_counter() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak_mb = usage.ru_maxrss / 1024
    print(
        f"import: {args.passages:,} passages in {elapsed:.1f} s = {args.passages / elapsed:,.0f} passages/s "
        f"(CPU {usage.ru_utime + usage.ru_stime:.1f} s); "
        f"peak RSS {peak_mb:.0f} MB (input file {tsv.stat().st_size / 1e6:.0f} MB, store {db.stat().st_size / 1e6:.0f} MB)"
    )
    if waits:
        ordered = sorted(waits)
        p99 = ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))]
        print(
            f"another writer during the import: {len(waits)} writes, max wait {max(waits):.2f} s, p99 {p99:.2f} s, "
            f"median {statistics.median(waits):.3f} s"
        )


if __name__ == "__main__":
    main()
