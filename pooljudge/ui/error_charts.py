"""The error-analysis page's charts and tables, drawn from values the page read (no store access).

``views/errors.py`` reads the tags, categories and runs; the functions here draw them.  Category
names and usernames are stored text: charts get them through ``chart_text`` (plotly draws a few
HTML tags in labels), tables through ``st.dataframe``, which shows text verbatim.
"""

from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd
import plotly.express as px
import streamlit as st

from pooljudge.ui.common import blank_missing
from pooljudge.ui.error_dashboards import (
    GROUP_NAMES,
    category_metric_rows,
    category_metric_table,
    category_name,
    evidence_detector,
    evidence_summary,
    shorten,
)
from pooljudge.ui.highlight import chart_text

OWN_GROUP = "Your categories"


def distribution_chart(
    distribution: Mapping[str, int], names: Mapping[str, str], groups: Mapping[str, str], include: bool
) -> None:
    """Tagged pairs per category (a bar chart and its table); ``include``: suggested tags counted too."""
    frame = pd.DataFrame(
        [
            {"category": c, "name": names.get(c, c), "group": groups.get(c, OWN_GROUP), "pairs": n}
            for c, n in distribution.items()
        ]
    )
    chart = frame.assign(name=frame["name"].map(chart_text))  # plotly draws a few HTML tags in labels
    figure = px.bar(
        chart,
        x="name",
        y="pairs",
        color="group",
        text="pairs",
        category_orders={"group": list(GROUP_NAMES.values())},  # a group keeps its colour
        labels={"name": "category", "pairs": "(query, passage) pairs"},
        title="Tagged pairs per category" + (" (confirmed and suggested)" if include else " (confirmed)"),
    )
    # category, not a number axis, even for names like "2016"
    figure.update_layout(xaxis={"categoryorder": "total descending", "type": "category"})
    st.plotly_chart(figure, width="stretch", key="errors_distribution_chart")
    st.dataframe(frame, hide_index=True, width="stretch", key="errors_distribution_table")
    st.caption("A pair counts once per category, however many tags give it that category.")


def metric_chart(
    per_run: Mapping[str, Mapping[str, float]],
    by_query: Mapping[str, Any],
    names: Mapping[str, str],
    measure: str,
    runs: list[str],
) -> None:
    """``measure``'s mean per error category and run (DAPR, Figure 3): a grouped bar chart and its table."""
    rows = category_metric_rows(per_run, by_query)
    long = pd.DataFrame(
        [{**r, "name": chart_text(category_name(r["category"], names)), "run": chart_text(r["run"])} for r in rows]
    )
    figure = px.bar(
        long,
        x="name",
        y="mean",
        color="run",
        barmode="group",
        hover_data=["n"],
        labels={"name": "category", "mean": measure},
        title=f"{measure} per error category and run",
    )
    figure.update_xaxes(type="category")
    st.plotly_chart(figure, width="stretch", key="errors_metric_chart")
    table = pd.DataFrame(category_metric_table(rows, names))
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        key="errors_metric_table",
        column_config={run: st.column_config.NumberColumn(format="%.4f") for run in runs},
    )


def examples_table(
    shown: list[dict], pair_of: Callable[[dict], dict], names: Mapping[str, str], usernames: Mapping[int, str]
) -> None:
    """One row per tag in ``shown``, with its pair's texts (``pair_of``) and who or what gave it."""
    st.dataframe(
        blank_missing(
            pd.DataFrame(
                [  # a detector's tag has no "by", a pair may miss its texts
                    {
                        "tag": t["id"],
                        "query id": t["query_id"],
                        "query": pair_of(t).get("query"),
                        "passage id": t["doc_id"],
                        "passage": shorten(pair_of(t).get("text"), 120),
                        "category": names.get(t["category"], t["category"]),
                        "status": t["status"],
                        "source": "detector" if t["source"] == "auto" else "analyst",
                        "detector": evidence_detector(t["evidence"], t["category"]) or None,
                        "run": t["run"],
                        "evidence": evidence_summary(t["evidence"], t["category"]),
                        "by": usernames.get(t["user_id"]) if t["user_id"] is not None else None,
                        "created": t["created_at"],
                    }
                    for t in shown
                ]
            )
        ),
        hide_index=True,
        width="stretch",
        key="errors_examples",
    )


def own_categories_table(stored: Mapping[str, Any], used: Mapping[str, int]) -> None:
    """The collection's own categories, with how many tags use each."""
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "id": key,
                    "name": c.name,
                    "description": c.description,
                    "tags": used[key],
                    "by": c.created_by,
                    "created": c.created_at,
                }
                for key, c in stored.items()
            ]
        ),
        hide_index=True,
        width="stretch",
        key="errors_own_categories",
    )
