"""The `assign` command: give a pool's pairs to annotators."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `assign` command: give a pool's pairs to annotators."""
    p = sub.add_parser("assign", help="give a pool's selected pairs to annotators (3 each by default), in packages")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--pool", required=True)
    p.add_argument("--annotators", help="comma-separated usernames (default: every active annotator)")
    p.add_argument("--per-pair", type=int, default=3)
    p.add_argument("--package-size", type=int, default=1000)
    p.add_argument("--group-by-query", action="store_true", help="show one query's passages consecutively")
    p.add_argument("--binary", action="store_true", help="binary scale (relevant or not) instead of 0-3")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from db.assignments import create_assignments

    annotators = [a.strip() for a in args.annotators.split(",")] if args.annotators else None
    with open_store(args).write() as session:
        summary = create_assignments(
            session,
            args.collection,
            args.pool,
            annotators=annotators,
            per_pair=args.per_pair,
            seed=args.seed,
            package_size=args.package_size,
            group_by_query=args.group_by_query,
            scale="binary" if args.binary else "graded",
        )
    loads = ", ".join(f"{name} {n}" for name, n in sorted(summary.per_annotator.items())) or "nothing new"
    print(
        f"{summary.pairs} selected pairs; {summary.tasks} new assignments ({loads}) in {len(summary.packages)} packages"
    )
    return 0
