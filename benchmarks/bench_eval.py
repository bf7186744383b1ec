"""Time ``core.metrics.evaluate`` against bare pytrec_eval on the same measures.

Generates graded qrels (0-3) and a run for 10,000 queries x 100 documents,
then, in this one process, times (best of 5, interleaved):

* pooljudge: ``evaluate(qrels, run, MEASURES)`` -- parsing, the trec_eval
  pass, MRR@k post-processing, filling missing queries and the means;
* pytrec_eval: ``RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)``
  for the equivalent trec_eval measures (no means).

Prints e.g.::

    eval: pooljudge 0.31 s, pytrec_eval 0.29 s, ratio 1.07 (target <= 1.2)

A second line times the measures pytrec_eval lacks (nDCG_exp@10, Judged@10)
added to the set; they cost one extra trec_eval pass each and have no bare
equivalent, so that line is informational.

Usage: python benchmarks/bench_eval.py [--queries N] [--docs N] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytrec_eval  # noqa: E402

from core.metrics import evaluate  # noqa: E402
from core.scale import GRADES  # noqa: E402

MEASURES = ["MAP", "MRR@10", "P@10", "R@100", "nDCG@10", "Rprec", "Success@10"]
TREC_MEASURES = {"map", "recip_rank", "P.10", "recall.100", "ndcg_cut.10", "Rprec", "success.10"}
TARGET = 1.2


def generate(n_queries: int, n_docs: int, seed: int = 7):
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        docs = [f"d{q}_{i}" for i in range(n_docs)]
        judged = rng.sample(docs, 30) + [f"u{q}_{i}" for i in range(10)]  # some judged docs never retrieved
        qrels[qid] = {d: rng.choices(GRADES, weights=(6, 2, 1, 1))[0] for d in judged}
        run[qid] = {d: round(rng.random(), 3) for d in docs}  # 3 decimals: some ties
    return qrels, run


def best_of(repeat: int, fn) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    qrels, run = generate(args.queries, args.docs)

    def bare():
        return pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)

    def ours():
        return evaluate(qrels, run, MEASURES)

    # same numbers first (a benchmark of wrong code is worthless)
    ref, got = bare(), ours()
    for q in ref:
        assert abs(ref[q]["ndcg_cut_10"] - got["nDCG@10"][q]) < 1e-12
        assert abs(ref[q]["map"] - got["MAP"][q]) < 1e-12

    # interleave so drift in machine load hits both sides alike
    t_bare = t_ours = float("inf")
    for _ in range(args.repeat):
        t_bare = min(t_bare, best_of(1, bare))
        t_ours = min(t_ours, best_of(1, ours))
    ratio = t_ours / t_bare
    verdict = "ok" if ratio <= TARGET else "SLOWER THAN TARGET"
    print(
        f"eval ({args.queries:,} queries x {args.docs} docs, {len(MEASURES)} measures): "
        f"pooljudge {t_ours:.2f} s, pytrec_eval {t_bare:.2f} s, ratio {ratio:.2f} (target <= {TARGET}) {verdict}"
    )

    extra = MEASURES + ["nDCG_exp@10", "Judged@10"]
    t_extra = best_of(args.repeat, lambda: evaluate(qrels, run, extra))
    print(
        f"eval + nDCG_exp@10 + Judged@10 (no bare equivalent): pooljudge {t_extra:.2f} s "
        f"= {t_extra / t_bare:.2f}x bare pytrec_eval on the 7 measures"
    )


if __name__ == "__main__":
    main()
