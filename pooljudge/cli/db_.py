"""The `db` command: store administration."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `db` command: store administration."""
    p = sub.add_parser("db", help="store administration")
    p.add_argument("action", choices=["upgrade"])
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)  # upgrading is part of opening the store
    print(f"store at {store.engine.url.render_as_string(hide_password=True)} is at the newest schema")
    return 0
