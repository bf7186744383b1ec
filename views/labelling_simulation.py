"""Labelling simulation: how many labels are enough.

A fully labelled collection's qrels act as the annotators: the pool's pairs are labelled batch by batch in each
strategy's order, and after every batch the stored runs are ranked again.  The Kendall tau against the ranking
under all labels, and each run's metric with a bootstrap band, tell a team when to stop labelling
(``pooljudge simulate-labelling`` does the same headless).
"""

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core.simulation import ACTIVE_STRATEGIES, RULES, STRATEGIES, TAU_TARGET, SimulationResult
from db.vocab import Role
from pooljudge.simulation import RetrainSettings, simulate_collection
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import (
    collection_box,
    collections_or_stop,
    download_button,
    get_store,
    md_escape,
    qrels_version_box,
)
from pooljudge.ui.highlight import chart_text
from pooljudge.ui.script_control import stop_run

MEASURES = ["nDCG@10", "MRR@10", "MAP", "P@10", "R@100", "nDCG@20", "Success@10"]
STATE = "labelling_simulation"  # {params: SimulationResult}: the last results, so a rerun redraws without recomputing
KEPT = 4  # results kept per session
STRATEGY_HELP = (
    "depth: every run's rank 1 for every query, then rank 2, ...; top-n: each query's pool ranked by "
    "the ensemble of the runs (DuReader-retrieval), round-robin over queries; random: a seeded shuffle; "
    "active: a cross-encoder's most uncertain pairs first (T2Ranking 4.4); active-retrain: the same, but the "
    "cross-encoder is fine-tuned on the labels so far after every batch before it picks the next (T2Ranking's loop)"
)
RULE_HELP = (
    "uncertain: the pairs whose probability is closest to 0.5 first (T2Ranking); relevant: the most probably "
    "relevant first (continuous active learning), which finds the relevant pairs, the labels that move the "
    "metrics, sooner"
)

FOLDER = "a folder on the server..."


def registered_cross_encoders(collection: str) -> list[str]:
    """Names of the collection's registered models that hold a cross-encoder (none before the registry exists)."""
    try:
        from db.trained_models import list_models
    except ImportError:
        return []
    with store.read() as session:
        return [m.name for m in list_models(session, collection) if m.kind in ("cross-encoder", "rocketqav2")]


account = require_role(Role.ADMIN, Role.REVIEWER)
st.title("Labelling simulation")
st.caption(
    "How many labels are enough? The chosen qrels act as the annotators: pairs are labelled batch by batch "
    "in each strategy's order, and after every batch the runs are ranked again (unlabelled pairs count as "
    "non-relevant, as in trec_eval)."
)
store = get_store()
collections = collections_or_stop(store)

left, right = st.columns(2)
info = collection_box(left, collections, key="simulation_collection")
version = qrels_version_box(right, store, info, key="simulation_qrels")
if version is None:
    st.info("This collection has no qrels version to act as the oracle: import qrels or freeze the final labels.")
    stop_run()
if len(info.runs) < 2:
    st.info("The simulation ranks systems: this collection needs at least two stored runs.")
    stop_run()

runs = st.multiselect("Runs", info.runs, default=info.runs, key=f"simulation_runs::{info.name}")
c1, c2, c3, c4 = st.columns(4)
depth = c1.number_input(
    "Pool depth",
    min_value=1,
    max_value=1000,
    value=20,
    step=1,
    key="simulation_depth",
    help="Pairs considered: the union of every run's top DEPTH per query.",
)
batch = c2.number_input("Batch size (pairs)", min_value=1, max_value=100_000, value=50, step=10, key="simulation_batch")
measure = c3.selectbox("Measure", MEASURES, key="simulation_measure")
seed = c4.number_input(
    "Seed",
    min_value=0,
    max_value=2**31 - 1,
    value=0,
    step=1,
    key="simulation_seed",
    help="Seeds the random order and the bootstrap.",
)
strategies = st.multiselect(
    "Strategies",
    list(STRATEGIES),
    default=["depth", "top-n", "random"],
    key="simulation_strategies",
    help=STRATEGY_HELP,
)
model, band, rule, retrain = None, None, "uncertain", RetrainSettings()
active = [s for s in strategies if s in ACTIVE_STRATEGIES]
if active:
    m1, m2 = st.columns([2, 1])
    registered = registered_cross_encoders(info.name)
    if registered:  # stored names are shown as plain option text (a selectbox draws no Markdown)
        model = m1.selectbox(
            "Cross-encoder for active",
            [*registered, FOLDER],
            key=f"simulation_model::{info.name}",
            help="A cross-encoder (or RocketQAv2 model) trained on this collection, or a folder.",
        )
    if not registered or model == FOLDER:
        model = m1.text_input(
            "Cross-encoder folder for active",
            key="simulation_model_folder",
            help="A model folder on the server (or a registered model's name).",
        ).strip()
    if m2.checkbox(
        "Model labels its confident pairs",
        key="simulation_confident",
        help="Pairs the model scores outside the band take its label instead of a human's, at no cost.",
    ):
        band = m2.slider("Confidence band", 0.0, 1.0, (0.1, 0.9), step=0.01, key="simulation_band")
    r1, r2 = st.columns([2, 1])
    rule = r1.radio("Active order", list(RULES), horizontal=True, key="simulation_rule", help=RULE_HELP)
    if "active-retrain" in strategies:
        steps = r2.number_input(
            "Fine-tuning steps per batch",
            min_value=1,
            max_value=1000,
            value=retrain.steps,
            key="simulation_retrain_steps",
            help=f"Each step trains on {retrain.batch_size} of the labelled pairs; more steps, slower rounds.",
        )
        retrain = RetrainSettings(steps=int(steps))
st.caption(
    f"Binary measures count grade ≥ {info.relevance_level} as relevant (the collection's level); "
    f"the oracle is qrels version **{md_escape(version)}**."
)

params = (
    info.name,
    version,
    tuple(runs),
    int(depth),
    int(batch),
    measure,
    tuple(strategies),
    model or None,
    band,
    rule,
    retrain,
    int(seed),
    info.relevance_level,
)
results: dict[tuple[Any, ...], SimulationResult] = st.session_state.setdefault(STATE, {})
ready = len(runs) >= 2 and bool(strategies) and (not active or bool(model))
if not ready:
    st.caption(
        "Choose at least two runs and one strategy"
        + (f" and a cross-encoder for {active[0]}." if active and not model else ".")
    )
if st.button("Run simulation", type="primary", disabled=not ready, key="simulation_run"):
    bar = st.progress(0.0, text="Simulating...")

    def progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Simulating: batch {done:,} of {total:,}")

    def model_progress(done: int, total: int) -> None:
        bar.progress(done / max(total, 1), text=f"Scoring pooled pairs with the cross-encoder: {done:,} of {total:,}")

    try:
        with st.spinner("Running the simulation..."):
            fresh = simulate_collection(
                store,
                info.name,
                qrels=version,
                runs=runs,
                depth=int(depth),
                batch_size=int(batch),
                strategies=strategies,
                model=model or None,
                band=band,
                rule=rule,
                retrain=retrain,
                measure=measure,
                level=info.relevance_level,
                seed=int(seed),
                progress=progress,
                model_progress=model_progress,
            )
    except (ValueError, LookupError) as exc:
        bar.empty()
        st.error(md_escape(str(exc.args[0] if exc.args else exc)))
        stop_run()
    bar.empty()
    results.pop(params, None)
    results[params] = fresh
    while len(results) > KEPT:
        results.pop(next(iter(results)))

result = results.get(params)
if result is None:
    stop_run()

a, b, c = st.columns(3)
a.metric("Judged queries", f"{result.queries:,}")
b.metric("Pooled pairs", f"{result.pool_pairs:,}")
c.metric("Runs", len(result.runs))

st.subheader("Kendall tau against all labels")
tau_chart = go.Figure()
for strategy in result.strategies:
    points = result.taus(strategy)
    tau_chart.add_trace(
        go.Scatter(x=[p for p, _ in points], y=[t for _, t in points], mode="lines+markers", name=strategy)
    )
tau_chart.add_hline(y=TAU_TARGET, line_dash="dot", annotation_text=f"tau {TAU_TARGET}")
tau_chart.update_layout(
    xaxis_title="labelled pairs", yaxis_title="Kendall tau", yaxis_range=[-1.05, 1.05], height=420, margin={"t": 30}
)
st.plotly_chart(tau_chart, key="simulation_tau_chart")

reached = result.pairs_to_reach(TAU_TARGET)
found = result.pairs_to_recall(0.9)
# st.table, not st.dataframe: a handful of rows, drawn as plain text (readable, printable); strategy names are ours
table = pd.DataFrame(
    [
        {
            "strategy": s,
            f"pairs to reach tau ≥ {TAU_TARGET}": "never" if n is None else f"{n:,}",
            "share of the pool": "–" if n is None else f"{n / result.pool_pairs:.1%}",
            "final tau": f"{result.taus(s)[-1][1]:.4f}",
            "pairs to find 90% of the relevant": "never" if found[s] is None else f"{found[s]:,}",
            "pairs labelled by the model": f"{result.saved.get(s, 0):,}",
            "of them wrong": f"{result.model_wrong.get(s, 0):,}",
        }
        for s, n in reached.items()
    ]
).set_index("strategy")
st.table(table)

st.subheader("Relevant pairs found")
recall_chart = go.Figure()
for strategy in result.strategies:
    points = result.recalls(strategy)
    recall_chart.add_trace(
        go.Scatter(x=[p for p, _ in points], y=[r for _, r in points], mode="lines+markers", name=strategy)
    )
recall_chart.update_layout(
    xaxis_title="labelled pairs",
    yaxis_title=f"recall of the {result.pool_relevant:,} relevant pooled pairs",
    yaxis_range=[-0.02, 1.02],
    height=380,
    margin={"t": 30},
)
st.plotly_chart(recall_chart, key="simulation_recall_chart")
if result.training_rounds:
    st.caption(
        ", ".join(f"{s}: fine-tuned {n} times" for s, n in result.training_rounds.items())
        + f" (after every batch but the last); active order: {result.rule}."
    )

st.subheader("Each run's metric with its bootstrap 95% interval")
shown = st.selectbox("Strategy", result.strategies, key="simulation_band_strategy")
band_chart = go.Figure()
palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
rows = [row for row in result.rows if row.strategy == shown]
xs = [row.labelled_pairs for row in rows]
for i, run in enumerate(result.runs):
    colour = palette[i % len(palette)]
    label = chart_text(run)  # a stored name: plotly draws HTML in labels
    band_chart.add_trace(
        go.Scatter(
            x=xs + xs[::-1],
            y=[r.hi[run] for r in rows] + [r.lo[run] for r in rows][::-1],
            mode="lines",
            fill="toself",
            fillcolor=colour,
            opacity=0.15,
            line={"width": 0},
            hoverinfo="skip",
            showlegend=False,
            legendgroup=label,
        )
    )
    band_chart.add_trace(
        go.Scatter(
            x=xs,
            y=[r.metric[run] for r in rows],
            mode="lines+markers",
            name=label,
            line={"color": colour},
            legendgroup=label,
        )
    )
band_chart.update_layout(
    xaxis_title="labelled pairs", yaxis_title=chart_text(result.measure), height=420, margin={"t": 30}
)
st.plotly_chart(band_chart, key="simulation_band_chart")
st.caption(
    f"{md_escape(result.measure)} under all labels: "
    + ", ".join(f"{md_escape(run)} {value:.4f}" for run, value in result.full.items())
)

download_button(
    "Download CSV", result.to_csv(), file_name=f"simulation-{info.id}.csv", mime="text/csv", key="simulation_csv"
)
