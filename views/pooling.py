"""Pooling: run contributing retrievers in the background, pool them with provenance, inspect the pools."""

import pandas as pd
import plotly.express as px
import streamlit as st

from db.jobs import create_job, list_jobs
from db.pools import list_pools
from db.queries import collection_id
from pooljudge.jobs import error_text, launch
from pooljudge.pipeline import RetrieverSpec, check_pool_params, stored_pool_statistics
from pooljudge.ui.common import blank_missing, collection_box, collections_or_stop, get_store, md_escape
from pooljudge.ui.highlight import chart_text
from pooljudge.ui.auth import require_role

PRESETS = {
    "BM25 (jieba words / English stems)": "bm25",
    "BM25 (CJK character bigrams)": "bm25:chinese=bigram",
    "Dense: all-MiniLM-L6-v2 (packaged, offline)": "dense",
    "Hybrid: BM25 + MiniLM, reciprocal rank fusion": "hybrid:fusion=rrf",
}

require_role("admin")
st.title("Pooling")
store = get_store()
collections = collections_or_stop(store)
info = collection_box(st, collections, key="pooling_collection", format_func=lambda c: f"{c.name} ({c.passages:,} passages, {c.queries} queries)")

with st.expander("Start a new pool", expanded=True):
    with st.form("new-pool"):
        name = st.text_input("Pool name", placeholder="e.g. top5-bm25-dense")
        presets = st.multiselect("New retrievers to run", list(PRESETS), help="Each becomes a stored run of the collection.")
        custom = st.text_input("Other retriever specs (comma-separated ';')", placeholder="bm25:k1=1.2,b=0.6,name=bm25-tuned; dense:model=/models/bge")
        runs = st.multiselect("Stored runs to pool", info.runs, default=info.runs)
        left, right = st.columns(2)
        method = left.radio("Pooling", ["depth", "take", "rrf", "rbp"], horizontal=True,
                            help="depth: union of every run's top k (TREC); take: Take@N, a fixed budget per query "
                            "filled rank by rank; rrf/rbp: the best-fused documents per query")
        depth = right.number_input("Depth k / pool size per query", min_value=1, max_value=1000, value=50)
        hits = left.number_input("Hits per new retriever", min_value=1, max_value=1000, value=100)
        select = right.number_input("Keep top N per query for annotation (0 = annotate everything)", min_value=0, value=5)
        dedupe = left.selectbox("Near-duplicate removal", ["none", "similarity", "ward"])
        threshold = right.number_input("Cosine threshold (similarity) / distance (ward)", min_value=0.0, max_value=2.0, value=0.95)
        prelabel = st.checkbox("Pre-label candidates by span F1 >= 0.5 with the query's answers (DuReader-retrieval)")
        submitted = st.form_submit_button("Start pooling", type="primary")
    if submitted:
        specs = [PRESETS[p] for p in presets] + [s.strip() for s in custom.split(";") if s.strip()]
        try:
            for spec in specs:
                RetrieverSpec.parse(spec)
            if not name.strip():
                raise ValueError("give the pool a name")
            if not specs and not runs:
                raise ValueError("choose at least one retriever or stored run")
        except ValueError as exc:
            st.error(md_escape(str(exc)))
        else:
            params = {
                "collection": info.name, "name": name.strip(), "retrievers": specs, "runs": runs, "k": int(hits),
                "method": method, "depth": int(depth), "size": int(depth), "select": int(select) or None,
                "dedupe": None if dedupe == "none" else (
                    {"method": "similarity", "threshold": threshold} if dedupe == "similarity"
                    else {"method": "ward", "distance_threshold": threshold}),
                "prelabel": prelabel,
            }
            try:  # every name before a job is queued: a taken one is refused before any retrieval
                check_pool_params(store, params)
            except (ValueError, LookupError) as exc:
                st.error(md_escape(error_text(exc)))
            else:
                with store.write() as session:
                    job_id = create_job(session, "pool", params, collection_id=collection_id(session, info.name))
                launch(store, job_id)
                st.toast(f"Pooling job {job_id} started")


@st.fragment(run_every=1.0)
def job_progress(collection_name: str) -> None:
    require_role("admin")  # every fragment run: a disabled or demoted account stops here
    with store.read() as session:
        jobs = list_jobs(session, kind="pool", collection_id=collection_id(session, collection_name), limit=5)
    active = {j.id for j in jobs if j.status in ("queued", "running") and not j.stale}
    watched = st.session_state.setdefault("pool_jobs_running", set())
    if watched - active:  # a job this page watched has ended: refresh the pools below too
        st.session_state["pool_jobs_running"] = active
        st.rerun(scope="app")
    st.session_state["pool_jobs_running"] = active
    for job in jobs:
        label = f"Job {job.id} · pool {md_escape(job.params.get('name', '?'))}"
        if job.status in ("queued", "running") and not job.stale:
            st.progress(job.fraction or 0.0, text=f"{label}: {md_escape(job.message or job.status)} "
                        + (f"({job.done:,}/{job.total:,})" if job.total else ""))
        elif job.stale:
            st.warning(f"{label}: the worker stopped reporting (last: {md_escape(job.message)})")
        elif job.status == "failed":
            st.error(f"{label} failed: {md_escape(job.error or '')}")
        elif job.status == "done" and job.result:
            r = job.result
            st.success(f"{label}: {r['pairs']:,} pairs, {r['selected']:,} selected, "
                       f"{r['duplicates']} near-duplicates removed, {r['prelabels']} pre-labels")
    if not active:
        st.caption("No pooling job running.")


st.subheader("Jobs")
job_progress(info.name)

st.subheader("Pools")
with store.read() as session:
    pools = list_pools(session, info.name)
if not pools:
    st.caption("No pools yet.")
    st.stop()
st.dataframe(blank_missing(pd.DataFrame([{k: p[k] for k in ("name", "method", "pairs", "selected", "created_at")}
                                        for p in pools])),
             hide_index=True, width="stretch")
chosen = st.selectbox("Inspect pool", [p["name"] for p in pools])


@st.cache_data(ttl=60, show_spinner="Computing pool statistics...")
def statistics(collection_name: str, pool_name: str):
    stats, selected = stored_pool_statistics(store, collection_name, pool_name)
    return stats, selected


stats, selected = statistics(info.name, chosen)
left, right = st.columns(2)
sizes = pd.DataFrame({"query": list(stats.pool_size), "pooled": list(stats.pool_size.values()),
                      "selected": [selected.get(q, 0) for q in stats.pool_size]})
left.plotly_chart(px.histogram(sizes, x="pooled", nbins=30, title="Pool size per query"), width="stretch")
# run names are stored text: plotly would draw their HTML (chart_text), and a category axis keeps "2024" a name
contrib = pd.DataFrame({"run": [chart_text(r) for r in stats.runs], "contributed": [stats.contributed[r] for r in stats.runs],
                        "only this run": [stats.unique[r] for r in stats.runs]})
right.plotly_chart(px.bar(contrib, x="run", y=["contributed", "only this run"], barmode="group",
                          title="Pairs contributed per run").update_xaxes(type="category"), width="stretch")
names = [chart_text(r) for r in stats.runs]
overlap = pd.DataFrame(stats.overlap, index=names, columns=names)
st.plotly_chart(px.imshow(overlap, text_auto=".2f", zmin=0, zmax=1, color_continuous_scale="Blues",
                          title="Overlap between runs (mean Jaccard over queries)")
                .update_xaxes(type="category").update_yaxes(type="category"), width="stretch")
