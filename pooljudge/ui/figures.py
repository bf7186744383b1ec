"""Plotly figures built from ``plotly.graph_objects``, for the charts a page redraws on every run of a tab.

``plotly.express`` builds the same bar chart in 100-150 ms of CPU (it infers a trace layout from a data frame,
then validates every property); the traces written out here take 7-10 ms.  Labels are drawn as plotly reads
them: callers pass stored text through :func:`pooljudge.ui.highlight.chart_text` first.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go


def grouped_bars(
    rows: Iterable[Mapping[str, Any]],
    *,
    x: str,
    y: str,
    colour: str,
    title: str,
    barmode: str = "group",
    x_order: Sequence[Hashable] | None = None,
    titles: Mapping[str, str] | None = None,
) -> go.Figure:
    """One bar trace per value of ``rows``' ``colour`` key (in order of appearance), ``x`` against ``y``.

    ``x_order`` fixes the order of the categories on the x axis (else their order of appearance); ``titles``
    renames the axis and legend titles, which are the keys themselves by default.
    """
    traces: dict[Any, tuple[list, list]] = {}
    for row in rows:
        xs, ys = traces.setdefault(row[colour], ([], []))
        xs.append(row[x])
        ys.append(row[y])
    names = {key: key for key in (x, y, colour)} | dict(titles or {})
    figure = go.Figure(
        [go.Bar(x=xs, y=ys, name=str(name)) for name, (xs, ys) in traces.items()],
        layout={
            "barmode": barmode,
            "title": {"text": title},
            "legend": {"title": {"text": names[colour]}},
            "xaxis": {"title": {"text": names[x]}, "type": "category"},
            "yaxis": {"title": {"text": names[y]}},
        },
    )
    if x_order is not None:
        figure.update_xaxes(categoryorder="array", categoryarray=list(x_order))
    return figure


def histogram(values: Sequence[float], *, bins: int, x_title: str, title: str) -> go.Figure:
    """How many of ``values`` fall in each of about ``bins`` equal bins (plotly picks round edges)."""
    return go.Figure(
        go.Histogram(x=list(values), nbinsx=bins),
        layout={
            "title": {"text": title},
            "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": "queries"}},
        },
    )


def share_heatmap(matrix: Sequence[Sequence[float | None]], *, labels: Sequence[str], title: str) -> go.Figure:
    """A square matrix of shares in [0, 1] with two decimals in its cells (None: a gap), row 0 at the top."""
    return go.Figure(
        go.Heatmap(
            z=[list(row) for row in matrix],
            x=list(labels),
            y=list(labels),
            zmin=0,
            zmax=1,
            texttemplate="%{z:.2f}",
            colorscale="Blues",
        ),
        layout={
            "title": {"text": title},
            "xaxis": {"type": "category", "side": "bottom"},
            "yaxis": {"type": "category", "autorange": "reversed"},
        },
    )
