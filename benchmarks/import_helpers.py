"""What the import benchmarks share: a generated MS MARCO collection and ``pooljudge import`` in a child process.

Not a benchmark itself; ``bench_import.py`` and ``bench_label_under_import.py`` import it.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

WORDS = (
    "retrieval passage query ranking dense sparse index corpus annotator judgment relevance pool "
    "benchmark model encoder token segment document title answer search engine evaluation metric"
).split()


def generate_msmarco_tsv(path: Path, n: int, *, prefix: str = "", seed: int = 13) -> None:
    """``n`` passages ``<prefix><number>\\t<20 to 60 random words>``, one a line (MS MARCO's collection.tsv)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for pid in range(n):
            length = rng.randint(20, 60)
            out.write(f"{prefix}{pid}\t{' '.join(rng.choice(WORDS) for _ in range(length))}\n")


def start_import(url: str, tsv: Path, collection: str, **popen: Any) -> subprocess.Popen:
    """``pooljudge --db url --quiet import --format msmarco tsv --collection collection``, started from the
    repository root; ``popen`` goes to :class:`subprocess.Popen` (env, pipes)."""
    command = [sys.executable, "-m", "pooljudge.cli", "--db", url, "--quiet", "import"]
    return subprocess.Popen([*command, "--format", "msmarco", str(tsv), "--collection", collection], cwd=REPO, **popen)
