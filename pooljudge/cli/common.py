"""What the ``pooljudge`` commands share: the store, output, progress bars, help texts, notes."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tqdm import tqdm

if TYPE_CHECKING:
    from db.engine import Store

# the stores this command opened: main() closes their connections when the command ends, so that a process
# running several commands (a script, the tests) holds no connection, file or lock of an earlier one
_OPENED: list[Store] = []


def open_store(args: argparse.Namespace) -> Store:
    """The store ``--db`` names (a SQLite file or a URL), upgraded to the newest schema, stale imports dropped."""
    from db import opening
    from db.engine import sqlite_url

    target = args.db
    if target and "://" not in target:
        target = sqlite_url(target)
    store = opening.open_store(target)
    _OPENED.append(store)
    return store


def close_stores() -> None:
    """Close the connections of every store :func:`open_store` opened (``main`` calls it when a command ends)."""
    while _OPENED:
        _OPENED.pop().dispose()


def output(path: str | None):
    """A text file to write, or stdout for ``-`` or no path (stdout is flushed, never closed)."""
    from core.formats._io import open_text_for_write

    return open_text_for_write(path) if path and path != "-" else Stdout()


class Stdout:
    """Stdout as a context manager that flushes it and leaves it open."""

    def __enter__(self):
        return sys.stdout

    def __exit__(self, *exc):
        sys.stdout.flush()
        return False


class StageBars:
    """tqdm bars for the stages of a long operation: one bar per stage label."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bars: dict[str, tqdm] = {}

    def __call__(self, label: str):
        def update(done: int, total: int | None) -> None:
            bar = self.bars.get(label)
            if bar is None:
                bar = self.bars[label] = tqdm(total=total, desc=label, disable=self.quiet, mininterval=0.5)
            if total is not None and bar.total != total:
                bar.total = total
            bar.n = done
            bar.refresh()

        return update

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


RETRIEVER_HELP = (
    "retriever spec: bm25, bm25:chinese=bigram,k1=1.2, bm25:backend=rank_bm25, dense, "
    "dense:model=PATH,pooling=cls,index=hnsw, hybrid:fusion=rrf, "
    "rerank:model=PATH,first=bm25,depth=100 (a cross-encoder re-ranking the first stage; "
    "model=PATH1;PATH2 an ensemble; a model may be a registered model's name)"
)


LARGE_GRADES_HELP = (
    "read qrels grades beyond -1000..1000 (by default refused at file:line: such a grade is usually a score or an "
    "id in the grade column); eval still refuses grades whose levels trec_eval could not allocate"
)


def add_unresolved_flags(p: argparse.ArgumentParser) -> None:
    """``--list-unresolved``, shared by `export` and `freeze`."""
    p.add_argument(
        "--list-unresolved",
        action="store_true",
        help="list the judged pairs without a final label on stderr (query id, doc id, reason, labels, detail)",
    )


def report_unresolved(args: argparse.Namespace, session, qrels) -> None:
    """On stderr: the judged pairs left out (no final label), by reason; listed or median-labelled when asked."""
    from pooljudge.unresolved_report import report

    kept = sum(len(docs) for docs in qrels.values()) if qrels is not None else None
    if kept is None:
        from db.resolution import live_qrels

        kept = sum(len(docs) for docs in live_qrels(session, args.collection).values())
    report(
        session,
        args.collection,
        qrels,
        kept,
        listing=args.list_unresolved,
        median_path=getattr(args, "unresolved_median", None),
    )


def archived_notice(session, collection: str, *, run: str | None = None, qrels: str | None = None) -> None:
    """A note on stderr when the collection (or the run or qrels version) read by name is archived."""
    from db.archive_state import archived_note

    note = archived_note(session, collection, run=run, qrels=qrels)
    if note:
        print(f"note: {note}", file=sys.stderr)


def add_item_arguments(p: argparse.ArgumentParser, *, new: bool = False) -> None:
    """The arguments of `archive`, `restore` and `rename`: the kind, the name (and the new name), -c."""
    p.add_argument("kind", choices=["collection", "pool", "run", "qrels"])
    p.add_argument("name", help="its current name")
    if new:
        p.add_argument("new", help="the new name")
    p.add_argument("--collection", "-c", help="the collection a pool, run or qrels version belongs to")


def item_label(kind: str) -> str:
    """How `archive`, `restore` and `rename` name a kind in their messages."""
    return "qrels version" if kind == "qrels" else kind


class UsageError(Exception):
    """Bad usage a command finds after parsing: ``main`` reports it as argparse does (usage, exit status 2)."""
