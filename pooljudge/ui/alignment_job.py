"""The Error analysis page's Alignment tab: the embedding-alignment detector over a pool, as a background job.

A button queues :mod:`pooljudge.alignment_job` for the chosen pool and
launches its worker; a fragment shows the job's progress from its row (so a
reload or another browser shows the same), and once it is done the tab lists
the alignment suggestions stored for the collection: both phrases, their
kind and cosine.  Stored text is shown in tables (as text) or escaped.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from db.engine import Store
from db.error_analysis import list_tags
from db.jobs import create_job, list_jobs
from db.pools import list_pools
from db.queries import collection_id
from db.vocab import Role
from pooljudge.alignment_job import KIND
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import md_escape
from pooljudge.ui.jobs import active_jobs, show_jobs

STATE = "errors_alignment_running"  # the ids of the alignment jobs this session watched at the last run


def _jobs(store: Store, collection: str) -> list:
    with store.read() as session:
        return list_jobs(session, kind=KIND, collection_id=collection_id(session, collection), limit=5)


def _start(store: Store, info: Any) -> None:
    """Queue the job for the chosen pool and launch its worker (the progress fragment shows the rest)."""
    from pooljudge.jobs import launch

    pool = st.session_state.get("errors_alignment_pool")
    if pool is None or active_jobs(_jobs(store, info.name)):
        return
    params = {"collection": info.name, "pool": pool, "language": info.language, "model": ""}
    with store.write() as session:
        job_id = create_job(session, KIND, params, collection_id=collection_id(session, info.name))
    launch(store, job_id)


def _result(job: Any) -> str:
    r = job.result or {}
    return (
        f"{r.get('pairs', 0):,} pairs aligned, {r.get('found', 0):,} mismatches found, "
        f"{r.get('stored', 0):,} new suggestions stored"
    )


@st.fragment(run_every=1.0)
def alignment_progress(store: Store, collection: str) -> None:
    """The collection's alignment jobs; the whole page reruns when one ends (and then lists its suggestions)."""
    require_role(Role.ADMIN, Role.REVIEWER)
    show_jobs(
        _jobs(store, collection),
        label=lambda job: f"Alignment over pool {md_escape(str(job.params.get('pool')))} (job {job.id})",
        result=_result,
        state_key=STATE,
        idle="No alignment job running.",
        unit="pair ",
    )


def alignment_rows(store: Store, collection: str) -> list[dict[str, Any]]:
    """The collection's stored alignment suggestions, one row each: pair, category, both phrases, cosine, status."""
    with store.read() as session:
        tags = [t for t in list_tags(session, collection) if (t["evidence"] or {}).get("detector") == "alignment"]
    rows = []
    for t in tags:
        ev = t["evidence"].get("evidence", {})
        rows.append(
            {
                "query": t["query_id"],
                "passage": t["doc_id"],
                "category": t["category"],
                "query phrase": ev.get("query_phrase"),
                "passage phrase": ev.get("passage_phrase"),
                "kind": ev.get("kind"),
                "cosine": ev.get("cosine"),
                "status": t["status"],
            }
        )
    return rows


def alignment_tab(store: Store, info: Any) -> None:
    """Draw the tab: pool choice and start button, the job's progress, the stored alignment suggestions."""
    st.caption(
        "The embedding-alignment detector has no word list: it embeds the numbers and names of each query and "
        "passage with the collection's encoder and suggests a mismatch when a query phrase's closest passage "
        "phrase is another of its kind. It runs over a whole pool in the background; a category a rule already "
        "gives a pair is left to the rule."
    )
    with store.read() as session:
        pools = [p.name for p in list_pools(session, info.name)]
    if not pools:
        st.caption("This collection has no pool yet: build one on the Pooling page first.")
    else:
        st.selectbox("Pool", pools, key="errors_alignment_pool")
        st.button("Run the alignment detector", key="errors_alignment_start", on_click=_start, args=(store, info))
    alignment_progress(store, info.name)
    rows = alignment_rows(store, info.name)
    if rows:
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="errors_alignment_table")
    else:
        st.caption("No alignment suggestions stored yet.")
