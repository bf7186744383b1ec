"""Pooling: run contributing retrievers in the background, pool them with provenance, inspect the pools."""

from dataclasses import dataclass
from typing import Any

import pandas as pd
import streamlit as st

from core.pooling import DEFAULT_DEPTH, POOLING_METHODS
from db.jobs import create_job
from db.pools import list_pools
from db.queries import collection_id
from db.vocab import JobStatus, Role
from pooljudge.encoders import default_model_name
from pooljudge.jobs import error_text, launch
from pooljudge.pool_job import PoolResult, stored_pool_statistics
from pooljudge.pool_params import DEFAULT_ACTIVE_BAND, Dedupe, PoolJobParams, check_pool_params
from pooljudge.retrievers import RetrieverSpec, catalogue, split_specs
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import blank_missing, collection_box, collections_or_stop, get_store, md_escape
from pooljudge.ui.figures import grouped_bars, histogram, share_heatmap
from pooljudge.ui.highlight import chart_text
from pooljudge.ui.jobs import show_collection_jobs
from pooljudge.ui.script_control import stop_run

SELECTIONS = {
    "none": "annotate everything pooled",
    "top N by runs": "the top N per query by the ensemble of the pooled runs",
    "top N by re-ranker": "the top N per query by cross-encoders re-ranking the pool (DuReader-retrieval)",
    "active": "only the pairs a cross-encoder is unsure about (T2Ranking 4.4)",
}


@dataclass(frozen=True)
class PoolForm:
    """The "Start a new pool" form's values as its widgets return them."""

    name: str
    presets: list[str]
    custom: str
    runs: list[str]
    method: str
    depth: int
    hits: int
    selection_kind: str
    select: int
    picked: list[str]
    model_paths: str
    band: tuple[float, float]
    dedupe: str
    threshold: float
    prelabel: bool


def registered_rerankers(collection_name: str) -> list[str]:
    """Names of the collection's trained models that hold a cross-encoder (a RocketQAv2 model's co-trained one)."""
    from db.trained_models import list_models

    with store.read() as session:
        return [m.name for m in list_models(session, collection_name) if m.kind in ("cross-encoder", "rocketqav2")]


require_role(Role.ADMIN)
st.title("Pooling")
store = get_store()
collections = collections_or_stop(store)
info = collection_box(
    st,
    collections,
    key="pooling_collection",
    format_func=lambda c: f"{c.name} ({c.passages:,} passages, {c.queries} queries)",
)
# the kinds' declared presets; the dense ones name the bundled model the collection's language gets
PRESETS = catalogue.presets(default_model_name(info.language))


def source_fields() -> dict[str, Any]:
    """The form's pool name, the retrievers to run, the stored runs and how they are pooled."""
    name = st.text_input("Pool name", placeholder="e.g. top5-bm25-dense")
    presets = st.multiselect(
        "New retrievers to run", list(PRESETS), help="Each becomes a stored run of the collection."
    )
    custom = st.text_input(
        "Other retriever specs (separated by ';')",
        placeholder="bm25:k1=1.2,b=0.6,name=bm25-tuned; dense:model=/models/bge; rerank:model=my-reranker,depth=50",
        help=catalogue.retrievers_markdown(),
    )
    runs = st.multiselect("Stored runs to pool", info.runs, default=info.runs)
    left, right = st.columns(2)
    method = left.radio(
        "Pooling",
        list(POOLING_METHODS),
        horizontal=True,
        help="depth: union of every run's top k (TREC); take: Take@N, a fixed budget per query "
        "filled rank by rank; rrf/rbp: the best-fused documents per query",
    )
    depth = right.number_input("Depth k / pool size per query", min_value=1, max_value=1000, value=DEFAULT_DEPTH)
    hits = left.number_input("Hits per new retriever", min_value=1, max_value=1000, value=100)
    return {
        "name": name,
        "presets": presets,
        "custom": custom,
        "runs": runs,
        "method": method,
        "depth": depth,
        "hits": hits,
    }


def selection_fields() -> dict[str, Any]:
    """The form's selection of the pairs to annotate, and the models it scores with."""
    selection_kind = st.radio(
        "Selection",
        list(SELECTIONS),
        index=1,
        horizontal=True,
        help="; ".join(f"{k}: {v}" for k, v in SELECTIONS.items()),
    )
    left, right = st.columns(2)
    select = left.number_input("N: top documents per query to annotate", min_value=1, value=5)
    known_models = registered_rerankers(info.name)
    picked = right.multiselect(
        "Re-ranker / active model (registered)",
        known_models,
        help="trained cross-encoders of this collection (Models page); re-ranking "
        "averages several, active selection takes one",
    )
    model_paths = left.text_input("Or model folders (separated by ';')", placeholder="/models/my-cross-encoder")
    band = right.slider("Active band: annotate pairs with probability in", 0.0, 1.0, DEFAULT_ACTIVE_BAND, step=0.01)
    return {
        "selection_kind": selection_kind,
        "select": select,
        "picked": picked,
        "model_paths": model_paths,
        "band": band,
    }


def cleanup_fields() -> dict[str, Any]:
    """The form's near-duplicate removal and pre-labelling."""
    left, right = st.columns(2)
    dedupe = left.selectbox("Near-duplicate removal", ["none", "similarity", "ward"])
    threshold = right.number_input(
        "Cosine threshold (similarity) / distance (ward)", min_value=0.0, max_value=2.0, value=0.95
    )
    prelabel = st.checkbox("Pre-label candidates by span F1 >= 0.5 with the query's answers (DuReader-retrieval)")
    return {"dedupe": dedupe, "threshold": threshold, "prelabel": prelabel}


def check_form(form: PoolForm, specs: list[str], models: list[str]) -> None:
    """Refuse a form that names no pool, pools nothing or lacks the model its selection needs (ValueError)."""
    for spec in specs:
        RetrieverSpec.parse(spec)
    if not form.name.strip():
        raise ValueError("give the pool a name")
    if not specs and not form.runs:
        raise ValueError("choose at least one retriever or stored run")
    if form.selection_kind in ("top N by re-ranker", "active") and not models:
        raise ValueError(f"selection '{form.selection_kind}' needs a model: pick a registered one or give a folder")
    if form.selection_kind == "active" and len(models) > 1:
        raise ValueError("active selection scores with one model: pick only one")


def pool_job_params(form: PoolForm, specs: list[str], models: list[str]) -> PoolJobParams:
    """The pool job's parameters from a checked form."""
    active = form.selection_kind == "active"
    return PoolJobParams(
        collection=info.name,
        name=form.name.strip(),
        retrievers=specs,
        runs=form.runs,
        k=int(form.hits),
        method=form.method,
        depth=int(form.depth),
        size=int(form.depth),
        select=int(form.select) if form.selection_kind.startswith("top N") else None,
        select_by=models if form.selection_kind == "top N by re-ranker" else None,
        select_method="active" if active else None,
        active_model=models[0] if active else None,
        active_band=list(form.band) if active else None,
        dedupe=None if form.dedupe == "none" else Dedupe(form.dedupe, form.threshold),
        prelabel=form.prelabel,
    )


def start_pool(form: PoolForm) -> None:
    """Queue the pool job once the form and the job's own checks pass; a refusal is shown and queues nothing."""
    specs = [PRESETS[p] for p in form.presets] + split_specs(form.custom)
    models = form.picked + [m.strip() for m in form.model_paths.split(";") if m.strip()]
    try:
        check_form(form, specs, models)
    except ValueError as exc:
        st.error(md_escape(str(exc)))
        return
    params = pool_job_params(form, specs, models)
    try:  # every name before a job is queued: a taken one is refused before any retrieval
        check_pool_params(store, params)
    except (ValueError, LookupError) as exc:
        st.error(md_escape(error_text(exc)))
        return
    with store.write() as session:
        job_id = create_job(session, "pool", params, collection_id=collection_id(session, info.name))
    launch(store, job_id)
    st.toast(f"Pooling job {job_id} started")


def new_pool_section() -> None:
    """The "Start a new pool" expander: the form, and the job queued when the form is sent."""
    with st.expander("Start a new pool", expanded=True):
        with st.form("new-pool", enter_to_submit=False):  # Enter in a box would start a job: only the button does
            form = PoolForm(**source_fields(), **selection_fields(), **cleanup_fields())
            submitted = st.form_submit_button("Start pooling", type="primary")
        if submitted:
            start_pool(form)


new_pool_section()


def job_progress(collection_name: str) -> None:
    show_collection_jobs(
        store,
        "pool",
        collection_name,
        label=lambda job: f"Job {job.id} · pool {md_escape(job.params_as(PoolJobParams).name)}",
        result=_pool_summary,
        state_key="pool_jobs_running",
        idle="No pooling job running.",
        details=_active_selection,
    )


def _pool_summary(job) -> str:
    r = job.result_as(PoolResult)
    return (
        f"{r.pairs:,} pairs, {r.selected:,} selected, {r.duplicates} near-duplicates removed, {r.prelabels} pre-labels"
    )


def _active_selection(job) -> None:
    p = job.params_as(PoolJobParams)
    if p.select_method != "active":
        return
    if job.status in (JobStatus.QUEUED, JobStatus.RUNNING) and not job.stale:
        low, high = p.active_band or DEFAULT_ACTIVE_BAND
        st.caption(
            f"Active selection with {md_escape(str(p.active_model))}: pairs with "
            f"probability in [{low:g}, {high:g}] go to annotation"
        )
    elif job.status == JobStatus.DONE and job.result and (a := job.result_as(PoolResult).active) is not None:
        st.info(
            f"Active selection: kept {a.kept:,} of {a.pairs:,} pairs, saved {a.saved:,} "
            f"({a.confident_relevant:,} confidently relevant, {a.confident_irrelevant:,} "
            f"confidently not; band [{a.band[0]:g}, {a.band[1]:g}])"
        )


st.subheader("Jobs")
job_progress(info.name)

st.subheader("Pools")
with store.read() as session:
    pools = list_pools(session, info.name)
if not pools:
    st.caption("No pools yet.")
    stop_run()
st.dataframe(
    blank_missing(
        pd.DataFrame([{k: getattr(p, k) for k in ("name", "method", "pairs", "selected", "created_at")} for p in pools])
    ),
    hide_index=True,
    width="stretch",
)
chosen = st.selectbox("Inspect pool", [p.name for p in pools])


@st.cache_data(ttl=60, show_spinner="Computing pool statistics...")
def statistics(collection_name: str, pool_name: str):
    return stored_pool_statistics(store, collection_name, pool_name)[0]  # the charts use no selection sizes


stats = statistics(info.name, chosen)
left, right = st.columns(2)
# graph_objects rather than plotly.express: express spends 100-150 ms of CPU per figure on every run of the page
left.plotly_chart(
    histogram(list(stats.pool_size.values()), bins=30, x_title="pooled", title="Pool size per query"), width="stretch"
)
# run names are stored text: plotly would draw their HTML (chart_text), and a category axis keeps "2024" a name
names = [chart_text(r) for r in stats.runs]
contributions = [
    {"run": name, "pairs": counts[r], "count": what}
    for what, counts in (("contributed", stats.contributed), ("only this run", stats.unique))
    for name, r in zip(names, stats.runs)
]
right.plotly_chart(
    grouped_bars(contributions, x="run", y="pairs", colour="count", title="Pairs contributed per run"), width="stretch"
)
st.plotly_chart(
    share_heatmap(
        stats.overlap,
        labels=names,
        title="Overlap between runs (mean Jaccard over queries)",
    ),
    width="stretch",
)
