"""Active selection that retrains between batches, on Cranfield: how fast each strategy finds the relevant pairs.

Not a test.  Run from the repository root (a few minutes on 2 CPU cores)::

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_active_retrain.py
    .venv/bin/python benchmarks/bench_active_retrain.py --queries 40 --depth 10 --batch 50 --steps 10

What it does, all in one process, no network:

* Cranfield (``../shared/data/cranfield``, the project's SMART reader:
  Cleverdon's 1..4 mapped to grades 3, 2, 1, 1; level 1) restricted to a
  seeded sample of ``--queries`` judged queries (the oracle).
* Three BM25 runs over the whole corpus (bm25s: stemmed k1 1.5 b 0.75,
  unstemmed, stemmed k1 0.9 b 0.4): the systems the simulation ranks, and
  whose top ``--depth`` per query form the pool.
* The selector: :class:`core.training.active.RetrainingSelector` on
  ``--model`` (default: the packaged all-MiniLM-L6-v2 with a new, seeded
  head, i.e. a base that knows nothing of relevance yet), ``--steps``
  steps of ``--train-batch`` pairs per round, learning rate ``--lr``,
  ``--max-length`` tokens per pair.
* :func:`core.simulation.simulate_labelling` with depth, random, active
  and active-retrain under the ``uncertain`` rule (T2Ranking), then active
  and active-retrain under the ``relevant`` rule (continuous active
  learning), then (``--from-base``) active-retrain restarting every round
  from the base weights.  The same pool, batch size and budget for all.

It prints recall of the pool's relevant pairs after every batch, the labels
each strategy needed to find 50% and 90% of them and to reach Kendall tau
0.9, and the seconds each simulation took.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.context import with_title  # noqa: E402
from core.formats.smart import read_smart_folder  # noqa: E402
from core.retrieval.bm25 import BM25Retriever  # noqa: E402
from core.simulation import TAU_TARGET, SimulationResult, simulate_labelling  # noqa: E402
from core.text import analyzer_for  # noqa: E402
from core.types import Qrels, Run  # noqa: E402


def load_cranfield(folder: Path, n_queries: int, seed: int) -> tuple[dict[str, str], dict[str, str], Qrels]:
    """Query texts, passage texts (title + text) and the qrels of a seeded sample of judged queries."""
    source = read_smart_folder(folder)
    passages = {}
    for p in source.passages():
        text = with_title(p.text.strip(), p.title)
        if text.strip():
            passages[p.id] = text
    queries = {q.id: q.text for q in source.queries()}
    qrels: Qrels = {}
    for entry in source.qrels():
        if entry.doc_id in passages:
            qrels.setdefault(entry.query_id, {})[entry.doc_id] = entry.grade
    judged = sorted(q for q, docs in qrels.items() if any(g >= 1 for g in docs.values()) and q in queries)
    keep = sorted(random.Random(seed).sample(judged, min(n_queries, len(judged))))
    return {q: queries[q] for q in keep}, passages, {q: qrels[q] for q in keep}


def bm25_runs(queries: dict[str, str], passages: dict[str, str], depth: int) -> dict[str, Run]:
    """Three BM25 variants' top ``depth`` for every query."""
    ids = sorted(passages)
    texts = [passages[d] for d in ids]
    variants = {
        "bm25": BM25Retriever(analyzer_for("en")),
        "bm25-nostem": BM25Retriever(analyzer_for("en", stem=False)),
        "bm25-k0.9-b0.4": BM25Retriever(analyzer_for("en"), k1=0.9, b=0.4),
    }
    return {name: r.index(ids, texts).batch_search(queries, k=depth) for name, r in variants.items()}


def report(title: str, result: SimulationResult, seconds: float) -> None:
    """Recall per batch and the labels each strategy needed."""
    print(f"\n{title} ({seconds:.0f} s): {result.pool_pairs} pooled pairs, {result.pool_relevant} relevant")
    strategies = result.strategies
    print("\t".join(["pairs", *strategies]))
    curves = {s: result.recalls(s) for s in strategies}
    for b in range(max(len(c) for c in curves.values())):
        pairs = max(c[b][0] for c in curves.values() if b < len(c))
        print("\t".join([str(pairs), *("" if b >= len(curves[s]) else f"{curves[s][b][1]:.3f}" for s in strategies)]))
    for label, reached in (
        ("recall >= 0.5", result.pairs_to_recall(0.5)),
        ("recall >= 0.9", result.pairs_to_recall(0.9)),
        (f"tau >= {TAU_TARGET}", result.pairs_to_reach(TAU_TARGET)),
    ):
        print(
            f"labels to reach {label}: " + ", ".join(f"{s} {'never' if n is None else n}" for s, n in reached.items())
        )
    if result.training_rounds:
        print(f"training rounds: {result.training_rounds}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "cranfield")
    parser.add_argument("--queries", type=int, default=40, help="judged queries sampled (seeded)")
    parser.add_argument("--depth", type=int, default=10)
    parser.add_argument("--batch", type=int, default=50, help="pairs labelled per batch")
    parser.add_argument("--model", default=None, help="the selector's base folder (default: MiniLM, new head)")
    parser.add_argument("--steps", type=int, default=10, help="optimiser steps per round")
    parser.add_argument("--train-batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=200)
    parser.add_argument("--rules", default="uncertain,relevant")
    parser.add_argument("--from-base", action="store_true", help="also restart every round from the base weights")
    parser.add_argument("--only-from-base", action="store_true", help="run only the --from-base simulations")
    args = parser.parse_args(argv)
    if not (args.data / "cran.all.1400").is_file():
        raise SystemExit(f"{args.data}: Cranfield not found")
    import torch

    from core.training.active import RetrainingSelector

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    queries, passages, oracle = load_cranfield(args.data, args.queries, args.seed)
    runs = bm25_runs(queries, passages, args.depth)
    common = dict(depth=args.depth, batch_size=args.batch, level=1, seed=args.seed, resamples=args.resamples)
    settings = dict(
        steps=args.steps,
        batch_size=args.train_batch,
        learning_rate=args.lr,
        max_length=args.max_length,
        seed=args.seed,
        device="cpu",
    )
    selector = RetrainingSelector(args.model, queries, passages, **settings)
    print(f"Cranfield: {len(queries)} queries, {len(runs)} BM25 runs, selector {selector!r}")
    for i, rule in enumerate([] if args.only_from_base else args.rules.split(",")):
        strategies = ["depth", "random", "active", "active-retrain"] if i == 0 else ["active", "active-retrain"]
        started = time.perf_counter()
        result = simulate_labelling(oracle, runs, strategies=strategies, selector=selector, rule=rule, **common)
        report(f"rule {rule}", result, time.perf_counter() - started)
    if args.from_base or args.only_from_base:
        restart = RetrainingSelector(args.model, queries, passages, from_base=True, **settings)
        for rule in args.rules.split(","):
            started = time.perf_counter()
            result = simulate_labelling(
                oracle, runs, strategies=["active-retrain"], selector=restart, rule=rule, **common
            )
            report(f"rule {rule}, every round from the base weights", result, time.perf_counter() - started)


if __name__ == "__main__":
    main()
