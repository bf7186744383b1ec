"""The `archive` command: hide a collection, pool, run or qrels version (nothing is deleted)."""

from __future__ import annotations

import argparse
import getpass

from pooljudge.cli.common import add_item_arguments, item_label, open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `archive` command."""
    p = sub.add_parser("archive", help="hide a collection, pool, run or qrels version (nothing is deleted)")
    add_item_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.archive import archive

    with open_store(args).write() as session:
        # no account signs a CLI call: the system user is recorded, marked as such
        item = archive(session, args.kind, args.name, collection=args.collection, by=f"{getpass.getuser()} (cli)")
    print(
        f"archived {item_label(args.kind)} '{display_name(item.name)}' (hidden, nothing deleted; undo with "
        "`pooljudge restore`)"
    )
    return 0
