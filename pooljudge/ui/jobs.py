"""Background jobs on a page: each job's progress, failure or result, read from its row (so a reload finds it).

A page draws its collection's jobs with :func:`show_collection_jobs` (a
fragment that checks the role on every run and follows running jobs every
second), or wraps :func:`show_jobs` in a fragment of its own; the job rows are
all the state there is, so a reload or another browser shows the same
progress.
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


POLL_ACTIVE_S = 1.0
"""Seconds between two looks at the job list while a job is queued or running (its progress bar moves)."""
POLL_IDLE_S = 10.0
"""Seconds between two looks while none is: a job started elsewhere (another admin, the CLI) shows within them.
An open page that reran every second with no job cost the browser 1.08 CPU-s and the server 0.23 CPU-s every
10 s; a job started from the page's own form is drawn by the form's run, at once."""


def poll_seconds(jobs: Sequence[JobInfo]) -> float:
    """How often a job list showing ``jobs`` looks again: :data:`POLL_ACTIVE_S` while one runs, else
    :data:`POLL_IDLE_S`."""
    return POLL_ACTIVE_S if active_jobs(jobs) else POLL_IDLE_S


def must_follow(polling: float, jobs: Sequence[JobInfo]) -> bool:
    """Whether a list looking every ``polling`` s has found a job it must follow faster (a page rerun sets the
    fragment's interval anew)."""
    return polling > POLL_ACTIVE_S and bool(active_jobs(jobs))


def collection_jobs(store: Store, kind: str, collection_name: str) -> list[JobInfo]:
    """The collection's five newest ``kind`` jobs, newest first."""
    with store.read() as session:
        return list_jobs(session, kind=kind, collection_id=collection_id(session, collection_name), limit=5)


def show_collection_jobs(store: Store, kind: str, collection_name: str, **show: Any) -> None:
    """The collection's ``kind`` jobs (:func:`show_jobs`) as a fragment of their own, for admins: it looks again
    every second while a job is queued or running, every :data:`POLL_IDLE_S` otherwise."""
    polling = poll_seconds(collection_jobs(store, kind, collection_name))
    st.fragment(job_list, run_every=polling)(store, kind, collection_name, polling, show)


def job_list(store: Store, kind: str, collection_name: str, polling: float, show: dict[str, Any]) -> None:
    """The fragment's body.  The role is checked first on every run, so a disabled or demoted account stops here;
    a job found while looking slowly reruns the page, which then follows it every second."""
    require_role(Role.ADMIN)
    jobs = collection_jobs(store, kind, collection_name)
    if must_follow(polling, jobs):
        st.rerun(scope="app")
    show_jobs(jobs, **show)
