"""Metrics: a live leaderboard of every run of a collection, exactly as `pooljudge eval` computes it, with a
per-query drill-down, a comparison of two runs with paired significance tests, a comparison of two qrels
versions and the measures per query group."""

import math
import os

import pandas as pd
import plotly.express as px
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core.analysis import (
    compare_qrels_versions,
    compare_runs,
    metrics_by_group,
    missed_relevant,
    query_groups,
    ranked_with_labels,
)
from core.metrics import DEFAULT_MEASURES, MEASURE_CHOICES
from db.queries import iter_queries, passages_by_id, statistics_marker
from db.resolution import live_qrels
from db.review import activity_marker
from db.vocab import Role
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import (
    LIVE,
    blank_missing,
    collection_box,
    collections_or_stop,
    get_store,
    load_qrels_source,
    md_escape,
    qrels_source_box,
    shared_run,
)
from pooljudge.ui.evaluators import leaderboard_results
from pooljudge.ui.highlight import chart_text, show_text
from pooljudge.ui.level import level_caption, level_control, level_input
from pooljudge.ui.script_control import stop_run

GROUP_BY = ["split", "type", "domain", "language"]
SPLIT_ORDER = ("train", "dev", "test")
UNKNOWN = "unknown"
RESAMPLES = 9999  # randomisation test: random sign patterns (exact when 2^n is smaller)
TOP_DIFFERENCES = 20
DEFAULT_REFRESH_SECONDS = 10.0
REFRESH_VARIABLE = "POOLJUDGE_LIVE_REFRESH_SECONDS"
"""How often, in seconds, an open Metrics page with live final labels follows new labels (default 10)."""
MEAN = st.column_config.NumberColumn(format="%.4f")
P_VALUE = st.column_config.NumberColumn(format="%.4g")

account = require_role(Role.ADMIN, Role.REVIEWER)
st.title("Metrics")


def refresh_seconds() -> float:
    """``$POOLJUDGE_LIVE_REFRESH_SECONDS``, or the default with a warning when it is not a number above 0."""
    raw = os.environ.get(REFRESH_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_REFRESH_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = 0.0
    if seconds > 0 and math.isfinite(seconds):
        return seconds
    shown = raw.replace("`", "'")
    st.warning(
        f"`{REFRESH_VARIABLE}={shown!r}` is not a number of seconds above 0: the live leaderboard refreshes every "
        f"{DEFAULT_REFRESH_SECONDS:g} s."
    )
    return DEFAULT_REFRESH_SECONDS


REFRESH_SECONDS = refresh_seconds()
store = get_store()
collections = collections_or_stop(store)

left, middle, right = st.columns([2, 2, 1])
# chosen by name, so that ``info`` is this run's (its relevance level may have just changed)
info = collection_box(left, collections, key="metrics_collection")
source = qrels_source_box(middle, store, info)
level = level_input(right, info, key="metrics_level")
measures = st.multiselect("Measures", MEASURE_CHOICES, default=DEFAULT_MEASURES)
st.caption(level_caption(level, info.relevance_level))
level_control(st, store, info, level, account, key="metrics_level")
if not info.runs or not measures:
    st.caption("This collection has no runs yet." if not info.runs else "Choose at least one measure.")
    stop_run()


def stored_run(collection: str, run: str):
    return shared_run(store.url, collection, run)


@st.cache_data(show_spinner=False, max_entries=8)
def query_table(collection: str, marker: tuple) -> dict:
    """``{qid: Query}`` of the collection; ``marker`` changes with every import."""
    with store.read() as session:
        return {q.id: q for q in iter_queries(session, collection)}


def load_source(session, name: str) -> dict:
    return load_qrels_source(session, info.name, name)


def source_key(name: str) -> tuple:
    """A cheap value that changes whenever the qrels of ``name`` can change (the cache key of the analyses)."""
    return (info.name, name, marker, labels if name == LIVE else None)


@st.cache_data(show_spinner="Comparing runs...", max_entries=16)
def comparison(key: tuple, run_a: str, run_b: str, measures: tuple[str, ...], level: int, _qrels: dict):
    return compare_runs(
        _qrels,
        stored_run(info.name, run_a),
        stored_run(info.name, run_b),
        measures,
        level=level,
        n_resamples=RESAMPLES,
        seed=0,
    )


@st.cache_data(show_spinner="Evaluating both versions...", max_entries=16)
def version_comparison(
    key_a: tuple,
    key_b: tuple,
    runs: tuple[str, ...],
    measures: tuple[str, ...],
    level: int,
    _qrels_a: dict,
    _qrels_b: dict,
):
    return compare_qrels_versions({r: stored_run(info.name, r) for r in runs}, _qrels_a, _qrels_b, measures, level)


@st.cache_data(show_spinner="Evaluating per group...", max_entries=32)
def group_means(
    key: tuple, run: str, attribute: str, measures: tuple[str, ...], level: int, _qrels: dict, _groups: dict
):
    return metrics_by_group(_qrels, stored_run(info.name, run), measures, _groups, level)


def label_text(grade: int | None) -> str:
    return "unjudged" if grade is None else str(grade)


def short(text: str, n: int = 70) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def query_choice(qid: str) -> str:
    query = queries.get(qid)
    return qid if query is None else f"{qid} · {short(query.text)}"


def show_query(qid: str) -> None:
    query = queries.get(qid)
    if query is None:
        st.markdown(f"**{md_escape(qid)}** · (this query is not in the collection)")
    else:
        show_text(query.text, label=qid)  # verbatim: st.html, never Markdown


def ranking_frame(ranked, passages, *, with_score: bool = True) -> pd.DataFrame:
    """The ranked passages as a table (rendered by st.dataframe, so their text stays plain text)."""
    rows = []
    for r in ranked:
        p = passages.get(r.doc_id)
        row = {"rank": r.rank, "doc id": r.doc_id}
        if with_score:
            row["score"] = r.score
        row["label"] = label_text(r.grade)
        row["passage"] = "(not in the collection)" if p is None else (f"{p.title} | {p.text}" if p.title else p.text)
        rows.append(row)
    columns = ["rank", "doc id", *(["score"] if with_score else []), "label", "passage"]
    return pd.DataFrame(rows, columns=columns)


with store.read() as session:
    marker = statistics_marker(session)
    labels = activity_marker(session, info.name)
    qrels = load_source(session, source)
queries = query_table(info.name, marker)
runs = {name: stored_run(info.name, name) for name in info.runs}
no_qrels = "No judgments in this qrels source yet." if source == LIVE else "This qrels version is empty."

# ---------------------------------------------------------------------------- leaderboard


def evaluate_source(name: str, current: dict) -> tuple[dict, int]:
    # one evaluator per qrels source, shared by the sessions on it and locked (pooljudge.ui.evaluators)
    return leaderboard_results(store.url, info.name, name, tuple(measures), level, current, runs)


def leaderboard(current: dict, name: str) -> None:
    """The leaderboard table of every run on ``current``, the qrels of source ``name``."""
    if not current:
        st.warning(no_qrels)
        return
    evaluated, count = evaluate_source(name, current)
    table = pd.DataFrame(
        [{"run": name, **{m: round(evaluated[name][m]["all"], 4) for m in measures}} for name in info.runs]
    ).sort_values(measures[0], ascending=False)
    st.dataframe(table, hide_index=True, width="stretch", column_config={m: MEAN for m in measures})
    st.caption(
        f"{len(current):,} judged queries ({md_escape(source)}); queries a run misses score 0, as with trec_eval -c. "
        f"Re-evaluated {count:,} (run, query) pairs for this view."
    )


@st.fragment(run_every=REFRESH_SECONDS)
def live_leaderboard() -> None:
    # reruns on its own every REFRESH_SECONDS: new final labels show up while nobody touches the page, and
    # only the (run, query) pairs whose labels changed are evaluated again.  Each of those runs re-checks the
    # account first: a disabled or demoted reviewer's open page stops showing the board at the next refresh
    require_role(Role.REVIEWER, Role.ADMIN)
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.fragment_ids_this_run:  # a refresh: the labels as they are now
        with store.read() as session:
            current = live_qrels(session, info.name)
    else:  # the page's own run read the live labels a moment ago (``qrels``): not read a second time
        current = qrels
    leaderboard(current, LIVE)


def leaderboard_tab() -> None:
    if source == LIVE and st.toggle(
        f"Refresh every {REFRESH_SECONDS:g} s",
        value=True,
        key="leaderboard_refresh",
        help="Follow new labels as annotators work.",
        persist_state="page",
    ):
        live_leaderboard()
    else:
        leaderboard(qrels, source)


# ---------------------------------------------------------------------------- per query


def per_query_tab() -> None:
    if not qrels:
        st.warning(no_qrels)
        return
    results = evaluate_source(source, qrels)[0]  # the labels as of this page run (the live board refreshes apart)
    c1, c2 = st.columns([4, 1])
    run = c1.selectbox("Run", info.runs, key="per_query_run", persist_state="page")
    depth = int(
        c2.number_input("Top k", min_value=1, max_value=1000, value=10, key="per_query_k", persist_state="page")
    )
    qids = sorted(qrels)
    per_query = pd.DataFrame(
        [
            {
                "query": qid,
                "text": queries[qid].text if qid in queries else "",
                **{m: results[run][m].get(qid) for m in measures},
            }
            for qid in qids
        ]
    )
    st.dataframe(per_query, hide_index=True, width="stretch", height=280, column_config={m: MEAN for m in measures})
    qid = st.selectbox("Query", qids, format_func=query_choice, key="per_query_query", persist_state="page")
    show_query(qid)
    st.caption(" · ".join(f"{md_escape(m)} {results[run][m].get(qid, 0.0):.4f}" for m in measures))
    query_ranking(run, qid, depth)


def query_ranking(run: str, qid: str, depth: int) -> None:
    """The run's top ``depth`` for the query, then the relevant passages it misses there."""
    scores, judged = runs[run].get(qid, {}), qrels.get(qid, {})
    top = ranked_with_labels(scores, judged, depth)
    missed = missed_relevant(scores, judged, depth, level)
    with store.read() as session:
        passages = passages_by_id(session, info.name, [r.doc_id for r in (*top, *missed)])
    st.markdown(f"**Top {depth} of {md_escape(run)}**")
    if top:
        st.dataframe(
            ranking_frame(top, passages),
            hide_index=True,
            width="stretch",
            column_config={"score": MEAN},
            key="per_query_top",
        )
    else:
        st.info("This run retrieved nothing for this query.")
    st.markdown(f"**Relevant passages (grade ≥ {level}) missed in the top {depth}**")
    if missed:
        frame = ranking_frame(missed, passages)
        frame["rank"] = [str(r.rank) if r.rank is not None else "not retrieved" for r in missed]
        # a relevant passage the run did not retrieve has no score: a dash, not "None"
        st.dataframe(
            blank_missing(frame, {"score": ".4f"}),
            hide_index=True,
            width="stretch",
            column_config={"score": MEAN},
            key="per_query_missed",
        )
    else:
        st.caption(
            "None: every relevant passage is in the top k."
            if any(g >= level for g in judged.values())
            else "This query has no relevant passage at this level."
        )


# ---------------------------------------------------------------------------- compare two runs


def compare_tab() -> None:
    if not qrels:
        st.warning(no_qrels)
        return
    if len(info.runs) < 2:
        st.info("Comparing needs two runs: this collection has one.")
        return
    c1, c2 = st.columns(2)
    run_a = c1.selectbox("Run A (baseline)", info.runs, index=0, key="compare_a", persist_state="page")
    run_b = c2.selectbox("Run B", info.runs, index=1, key="compare_b", persist_state="page")
    if run_a == run_b:
        st.warning("Choose two different runs.")
        return
    compared = comparison(source_key(source), run_a, run_b, tuple(measures), level, qrels)
    rows = [
        {
            "measure": m,
            "A": c.a,
            "B": c.b,
            "delta (B - A)": c.delta,
            "wins": c.wins,
            "losses": c.losses,
            "ties": c.ties,
            "t-test p": c.t_test.p_value if c.t_test else None,
            "randomisation p": c.randomization.p_value if c.randomization else None,
        }
        for m, c in compared.items()
    ]
    st.dataframe(
        pd.DataFrame(rows),
        hide_index=True,
        width="stretch",
        key="compare_table",
        column_config={"A": MEAN, "B": MEAN, "delta (B - A)": MEAN, "t-test p": P_VALUE, "randomisation p": P_VALUE},
    )
    st.caption(
        f"A = {md_escape(run_a)}, B = {md_escape(run_b)}, over {next(iter(compared.values())).n:,} judged "
        f"queries. Wins/losses count queries where B is above/below A. Two-sided paired t-test and paired "
        f"randomisation test ({RESAMPLES:,} random sign flips, exact for small n, seed 0)."
    )
    measure = st.selectbox("Per-query deltas of", list(compared), key="compare_measure", persist_state="page")
    deltas = compared[measure].deltas
    delta_chart(measure, deltas)
    differing = [d for d in deltas if d.delta != 0][:TOP_DIFFERENCES]
    if not differing:
        st.caption(f"The two runs score every query alike on {md_escape(measure)}.")
    else:
        differing_queries(measure, differing, run_a, run_b)


def delta_chart(measure: str, deltas) -> None:
    """The per-query deltas B - A of ``measure`` as bars, sorted."""
    chart = pd.DataFrame(sorted(deltas, key=lambda d: (d.delta, d.qid)), columns=["query", "A", "B", "delta"])
    chart["query"] = chart["query"].map(chart_text)  # plotly draws HTML in labels: show the ids as stored
    chart["change"] = ["B better" if d > 0 else "A better" if d < 0 else "tie" for d in chart["delta"]]
    figure = px.bar(
        chart,
        x="query",
        y="delta",
        color="change",
        hover_data=["A", "B"],
        color_discrete_map={"B better": "#2a9d8f", "A better": "#e76f51", "tie": "#adb5bd"},
        title=f"{measure}: B - A per query, sorted",
        labels={"delta": f"{measure} (B - A)"},
    )
    # a category axis even for numeric ids (TREC's "301"), so the sorted order holds
    figure.update_xaxes(
        type="category", categoryorder="array", categoryarray=list(chart["query"]), showticklabels=len(chart) <= 40
    )
    st.plotly_chart(figure, width="stretch", key="compare_chart")


def differing_queries(measure: str, differing, run_a: str, run_b: str) -> None:
    """The queries where the two runs differ most, and the chosen one's top k of both runs side by side."""
    st.markdown(f"**Queries where {md_escape(measure)} differs most**")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "query": d.qid,
                    "text": queries[d.qid].text if d.qid in queries else "",
                    "A": d.a,
                    "B": d.b,
                    "delta": d.delta,
                }
                for d in differing
            ]
        ),
        hide_index=True,
        width="stretch",
        key="compare_differing",
        column_config={"A": MEAN, "B": MEAN, "delta": MEAN},
    )
    c1, c2 = st.columns([4, 1])
    qid = c1.selectbox(
        "Query", [d.qid for d in differing], format_func=query_choice, key="compare_query", persist_state="page"
    )
    depth = int(c2.number_input("Top k", min_value=1, max_value=1000, value=10, key="compare_k", persist_state="page"))
    show_query(qid)
    judged = qrels.get(qid, {})
    tops = {name: ranked_with_labels(runs[name].get(qid, {}), judged, depth) for name in (run_a, run_b)}
    with store.read() as session:
        passages = passages_by_id(session, info.name, [r.doc_id for top in tops.values() for r in top])
    chosen_delta = next(d for d in differing if d.qid == qid)
    for column, side, name, value in zip(st.columns(2), "AB", (run_a, run_b), chosen_delta[1:3]):
        with column:
            st.markdown(f"**{side}: {md_escape(name)}** · {md_escape(measure)} {value:.4f}")
            if tops[name]:
                st.dataframe(
                    ranking_frame(tops[name], passages, with_score=False),
                    hide_index=True,
                    width="stretch",
                    key=f"compare_top_{side}",
                )
            else:
                st.info("This run retrieved nothing for this query.")


# ---------------------------------------------------------------------------- qrels versions


def _version_boxes(c1, c2, versions: list[str]) -> tuple[str, str]:
    """The two qrels versions to compare: by default an older one (A) against the newest or the live labels (B)."""
    version_a = c1.selectbox(
        "Version A (before)",
        versions,
        index=1,
        key="versions_a",
        help="E.g. the original labels.",
        persist_state="page",
    )
    version_b = c2.selectbox(
        "Version B (after)",
        versions,
        index=0 if len(versions) == 2 else len(versions) - 1,
        key="versions_b",
        help="E.g. the labels after relabelling false negatives.",
        persist_state="page",
    )
    return version_a, version_b


def _versions_differ(version_a: str, version_b: str, qrels_a: dict, qrels_b: dict) -> bool:
    """Whether the two versions can be compared; if not, a warning says why."""
    if version_a == version_b:
        st.warning("Choose two different versions.")
        return False
    if not qrels_a or not qrels_b:
        empty = version_a if not qrels_a else version_b
        st.warning(
            f"{md_escape(empty)} holds no judgments"
            + (" yet: compare once annotators have labelled, or choose two versions." if empty == LIVE else ".")
        )
        return False
    return True


def _versions_chart(table: pd.DataFrame, measure: str, version_a: str, version_b: str) -> None:
    """One measure of every run under both versions, as grouped bars."""
    bars = pd.concat(
        [
            table[table["measure"] == measure].assign(version=chart_text(f"A: {version_a}"), mean=lambda t: t["A"]),
            table[table["measure"] == measure].assign(version=chart_text(f"B: {version_b}"), mean=lambda t: t["B"]),
        ]
    )
    bars["run"] = bars["run"].map(chart_text)
    st.plotly_chart(
        px.bar(
            bars,
            x="run",
            y="mean",
            color="version",
            barmode="group",
            hover_data={"delta (B - A)": ":.4f"},
            title=f"{measure} under both versions",
        ).update_xaxes(type="category"),
        width="stretch",
        key="versions_chart",
    )


def versions_tab() -> None:
    versions = [LIVE, *info.qrels_versions]
    if len(versions) < 2:
        st.info("Comparing qrels needs a frozen or imported qrels version besides the live labels.")
        return
    c1, c2, c3 = st.columns([2, 2, 1])
    version_a, version_b = _version_boxes(c1, c2, versions)
    with store.read() as session:
        qrels_a, qrels_b = load_source(session, version_a), load_source(session, version_b)
    if not _versions_differ(version_a, version_b, qrels_a, qrels_b):
        return
    by_run = version_comparison(
        source_key(version_a), source_key(version_b), tuple(info.runs), tuple(measures), level, qrels_a, qrels_b
    )
    table = pd.DataFrame(
        [
            {"run": name, "measure": m, "A": v.a, "B": v.b, "delta (B - A)": v.delta}
            for name, per in by_run.items()
            for m, v in per.items()
        ]
    )
    measure = c3.selectbox("Chart", measures, key="versions_measure", persist_state="page")
    _versions_chart(table, measure, version_a, version_b)
    st.dataframe(
        table,
        hide_index=True,
        width="stretch",
        key="versions_table",
        column_config={"A": MEAN, "B": MEAN, "delta (B - A)": MEAN},
    )
    st.caption(
        f"A = {md_escape(version_a)} ({len(qrels_a):,} judged queries), B = {md_escape(version_b)} "
        f"({len(qrels_b):,} judged queries); each mean is over the queries judged in that version "
        "(trec_eval -c). As in DuReader-retrieval's Figure 2, the delta shows how much a run gains once "
        "missing labels are filled in."
    )


# ---------------------------------------------------------------------------- groups


def groups_tab() -> None:
    if not qrels:
        st.warning(no_qrels)
        return
    c1, c2, c3 = st.columns([1, 3, 1])
    attribute = c1.selectbox("Group queries by", GROUP_BY, key="groups_by", persist_state="page")
    chosen = c2.multiselect("Runs", info.runs, default=info.runs, key="groups_runs", persist_state="page")
    groups = query_groups(queries.values(), attribute, UNKNOWN)
    rows = [
        {"run": name, attribute: group, **row}
        for name in chosen
        for group, row in group_means(
            source_key(source), name, attribute, tuple(measures), level, qrels, groups
        ).items()
    ]
    if not rows:
        st.caption("Choose at least one run.")
        return
    table = pd.DataFrame(rows)
    table["n"] = table["n"].astype(int)
    if attribute == "split":  # splits read best in their usual order, the other attributes alphabetically
        rank = table["split"].map(lambda v: SPLIT_ORDER.index(v) if v in SPLIT_ORDER else len(SPLIT_ORDER))
        table = (
            table.assign(_run=table["run"].map(chosen.index), _rank=rank)
            .sort_values(["_run", "_rank", "split"], kind="stable")
            .drop(columns=["_run", "_rank"])
        )
    measure = c3.selectbox("Chart", measures, key="groups_measure", persist_state="page")
    # domains, types and run names are stored text: plotly would draw their HTML
    drawn = table.assign(**{attribute: table[attribute].map(chart_text), "run": table["run"].map(chart_text)})
    st.plotly_chart(
        px.bar(
            drawn,
            x=attribute,
            y=measure,
            color="run",
            barmode="group",
            hover_data=["n"],
            title=f"{measure} per {attribute}",
        ).update_xaxes(type="category"),
        width="stretch",
        key="groups_chart",
    )
    st.dataframe(table, hide_index=True, width="stretch", key="groups_table", column_config={m: MEAN for m in measures})
    st.caption(
        f"n = judged queries of the group. A query without a {attribute} counts as '{UNKNOWN}'"
        + (" (a missing language is detected from the query text)." if attribute == "language" else ".")
        + " Judged queries that are not in the collection's queries form the group 'ungrouped'."
    )


# ---------------------------------------------------------------------------- the tabs

# Only the open tab runs (on_change="rerun" makes .open tell which); the URL names it (?metrics_tab=Groups), so
# a reload or a shared link opens the same tab.  persist_state="page" on the tabs' widgets keeps their choices
# while another tab is open, as when every tab ran.
TABS = {
    "Leaderboard": leaderboard_tab,
    "Per query": per_query_tab,
    "Compare runs": compare_tab,
    "Qrels versions": versions_tab,
    "Groups": groups_tab,
}
for tab, draw in zip(st.tabs(list(TABS), key="metrics_tab", on_change="rerun", bind="query-params"), TABS.values()):
    if tab.open:
        with tab:
            draw()
