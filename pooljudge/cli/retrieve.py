"""The `retrieve` command: run a retriever over the queries."""

from __future__ import annotations

import argparse
import sys

from pooljudge.cli.common import RETRIEVER_HELP, StageBars, open_store, output


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `retrieve` command: run a retriever over the queries."""
    p = sub.add_parser("retrieve", help="run a retriever over a collection's queries")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--retriever", "-r", default="bm25", help=RETRIEVER_HELP)
    p.add_argument("--hits", type=int, default=100, help="hits per query (default 100)")
    p.add_argument("--name", help="run name (default derived from the retriever)")
    p.add_argument("--split", help="only the queries of this split")
    p.add_argument("--output", "-o", help="also write the run as a TREC file")
    p.add_argument("--no-store", action="store_true", help="do not store the run in the collection")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.formats.trec import write_run
    from db.importer import store_run
    from pooljudge.encoders import models_text
    from pooljudge.pipeline import check_new_run_name, retrieve
    from pooljudge.retrievers import RetrieverSpec

    store = open_store(args)
    spec = RetrieverSpec.parse(args.retriever)
    if not args.no_store:  # a taken or bad name is refused before minutes of indexing, not after
        check_new_run_name(store, args.collection, args.name or spec.default_name())
    bars = StageBars(args.quiet)
    name, run, config = retrieve(
        store, args.collection, spec, k=args.hits, name=args.name, split=args.split, progress=bars
    )
    bars.close()
    if args.output:
        with output(args.output) as out:
            write_run(run, out, tag=name)
    if not args.no_store:
        store_run(
            store,
            args.collection,
            name,
            run,
            params={"spec": spec.text, "k": args.hits, "split": args.split, "config": config},
        )
    models = models_text(config)
    print(
        f"run {name!r}: {sum(len(d) for d in run.values())} hits for {len(run)} queries"
        + ("" if args.no_store else f", stored in {args.collection!r}")
        + (f"; {models}" if models else ""),
        file=sys.stderr,
    )
    return 0
