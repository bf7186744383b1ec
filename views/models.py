"""Models: the re-rankers and dense retrievers trained on a collection's labels, and training a new one (admins only).

Training runs as a background job (``pooljudge job run``, the pooling job
machinery): the page checks its parameters with the job's own check
(:func:`pooljudge.training.check_train_params`), queues it, and then only reads
the job row, so its progress survives a reload.
"""

import json
from pathlib import Path

import pandas as pd
import plotly.express as px
import streamlit as st

from db.jobs import create_job
from db.queries import collection_id
from db.queries import query_splits as stored_query_splits
from db.review import anyone_labelled
from db.trained_models import list_models
from db.training import FINAL
from db.vocab import Role
from pooljudge.jobs import error_text, launch
from pooljudge.train_result import TrainJobResult
from pooljudge.training import DEFAULT_DEPTH
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import blank_missing, collection_box, collections_or_stop, get_store, md_escape
from pooljudge.ui.highlight import chart_text
from pooljudge.ui.jobs import show_collection_jobs
from pooljudge.ui.script_control import stop_run

KINDS = {
    "default": "Default: the best on the held-out queries of BM25, base dense, their hybrid and the fine-tuned encoder",
    "cross-encoder": "Cross-encoder re-ranker",
    "dual-encoder": "Dual encoder (dense retriever)",
    "rocketqav2": "RocketQAv2: dual encoder + cross-encoder trained jointly",
}
PACKAGED = "packaged all-MiniLM-L6-v2 (default)"
FOLDER = "a local model folder (path below)"
NEW_HEAD = "the base model with a new scoring head"
PRIOR_CHOICES = {
    "none (as in the paper)": None,
    "chosen on held-out queries": "auto",
    "the weight at the right": "fixed",
}
HELD_OUT = "a held-out share of the training split"
MEASURES = ("nDCG@10", "MRR@10")

account = require_role(Role.ADMIN)
st.title("Models")
st.caption(
    "Re-rankers and dense retrievers trained on this collection's labels: their parameters, training curves "
    "and held-out metrics. Use a re-ranker as `rerank:model=NAME`, a dense retriever as `dense:model=FOLDER`."
)
store = get_store()
collections = collections_or_stop(store)
info = collection_box(
    st,
    collections,
    key="models_collection",
    format_func=lambda c: f"{c.name} ({c.passages:,} passages, {c.queries} queries)",
)


def best_metric(best: dict | None, measure: str) -> float | None:
    """A held-out measure of a model's best evaluation (``{"eval": {...}}`` as the trainers report it)."""
    if not best:
        return None
    value = (best.get("eval") or {}).get(measure, best.get(measure))
    return None if value is None else float(value)


def timing(model) -> tuple[float | None, float | None]:
    """(training seconds, pairs/s) of a registered model: the train job records them in its params, else the
    trainers' record next to the weights (a model registered some other way)."""
    if model.params.get("seconds") is not None:
        return model.params["seconds"], model.params.get("pairs_per_second")
    try:
        data = json.loads((Path(model.path) / "pooljudge_training.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    return data.get("seconds"), data.get("pairs_per_second")


@st.cache_data(ttl=60, show_spinner=False)
def query_splits(store_url: str, collection: str) -> list[str]:
    """The collection's query splits, train/dev/test first."""
    with store.read() as session:
        return stored_query_splits(session, collection)


def rocketqav2_fields(registered: list[str]) -> tuple[str | None, list[float] | None, float | str | None]:
    """The form's RocketQAv2 settings: the cross-encoder to start from, the denoising and the teacher's prior.

    A form does not rerun on a change, so every field is always shown; the checkbox and the choice decide
    which are sent.
    """
    first = st.columns(3, vertical_alignment="bottom")
    cross_choice = first[0].selectbox(
        "Cross-encoder to start from",
        [NEW_HEAD, *registered],
        key="models_cross_base",
        help="A re-ranker trained here (the paper's choice), or the base model with a new scoring head.",
    )
    prior_choice = first[1].selectbox(
        "Teacher's first-stage evidence",
        list(PRIOR_CHOICES),
        key="models_teacher_prior",
        help="The distillation target: the cross-encoder's logits plus a weight times the candidates' "
        "normalised first-stage scores. A re-ranker trained on few labels can rank below the dual "
        "encoder it teaches; with the first stage's evidence it is usually stronger than both. 'Chosen on "
        "held-out queries' needs a trained cross-encoder to start from.",
    )
    prior_weight = first[2].number_input(
        "Teacher's first-stage weight", 0.0, 1000.0, 4.0, 0.5, key="models_teacher_prior_weight"
    )
    second = st.columns(3, vertical_alignment="bottom")
    use_denoise = second[0].checkbox(
        "Hybrid data augmentation",
        key="models_denoise",
        help="Denoised hard negatives: unlabelled candidates the cross-encoder scores at most LOW become negatives, "
        "at least HIGH positives; those between are left out.",
    )
    low = second[1].number_input("Denoise LOW", 0.0, 1.0, 0.1, 0.05, key="models_denoise_low")
    high = second[2].number_input("Denoise HIGH", 0.0, 1.0, 0.9, 0.05, key="models_denoise_high")
    chosen_prior = PRIOR_CHOICES[prior_choice]
    return (
        None if cross_choice == NEW_HEAD else cross_choice,
        [float(low), float(high)] if use_denoise else None,
        float(prior_weight) if chosen_prior == "fixed" else chosen_prior,
    )


def show_default_system(system: dict) -> None:
    """A default-kind model's choice: what is offered and why, and every candidate's held-out nDCG@10."""
    st.caption(
        f"Offered by default: {md_escape(str(system.get('label', '?')))}. {md_escape(str(system.get('reason', '')))}."
    )
    rows = [
        {
            "system": s.get("label"),
            "trained": bool(s.get("trained")),
            "held-out nDCG@10": (s.get("dev") or {}).get("nDCG@10"),
            "chosen": s.get("key") == system.get("chosen"),
        }
        for s in system.get("systems") or []
        if isinstance(s, dict)
    ]
    if rows:
        st.dataframe(
            pd.DataFrame(rows),
            hide_index=True,
            column_config={"held-out nDCG@10": st.column_config.NumberColumn(format="%.4f")},
        )


with store.read() as session:
    models = list_models(session, info.name)


# ---------------------------------------------------------------- training form
def data_fields(left, right, splits: list[str]) -> dict:
    """The form's name, labels, splits and candidates, as the train job's params."""
    name = left.text_input("Model name", placeholder="e.g. ce-minilm-v1", key="models_name")
    with store.read() as session:  # the job's default: the final labels when anyone labelled, else the newest version
        labelled = anyone_labelled(session, info.name)
    labels = right.selectbox(
        "Labels",
        [FINAL, *info.qrels_versions[::-1]],
        key="models_labels",
        index=0 if labelled or not info.qrels_versions else 1,
        format_func=lambda v: "live final labels" if v == FINAL else f"qrels version {v}",
        help="The live final labels, or a frozen qrels version.",
    )
    split = left.selectbox("Training split", splits, key="models_split")
    # a form does not rerun on a change: every split is offered, the job's check refuses the training split
    eval_options = [s for s in splits if s != "train"] + [HELD_OUT] if len(splits) > 1 else [HELD_OUT]
    eval_split = right.selectbox(
        "Evaluation split",
        eval_options,
        key="models_eval_split",
        index=eval_options.index("dev") if "dev" in eval_options else 0,
        help="Early stopping and the held-out metrics use these queries.",
    )
    held_out = left.number_input(
        "Held-out share (when evaluating on a share of the training split)",
        min_value=0.05,
        max_value=0.9,
        value=0.2,
        step=0.05,
        key="models_held_out",
    )
    candidates = right.selectbox(
        "Candidates (hard negatives and re-ranked lists)",
        ["bm25", *info.runs],
        key="models_candidates",
        help="A stored run, or BM25 retrieved now (top 100 per query).",
    )
    return {
        "name": name.strip(),
        "split": split,
        "labels": labels,
        "eval_split": None if eval_split == HELD_OUT else eval_split,
        "held_out": float(held_out) if eval_split == HELD_OUT else None,
        "candidates": candidates,
    }


def base_model_fields(left, right, kind: str, registered: list[str]) -> tuple[dict, bool]:
    """The form's base model and loss as the train job's params, and whether a folder was chosen but not given."""
    base_choice = left.selectbox(
        "Base model",
        [PACKAGED, *registered, FOLDER],
        key="models_base",
        help="Start from the packaged MiniLM weights (a new scoring head for a "
        "re-ranker), a model trained here, or a local Hugging Face folder.",
    )
    base_path = right.text_input(
        "Local model folder",
        key="models_base_path",
        placeholder="/models/my-bert (when 'a local model folder' is chosen)",
    )
    loss = (
        left.radio(
            "Loss",
            ["listwise", "pointwise"],
            horizontal=True,
            key="models_loss",
            help="listwise: softmax over a query's positive and its hard negatives; pointwise: "
            "binary cross-entropy on grade >= the collection's relevance level",
        )
        if kind == "cross-encoder"
        else None
    )
    base_model = (
        None if base_choice == PACKAGED else (base_path.strip() or None) if base_choice == FOLDER else base_choice
    )
    return {"base_model": base_model, "loss": loss}, base_choice == FOLDER and not base_path.strip()


def config_fields() -> dict:
    """The form's training settings: the job's ``config`` object and its candidate depth."""
    a, b, c = st.columns(3)
    epochs = a.number_input("Epochs", min_value=1, max_value=1000, value=2, key="models_epochs")
    batch_size = b.number_input("Batch size", min_value=1, max_value=1024, value=8, key="models_batch")
    learning_rate = c.number_input(
        "Learning rate", min_value=1e-7, max_value=1.0, value=2e-5, format="%.1e", key="models_lr"
    )
    max_length = a.number_input("Max length (tokens)", min_value=8, max_value=2048, value=256, key="models_max_length")
    negatives = b.number_input("Hard negatives per query", min_value=0, max_value=200, value=7, key="models_negatives")
    seed = c.number_input("Seed", min_value=0, value=0, key="models_seed")
    patience = a.number_input(
        "Early-stopping patience (held-out evaluations without a gain)",
        min_value=1,
        max_value=1000,
        value=2,
        key="models_patience",
    )
    depth = b.number_input(
        "Candidates per query (hard negatives, re-ranked lists)",
        min_value=1,
        max_value=10000,
        value=DEFAULT_DEPTH,
        key="models_depth",
    )
    max_steps = c.number_input("Max steps (0: no cap)", min_value=0, value=0, key="models_max_steps")
    config = {
        "epochs": int(epochs),
        "batch_size": int(batch_size),
        "learning_rate": float(learning_rate),
        "max_length": int(max_length),
        "negatives": int(negatives),
        "seed": int(seed),
        "patience": int(patience),
        "max_steps": int(max_steps) or None,
    }
    return {"depth": int(depth), "config": config}


def start_training(params: dict, folder_missing: bool) -> None:
    """Queue the train job once its own checks pass; a refusal is shown and queues nothing."""
    from pooljudge.training import check_train_params

    try:  # the job's own checks, before it is queued: a taken name or a missing folder queues nothing
        if folder_missing:
            raise ValueError("base model: give the path of a local model folder")
        params = check_train_params(store, params).params.as_params()  # checked, defaults filled in
    except (ValueError, LookupError) as exc:
        st.error(md_escape(error_text(exc)))
    else:
        with store.write() as session:
            job_id = create_job(session, "train", params, collection_id=collection_id(session, info.name))
        launch(store, job_id)
        st.toast(f"Training job {job_id} started")


def train_section(expanded: bool) -> None:
    """The "Train a model" expander: the kind, the form, and the job queued when the form is sent."""
    with st.expander("Train a model", expanded=expanded):
        kind = st.selectbox("Kind", list(KINDS), format_func=lambda k: KINDS[k], key="models_kind")
        splits = query_splits(store.url, info.name)
        with st.form("train-model", enter_to_submit=False):  # Enter in a box would start a training job
            left, right = st.columns(2)
            params = {"collection": info.name, "kind": kind, **data_fields(left, right, splits)}
            with store.read() as session:
                registered = [m.name for m in list_models(session, info.name)]
            base, folder_missing = base_model_fields(left, right, kind, registered)
            params |= base | config_fields()
            cross_base, denoise, teacher_prior = (
                rocketqav2_fields(registered) if kind == "rocketqav2" else (None, None, None)
            )
            params |= {"cross_base": cross_base, "denoise": denoise, "teacher_prior": teacher_prior}
            submitted = st.form_submit_button("Start training", type="primary")
        if submitted:
            start_training(params | {"created_by": account.username}, folder_missing)


train_section(expanded=not models)


def _job_label(job) -> str:
    p = job.params
    return f"Job {job.id} · {md_escape(str(p.get('kind', '?')))} {md_escape(str(p.get('name', '?')))}"


def _job_result(job) -> str:
    r = job.result_as(TrainJobResult)
    parts = [f"model {md_escape(r.model)} trained"]
    scores = [f"{m} {v:.4f}" for m in MEASURES if (v := best_metric(r.best, m)) is not None]
    if scores:
        parts.append("held-out " + ", ".join(scores))
    if r.seconds is not None:
        parts.append(
            f"{r.seconds:,.1f} s" + (f", {r.pairs_per_second:,.1f} pairs/s" if r.pairs_per_second is not None else "")
        )
    if r.reason:  # the default kind: what the held-out queries chose
        parts.append(md_escape(r.reason))
    return "; ".join(parts)


def job_progress(collection_name: str) -> None:
    show_collection_jobs(
        store,
        "train",
        collection_name,
        label=_job_label,
        result=_job_result,
        state_key="models_jobs_running",
        idle="No training job running.",
        unit="step ",
    )


st.subheader("Training jobs")
job_progress(info.name)

# ---------------------------------------------------------------- the trained models
st.subheader("Trained models")
if not models:
    st.caption("No trained models yet.")
    stop_run()
rows = []
for m in models:
    seconds, rate = timing(m)
    # the measures before the long texts (a folder path): a narrow window still shows them
    rows.append(
        {
            "name": m.name,
            # a default-kind model is the fine-tuned dual encoder the choice was made with
            "kind": f"default ({m.kind})" if m.params.get("default_system") else m.kind,
            "held-out nDCG@10": best_metric(m.best, "nDCG@10"),
            "held-out MRR@10": best_metric(m.best, "MRR@10"),
            "training s": seconds,
            "pairs/s": rate,
            "created": m.created_at,
            "by": m.created_by,
            "base model": m.base_model or "packaged all-MiniLM-L6-v2",
        }
    )
# st.dataframe shows cells as plain text: stored names need no escaping here
st.dataframe(
    blank_missing(
        pd.DataFrame(rows), {"held-out nDCG@10": ".4f", "held-out MRR@10": ".4f", "training s": ".1f", "pairs/s": ".1f"}
    ),
    hide_index=True,
    width="stretch",
    column_config={
        "held-out nDCG@10": st.column_config.NumberColumn(format="%.4f"),
        "held-out MRR@10": st.column_config.NumberColumn(format="%.4f"),
        "training s": st.column_config.NumberColumn(format="%.1f"),
        "pairs/s": st.column_config.NumberColumn(format="%.1f"),
    },
)

by_name = {m.name: m for m in models}
if st.session_state.get("models_chosen") not in by_name:  # another collection's model, or archived since
    st.session_state.pop("models_chosen", None)
chosen = by_name[st.selectbox("Model", list(by_name), key="models_chosen")]
st.markdown(f"**{md_escape(chosen.name)}** · {KINDS.get(chosen.kind) or md_escape(chosen.kind)}")
st.caption("Folder (a Hugging Face model folder that `transformers` loads as is):")
st.code(chosen.path, language=None)
st.caption("Use it as a retriever (`pooljudge retrieve`, `pooljudge pool`, the Pooling page):")
# rerank: resolves a registered name (a RocketQAv2 model's co-trained cross-encoder); dense: takes a folder
interpolation = chosen.params.get("interpolation") or {}
default_system = chosen.params.get("default_system") or {}
if default_system.get("spec"):  # trained as the default kind: the system its held-out queries chose
    usage = str(default_system["spec"])
elif chosen.kind == "cross-encoder" and interpolation.get("weight"):  # the weight its held-out queries chose
    usage = f"rerank:model={chosen.name},first=bm25,depth=100,interpolate={interpolation['weight']:g}"
elif chosen.kind == "cross-encoder":
    usage = f"rerank:model={chosen.name},first=bm25,depth=100"
elif chosen.kind == "rocketqav2":
    usage = f"dense:model={chosen.path}\nrerank:model={chosen.name},first=bm25,depth=100"
else:
    usage = f"dense:model={chosen.path}"
st.code(usage, language=None)
if default_system.get("spec"):
    show_default_system(default_system)
prior = chosen.params.get("teacher_prior_weight") or {}
if chosen.kind == "rocketqav2" and prior.get("weight"):
    how = "chosen on the held-out queries" if "held_out_nDCG@10" in prior else "given"
    st.caption(f"Its teacher: the cross-encoder's logits + {prior['weight']:g} × the first-stage score ({how}).")

history = [h for h in (chosen.history or []) if isinstance(h, dict) and "step" in h]
if history:
    title = chart_text(chosen.name)
    left, right = st.columns(2)
    # the training loss, and for RocketQAv2 its terms (numbers stored next to "loss" in each entry)
    terms = [k for k in ("loss", "kl", "sup") if any(isinstance(h.get(k), (int, float)) for h in history)]
    losses = pd.DataFrame(
        [
            {"step": h["step"], "term": t, "value": h.get(t)}
            for h in history
            for t in terms
            if isinstance(h.get(t), (int, float))
        ]
    )
    if not losses.empty:
        left.plotly_chart(
            px.line(losses, x="step", y="value", color="term", markers=True, title=f"Training loss: {title}"),
            width="stretch",
        )
    evals = pd.DataFrame(
        [
            {"step": h["step"], "measure": m, "value": (h.get("eval") or {}).get(m)}
            for h in history
            for m in MEASURES
            if (h.get("eval") or {}).get(m) is not None
        ]
    )
    if not evals.empty:
        right.plotly_chart(
            px.line(evals, x="step", y="value", color="measure", markers=True, title=f"Held-out metrics: {title}"),
            width="stretch",
        )
else:
    st.caption("No training history was recorded for this model.")
with st.expander("Parameters"):
    st.json({"base_model": chosen.base_model, "params": chosen.params, "best": chosen.best})
