"""Jobs launched from the app run at a lower CPU priority than the server that draws the pages."""

from __future__ import annotations

import os

import pytest

from db.engine import Store, sqlite_url
from db.jobs import create_job, get_job
from pooljudge.jobs import JOB_NICENESS, launch
from tests.sqlite_template import copy_store


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="process priorities are POSIX")
def test_a_launched_job_runs_niced_and_still_runs(sqlite_template, tmp_path):
    store = Store(sqlite_url(copy_store(sqlite_template, tmp_path / "store.db")), upgrade=False)
    with store.write() as s:
        job = create_job(s, "pool", {"collection": "nowhere", "name": "p", "runs": ["bm25"]})
    process = launch(store, job)
    niceness = os.getpriority(os.PRIO_PROCESS, process.pid)  # a finished child stays a zombie until waited for
    assert process.wait(timeout=120) == 1
    assert niceness == min(os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICENESS, 19)
    with store.read() as s:
        info = get_job(s, job)
    assert info.status == "failed" and "nowhere" in info.error  # it ran: the priority is all that changed
    store.dispose()
