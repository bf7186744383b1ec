"""The Agreement tab's confusion matrix: a table shaded by count (a plotly heatmap cost the tab's every draw
100-150 ms of the browser's script time and the first draw the plotly bundle)."""

from pooljudge.ui.review_agreement import confusion_table


def _css(styler) -> dict[tuple[int, int], str]:
    styler._compute()
    return {cell: ";".join(f"{k}:{v}" for k, v in props) for cell, props in styler.ctx.items()}


def test_the_matrix_keeps_its_counts_and_grades_in_order():
    styler = confusion_table([[5, 1, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 3, 10]])
    assert styler.data.to_numpy().tolist() == [[5, 1, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 3, 10]]
    assert list(styler.data.index) == list(styler.data.columns) == ["0", "1", "2", "3"]


def test_cells_are_shaded_by_their_share_of_the_largest_count():
    css = _css(confusion_table([[0, 5], [10, 0]]))
    assert css[(0, 0)] == css[(1, 1)] == "background-color:#f7fbff;color:#31333f"  # nothing: the lightest blue
    assert css[(1, 0)] == "background-color:#08519c;color:#ffffff"  # the largest count: the darkest, white text
    assert css[(0, 1)] == "background-color:#80a6ce;color:#31333f"  # half of it: halfway between the two


def test_an_empty_matrix_is_all_light():
    css = _css(confusion_table([[0, 0], [0, 0]]))
    assert set(css.values()) == {"background-color:#f7fbff;color:#31333f"}
