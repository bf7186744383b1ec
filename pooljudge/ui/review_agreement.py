"""The Review page's Agreement tab, drawn from the agreement table (``pooljudge.dashboard_tables``).

Nothing here reads the store or computes a statistic: the page hands in the report computed in the
background, confusion matrices included.
"""

from collections.abc import Sequence

import streamlit as st

from core.scale import GRADES
from pooljudge.ui.common import show_rows
from pooljudge.ui.highlight import show_text
from pooljudge.ui.review_tables import FORMAT, stat

VIEWS = {"graded": "graded 0-3", "binary_ge1": "binary (>= 1)", "binary_ge2": "binary (>= 2)"}


def agreement_tab(report: dict | None) -> None:
    """The Agreement tab: the overall, per-annotator and per-query agreement, and a confusion matrix
    (``report``: :func:`core.agreement.agreement_report` of the standing labels, None without any)."""
    if report is None:
        st.info("No labels in this collection yet.")
        return
    graded = report["overall"]["graded"]
    cols = st.columns(4)
    cols[0].metric("Fleiss κ", stat(graded["fleiss_kappa"]))
    cols[1].metric("Cohen κ (mean)", stat(graded["cohen_kappa"]))
    cols[2].metric("Cohen κ (quadratic)", stat(graded["cohen_kappa_quadratic"]))
    cols[3].metric("Krippendorff α (ordinal)", stat(graded["krippendorff_alpha_ordinal"]))
    st.caption(
        f"{report['n_judgments']:,} standing labels on {report['n_items']:,} pairs by {report['n_annotators']} "
        "annotators (labelling assignments only; QC reviews are not included). Cohen κ is the mean over "
        "annotator pairs weighted by shared pairs; Fleiss κ uses the pairs with three labels (a 4th, "
        "adjudicating label is left out)."
    )
    show_rows(
        [
            {
                "labels": VIEWS.get(name, name),
                "Fleiss κ": s["fleiss_kappa"],
                "Cohen κ": s["cohen_kappa"],
                "Cohen κ quadratic": s["cohen_kappa_quadratic"],
                "Krippendorff α": s["krippendorff_alpha_ordinal"],
                "unanimity": s["unanimity"],
                "pairs with 2+ labels": s["n_items"],
                "Fleiss pairs": s["fleiss_n_items"],
            }
            for name, s in report["overall"].items()
        ],
        column_config=FORMAT,
    )
    agreement_breakdown(report)
    confusion_view(report)


def agreement_breakdown(report: dict) -> None:
    st.subheader("Per annotator")
    show_rows(
        [
            {
                "annotator": a,
                "pairs": r["n_items"],
                "Cohen κ": r["cohen_kappa"],
                "Cohen κ quadratic": r["cohen_kappa_quadratic"],
                "agrees with majority": r["majority_agreement"],
                "mean |label - majority|": r["majority_mean_abs_diff"],
                "mean label": r["mean_label"],
                **{f"label {g}": r["label_counts"][g] for g in GRADES},
            }
            for a, r in report["per_annotator"].items()
        ],
        column_config=FORMAT,
    )
    st.subheader("Per query")
    show_rows(
        [
            {
                "query": q,
                "pairs": r["n_items"],
                "labels": r["n_judgments"],
                "annotators": r["n_annotators"],
                "Krippendorff α": r["krippendorff_alpha_ordinal"],
                "Fleiss κ": r["fleiss_kappa"],
                "unanimity": r["unanimity"],
            }
            for q, r in report["per_query"].items()
        ],
        column_config=FORMAT,
    )


def confusion_view(report: dict) -> None:
    st.subheader("Confusion matrix of two annotators")
    shared = [p for p in report["pairs"] if p["n_items"]]
    if not shared:
        st.caption("No two annotators share a pair yet.")
    else:
        chosen = st.selectbox(
            "Annotator pair",
            shared,
            key="confusion_pair",
            format_func=lambda p: f"{p['a']} vs {p['b']} ({p['n_items']} shared, κ {stat(p['cohen_kappa'], 2)})",
        )
        show_text(
            f"Rows: the label {chosen['a']} gave; columns: the label {chosen['b']} gave, on the "
            f"{chosen['n_items']:,} pairs both labelled.",
            small=True,
        )
        st.html(confusion_html(chosen["confusion"]))


LIGHTEST = (0xF7, 0xFB, 0xFF)
DARKEST = (0x08, 0x51, 0x9C)
"""The ends of the shading (ColorBrewer's Blues, as plotly's "Blues" heatmaps): no pairs, the most pairs."""
DARK_TEXT, LIGHT_TEXT = "#31333f", "#ffffff"


def cell_colours(count: int, largest: int) -> tuple[str, str]:
    """``(background, text)`` of a cell: its share of ``largest`` along the ramp, white text on the dark half."""
    share = count / largest if largest else 0.0
    rgb = "".join(f"{round(lo + share * (hi - lo)):02x}" for lo, hi in zip(LIGHTEST, DARKEST, strict=True))
    return f"#{rgb}", LIGHT_TEXT if share > 0.6 else DARK_TEXT


def confusion_html(matrix: Sequence[Sequence[int]]) -> str:
    """``matrix[i][j]`` (pairs labelled ``i`` by one annotator and ``j`` by the other) as an HTML table for
    ``st.html``, grades as headers, each cell shaded by its share of the largest count.

    Not a plotly heatmap: the chart cost every draw of the tab 100-150 ms of the browser's script time, and
    its first draw the plotly bundle.  Not a pandas Styler in ``st.table``: styling these 16 cells took the
    page's run 50-70 ms.  Only integers go in; names stay in the caption above (escaped there).
    """
    largest = max((max(row) for row in matrix), default=0)
    header = "".join(f"<th>{g}</th>" for g in range(len(matrix)))
    body = []
    for grade, row in enumerate(matrix):
        cells = []
        for count in row:
            background, text = cell_colours(int(count), largest)
            cells.append(f'<td style="background:{background};color:{text}">{int(count)}</td>')
        body.append(f"<tr><th>{grade}</th>{''.join(cells)}</tr>")
    return (
        f'<table class="pj-confusion"><thead><tr><th></th>{header}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        f"<style>.pj-confusion{{border-collapse:collapse;font-variant-numeric:tabular-nums}}"
        f".pj-confusion th,.pj-confusion td{{border:1px solid rgba(49,51,63,0.2);padding:0.25rem 0.6rem;"
        f"text-align:right}}</style>"
    )
