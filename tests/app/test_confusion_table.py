"""The Agreement tab's confusion matrix: an HTML table shaded by count (a plotly heatmap cost the tab's every
draw 100-150 ms of the browser's script time and its first draw the plotly bundle; a pandas Styler in
``st.table`` cost the page's run 50-70 ms)."""

import re

from pooljudge.ui.review_agreement import confusion_html

LIGHT = "background:#f7fbff;color:#31333f"


def matrix_of(html: str) -> tuple[list[str], list[list[int]], list[list[str]]]:
    """``(column headers, counts by row, cell styles by row)`` of a table :func:`confusion_html` wrote."""
    head = re.search(r"<thead>(.*?)</thead>", html).group(1)
    rows = re.findall(r"<tr><th>(\d+)</th>(.*?)</tr>", re.search(r"<tbody>(.*?)</tbody>", html).group(1))
    cells = [re.findall(r'<td style="([^"]*)">(\d+)</td>', body) for _grade, body in rows]
    return (
        re.findall(r"<th>(\d*)</th>", head),
        [[int(n) for _style, n in row] for row in cells],
        [[style for style, _n in row] for row in cells],
    )


def test_the_matrix_keeps_its_counts_and_grades_in_order():
    headers, counts, _ = matrix_of(confusion_html([[5, 1, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 3, 10]]))
    assert headers == ["", "0", "1", "2", "3"]
    assert counts == [[5, 1, 0, 0], [0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 3, 10]]


def test_cells_are_shaded_by_their_share_of_the_largest_count():
    _, _, styles = matrix_of(confusion_html([[0, 5], [10, 0]]))
    assert styles[0][0] == styles[1][1] == LIGHT  # nothing: the lightest blue
    assert styles[1][0] == "background:#08519c;color:#ffffff"  # the largest count: the darkest, white text
    assert styles[0][1] == "background:#80a6ce;color:#31333f"  # half of it: halfway between the two


def test_an_empty_matrix_is_all_light():
    _, counts, styles = matrix_of(confusion_html([[0, 0], [0, 0]]))
    assert counts == [[0, 0], [0, 0]] and {s for row in styles for s in row} == {LIGHT}
