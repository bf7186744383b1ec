"""The helper of the multi-process tests: separate processes, forked after the imports, outcomes reported."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.db.forked import Forked, first_line, run_forked, wait_for_siblings

HERE = "tests.db.test_forked"


def whoami(arg: int) -> dict:
    """In a child: which process this is, and the CPU time it has spent since the fork."""
    return {
        "arg": arg,
        "pid": os.getpid(),
        "parent": os.getppid(),
        "cpu": time.process_time(),
        "imported": "db.models" in sys.modules,
    }


def fail_on_one(arg: int) -> int:
    print(f"out {arg}")
    print(f"err {arg}", file=sys.stderr)
    if arg == 1:
        raise ValueError(f"boom {arg}")
    return arg * 10


def sleep_until_killed() -> None:
    time.sleep(600)


def arrive_late(delay: float) -> tuple[float, float]:
    time.sleep(delay)
    arrived = time.monotonic()
    wait_for_siblings()
    return arrived, time.monotonic()


def fail_or_wait(arg: int) -> None:
    if arg == 1:
        raise ValueError("no store")
    wait_for_siblings(timeout=300)


@pytest.mark.slow
def test_each_call_runs_in_a_process_of_its_own_forked_after_the_imports():
    outcomes = run_forked(f"{HERE}:whoami", [[0], [1], [2]], preload=("sqlalchemy.orm", "db.models"), timeout=120)
    results = [o.result for o in outcomes]
    assert [r["arg"] for r in results] == [0, 1, 2]
    assert [o.exitcode for o in outcomes] == [0, 0, 0]
    pids = [r["pid"] for r in results]
    assert pids == [o.pid for o in outcomes]
    assert len(set(pids)) == 3 and os.getpid() not in pids
    [parent] = {r["parent"] for r in results}  # one helper forked all three
    assert parent not in (os.getpid(), *pids)
    assert all(r["imported"] for r in results)
    # A fresh interpreter spends over 0.5 CPU-s importing SQLAlchemy and the models; a forked child, nothing.
    assert max(r["cpu"] for r in results) < 0.3, results


def test_a_failing_child_reports_its_traceback_and_what_it_printed_and_the_others_finish():
    ok, failed = run_forked(f"{HERE}:fail_on_one", [[0], [1]], timeout=120)
    assert (ok.exitcode, ok.result, ok.error, ok.stdout, ok.stderr) == (0, 0, "", "out 0\n", "err 0\n")
    assert (failed.exitcode, failed.result, failed.stdout, failed.stderr) == (1, None, "out 1\n", "err 1\n")
    assert failed.error.startswith("Traceback") and failed.error.endswith("ValueError: boom 1\n")


def test_a_killed_child_reports_its_signal():
    forked = Forked(f"{HERE}:sleep_until_killed", [[]], timeout=120)
    assert forked.running()
    os.kill(forked.pids[0], signal.SIGKILL)
    [killed] = forked.outcomes()
    assert (killed.pid, killed.exitcode, killed.result, killed.error) == (forked.pids[0], -signal.SIGKILL, None, "")
    assert not forked.running()


def test_children_go_on_together_once_the_last_one_has_arrived():
    outcomes = run_forked(f"{HERE}:arrive_late", [[0.0], [0.2], [0.4]], timeout=120)
    arrived = [o.result[0] for o in outcomes]
    released = [o.result[1] for o in outcomes]
    assert arrived == sorted(arrived)
    assert min(released) >= max(arrived)


def test_a_child_that_fails_before_the_barrier_releases_the_others_at_once():
    started = time.monotonic()
    waiting, failed = run_forked(f"{HERE}:fail_or_wait", [[0], [1]], timeout=120)
    assert time.monotonic() - started < 60  # not the barrier's 300 s
    assert (failed.exitcode, failed.error.splitlines()[-1]) == (1, "ValueError: no store")
    assert (waiting.exitcode, waiting.error.splitlines()[-1]) == (1, "threading.BrokenBarrierError")


def test_the_outcomes_line_is_kept_when_it_arrives_with_the_first_line():
    """Children that end at once (a loaded machine) let the helper print both lines before the first is read."""
    proc = subprocess.Popen([sys.executable, "-c", "print('[1]'); print('[[2]]')"], stdout=subprocess.PIPE, text=True)
    proc.wait()  # both lines are in the pipe before the first is read
    assert first_line(proc.stdout.fileno()) == "[1]\n"
    out, _ = proc.communicate(timeout=30)
    assert out == "[[2]]\n"
