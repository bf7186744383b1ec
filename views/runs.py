"""Runs and qrels of a collection: what produced each run, and downloads in TREC format."""

import functools
import io

import pandas as pd
import streamlit as st

from core.formats.trec import write_qrels, write_run
from db.queries import list_runs, stored_qrels, stored_run
from db.vocab import Role
from pooljudge.encoders import described_models
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import (
    blank_missing,
    collection_box,
    collections_or_stop,
    download_button,
    get_store,
    md_escape,
)
from pooljudge.ui.qc_states import version_left_out
from pooljudge.ui.script_control import stop_run

require_role(Role.ADMIN, Role.REVIEWER)
st.title("Runs and export")
store = get_store()
collections = collections_or_stop(store)
info = collection_box(st, collections, key="runs_collection")

with store.read() as session:
    runs = list_runs(session, info.name)
if runs:
    table = pd.DataFrame(
        [
            {
                "run": r.name,
                "source": r.source,
                "retriever": r.params.get("spec", ""),
                "model": ", ".join(described_models(r.params.get("config") or {})),
                "hits per query": r.params.get("k"),
                "queries": r.queries,
                "entries": r.entries,
                "created": r.created_at,
            }
            for r in runs
        ]
    )
    st.dataframe(blank_missing(table), hide_index=True, width="stretch")  # imported runs have no "hits per query"
    chosen = st.selectbox("Run", [r.name for r in runs])
    config = next(r.params for r in runs if r.name == chosen)
    with st.expander("Full configuration"):
        st.json(config or {"source": "imported file"})

    def run_file(collection: str, run: str) -> str:
        with store.read() as session:
            data = stored_run(session, collection, run)
        buffer = io.StringIO()
        write_run(data, buffer, tag=run.replace(" ", "_"))
        return buffer.getvalue()

    # written when the button is clicked (Streamlit calls it in a thread of its own), not on every run of the
    # page: a large run's file takes a good part of a second to write
    download_button(
        "Download run (TREC)",
        functools.partial(run_file, info.name, chosen),
        file_name=f"{chosen}.trec".replace("/", "_"),
        mime="text/plain",
    )
else:
    st.caption("No runs yet: import one or start a pool on the Pooling page.")

st.subheader("Qrels")
if not info.qrels_versions:
    st.caption("No qrels yet.")
    stop_run()
version = st.selectbox("Qrels version", info.qrels_versions[::-1])
level = st.number_input("Binary at level (0 = keep graded labels)", min_value=0, max_value=10, value=0)
st.caption(
    f"The collection's relevance level is {info.relevance_level}: the Metrics and Error analysis pages and "
    f"`pooljudge eval -c` count grade ≥ {info.relevance_level} as relevant."
)


@st.cache_data(ttl=300, show_spinner=False)
def qrels_file(collection: str, version: str, level: int) -> str:
    with store.read() as session:
        data = stored_qrels(session, collection, version)
    buffer = io.StringIO()
    write_qrels(data, buffer, level=level or None)
    return buffer.getvalue()


left_out = version_left_out(store, info.name, version)  # judged pairs without a final label are not silently gone
if left_out:
    st.warning(left_out)
try:
    content = qrels_file(info.name, version, int(level))
except ValueError as exc:  # ids with whitespace cannot be written to TREC files
    st.error(md_escape(str(exc)))
else:
    # graded and binary files of one version must not overwrite each other in a downloads folder
    shape = f"binary-ge{int(level)}" if level else "graded"
    download_button(
        "Download qrels (TREC)",
        content,
        file_name=f"{info.name}-{version}-{shape}.qrels".replace("/", "_"),
        mime="text/plain",
    )
