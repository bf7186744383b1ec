"""Review: agreement between annotators, the adjudication and override queue, QC status, throughput, final labels.

Reviewers may see who gave which label; annotators never reach this page
(the role check below runs on every rerun, before anything is read).
"""

import math

import pandas as pd
import plotly.express as px
import streamlit as st

from core.agreement import agreement_report, confusion_matrix, from_label_map
from core.scale import GRADES
from db.annotation import override_label
from db.review import (
    activity_marker,
    adjudication_queue,
    excluded_pairs,
    final_label_distribution,
    flagged,
    package_overview,
    pair_review,
    qc_history,
    reviewable_pairs,
    standing_labels,
    throughput,
)
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import collection_box, collections_or_stop, get_store, md_escape
from pooljudge.ui.highlight import chart_text, show_text

account = require_role("reviewer", "admin")
VIEWS = {"graded": "graded 0-3", "binary_ge1": "binary (>= 1)", "binary_ge2": "binary (>= 2)"}
STATS = ["Fleiss κ", "Cohen κ", "Cohen κ quadratic", "Krippendorff α", "unanimity", "agrees with majority",
         "mean |label - majority|", "mean label", "accuracy", "last accuracy"]
FORMAT = {name: st.column_config.NumberColumn(format="%.3f") for name in STATS}
FORMAT["median seconds / item"] = st.column_config.NumberColumn(format="%.1f")

st.title("Review")
store = get_store()
collections = collections_or_stop(store)
info = collection_box(st, collections, key="review_collection")
with store.read() as session:
    marker = activity_marker(session, info.name)  # changes with every judgment: cached tables refresh


def stat(value: float | None, digits: int = 3) -> str:
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def labels_text(labels: dict[str, int]) -> str:
    return ", ".join(f"{user}: {grade}" for user, grade in labels.items())


@st.cache_data(ttl=600, show_spinner="Computing agreement...")
def agreement(url: str, collection: str, marker: tuple) -> tuple[list, dict]:
    with store.read() as session:
        judgments = from_label_map(standing_labels(session, collection))
    return judgments, agreement_report(judgments, categories=GRADES)


@st.cache_data(ttl=600, show_spinner=False)
def tables(url: str, collection: str, marker: tuple) -> dict:
    with store.read() as session:
        return {
            "queue": adjudication_queue(session, collection), "excluded": excluded_pairs(session, collection),
            "pairs": reviewable_pairs(session, collection), "throughput": throughput(session, collection),
            "flagged": flagged(session, collection), "distribution": final_label_distribution(session, collection),
        }


judgments, report = agreement(store.url, info.name, marker)
data = tables(store.url, info.name, marker)
agreement_tab, adjudication_tab, qc_tab, throughput_tab, labels_tab = st.tabs(
    ["Agreement", "Adjudication and overrides", "Quality control", "Throughput", "Final labels"]
)

with agreement_tab:
    if not judgments:
        st.info("No labels in this collection yet.")
    else:
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
        st.dataframe(
            pd.DataFrame(
                [
                    {"labels": VIEWS.get(name, name), "Fleiss κ": s["fleiss_kappa"], "Cohen κ": s["cohen_kappa"],
                     "Cohen κ quadratic": s["cohen_kappa_quadratic"], "Krippendorff α": s["krippendorff_alpha_ordinal"],
                     "unanimity": s["unanimity"], "pairs with 2+ labels": s["n_items"], "Fleiss pairs": s["fleiss_n_items"]}
                    for name, s in report["overall"].items()
                ]
            ),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
        st.subheader("Per annotator")
        st.dataframe(
            pd.DataFrame(
                [
                    {"annotator": a, "pairs": r["n_items"], "Cohen κ": r["cohen_kappa"],
                     "Cohen κ quadratic": r["cohen_kappa_quadratic"], "agrees with majority": r["majority_agreement"],
                     "mean |label - majority|": r["majority_mean_abs_diff"], "mean label": r["mean_label"],
                     **{f"label {g}": r["label_counts"][g] for g in GRADES}}
                    for a, r in report["per_annotator"].items()
                ]
            ),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
        st.subheader("Per query")
        st.dataframe(
            pd.DataFrame(
                [
                    {"query": q, "pairs": r["n_items"], "labels": r["n_judgments"], "annotators": r["n_annotators"],
                     "Krippendorff α": r["krippendorff_alpha_ordinal"], "Fleiss κ": r["fleiss_kappa"],
                     "unanimity": r["unanimity"]}
                    for q, r in report["per_query"].items()
                ]
            ),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
        st.subheader("Confusion matrix of two annotators")
        shared = [p for p in report["pairs"] if p["n_items"]]
        if not shared:
            st.caption("No two annotators share a pair yet.")
        else:
            chosen = st.selectbox(
                "Annotator pair", shared, key="confusion_pair",
                format_func=lambda p: f"{p['a']} vs {p['b']} ({p['n_items']} shared, κ {stat(p['cohen_kappa'], 2)})",
            )
            matrix = confusion_matrix(judgments, chosen["a"], chosen["b"], categories=GRADES)
            figure = px.imshow(
                matrix, x=[str(g) for g in GRADES], y=[str(g) for g in GRADES], text_auto=True,
                color_continuous_scale="Blues",
                labels={"x": chart_text(chosen["b"]), "y": chart_text(chosen["a"]), "color": "pairs"},
                title=chart_text(f"{chosen['a']} (rows) vs {chosen['b']} (columns)"),
            )
            st.plotly_chart(figure, width="stretch", key="confusion_heatmap")

with adjudication_tab:
    done = st.session_state.pop("review_flash", None)
    if done:
        st.success(done)
    st.subheader("Waiting for a 4th annotator")
    if data["queue"]:
        st.dataframe(
            pd.DataFrame([{"query": p.qid, "passage": p.docid, "labels": labels_text(p.labels), "4th annotator": p.fourth or "-"}
                          for p in data["queue"]]),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
    else:
        st.caption("No pair is waiting for a 4th label.")
    st.subheader("Excluded pairs")
    if data["excluded"]:
        st.dataframe(
            pd.DataFrame([{"query": p.qid, "passage": p.docid, "labels": labels_text(p.labels), "method": p.method,
                           "reason": p.reason} for p in data["excluded"]]),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
    else:
        st.caption("No excluded pairs.")

    st.subheader("Override a final label")
    if not data["pairs"]:
        st.caption("No assigned pairs yet.")
    else:
        qid = st.selectbox("Query", list(data["pairs"]), key="override_query")
        docid = st.selectbox("Passage", data["pairs"][qid], key="override_passage")
        with store.read() as session:
            pair = pair_review(session, info.name, qid, docid)
        with st.container(border=True):
            # verbatim (st.html, never Markdown), the query's terms marked in the passage as annotators saw them
            st.caption("Query")
            show_text(pair.query, language=info.language)
            st.caption("Passage")
            show_text(pair.title, query=pair.query, language=info.language, bold=True)
            show_text(pair.passage, query=pair.query, language=info.language)
        left, right = st.columns(2)
        left.dataframe(pd.DataFrame({"annotator": list(pair.labels), "label": list(pair.labels.values())}),
                       hide_index=True)
        final = "none yet" if pair.method is None else (
            f"{pair.final_grade if pair.final_grade is not None else 'excluded'} ({pair.method})")
        right.markdown(f"**Final label:** {md_escape(final)}  \n**State:** {md_escape(pair.state)}"
                       + (f"  \n**4th annotator:** {md_escape(pair.fourth)}" if pair.fourth else ""))
        if pair.reason:
            right.caption("Reason")
            show_text(pair.reason, container=right)
        if pair.overrides:
            st.dataframe(pd.DataFrame([{**o, "grade": "excluded" if o["grade"] is None else o["grade"]} for o in pair.overrides]),
                         hide_index=True, width="stretch")
        with st.form("override"):
            grade = st.radio("Final label", [*GRADES, "exclude"], horizontal=True, key="override_grade",
                             format_func=lambda g: "exclude the pair" if g == "exclude" else str(g))
            reason = st.text_area("Reason (required)", key="override_reason")
            submitted = st.form_submit_button("Override", type="primary", key="override_submit")
        if submitted:
            try:
                with store.write() as session:
                    result = override_label(session, account.id, pair.query_id, pair.passage_id,
                                            None if grade == "exclude" else int(grade), reason)
            except (ValueError, PermissionError) as exc:
                st.error(md_escape(str(exc)))
            else:
                outcome = "excluded" if result.grade is None else f"set to {result.grade}"
                st.session_state["review_flash"] = f"Final label of {md_escape(qid)} / {md_escape(docid)} {outcome}."
                st.rerun()

with qc_tab:
    with store.read() as session:
        packages = package_overview(session, info.name)
        rounds = qc_history(session, collection=info.name)
    st.subheader("Packages")
    if packages:
        st.dataframe(
            pd.DataFrame([{"package": p.name, "annotator": p.annotator, "pool": p.pool, "status": p.status,
                           "labelled": p.labelled, "total": p.total, "QC rounds": p.rounds,
                           "last accuracy": p.last_accuracy} for p in packages]),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
    else:
        st.caption("No packages yet: create assignments on the Admin page.")
    st.subheader("QC rounds (every round kept)")
    if rounds:
        st.dataframe(
            pd.DataFrame([{"package": r.package, "annotator": r.annotator, "round": r.round_no, "status": r.status,
                           "sample": r.sample_size, "threshold": r.threshold, "accuracy": r.accuracy,
                           "checked": r.n_checked, "reviewed": labels_text(r.reviewed), "started": r.created_at,
                           "decided": r.decided_at} for r in rounds]),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
    else:
        st.caption("No QC rounds yet.")

with throughput_tab:
    work = data["throughput"]
    if not work["daily"]:
        st.caption("No labels yet.")
    else:
        # usernames are stored text: plotly would draw their HTML in the legend
        daily = pd.DataFrame([{**row, "day": row["day"].isoformat(), "annotator": chart_text(row["annotator"])}
                              for row in work["daily"]])
        st.plotly_chart(px.bar(daily, x="day", y="labels", color="annotator", barmode="group",
                               title="Labels per annotator per day (UTC)"), width="stretch", key="throughput_chart")
    if work["annotators"]:
        st.dataframe(
            pd.DataFrame([{"annotator": a, "label events": r["labels"], "pairs labelled": r["pairs"],
                           "QC labels": r["qc_labels"], "median seconds / item": r["median_seconds"],
                           "skips": r["skips"], "flags": r["flags"], "undos": r["undos"]}
                          for a, r in work["annotators"].items()]),
            hide_index=True, width="stretch", column_config=FORMAT,
        )
    st.subheader("Flagged items")
    if data["flagged"]:
        st.dataframe(pd.DataFrame(data["flagged"]), hide_index=True, width="stretch")
    else:
        st.caption("Nothing flagged.")

with labels_tab:
    dist = data["distribution"]
    cols = st.columns(len(GRADES) + 2)
    for col, (g, n) in zip(cols, dist.by_grade.items()):
        col.metric(f"Grade {g}", f"{n:,}")
    cols[-2].metric("Excluded", f"{dist.excluded:,}")
    cols[-1].metric("Pending", f"{dist.pending:,}", help="labelled pairs without a final label yet")
    st.dataframe(pd.DataFrame([{"method": m, "pairs": n} for m, n in dist.by_method.items()]),
                 hide_index=True)
    if dist.cells:
        cells = pd.DataFrame([{**c, "grade": "excluded" if c["grade"] is None else str(c["grade"])} for c in dist.cells])
        st.plotly_chart(px.bar(cells, x="grade", y="pairs", color="method", title="Final labels by grade and method",
                               category_orders={"grade": [*map(str, GRADES), "excluded"]}),
                        width="stretch", key="labels_chart")
