"""The ``pooljudge`` command line: the app's operations, headless.

Exit status 0 on success, 1 on bad input (the message names ``file:line``),
2 on bad usage.

One module per command, as ir_datasets does: ``add_parser(subparsers)`` registers it, ``run(args)`` carries it
out and returns the exit status; what several commands share lives in :mod:`pooljudge.cli.common`.  A new
command is a new module here and one line in ``COMMANDS`` (in ``--help`` order).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from core.errors import FormatError
from pooljudge.cli import (
    archive,
    archived,
    assign,
    collections_,
    db_,
    demo,
    eval_,
    export,
    formats,
    freeze,
    import_,
    index,
    job,
    leakage,
    level,
    lexicon,
    models,
    pool,
    rename,
    restore,
    retrieve,
    simulate_labelling,
    train,
    user,
)
from pooljudge.cli.common import UsageError, close_stores

COMMANDS = [
    import_,
    export,
    eval_,
    level,
    index,
    retrieve,
    pool,
    job,
    train,
    models,
    assign,
    freeze,
    leakage,
    simulate_labelling,
    user,
    archive,
    restore,
    rename,
    archived,
    collections_,
    demo,
    formats,
    db_,
    lexicon,
]


def build_parser() -> argparse.ArgumentParser:
    """The ``pooljudge`` parser: global options, then each of ``COMMANDS`` adds its subcommand."""
    parser = argparse.ArgumentParser(prog="pooljudge", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db",
        help="SQLite file or SQLAlchemy URL (default: $POOLJUDGE_DB_URL, $POOLJUDGE_DB, ~/.pooljudge/pooljudge.db)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``pooljudge`` command; return its exit status (bad input 1: the error on stderr, one line)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        parser.error(str(exc))  # exits with status 2, as argparse's own usage errors
    except FormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (LookupError, ValueError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as exc:  # an output folder that exists, a path we cannot write
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        close_stores()
