"""The `restore` command: show an archived collection, pool, run or qrels version again."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import add_item_arguments, item_label, open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `restore` command."""
    p = sub.add_parser("restore", help="show an archived collection, pool, run or qrels version again")
    add_item_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.archive import restore

    with open_store(args).write() as session:
        item = restore(session, args.kind, args.name, collection=args.collection)
    print(f"restored {item_label(args.kind)} '{display_name(item.name)}'")
    return 0
