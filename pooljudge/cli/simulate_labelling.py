"""The `simulate-labelling` command: how many labels are enough."""

from __future__ import annotations

import argparse
import sys

from tqdm import tqdm

from pooljudge.cli.common import open_store, output


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `simulate-labelling` command: how many labels are enough."""
    p = sub.add_parser(
        "simulate-labelling",
        help="how many labels are enough: replay labelling with the qrels as the "
        "oracle in each strategy's order; Kendall tau of the run ranking and each run's metric with a "
        "bootstrap interval after every batch",
    )
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--qrels", help="the oracle's qrels version (default: the newest)")
    p.add_argument("--runs", help="comma-separated stored runs to rank (default: every run, at least two)")
    p.add_argument("--depth", type=int, default=20, help="pool: the top DEPTH of every run per query (default 20)")
    p.add_argument("--batch", type=int, default=50, help="pairs labelled per batch (default 50)")
    p.add_argument(
        "--strategies",
        default="depth,top-n,random",
        help="comma-separated: depth, top-n, random, active (a fixed model), active-retrain (the model is "
        "fine-tuned on the labels after every batch, T2Ranking's loop) (default depth,top-n,random)",
    )
    p.add_argument("--model", help="active, active-retrain: the cross-encoder (a registered model name or a folder)")
    p.add_argument(
        "--band", help="active strategies: LOW,HIGH; pairs the model scores outside the band take its label for free"
    )
    p.add_argument(
        "--rule",
        choices=["uncertain", "relevant"],
        default="uncertain",
        help="active strategies' order: the most uncertain pairs first (T2Ranking, default) or the most "
        "probably relevant first (continuous active learning)",
    )
    p.add_argument("--retrain-steps", type=int, default=10, help="active-retrain: optimiser steps per round (10)")
    p.add_argument("--retrain-batch", type=int, default=16, help="active-retrain: labelled pairs per step (16)")
    p.add_argument("--retrain-lr", type=float, default=1e-4, help="active-retrain: learning rate (1e-4)")
    p.add_argument(
        "--from-base",
        action="store_true",
        help="active-retrain: restart every round from the base weights (default: from the previous round's)",
    )
    p.add_argument("--max-length", type=int, default=256, help="active strategies: tokens per pair (256)")
    p.add_argument("--measure", default="nDCG@10", help="the measure runs are ranked by (default nDCG@10)")
    p.add_argument("--level", type=int, help="relevance level (default: the collection's)")
    p.add_argument("--seed", type=int, default=0, help="seeds the random order and the bootstrap (default 0)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--output", "-o", help="write the per-batch, per-run rows as CSV ('-': stdout)")
    p.set_defaults(func=run)


def _split_list(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError(f"{option}: expected comma-separated names, got {text!r}")
    return items


def _simulation_options(args: argparse.Namespace) -> tuple[list[str], tuple[float, float] | None]:
    """The checked ``--strategies`` and ``--band`` (and the positive counts), before any work starts."""
    from core.simulation import ACTIVE_STRATEGIES, STRATEGIES

    strategies = _split_list(args.strategies, "--strategies") or []  # the option has a default: never None
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"--strategies: unknown {', '.join(map(repr, unknown))}; known: {', '.join(STRATEGIES)}")
    active = [s for s in strategies if s in ACTIVE_STRATEGIES]
    if active and not args.model:
        raise ValueError(
            f"--model: the {active[0]} strategy needs a cross-encoder (a registered model name or a folder)"
        )
    band = None
    if args.band is not None:
        try:
            values = tuple(float(v) for v in args.band.split(","))
        except ValueError:
            values = ()
        if len(values) != 2:
            raise ValueError(f"--band must be two probabilities LOW,HIGH, e.g. 0.1,0.9; got {args.band!r}")
        band = (values[0], values[1])
    for option, value in (
        ("--depth", args.depth),
        ("--batch", args.batch),
        ("--resamples", args.resamples),
        ("--retrain-steps", args.retrain_steps),
        ("--retrain-batch", args.retrain_batch),
        ("--max-length", args.max_length),
    ):
        if value < 1:
            raise ValueError(f"{option} must be a positive integer, got {value}")
    if not args.retrain_lr > 0:
        raise ValueError(f"--retrain-lr must be a positive number, got {args.retrain_lr}")
    return strategies, band


def _print_simulation(args: argparse.Namespace, result) -> None:
    """The summary on stdout: Kendall tau per batch and strategy, pairs to reach the target, the model's savings."""
    from core.simulation import TAU_TARGET

    print(
        f"{args.collection}: {result.queries} judged queries, {result.pool_pairs} pooled pairs (depth "
        f"{result.depth}), {len(result.runs)} runs, {result.measure}, batches of {result.batch_size}; "
        f"Kendall tau against all labels:"
    )
    columns = result.strategies
    taus = {s: result.taus(s) for s in columns}
    print("\t".join(["batch", "pairs", *columns]))
    for b in range(max(len(t) for t in taus.values())):
        pairs = max(t[b][0] for t in taus.values() if b < len(t))
        cells = ["" if b >= len(taus[s]) else f"{taus[s][b][1]:.4f}" for s in columns]
        print("\t".join([str(b + 1), str(pairs), *cells]))
    reached = result.pairs_to_reach(TAU_TARGET)
    print(
        f"pairs to reach tau >= {TAU_TARGET}: "
        + ", ".join(f"{s} {'never' if n is None else n}" for s, n in reached.items())
    )
    _print_recall(result)
    for s, saved in result.saved.items():
        print(f"{s}: {saved} pairs labelled by the model instead of annotators ({result.model_wrong[s]} of them wrong)")
    for s, rounds in result.training_rounds.items():
        print(f"{s}: the model was fine-tuned {rounds} times (after every batch but the last; rule {result.rule})")


def _print_recall(result) -> None:
    """Recall of the pool's relevant pairs per batch and strategy, and the labels spent to find 90% of them."""
    print(f"recall of the {result.pool_relevant} relevant pooled pairs (found / relevant):")
    columns = result.strategies
    recalls = {s: result.recalls(s) for s in columns}
    print("\t".join(["batch", "pairs", *columns]))
    for b in range(max(len(r) for r in recalls.values())):
        pairs = max(r[b][0] for r in recalls.values() if b < len(r))
        cells = ["" if b >= len(recalls[s]) else f"{recalls[s][b][1]:.4f}" for s in columns]
        print("\t".join([str(b + 1), str(pairs), *cells]))
    found = result.pairs_to_recall(0.9)
    print("pairs to find 90% of them: " + ", ".join(f"{s} {'never' if n is None else n}" for s, n in found.items()))


def run(args: argparse.Namespace) -> int:
    from core.simulation import ACTIVE_STRATEGIES
    from pooljudge.simulation import RetrainSettings, simulate_collection

    strategies, band = _simulation_options(args)
    retrain = RetrainSettings(
        steps=args.retrain_steps,
        batch_size=args.retrain_batch,
        learning_rate=args.retrain_lr,
        max_length=args.max_length,
        from_base=args.from_base,
    )
    bar = tqdm(desc="simulating batches", disable=args.quiet, mininterval=0.5)
    model_bar = tqdm(
        desc="scoring pairs (active)",
        disable=args.quiet or not any(s in ACTIVE_STRATEGIES for s in strategies),
        mininterval=0.5,
    )

    def update(target: tqdm, done: int, total: int) -> None:
        target.total = total
        target.n = done
        target.refresh()

    try:
        result = simulate_collection(
            open_store(args),
            args.collection,
            qrels=args.qrels,
            runs=_split_list(args.runs, "--runs"),
            depth=args.depth,
            batch_size=args.batch,
            strategies=strategies,
            model=args.model,
            band=band,
            rule=args.rule,
            retrain=retrain,
            measure=args.measure,
            level=args.level,
            seed=args.seed,
            resamples=args.resamples,
            progress=lambda d, t: update(bar, d, t),
            model_progress=lambda d, t: update(model_bar, d, t),
        )
    finally:
        model_bar.close()
        bar.close()
    if args.output:
        with output(args.output) as out:
            out.write(result.to_csv())
    _print_simulation(args, result)
    if args.output and args.output != "-":
        print(f"wrote {len(result.rows) * len(result.runs)} rows to {args.output}", file=sys.stderr)
    return 0
