"""The Review page's tables and their cell texts, drawn from values the page computed (no store access).

The page (``views/review.py``) reads each table in the background (``pooljudge.ui.background``) and
hands it to one function here per table; the column formats are shared with the page's own tables.
"""

import math
from typing import Any

import pandas as pd
import streamlit as st

from core.scale import GRADES
from pooljudge.ui.common import show_rows
from pooljudge.ui.figures import grouped_bars
from pooljudge.ui.highlight import chart_text

STATS = [
    "Fleiss κ",
    "Cohen κ",
    "Cohen κ quadratic",
    "Krippendorff α",
    "unanimity",
    "agrees with majority",
    "mean |label - majority|",
    "mean label",
    "accuracy",
    "last accuracy",
]
FORMAT = {name: st.column_config.NumberColumn(format="%.3f") for name in STATS}
FORMAT["median seconds / item"] = st.column_config.NumberColumn(format="%.1f")


def stat(value: float | None, digits: int = 3) -> str:
    """A statistic for a metric tile: ``n/a`` when there is none (too few labels)."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def labels_text(labels: dict[str, int]) -> str:
    """``user: grade, ...``: the labels of one pair, in one cell."""
    return ", ".join(f"{user}: {grade}" for user, grade in labels.items())


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``1 final label``, ``2,000 final labels``)."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def final_text(grade: int | None, method: str | None) -> str | None:
    """A final label and how it was reached (``2 (majority)``, ``excluded (override)``); None when none yet."""
    return None if method is None else f"{'excluded' if grade is None else grade} ({method})"


def queue_table(queue: list) -> None:
    """The pairs waiting for a 4th annotator."""
    if queue:
        show_rows(
            [
                {
                    "query": p.qid,
                    "passage": p.docid,
                    "labels": labels_text(p.labels),
                    "4th annotator": p.fourth or "-",
                }
                for p in queue
            ],
            column_config=FORMAT,
        )
    else:
        st.caption("No pair is waiting for a 4th label.")


def excluded_table(excluded: list) -> None:
    """The pairs excluded from the final labels, with the method and reason."""
    if excluded:
        show_rows(
            [
                {
                    "query": p.qid,
                    "passage": p.docid,
                    "labels": labels_text(p.labels),
                    "method": p.method,
                    "reason": p.reason,
                }
                for p in excluded
            ],
            column_config=FORMAT,
        )
    else:
        st.caption("No excluded pairs.")


def qc_tables(packages: list, rounds: list) -> None:
    """The packages and every QC round."""
    st.subheader("Packages")
    if packages:
        show_rows(
            [
                {
                    "package": p.name,
                    "annotator": p.annotator,
                    "pool": p.pool,
                    "status": p.status,
                    "labelled": p.labelled,
                    "total": p.total,
                    "QC rounds": p.rounds,
                    "last accuracy": p.last_accuracy,
                }
                for p in packages
            ],
            column_config=FORMAT,
        )
    else:
        st.caption("No packages yet: create assignments on the Admin page.")
    st.subheader("QC rounds (every round kept)")
    if rounds:
        show_rows(
            [
                {
                    "package": r.package,
                    "annotator": r.annotator,
                    "round": r.round_no,
                    "status": r.status,
                    "sample": r.sample_size,
                    "threshold": r.threshold,
                    "accuracy": r.accuracy,
                    "checked": r.n_checked,
                    "reviewed": labels_text(r.reviewed),
                    "started": r.created_at,
                    "decided": r.decided_at,
                }
                for r in rounds
            ],
            column_config=FORMAT,
        )
    else:
        st.caption("No QC rounds yet.")


def throughput_tables(work: Any) -> None:
    """Labels per annotator per day, and each annotator's counts."""
    if not work.daily:
        st.caption("No labels yet.")
    else:
        # usernames are stored text: plotly would draw their HTML in the legend
        daily = [
            {"annotator": chart_text(row.annotator), "day": row.day.isoformat(), "labels": row.labels}
            for row in work.daily
        ]
        st.plotly_chart(
            grouped_bars(daily, x="day", y="labels", colour="annotator", title="Labels per annotator per day (UTC)"),
            width="stretch",
            key="throughput_chart",
        )
    if work.annotators:
        show_rows(
            [
                {
                    "annotator": a,
                    "label events": r.labels,
                    "pairs labelled": r.pairs,
                    "QC labels": r.qc_labels,
                    "median seconds / item": r.median_seconds,
                    "skips": r.skips,
                    "flags": r.flags,
                    "undos": r.undos,
                }
                for a, r in work.annotators.items()
            ],
            column_config=FORMAT,
        )


def flagged_table(flagged: list) -> None:
    """The flagged items."""
    if flagged:
        show_rows(flagged)  # pandas reads dataclasses
    else:
        st.caption("Nothing flagged.")


def labels_tables(dist: Any) -> None:
    """The final labels: counts by grade, by method, and a chart of both."""
    grade_cols = st.columns(len(GRADES) + 2)
    for col, (g, n) in zip(grade_cols, dist.by_grade.items()):
        col.metric(f"Grade {g}", f"{n:,}")
    grade_cols[-2].metric("Excluded", f"{dist.excluded:,}")
    grade_cols[-1].metric("Pending", f"{dist.pending:,}", help="labelled pairs without a final label yet")
    st.dataframe(pd.DataFrame([{"method": m, "pairs": n} for m, n in dist.by_method.items()]), hide_index=True)
    if dist.cells:
        cells = [{**c, "grade": "excluded" if c["grade"] is None else str(c["grade"])} for c in dist.cells]
        st.plotly_chart(
            grouped_bars(
                cells,
                x="grade",
                y="pairs",
                colour="method",
                barmode="relative",
                title="Final labels by grade and method",
                x_order=[*map(str, GRADES), "excluded"],
            ),
            width="stretch",
            key="labels_chart",
        )
