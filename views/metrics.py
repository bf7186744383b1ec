"""Metrics: a live leaderboard of every run of a collection, exactly as `pooljudge eval` computes it."""

import pandas as pd
import streamlit as st

from core.leaderboard import IncrementalEvaluator
from db.annotation import live_qrels
from db.queries import list_collections, load_qrels, load_run
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import get_store, md_escape

LIVE = "live final labels"
MEASURES = ["MRR@10", "nDCG@10", "R@100", "MAP", "P@10", "Success@10", "nDCG_exp@10", "Judged@10", "RR", "Rprec"]

require_role("admin", "reviewer")
st.title("Metrics")
store = get_store()
with store.read() as session:
    collections = list_collections(session)
if not collections:
    st.info("No collections yet: import one first.")
    st.stop()

left, middle, right = st.columns([2, 2, 1])
info = left.selectbox("Collection", collections, format_func=lambda c: c.name)
source = middle.selectbox("Qrels", [LIVE, *info.qrels_versions[::-1]],
                          help="Live final labels update as annotators label; versions are frozen snapshots.")
level = right.number_input("Relevance level", min_value=1, max_value=10, value=2,
                           help="Binary measures count grade >= level as relevant; nDCG always uses the graded label.")
measures = st.multiselect("Measures", MEASURES, default=["MRR@10", "nDCG@10", "R@100", "MAP", "Judged@10"])
if not info.runs or not measures:
    st.caption("This collection has no runs yet." if not info.runs else "Choose at least one measure.")
    st.stop()


@st.cache_data(show_spinner="Loading runs...")
def stored_run(collection: str, run: str):
    # runs are immutable once stored (a name is never reused), so caching them forever is safe
    with store.read() as session:
        return load_run(session, collection, run)


@st.cache_resource
def evaluator(collection: str, measures: tuple[str, ...], level: int) -> IncrementalEvaluator:
    return IncrementalEvaluator(list(measures), level=level)


with store.read() as session:
    qrels = live_qrels(session, info.name) if source == LIVE else load_qrels(session, info.name, source)
if not qrels:
    st.warning("No judgments in this qrels source yet." if source == LIVE else "This qrels version is empty.")
    st.stop()
board = evaluator(info.name, tuple(measures), int(level))
results = board.evaluate(qrels, {name: stored_run(info.name, name) for name in info.runs})
table = pd.DataFrame(
    [{"run": name, **{m: round(results[name][m]["all"], 4) for m in measures}} for name in info.runs]
).sort_values(measures[0], ascending=False)
st.dataframe(table, hide_index=True, width="stretch")
st.caption(
    f"{len(qrels):,} judged queries ({md_escape(source)}); queries a run misses score 0, as with trec_eval -c. "
    f"Re-evaluated {board.evaluated_queries:,} (run, query) pairs for this view."
)

with st.expander("Per query"):
    run = st.selectbox("Run", info.runs, key="per_query_run")
    per_query = pd.DataFrame(
        [{"query": qid, **{m: results[run][m].get(qid) for m in measures}} for qid in sorted(qrels)]
    )
    st.dataframe(per_query, hide_index=True, width="stretch")
