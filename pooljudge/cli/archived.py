"""The `archived` command: list what is archived."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `archived` command."""
    sub.add_parser(
        "archived", help="list archived collections, pools, runs and qrels versions (kind, collection, name, by, at)"
    ).set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.archive import list_items

    with open_store(args).read() as session:
        items = list_items(session, archived_only=True)
    if not items:
        print("nothing is archived")
    for i in items:  # stored names may hold control characters: printed escaped
        print(
            f"{i.kind}\t{display_name(i.collection or i.name)}\t{display_name(i.name)}\t"
            f"{display_name(i.archived_by or '')}\t{i.archived_at:%Y-%m-%d %H:%M} UTC"
        )
    return 0
