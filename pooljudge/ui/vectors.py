"""Query vectors on a page without encoding on the request: read what a job stored, or start the job and show it.

See :mod:`pooljudge.query_vectors_job` for the job and the content key.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from db.engine import Store
from db.jobs import JobInfo, create_job, list_jobs
from db.queries import collection_id
from db.vocab import JobStatus, Role
from pooljudge.query_vectors_job import KIND, stored_vectors
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import md_escape
from pooljudge.ui.jobs import active_jobs, show_jobs

STATE = "vectors_jobs_running"  # the ids of the encoding jobs this session watched at the last run


def _jobs(store: Store, collection: str, key: str) -> list[JobInfo]:
    """The collection's encoding jobs of ``key``, newest first."""
    with store.read() as session:
        jobs = list_jobs(session, kind=KIND, collection_id=collection_id(session, collection), limit=20)
    return [j for j in jobs if j.params.get("key") == key]


def query_vectors_or_job(
    store: Store, collection: str, model: str, key: str, n: int, *, ask_above: int, model_label: str
) -> np.ndarray | None:
    """The stored vectors of ``key``; else starts (or shows) the encoding job and returns None.

    The job starts by itself unless the collection has more than ``ask_above`` queries (then a toggle
    asks first) or the last job of this key failed (then its error is shown with a button to retry).
    """
    vectors = stored_vectors(key, n)
    if vectors is not None:
        return vectors
    jobs = _jobs(store, collection, key)
    if not active_jobs(jobs):
        if jobs and (jobs[0].status == JobStatus.FAILED or jobs[0].stale):
            st.error(
                md_escape(
                    f"Could not encode the queries with {model_label}: "
                    f"{jobs[0].error or 'the worker stopped reporting'}"
                )
            )
            if not st.button("Encode again", key="stats_encode_again"):
                return None
        elif n > ask_above and not st.toggle(f"Encode the {n:,} queries", key="stats_encode"):
            st.caption("Encoding runs once per model and query set, in the background; the vectors are kept on disk.")
            return None
        from pooljudge.jobs import launch

        with store.write() as session:
            job_id = create_job(
                session,
                KIND,
                {"collection": collection, "model": model, "key": key},
                collection_id=collection_id(session, collection),
            )
        launch(store, job_id)
        vectors = stored_vectors(key, n)  # a job run in this process (the CLI's way, tests) is done already
        if vectors is not None:
            return vectors
    encoding_progress(store, collection, key)
    return None


@st.fragment(run_every=1.0)
def encoding_progress(store: Store, collection: str, key: str) -> None:
    """The encoding job's progress; the whole page reruns when it ends (and then finds the vectors)."""
    require_role(Role.ADMIN, Role.REVIEWER)
    show_jobs(
        _jobs(store, collection, key)[:1],
        label=lambda job: f"Encoding the queries (job {job.id})",
        result=lambda job: f"{job.result.get('queries', 0):,} queries encoded" if job.result else "done",
        state_key=STATE,
        idle="No encoding job running.",
    )
