"""The `level` command: show or set a collection's relevance level."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `level` command: show or set a collection's relevance level."""
    p = sub.add_parser("level", help="show or set a collection's relevance level (the default of eval and the pages)")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument(
        "level",
        nargs="?",
        type=int,
        help="the new level: binary measures count grade >= LEVEL as "
        "relevant (TREC-style binary qrels 1, 0-3 graded 2); omitted: print the current one",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from db import queries as q

    store = open_store(args)
    if args.level is None:
        with store.read() as session:
            print(q.relevance_level(session, args.collection))
        return 0
    with store.write() as session:
        previous = q.set_relevance_level(session, args.collection, args.level)
    print(
        f"relevance level of {args.collection!r}: {previous} -> {args.level} (binary measures count grade >= "
        f"{args.level} as relevant)"
    )
    return 0
