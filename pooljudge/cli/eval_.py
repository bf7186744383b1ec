"""The `eval` command: a run against qrels, as trec_eval."""

from __future__ import annotations

import argparse
import sys

from pooljudge.cli.common import LARGE_GRADES_HELP, archived_notice, open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `eval` command: a run against qrels, as trec_eval."""
    p = sub.add_parser("eval", help="evaluate a run against qrels exactly as trec_eval would")
    p.add_argument(
        "qrels",
        help="TREC qrels file (or, with --collection, a qrels version name, 'latest', "
        "or 'live' for the current final labels)",
    )
    p.add_argument("run", help="TREC run file (or, with --collection, a run name)")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        help="MAP, MRR@k, RR, P@k, R@k, nDCG@k, nDCG_exp@k, Rprec, Success@k (= Accuracy@k), Judged@k; repeatable",
    )
    p.add_argument(
        "--level",
        type=int,
        help="binary measures count grade >= LEVEL as relevant (default: with "
        "--collection the collection's level, see `pooljudge level`; for files 1, as trec_eval; nDCG "
        "ignores it)",
    )
    # -p, not -q: the top-level -q is --quiet, and `pooljudge -q eval ... -q` read as two meanings of one flag
    p.add_argument("--per-query", "-p", action="store_true", help="also print one line per query")
    p.add_argument(
        "--intersection",
        action="store_true",
        help="evaluate only queries present in both qrels and run "
        "(default: qrels queries missing from the run score 0)",
    )
    p.add_argument("--format", choices=["tsv", "json"], default="tsv")
    p.add_argument("--digits", type=int, default=4, help="tsv: decimals (default 4, like trec_eval)")
    p.add_argument("--collection", "-c", help="read qrels and run from the store instead of files")
    p.add_argument("--allow-large-grades", action="store_true", help=LARGE_GRADES_HELP)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core import metrics

    measures = [metrics.parse_measure(m) for m in (args.measure or metrics.DEFAULT_MEASURES)]
    if args.collection:
        from db import queries as q
        from db.resolution import live_qrels

        with open_store(args).read() as session:
            archived_notice(session, args.collection, run=args.run, qrels=args.qrels)
            if args.qrels == "live":
                qrels = live_qrels(session, args.collection)
            else:
                qrels = q.stored_qrels(session, args.collection, None if args.qrels in ("-", "latest") else args.qrels)
            run = q.stored_run(session, args.collection, args.run)
            level = q.relevance_level(session, args.collection) if args.level is None else args.level
        if args.level is None and not args.quiet:
            # the pages show the same numbers at this level: say which one the numbers count from
            print(f"binary measures count grade >= {level} as relevant (the collection's level)", file=sys.stderr)
    else:
        from core.formats.trec import load_qrels, load_run
        from core.limits import allow_large_grades
        from db.importer import check_regular_input

        for path in (args.qrels, args.run):
            check_regular_input(path)  # as import: a FIFO would block forever
        with allow_large_grades(args.allow_large_grades):
            qrels = load_qrels(args.qrels)
        run = load_run(args.run)
        level = 1 if args.level is None else args.level  # trec_eval's default
    import warnings

    # evaluate's warnings (e.g. a grade that makes trec_eval allocate gigabytes) as one line, not Python's format
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = metrics.evaluate(qrels, run, measures, level=level, intersection=args.intersection)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.format == "json":
        print(metrics.format_json(results, per_query=args.per_query))
    else:
        sys.stdout.write(metrics.format_tsv(results, per_query=args.per_query, digits=args.digits))
    return 0
