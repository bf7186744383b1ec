"""The `freeze` command: snapshot the final labels."""

from __future__ import annotations

import argparse

from pooljudge.cli.common import add_unresolved_flags, open_store, report_unresolved


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `freeze` command: snapshot the final labels."""
    p = sub.add_parser("freeze", help="snapshot the current final labels as a named qrels version")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--note")
    add_unresolved_flags(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from db.resolution import freeze_qrels

    with open_store(args).write() as session:
        n = freeze_qrels(session, args.collection, args.name, note=args.note or "")
    print(f"qrels version {args.name!r}: {n} final labels")
    with open_store(args).read() as session:
        report_unresolved(args, session, None)
    return 0
