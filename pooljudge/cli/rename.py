"""The `rename` command: rename a collection, pool, run or qrels version."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import add_item_arguments, item_label, open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `rename` command."""
    p = sub.add_parser("rename", help="rename a collection, pool, run or qrels version")
    add_item_arguments(p, new=True)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.archive import rename

    with open_store(args).write() as session:
        rename(session, args.kind, args.name, args.new, collection=args.collection)
    print(f"renamed {item_label(args.kind)} '{display_name(args.name)}' to '{display_name(args.new)}'")
    return 0
