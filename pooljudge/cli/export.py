"""The `export` command: qrels, a run, judgments or a BEIR folder."""

from __future__ import annotations

import argparse
import json
import sys

from pooljudge.cli.common import (
    UsageError,
    add_unresolved_flags,
    archived_notice,
    open_store,
    output,
    report_unresolved,
)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `export` command: qrels, a run, judgments or a BEIR folder."""
    p = sub.add_parser("export", help="export qrels, a run, judgments or a BEIR folder")
    p.add_argument("what", choices=["qrels", "run", "judgments", "beir"])
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--output", "-o", help="output file or folder ('-' or omitted: stdout; required for beir)")
    p.add_argument("--version", help="qrels version (default: the newest)")
    p.add_argument(
        "--level",
        type=int,
        help="qrels: write binary labels, 1 where grade >= LEVEL (default: the "
        "graded labels as stored; `pooljudge level -c NAME` prints the level the measures use)",
    )
    p.add_argument("--run", help="run: the run's name")
    p.add_argument("--tag", help="run: the tag column (default: the run name)")
    p.add_argument("--depth", type=int, help="run: keep the top DEPTH per query")
    p.add_argument("--with-runs", action="store_true", help="beir: also write runs/*.trec")
    add_unresolved_flags(p)
    p.add_argument(
        "--unresolved-median",
        metavar="PATH",
        help="qrels: also write the judged pairs without a final label, each with the lower median of its labels "
        "so far, to this separate qrels file (the qrels written above keep resolved pairs only)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.formats import trec
    from db import queries as q

    if args.what == "run" and not args.run:
        raise UsageError("export run needs --run NAME")
    if args.what == "beir" and not args.output:
        raise UsageError("export beir needs --output FOLDER")
    store = open_store(args)
    with store.read() as session:
        archived_notice(session, args.collection, run=args.run, qrels=args.version)
        if args.what == "qrels":
            # binary only when asked: the graded labels are the data, the level is how measures read them
            level = None if args.level is None else q.check_relevance_level(args.level, "--level")
            qrels = q.stored_qrels(session, args.collection, args.version)
            with output(args.output) as out:
                trec.write_qrels(qrels, out, level=level)
            report_unresolved(args, session, qrels)
        elif args.what == "run":
            run = q.stored_run(session, args.collection, args.run)
            with output(args.output) as out:
                trec.write_run(run, out, tag=args.tag or args.run, depth=args.depth)
        elif args.what == "judgments":
            with output(args.output) as out:
                for row in q.iter_judgments(session, args.collection):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
        elif args.what == "beir":
            from core.formats.beir import write_beir

            q.collection_id(session, args.collection)  # raises NotFound naming the known collections
            info = next(c for c in q.list_collections(session) if c.name == args.collection)
            runs = (
                {name: q.stored_run(session, args.collection, name) for name in info.runs} if args.with_runs else None
            )
            write_beir(
                args.output,
                q.iter_passages(session, args.collection),
                q.iter_queries(session, args.collection),
                q.stored_qrels(session, args.collection, args.version),
                runs,
            )
            print(f"wrote BEIR folder {args.output}", file=sys.stderr)
    return 0
