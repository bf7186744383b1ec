"""The `collections` command: list the collections in the store."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `collections` command."""
    sub.add_parser("collections", help="list collections in the store").set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.queries import list_collections

    with open_store(args).read() as session:
        rows = list_collections(session)
    if not rows:
        print("no collections (import one with `pooljudge import`, or load the demo with `pooljudge demo`)")
    for c in rows:
        # names stored before they were checked may hold newlines or terminal escape codes: never print them raw
        runs = ", ".join(display_name(r) for r in c.runs)
        versions = ", ".join(display_name(v) for v in c.qrels_versions)
        print(
            f"{display_name(c.name)}\t{c.language or '?'}\t{c.passages} passages\t{c.queries} queries\t"
            f"level {c.relevance_level}\truns: {runs or '-'}\tqrels: {versions or '-'}"
        )
    return 0
