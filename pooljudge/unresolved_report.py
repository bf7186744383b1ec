"""What `pooljudge freeze` and `pooljudge export qrels` say about the judged pairs they leave out.

Both commands write only pairs with a final label (the default, and they say
so); on stderr they print how many judged pairs have none, by reason
(:mod:`db.unresolved`).  ``--list-unresolved`` lists those pairs on stderr,
one tab-separated line each (query id, doc id, reason, labels, detail);
``export qrels --unresolved-median PATH`` writes the lower median of each
such pair's labels so far to a *separate* qrels file (the file is the
marker: its labels are not final), leaving the exported qrels as they are.
"""

from __future__ import annotations

import sys
from typing import TextIO

from sqlalchemy.orm import Session

from core.types import Qrels
from db.unresolved import as_rows, median_labels, summary, unresolved_pairs


def report(
    session: Session,
    collection: str,
    qrels: Qrels | None,
    kept: int,
    *,
    listing: bool = False,
    median_path: str | None = None,
    err: TextIO | None = None,
) -> int:
    """Print the summary (and the listing) on stderr, write the median file; returns the number left out."""
    err = err or sys.stderr
    pairs = unresolved_pairs(session, collection, qrels)
    print(summary(pairs, kept), file=err)
    if pairs and not listing:
        hint = "--list-unresolved lists them"
        if median_path is None and qrels is not None:
            hint += "; --unresolved-median PATH writes the median of their labels so far to a separate qrels file"
        print(hint, file=err)
    if listing:
        for row in as_rows(pairs):
            print("\t".join(row.values()), file=err)
    if median_path is not None:
        from core.formats import trec
        from core.formats._io import open_text_for_write

        guesses = median_labels(pairs)
        with open_text_for_write(median_path) as out:
            trec.write_qrels(guesses, out)
        n = sum(len(d) for d in guesses.values())
        print(f"wrote the median label of {n} unresolved pairs to {median_path} (not final labels)", file=err)
    return len(pairs)
