"""Jobs launched from the app run at a lower CPU priority than the server that draws the pages."""

from __future__ import annotations

import os

import pytest

from db.engine import Store, sqlite_url
from db.jobs import create_job, get_job
from pooljudge import jobs
from pooljudge.jobs import JOB_NICENESS, launch
from tests.sqlite_template import copy_store

pytestmark = pytest.mark.slow  # each test launches job processes: 1.8-2.8 s each in a full run


def _autogroup(pid: int) -> str | None:
    """``/proc/PID/autogroup`` ("/autogroup-N nice K"), None where the kernel has no autogroups.

    With autogroup scheduling (the default of most Linux kernels) the CPU is shared between sessions first and a
    process's nice value counts only inside its session: a job in a session of its own, niced alone, got as much
    CPU as the whole server (the Review page's first Ranked list switch took 786-910 ms while the Dataset
    statistics page's encoding job ran, 374-580 ms without it).
    """
    try:
        with open(f"/proc/{pid}/autogroup", encoding="ascii") as f:
            return f.read().strip() or None  # empty for the kernel's root group (see the test below)
    except OSError:
        return None


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="process priorities are POSIX")
def test_a_launched_job_runs_niced_and_still_runs(sqlite_template, tmp_path):
    store = Store(sqlite_url(copy_store(sqlite_template, tmp_path / "store.db")), upgrade=False)
    with store.write() as s:
        job = create_job(s, "pool", {"collection": "nowhere", "name": "p", "runs": ["bm25"]})
    process = launch(store, job)
    niceness = os.getpriority(os.PRIO_PROCESS, process.pid)  # a finished child stays a zombie until waited for
    group = _autogroup(process.pid)
    assert process.wait(timeout=120) == 1
    assert niceness == min(os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICENESS, 19)
    if group is not None:  # Linux with autogroup scheduling: the job's session is a group of its own, niced too
        assert group != _autogroup(os.getpid()) and group.endswith(f" nice {JOB_NICENESS}"), group
    with store.read() as s:
        info = get_job(s, job)
    assert info.status == "failed" and "nowhere" in info.error  # it ran: the priority is all that changed
    store.dispose()


@pytest.mark.parametrize("reads", ["", "\n", "/autogroup-12 nice\n", "garbled"])
def test_a_job_still_starts_niced_where_the_session_group_reads_otherwise(
    sqlite_template, tmp_path, monkeypatch, reads
):
    """The CI machine's ``/proc/self/autogroup`` reads empty (its processes are in the kernel's root group):
    launching a job raised IndexError there, and every job the app started failed.  Any other line must not stop
    a launch either."""
    own = tmp_path / "autogroup"
    own.write_text(reads, encoding="ascii")
    monkeypatch.setattr(jobs, "OWN_AUTOGROUP", str(own))
    store = Store(sqlite_url(copy_store(sqlite_template, tmp_path / "store.db")), upgrade=False)
    with store.write() as s:
        job = create_job(s, "pool", {"collection": "nowhere", "name": "p", "runs": ["bm25"]})
    process = launch(store, job)
    niceness = os.getpriority(os.PRIO_PROCESS, process.pid)
    assert process.wait(timeout=120) == 1
    assert niceness == min(os.getpriority(os.PRIO_PROCESS, 0) + JOB_NICENESS, 19)
    with store.read() as s:
        assert "nowhere" in get_job(s, job).error
    store.dispose()


@pytest.mark.skipif(not os.path.exists("/proc/self/autogroup"), reason="autogroup scheduling is Linux's")
def test_a_job_started_from_the_kernel_s_root_group_gets_a_niced_group_of_its_own(
    sqlite_template, tmp_path, monkeypatch
):
    """``/proc/self/autogroup`` reads empty for a process in the root group, the one no ``setsid`` has left since
    boot (the CI machine's container).  The job's ``setsid`` still gives it a group of its own, at nice 0 and
    weighed like every task of the root group together: the launch skipped the group, and the job's stayed
    at "nice 0" (CI, stop 34)."""
    own = tmp_path / "autogroup"
    own.write_text("", encoding="ascii")
    monkeypatch.setattr(jobs, "OWN_AUTOGROUP", str(own))
    store = Store(sqlite_url(copy_store(sqlite_template, tmp_path / "store.db")), upgrade=False)
    with store.write() as s:
        job = create_job(s, "pool", {"collection": "nowhere", "name": "p", "runs": ["bm25"]})
    process = launch(store, job)
    group = _autogroup(process.pid)
    assert process.wait(timeout=120) == 1
    if group is None:
        pytest.skip("this kernel has no autogroup scheduling")
    assert group.endswith(f" nice {JOB_NICENESS}"), group
    store.dispose()


@pytest.mark.parametrize(
    ("reads", "niceness"),
    [("/autogroup-4343 nice 0\n", 0), ("/autogroup-7 nice -5", -5), ("", 0), ("\n", 0), ("x", None)],
)
def test_the_session_group_s_niceness_is_read_from_its_proc_line(reads, niceness):
    assert jobs.autogroup_niceness(reads) == niceness


def test_a_session_group_write_the_kernel_puts_off_is_tried_again(monkeypatch, tmp_path):
    """Linux takes one autogroup write per 100 ms from a process without CAP_SYS_ADMIN and answers EAGAIN to
    the rest: two jobs launched together by a non-root server left the second one's group at nice 0."""
    own = tmp_path / "autogroup"
    own.write_text("/autogroup-3 nice 2\n", encoding="ascii")
    monkeypatch.setattr(jobs, "OWN_AUTOGROUP", str(own))
    writes: list[tuple[int, int]] = []

    def set_nice(pid: int, niceness: int) -> None:
        writes.append((pid, niceness))
        if len(writes) < 3:
            raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(jobs, "set_autogroup_nice", set_nice)
    jobs._lower_session_priority(4242)
    assert writes == [(4242, 2 + JOB_NICENESS)] * 3

    def always_later(pid: int, niceness: int) -> None:
        writes.append((pid, niceness))
        raise BlockingIOError(11, "Resource temporarily unavailable")

    writes.clear()
    monkeypatch.setattr(jobs, "set_autogroup_nice", always_later)
    jobs._lower_session_priority(4242)  # gives up quietly: the job keeps its own nice value
    assert len(writes) == jobs.AUTOGROUP_WRITE_TRIES
