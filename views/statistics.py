"""Dataset statistics: lengths, labels, and where relevant passages sit in their documents."""

import pandas as pd
import plotly.express as px
import streamlit as st

from core.analysis import label_distribution, length_stats, relevant_positions
from db.queries import iter_passages, iter_queries, list_collections, load_qrels
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import get_store

require_role("admin", "reviewer")
st.title("Dataset statistics")
store = get_store()
with store.read() as session:
    collections = list_collections(session)
if not collections:
    st.info("No collections yet: import one first.")
    st.stop()
left, right = st.columns([3, 1])
info = left.selectbox("Collection", collections, format_func=lambda c: c.name, key="stats_collection")
level = right.number_input("Relevant at grade >=", min_value=1, max_value=10, value=1)


@st.cache_data(show_spinner="Reading the collection...")
def collection_data(store_url: str, collection: str, versions: tuple[str, ...]):
    # keyed by the qrels versions too: freezing a version changes what "newest" means
    with store.read() as session:
        return list(iter_queries(session, collection)), list(iter_passages(session, collection)), load_qrels(session, collection)


queries, passages, qrels = collection_data(store.url, info.name, tuple(info.qrels_versions))

st.subheader("Lengths (characters)")
rows = [{"texts": f"queries ({split})", **length_stats(q.text for q in queries if q.split == split)._asdict()}
        for split in sorted({q.split for q in queries})]
if passages:
    rows.append({"texts": "passages", **length_stats(p.text for p in passages)._asdict()})
st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
lengths = pd.DataFrame([{"kind": "query", "length": len(q.text)} for q in queries]
                       + [{"kind": "passage", "length": len(p.text)} for p in passages])
st.plotly_chart(px.histogram(lengths, x="length", color="kind", barmode="overlay", nbins=50,
                             title="Length distribution"), width="stretch")

st.subheader("Labels")
if qrels:
    labels = label_distribution(qrels)
    st.plotly_chart(px.bar(x=[str(g) for g in labels], y=list(labels.values()), labels={"x": "grade", "y": "judgments"},
                           title="Label distribution (newest qrels version)"), width="stretch")
    positions = relevant_positions(qrels, passages, level=int(level))
    if positions.n:
        st.caption(f"{positions.n:,} relevant passages with a document position: "
                   f"{positions.share_first:.1%} are their document's first passage, mean position "
                   f"{positions.mean_position:.2f}.")
        st.plotly_chart(px.bar(x=[str(p) for p in positions.counts], y=list(positions.counts.values()),
                               labels={"x": "position in document", "y": "relevant passages"},
                               title="Where relevant passages sit in their documents"), width="stretch")
else:
    st.caption("No qrels yet.")

