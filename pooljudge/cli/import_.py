"""The `import` command: a collection, qrels or runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from tqdm import tqdm

from pooljudge.cli.common import LARGE_GRADES_HELP, open_store


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `import` command: a collection, qrels or runs."""
    from core.formats import FORMATS

    p = sub.add_parser("import", help="import a collection, qrels or runs (all or nothing, never blocking annotators)")
    p.add_argument("path", type=Path, help="file or folder to read (plain or .gz)")
    p.add_argument(
        "--format", "-f", required=True, choices=sorted(FORMATS), help="input format (see `pooljudge formats`)"
    )
    p.add_argument("--collection", "-c", required=True, help="collection to create (or merge into with --merge)")
    p.add_argument(
        "--merge",
        action="store_true",
        help="add to an existing collection: new records are added, identical ones skipped, conflicting ones refused",
    )
    p.add_argument(
        "--qrels-name", default="imported", help="qrels version that receives the judgments (default: imported)"
    )
    p.add_argument("--run-name", help="name of the run of a single-run file (default: the file name without extension)")
    p.add_argument(
        "--allow-unknown-ids",
        action="store_true",
        help="accept qrels and run entries naming queries or passages the collection lacks (TREC qrels may "
        "judge documents outside the corpus); by default they are refused, with their counts",
    )
    p.add_argument("--allow-large-grades", action="store_true", help=LARGE_GRADES_HELP)
    p.add_argument(
        "--level",
        type=int,
        help="relevance level of the new collection: binary measures count grade >= "
        "LEVEL as relevant (default: 1 when the qrels are binary 0/1, else 2)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from core.limits import allow_large_grades
    from db.importer import check_regular_input, import_path

    check_regular_input(args.path)  # a FIFO is refused before the store is even opened
    store = open_store(args)
    with tqdm(unit=" records", desc="reading", disable=args.quiet, mininterval=0.5) as bar:
        current = ["reading"]

        def progress(stage: str, done: int, total: int | None) -> None:
            if stage != current[0]:  # reading, checking (merges), writing: a bar each
                current[0] = stage
                bar.reset(total=total)
                bar.set_description(stage, refresh=False)
            bar.update(done - bar.n)

        # Parsed and validated outside the write lock, then written in short transactions: annotators
        # labelling meanwhile wait at most one chunk; on any error nothing is visible.
        with allow_large_grades(args.allow_large_grades):  # the readers are consumed inside import_path
            summary = import_path(
                store,
                args.format,
                args.path,
                name=args.collection,
                mode="merge" if args.merge else "create",
                qrels_name=args.qrels_name,
                progress=progress,
                allow_unknown_ids=args.allow_unknown_ids,
                level=args.level,
                run_name=args.run_name,
            )
    s = summary
    runs = ", ".join(f"{name!r} ({n} entries)" for name, n in s.runs.items()) or "none"
    unknown = [
        f"{n} {kind} id{'s' * (n != 1)}"
        for kind, n in (("query", s.unknown_query_ids), ("passage", s.unknown_passage_ids))
        if n
    ]
    print(
        f"collection {s.collection!r}: {s.passages_added} passages, {s.queries_added} queries, "
        f"{s.qrels_added} qrels entries added"
        + (
            f" ({s.passages_skipped} passages, {s.queries_skipped} queries, {s.qrels_skipped} qrels already present)"
            if args.merge
            else ""
        )
        + f"; runs: {runs}; relevance level {s.relevance_level}"
        + (f"; kept unknown {' and '.join(unknown)}" if unknown else "")
    )
    for note in s.notes:
        print(f"note: {note}")
    return 0
