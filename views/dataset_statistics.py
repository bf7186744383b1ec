"""Dataset statistics: per-split counts, lengths, labels, relevant passage positions, query diversity and leakage."""

import numpy as np
import pandas as pd
import plotly.express as px
import streamlit as st

from core.analysis import label_distribution, length_stats, length_stats_of, relevant_positions
from db.queries import document_layout, iter_queries, passage_lengths, split_statistics, stored_qrels
from db.vocab import Role
from pooljudge.query_vectors_job import vectors_key
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import (
    blank_missing,
    collection_box,
    collections_or_stop,
    describe_version,
    download_button,
    get_store,
    md_escape,
    qrels_summaries,
    qrels_version_box,
)
from pooljudge.ui.highlight import chart_text
from pooljudge.ui.level import level_input, relevant_caption
from pooljudge.ui.script_control import stop_run
from pooljudge.ui.vectors import query_vectors_or_job

# Encoding more queries than this waits for a click instead of starting its job on page load.
AUTO_ENCODE_QUERIES = 20_000

require_role(Role.ADMIN, Role.REVIEWER)
st.title("Dataset statistics")
store = get_store()
collections = collections_or_stop(store)
left, middle, right = st.columns([2, 2, 1])
info = collection_box(left, collections, key="stats_collection")  # this run's info: its level may have changed
version = qrels_version_box(middle, store, info, key="stats_version")
level = level_input(
    right,
    info,
    key="stats_level",
    label="Relevant at grade >=",
    help="A passage graded at least this counts as relevant; starts at the collection's level.",
)


@st.cache_data(show_spinner="Reading the queries...")
def collection_queries(store_url: str, collection: str, version: str | None):
    # a version never changes once frozen or imported, so its name is a complete key
    with store.read() as session:
        return list(iter_queries(session, collection)), (
            {} if version is None else stored_qrels(session, collection, version)
        )


@st.cache_data(show_spinner="Measuring the passages...")
def lengths_of_passages(store_url: str, collection: str, passages: int) -> np.ndarray:
    # the database measures the texts: a million passages never reach this process
    with store.read() as session:
        return np.asarray(passage_lengths(session, collection), dtype=np.int32)


@st.cache_data(show_spinner="Placing relevant passages in their documents...")
def positions_of_relevant(store_url: str, collection: str, version: str | None, level: int, _qrels: dict):
    relevant = {pid for docs in _qrels.values() for pid, grade in docs.items() if grade >= level}
    with store.read() as session:
        return relevant_positions(_qrels, document_layout(session, collection, relevant), level=level)


@st.cache_data(show_spinner="Counting per split...")
def splits_of(store_url: str, collection: str, version: str | None, level: int):
    with store.read() as session:  # version None: the collection has none, nothing is judged
        return split_statistics(session, collection, version=version, level=level)


queries, qrels = collection_queries(store.url, info.name, version)
# every judgment count below names its source: a freeze must never silently replace the version shown
source_note = (
    "no qrels version yet"
    if version is None
    else f"qrels version {describe_version(qrels_summaries(store, info)[version], markdown=True)}"
)
lengths_p = lengths_of_passages(store.url, info.name, info.passages)

st.subheader("Per split")
split_rows = [
    {
        "split": s.split,
        "queries": s.queries,
        "judged queries": s.judged_queries,
        "judged pairs": s.judged_pairs,
        "judged per query": round(s.judged_pairs / s.judged_queries, 2) if s.judged_queries else 0.0,
        f"relevant (>= {int(level)}) per query": round(s.avg_relevant_per_query, 2),
        "avg query chars": round(s.avg_query_chars, 1),
        "avg relevant passage chars": None
        if s.avg_relevant_passage_chars is None
        else round(s.avg_relevant_passage_chars, 1),
    }
    for s in splits_of(store.url, info.name, version, int(level))
]
st.dataframe(blank_missing(pd.DataFrame(split_rows)), hide_index=True, width="stretch")
st.caption(
    f"{len(lengths_p):,} passages in the corpus; judgments from {source_note}. "
    + relevant_caption(level, info.relevance_level)
)

st.subheader("Lengths (characters)")
rows = [
    {"texts": f"queries ({split})", **length_stats(q.text for q in queries if q.split == split)._asdict()}
    for split in sorted({q.split for q in queries})
]
if len(lengths_p):
    rows.append({"texts": "passages", **length_stats_of(lengths_p)._asdict()})
st.dataframe(
    pd.DataFrame(rows),
    hide_index=True,
    width="stretch",
    column_config={c: st.column_config.NumberColumn(format="%.1f") for c in ("mean", "median", "p10", "p90")},
)
# binned here, so the browser gets 50 bars per kind instead of one point per passage
lengths_q = np.asarray([len(q.text) for q in queries], dtype=np.int32)
edges = np.histogram_bin_edges(np.concatenate([lengths_q, lengths_p]), bins=50)
bars = pd.concat(
    [
        pd.DataFrame(
            {"kind": kind, "length": (edges[:-1] + edges[1:]) / 2, "count": np.histogram(values, bins=edges)[0]}
        )
        for kind, values in (("query", lengths_q), ("passage", lengths_p))
        if len(values)
    ]
)
st.plotly_chart(
    px.bar(
        bars, x="length", y="count", color="kind", barmode="overlay", opacity=0.75, title="Length distribution"
    ).update_traces(width=float(edges[1] - edges[0])),
    width="stretch",
)

st.subheader("Labels")
if qrels and version is not None:  # no version, no qrels
    labels = label_distribution(qrels)
    st.plotly_chart(
        px.bar(
            x=[str(g) for g in labels],
            y=list(labels.values()),
            labels={"x": "grade", "y": "judgments"},
            title=f"Label distribution ({chart_text(version)})",
        ).update_xaxes(type="category"),
        width="stretch",
    )
    positions = positions_of_relevant(store.url, info.name, version, int(level), qrels)
    if positions.n:
        st.caption(
            f"{positions.n:,} relevant passages with a document position: "
            f"{positions.share_first:.1%} are their document's first passage, mean position "
            f"{positions.mean_position:.2f}."
        )
        st.plotly_chart(
            px.bar(
                x=[str(p) for p in positions.counts],
                y=list(positions.counts.values()),
                labels={"x": "position in document", "y": "relevant passages"},
                title="Where relevant passages sit in their documents",
            ).update_xaxes(type="category"),
            width="stretch",
        )
else:
    st.caption(f"No judgments: {source_note}.")

st.subheader("Query diversity and leakage")
with st.expander("Embedding model"):
    model = st.text_input(
        "Local model folder (empty: the bundled all-MiniLM-L6-v2)",
        key="stats_model",
        help="A Hugging Face model folder on this machine; nothing is downloaded.",
    ).strip()
if len(queries) < 2:
    st.caption("Query diversity needs at least two queries.")
    stop_run()
# the vectors come from a background job (kept on disk by query texts and model): never encoded on the request
vectors = query_vectors_or_job(
    store,
    info.name,
    model,
    vectors_key([q.text for q in queries], model),
    len(queries),
    ask_above=AUTO_ENCODE_QUERIES,
    model_label=model or "the bundled model",
)
if vectors is None:
    stop_run()

# imported beside their use: core.leakage itself imports no torch
from core.leakage import (  # noqa: E402
    chinese_leakage_method,
    leakage_method_text,
    leaked_training_queries,
    query_diversity,
)

model_name = model or "all-MiniLM-L6-v2"
if not model and any(q.language == "zh" for q in queries):
    st.warning(
        "The bundled all-MiniLM-L6-v2 is an English model: its similarities between Chinese queries run "
        "high even for unrelated ones (0.5-0.86 in the demo), so the Chinese diversity below overstates "
        "similarity, and leakage compares Chinese queries by character bigrams instead. For Chinese, give a "
        "multilingual model folder above."
    )
diversity = query_diversity(queries, vectors)
st.dataframe(
    pd.DataFrame([{"split": split, "queries": n, "ILS": round(ils, 4)} for split, (n, ils) in diversity.items()]),
    hide_index=True,
    width="stretch",
)
st.caption(
    f"Intra-list similarity (T2Ranking eq. 3-4): mean pairwise cosine of the {md_escape(model_name)} query "
    "embeddings; lower means more diverse queries."
)

threshold = st.slider(
    "Leakage threshold (cosine)",
    min_value=0.0,
    max_value=1.0,
    value=0.5,
    step=0.01,
    key="stats_threshold",
    help="DuReader-retrieval removed training queries at cosine >= 0.5 to a dev or test query.",
)
chinese = chinese_leakage_method(bool(model))  # no Chinese encoder given: Chinese pairs by character bigrams
lexical = st.slider(
    "Leakage threshold for Chinese queries (character-bigram cosine)",
    min_value=0.01,
    max_value=1.0,
    value=0.4,
    step=0.01,
    key="stats_lexical_threshold",
    disabled=chinese == "encoder",
    help="Used without a Chinese encoder: 0.4 flags reworded paraphrases in the demo and none of its "
    "unrelated questions (see core.analysis.LEXICAL_LEAKAGE_THRESHOLD).",
)
st.caption(
    md_escape(
        leakage_method_text(
            queries, chinese=chinese, threshold=threshold, lexical_threshold=lexical, model_name=model_name
        )
    )
)
leaks = pd.DataFrame(
    leaked_training_queries(queries, vectors, threshold=threshold, chinese=chinese, lexical_threshold=lexical),
    columns=["train_id", "train_query", "eval_id", "eval_split", "eval_query", "similarity", "method"],
)
n_train = sum(q.split == "train" for q in queries)
if not n_train:
    st.caption("No training queries: nothing can leak.")
else:
    flagged = leaks["train_id"].unique()
    st.metric("Training queries near a dev/test query", f"{len(flagged):,} of {n_train:,}")
    st.dataframe(leaks.round({"similarity": 4}), hide_index=True, width="stretch")
    if len(flagged):
        download_button(
            "Download the training query ids to remove",
            "\n".join(sorted(flagged)) + "\n",
            file_name=f"{info.name}-leaked-train-queries.txt",
            mime="text/plain",
            key="stats_leaks_ids",
        )
        download_button(
            "Download the matches (TSV)",
            leaks.to_csv(sep="\t", index=False),
            file_name=f"{info.name}-leakage.tsv",
            mime="text/tab-separated-values",
            key="stats_leaks_tsv",
        )
