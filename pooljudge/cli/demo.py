"""The `demo` command: load the bundled bilingual demo collection."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `demo` command."""
    sub.add_parser("demo", help="load the bundled bilingual demo collection").set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pooljudge.seed import DEMO_NAME, ensure_demo

    store = open_store(args)
    loaded = ensure_demo(store, force=True)
    print(f"demo collection {DEMO_NAME!r} " + ("loaded" if loaded else "already present"))
    return 0
