"""Background jobs on a page: each job's progress, failure or result, read from its row (so a reload finds it).

A page wraps :func:`show_jobs` in its own ``st.fragment(run_every=...)``
(which checks the role on every run) and lists the jobs with
:func:`db.jobs.list_jobs`; the job rows are all the state there is, so a
reload or another browser shows the same progress.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from db.engine import Store
from db.jobs import JobInfo, list_jobs
from db.queries import collection_id
from db.vocab import JobStatus, Role
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import md_escape


def active_jobs(jobs: Sequence[JobInfo]) -> set[int]:
    """The ids of the jobs still queued or running (a stale worker counts as ended)."""
    return {j.id for j in jobs if j.status in (JobStatus.QUEUED, JobStatus.RUNNING) and not j.stale}


def show_jobs(
    jobs: Sequence[JobInfo],
    *,
    label: Callable[[JobInfo], str],
    result: Callable[[JobInfo], str],
    state_key: str,
    idle: str,
    unit: str = "",
    details: Callable[[JobInfo], None] | None = None,
) -> None:
    """Draw each job: a progress bar while it runs, a warning when stale, its error, its result.

    Parameters
    ----------
    jobs
        The jobs to show, newest first.
    label
        The job's Markdown title (stored names in it already escaped).
    result
        The Markdown line of a finished job (stored text in it already escaped).
    state_key
        Session state key of the job ids that were running at the previous run: when one of them has ended,
        the whole page reruns so that what the job made (a pool, a model) shows below.
    idle
        The caption when no job runs.
    unit
        Written before the ``done/total`` count (e.g. ``"step "``).
    details
        Draws what a page adds under each job (the active-selection report of a pooling job).
    """
    active = active_jobs(jobs)
    watched = st.session_state.setdefault(state_key, set())
    if watched - active:  # a job this page watched has ended: refresh the rest of the page too
        st.session_state[state_key] = active
        st.rerun(scope="app")
    st.session_state[state_key] = active
    for job in jobs:
        title = label(job)
        if job.id in active:
            count = f" ({unit}{job.done:,}/{job.total:,})" if job.total else ""
            st.progress(job.fraction or 0.0, text=f"{title}: {md_escape(job.message or job.status)}{count}")
        elif job.stale:
            st.warning(f"{title}: the worker stopped reporting (last: {md_escape(job.message or '')})")
        elif job.status == JobStatus.FAILED:
            st.error(f"{title} failed: {md_escape(job.error or '')}")
        elif job.status == JobStatus.DONE and job.result:
            st.success(f"{title}: {result(job)}")
        if details is not None:
            details(job)
    if not active:
        st.caption(idle)


def show_collection_jobs(store: Store, kind: str, collection_name: str, **show: Any) -> None:
    """An admin fragment's body: the collection's five newest ``kind`` jobs through :func:`show_jobs`.

    The role is checked first on every run, so a disabled or demoted account stops here.
    """
    require_role(Role.ADMIN)
    with store.read() as session:
        jobs = list_jobs(session, kind=kind, collection_id=collection_id(session, collection_name), limit=5)
    show_jobs(jobs, **show)
