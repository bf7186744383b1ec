"""The figures the Review tabs and the Pooling page draw on every run (``pooljudge.ui.figures``): the traces, orders and titles that
``plotly.express`` gave them."""

from __future__ import annotations

from pooljudge.ui.figures import grouped_bars, histogram, share_heatmap


def test_grouped_bars_has_one_trace_per_colour_in_order_of_appearance():
    rows = [
        {"day": "2026-11-02", "who": "b", "n": 3},
        {"day": "2026-11-01", "who": "a", "n": 1},
        {"day": "2026-11-02", "who": "a", "n": 2},
    ]
    figure = grouped_bars(rows, x="day", y="n", colour="who", title="T", titles={"n": "labels"})
    assert [(t.name, list(t.x), list(t.y)) for t in figure.data] == [
        ("b", ["2026-11-02"], [3]),
        ("a", ["2026-11-01", "2026-11-02"], [1, 2]),
    ]
    layout = figure.layout
    assert (layout.barmode, layout.title.text, layout.legend.title.text) == ("group", "T", "who")
    assert (layout.xaxis.title.text, layout.yaxis.title.text, layout.xaxis.type) == ("day", "labels", "category")
    assert layout.xaxis.categoryarray is None  # order of appearance


def test_grouped_bars_keeps_a_fixed_category_order():
    rows = [{"g": "excluded", "m": "majority", "n": 1}, {"g": "0", "m": "majority", "n": 4}]
    figure = grouped_bars(rows, x="g", y="n", colour="m", title="T", barmode="relative", x_order=["0", "1", "excluded"])
    assert figure.layout.barmode == "relative"
    assert (figure.layout.xaxis.categoryorder, list(figure.layout.xaxis.categoryarray)) == (
        "array",
        ["0", "1", "excluded"],
    )


def test_histogram_bins_the_values_with_the_given_titles():
    figure = histogram([3, 10, 10, 7], bins=30, x_title="pooled", title="Pool size per query")
    [bars] = figure.data
    assert (bars.type, list(bars.x), bars.nbinsx) == ("histogram", [3, 10, 10, 7], 30)
    assert (figure.layout.title.text, figure.layout.xaxis.title.text) == ("Pool size per query", "pooled")


def test_share_heatmap_is_square_on_zero_to_one_with_two_decimals_and_gaps():
    figure = share_heatmap([[1.0, 0.25], [0.25, None]], labels=["bm25", "e5"], title="Overlap")
    [heat] = figure.data
    assert [list(r) for r in heat.z] == [[1.0, 0.25], [0.25, None]]
    assert (list(heat.x), list(heat.y), heat.zmin, heat.zmax) == (["bm25", "e5"], ["bm25", "e5"], 0, 1)
    assert heat.texttemplate == "%{z:.2f}" and figure.layout.yaxis.autorange == "reversed"
    assert (figure.layout.xaxis.type, figure.layout.yaxis.type) == ("category", "category")
