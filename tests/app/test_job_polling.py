"""The Pooling and Models pages follow their jobs every second only while one is queued or running.

An open Pooling page reran its job list every second with no job at all: over 10 s, 1.08 CPU-s of the
browser (the other pages 0.01-0.2) and 0.23 CPU-s of the server, for every admin who left it open.  Idle, the
list now looks for a job started elsewhere (another admin, the CLI) every ``POLL_IDLE_S``; a job started from
the page's own form is followed at once (the form's run draws the list after it), and one found by the slow
look makes the page follow it every second.
"""

from __future__ import annotations

import pytest
import streamlit as st

from db.jobs import create_job, finish_job, list_jobs, start_job
from db.queries import collection_id
from pooljudge.ui import jobs as jobs_ui
from tests.app.apptest import VIEWS, import_tiny_collection, open_as_admin

pytestmark = pytest.mark.slow  # whole pages under AppTest


def _collection(db) -> int:
    """``import_tiny_collection``'s collection ``c``; its id."""
    with db.write() as s:
        import_tiny_collection(s)
        return collection_id(s, "c")


@pytest.fixture
def intervals(monkeypatch):
    """The ``run_every`` of each job-list fragment the pages define, in order."""
    seen: list[float | None] = []
    real = st.fragment

    def recording(func=None, *, run_every=None, **kwargs):
        if getattr(func, "__name__", "") == jobs_ui.job_list.__name__:
            seen.append(run_every)
        return real(func, run_every=run_every, **kwargs)

    monkeypatch.setattr(st, "fragment", recording)
    return seen


@pytest.mark.parametrize(
    ("page", "kind", "idle_text"),
    [("pooling.py", "pool", "No pooling job running."), ("models.py", "train", "No training job running.")],
)
def test_the_job_list_polls_every_second_only_while_a_job_runs(db, intervals, page, kind, idle_text):
    cid = _collection(db)
    at = open_as_admin(db, VIEWS / page)
    assert not at.exception
    assert idle_text in [c.value for c in at.caption]
    with db.write() as s:
        job = create_job(s, kind, {"collection": "c", "name": "j"}, collection_id=cid)  # queued elsewhere
    at.run()
    assert not at.exception
    with db.write() as s:
        start_job(s, job)
        finish_job(s, job, {})
    at.run()
    assert not at.exception
    # idle, a queued job, then the run that sees it ended reruns the page once (to show what it made): idle twice
    assert intervals == [jobs_ui.POLL_IDLE_S, jobs_ui.POLL_ACTIVE_S, jobs_ui.POLL_IDLE_S, jobs_ui.POLL_IDLE_S]
    assert jobs_ui.POLL_ACTIVE_S == 1.0 and jobs_ui.POLL_IDLE_S == 10.0


def test_a_job_found_by_the_slow_look_makes_the_page_follow_it(db):
    cid = _collection(db)
    with db.write() as s:
        job = create_job(s, "pool", {"collection": "c", "name": "j"}, collection_id=cid)
        jobs = list_jobs(s, kind="pool", collection_id=cid)
    assert jobs_ui.must_follow(jobs_ui.POLL_IDLE_S, jobs)  # found while idle: rerun the page to poll every second
    assert not jobs_ui.must_follow(jobs_ui.POLL_ACTIVE_S, jobs)  # already followed every second
    with db.write() as s:
        start_job(s, job)
        finish_job(s, job, {})
        done = list_jobs(s, kind="pool", collection_id=cid)
    assert not jobs_ui.must_follow(jobs_ui.POLL_IDLE_S, done)
    assert jobs_ui.poll_seconds(jobs) == jobs_ui.POLL_ACTIVE_S and jobs_ui.poll_seconds(done) == jobs_ui.POLL_IDLE_S
