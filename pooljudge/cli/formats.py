"""The `formats` command: list the import formats."""

from __future__ import annotations

import argparse


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `formats` command."""
    sub.add_parser("formats", help="list import formats").set_defaults(func=run)


def run(_args: argparse.Namespace) -> int:
    from core.formats import FORMATS

    for spec in FORMATS.values():
        print(f"{spec.name:12s} {spec.help}")
    return 0
