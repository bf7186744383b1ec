"""Time a live-leaderboard refresh (``core.leaderboard.IncrementalEvaluator``) against a full evaluation.

The Metrics page re-evaluates the leaderboard every time it refreshes (every
10 s while the live labels are shown).  This generates graded qrels and
three runs for 10,000 queries x 100 documents, warms the evaluator, changes
the labels of ``--changed`` queries (as a few new final labels would), then
times, best of ``--repeat``, in this one process:

* incremental: ``IncrementalEvaluator.evaluate(qrels, runs)`` after the change
  (only the changed (run, query) pairs go through trec_eval);
* full: ``core.metrics.evaluate`` of every run on the same qrels;

checks that both give the same numbers and prints e.g.::

    leaderboard refresh: incremental 0.21 s, full 1.35 s, ratio 0.16 (target <= 0.5)

Usage: python benchmarks/bench_leaderboard.py [--queries N] [--docs N] [--changed N] [--repeat N]
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_eval import best_of, generate  # noqa: E402
from core.leaderboard import IncrementalEvaluator  # noqa: E402
from core.metrics import evaluate  # noqa: E402
from core.scale import GRADES  # noqa: E402

MEASURES = ["MRR@10", "nDCG@10", "R@100", "MAP", "Judged@10"]
TARGET = 0.5


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    qrels, run = generate(args.queries, args.docs)
    rng = random.Random(11)
    runs = {
        name: {q: {d: round(s + rng.random() * 0.1, 3) for d, s in docs.items()} for q, docs in run.items()}
        for name in ("bm25", "dense", "hybrid")
    }
    board = IncrementalEvaluator(MEASURES, level=2)
    board.evaluate(qrels, runs)

    def changed_qrels(round_: int) -> dict:
        # every repetition changes other queries, so the evaluator always has real work
        out = dict(qrels)
        for q in rng.sample(sorted(qrels), args.changed):
            out[q] = {**qrels[q], f"new{round_}": GRADES[-1]}
        return out

    versions = iter([changed_qrels(i) for i in range(args.repeat)])
    last: dict = {}

    def incremental() -> None:
        last["qrels"] = next(versions)
        last["results"] = board.evaluate(last["qrels"], runs)

    t_incremental = best_of(args.repeat, incremental)
    # this round's changes plus the previous round's, undone
    assert board.evaluated_queries <= 2 * args.changed * len(runs), board.evaluated_queries
    t_full = best_of(
        args.repeat, lambda: {name: evaluate(last["qrels"], r, MEASURES, level=2) for name, r in runs.items()}
    )
    full = {name: evaluate(last["qrels"], r, MEASURES, level=2) for name, r in runs.items()}
    for name in runs:
        for m in full[name]:
            assert math.isclose(full[name][m]["all"], last["results"][name][m]["all"], abs_tol=1e-12), (name, m)
    ratio = t_incremental / t_full
    print(
        f"leaderboard refresh ({args.queries:,} queries x {args.docs} docs x {len(runs)} runs, {args.changed} changed): "
        f"incremental {t_incremental:.3f} s, full {t_full:.3f} s, ratio {ratio:.2f} (target <= {TARGET})"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
