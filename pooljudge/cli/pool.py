"""The `pool` command: pooling, selection, de-duplication and pre-labels."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pooljudge.cli.common import RETRIEVER_HELP, open_store

if TYPE_CHECKING:
    from pooljudge.pool_job import PoolResult


class _HelpWithKinds(argparse.Action):
    """``--help`` that ends with the registered retriever kinds and their declared options.

    The listing is built only when asked for: it imports every kind (and the store's models),
    which every other command line would otherwise pay for at start-up.
    """

    def __init__(self, option_strings: list[str], dest: str, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from pooljudge.retrievers.catalogue import retrievers_help

        parser.epilog = retrievers_help()
        parser.print_help()
        parser.exit()


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `pool` command: pooling, selection, de-duplication and pre-labels."""
    from core.pooling import DEFAULT_DEPTH, POOLING_METHODS  # read when the parser is built: a method is a choice

    p = sub.add_parser(
        "pool", help="pool runs (and new retrievers) into pairs to annotate, with provenance", add_help=False
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter  # the kinds' listing keeps one option a line
    p.add_argument("-h", "--help", action=_HelpWithKinds, help="show this help message and exit")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--name", required=True, help="pool name")
    p.add_argument("--retriever", "-r", action="append", help=RETRIEVER_HELP + "; repeatable (options below)")
    p.add_argument("--run", action="append", help="a stored run to pool; repeatable")
    p.add_argument("--hits", type=int, default=100, help="hits per new retriever (default 100)")
    p.add_argument(
        "--method",
        choices=list(POOLING_METHODS),
        default="depth",
        help="depth: top-k union (TREC); take: Take@N, a budget of --size per query filled rank by rank; "
        "rrf/rbp: the --size best documents by fused priority",
    )
    p.add_argument(
        "--depth",
        type=int,
        default=DEFAULT_DEPTH,
        help=f"depth pooling: top DEPTH of every run (default {DEFAULT_DEPTH})",
    )
    p.add_argument("--size", type=int, help="take/rrf/rbp pooling: pool size per query (default: --depth)")
    p.add_argument(
        "--select",
        type=int,
        help="keep the top N per query by the ensemble of the pooled runs (default: annotate everything)",
    )
    p.add_argument(
        "--select-model",
        action="append",
        metavar="MODEL",
        help="with --select: rank the pool by this cross-encoder (folder or registered name) instead of "
        "the runs; repeatable, an ensemble of min-max normalised scores (DuReader-retrieval)",
    )
    p.add_argument(
        "--select-method",
        choices=["top", "active"],
        default="top",
        help="active: annotate only the pairs --active-model is unsure about (T2Ranking 4.4)",
    )
    p.add_argument(
        "--active-model", metavar="MODEL", help="the cross-encoder of active selection (folder or registered name)"
    )
    p.add_argument(
        "--active-band",
        metavar="LOW,HIGH",
        help="active selection keeps pairs with probability in [LOW, HIGH] (default 0.1,0.9)",
    )
    p.add_argument("--dedupe", help="near-duplicate removal: similarity:0.95 (cosine) or ward:0.3 (distance)")
    p.add_argument("--prelabel", action="store_true", help="span-F1 pre-labels for queries with answers")
    p.add_argument("--split", help="only the queries of this split")
    p.set_defaults(func=run)


def _pool_params(args: argparse.Namespace):
    """The pooling job's :class:`pooljudge.pool_params.PoolJobParams` from the command line."""
    from pooljudge.pool_params import Dedupe, PoolJobParams

    return PoolJobParams(
        collection=args.collection,
        name=args.name,
        retrievers=args.retriever or [],
        runs=args.run or [],
        k=args.hits,
        method=args.method,
        depth=args.depth,
        size=args.size,
        select=args.select,
        dedupe=Dedupe.parse(args.dedupe) if args.dedupe else None,
        prelabel=args.prelabel,
        split=args.split,
        **_selection_params(args),
    )


def _selection_params(args: argparse.Namespace) -> dict:
    """--select-model / --select-method active --active-model --active-band as pooling job parameters."""
    params: dict = {}
    if args.select_model:
        params["select_by"] = args.select_model
    if args.select_method == "active":
        params |= {"select_method": "active", "active_model": args.active_model}
        if args.active_band:
            try:
                low, high = (float(v) for v in args.active_band.split(","))
            except ValueError:
                raise ValueError(f"--active-band must be LOW,HIGH, e.g. 0.1,0.9; got {args.active_band!r}") from None
            params["active_band"] = [low, high]
    elif args.active_model or args.active_band:
        raise ValueError("--active-model and --active-band go with --select-method active")
    return params


def run(args: argparse.Namespace) -> int:
    from db.jobs import create_job
    from db.queries import collection_id
    from pooljudge.jobs import run_job
    from pooljudge.pool_params import check_pool_params

    store = open_store(args)
    params = _pool_params(args)
    check_pool_params(store, params)  # every name, before a job is queued (the job checks them again)
    with store.write() as session:
        job_id = create_job(session, "pool", params, collection_id=collection_id(session, args.collection))
    result = run_job(store, job_id, echo=None if args.quiet else (lambda m: print(m, file=sys.stderr)))
    _print_result(result, job_id)
    return 0


def _print_result(result: PoolResult, job_id: int) -> None:
    print(
        f"pool {result.pool!r} (job {job_id}): {result.pairs} pairs over {result.queries} queries from "
        f"{', '.join(result.runs)}; {result.selected} selected for annotation, {result.duplicates} near-duplicates "
        f"removed, {result.prelabels} pre-labels"
        + (f"; {result.missing_documents} pooled documents are not in the store" if result.missing_documents else "")
    )
    if result.active is not None:
        a = result.active
        print(
            f"active selection: kept {a.kept} of {a.pairs} pairs, saved {a.saved} "
            f"({a.confident_relevant} confidently relevant, {a.confident_irrelevant} confidently not; "
            f"band [{a.band[0]:g}, {a.band[1]:g}])"
        )
