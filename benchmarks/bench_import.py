"""Import throughput and peak memory for a generated 1M-passage MS MARCO TSV.

Runs ``pooljudge import`` in a child process (so its peak RSS is measured
alone) against a fresh SQLite store, and compares the peak memory with the
size of the input file: a streaming import needs far less memory than the
file holds.  Prints e.g.::

    import: 1,000,000 passages in 41.2 s = 24,270 passages/s; peak RSS 180 MB (file 212 MB)

Usage: python benchmarks/bench_import.py [--passages N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "retrieval passage query ranking dense sparse index corpus annotator judgment relevance pool "
    "benchmark model encoder token segment document title answer search engine evaluation metric"
).split()


def generate(path: Path, n: int, seed: int = 13) -> None:
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for pid in range(n):
            length = rng.randint(20, 60)
            out.write(f"{pid}\t{' '.join(rng.choice(WORDS) for _ in range(length))}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, help="folder to keep the generated files in")
    args = parser.parse_args()
    workdir = Path(args.keep or tempfile.mkdtemp(prefix="pooljudge-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    tsv = workdir / "collection.tsv"
    if not tsv.exists() or sum(1 for _ in open(tsv, "rb")) != args.passages:
        t = time.perf_counter()
        generate(tsv, args.passages)
        print(f"generated {args.passages:,} passages ({tsv.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
    db = workdir / "bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    subprocess.run([sys.executable, "-m", "pooljudge.cli", "--db", str(db), "db", "upgrade"], check=True, capture_output=True)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "--db", str(db), "--quiet", "import", "--format", "msmarco", str(tsv),
         "--collection", "bench"],
        check=True,
    )
    elapsed = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"import: {args.passages:,} passages in {elapsed:.1f} s = {args.passages / elapsed:,.0f} passages/s; "
        f"peak RSS {peak_mb:.0f} MB (input file {tsv.stat().st_size / 1e6:.0f} MB, store {db.stat().st_size / 1e6:.0f} MB)"
    )


if __name__ == "__main__":
    main()
