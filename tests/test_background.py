"""pooljudge.ui.background: one computation per slot and key, in a worker process by default, errors kept."""

from __future__ import annotations

import math
import signal
import subprocess
import sys
import time
from datetime import datetime
from functools import partial
from pathlib import Path

import pytest

from pooljudge.ui.background import Background


def _settled(bg, slot):
    """The slot's state once its computation's done callback ran (it runs just after the result is set)."""
    deadline = time.monotonic() + 30
    while (state := bg.state(slot))[1]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return state


@pytest.mark.parametrize("processes", [True, False])
def test_a_slot_is_computed_once_per_key_and_kept(processes):
    bg = Background(processes=processes)
    first = bg.get("slot", 1, partial(math.factorial, 5), wait=60)
    assert first is not None and (first.value, first.key) == (120, 1)
    assert bg.get("slot", 1, partial(math.factorial, 6), wait=60) is first  # the same key: not computed again
    second = bg.get("slot", 2, partial(math.factorial, 6), wait=60)
    assert second is not None and (second.value, second.key) == (720, 2)
    assert _settled(bg, "slot")[:3] == (second, False, None)


def test_an_error_is_kept_and_the_last_value_stays():
    bg = Background(processes=True)
    assert bg.get("slot", 1, partial(math.factorial, 3), wait=60).value == 6
    shown = bg.get("slot", 2, partial(math.factorial, -1), wait=60)  # ValueError in the worker
    assert shown is not None and (shown.value, shown.key) == (6, 1)
    snapshot, computing, error, _took = _settled(bg, "slot")
    assert (computing, error) == (False, "factorial() not defined for negative values")


@pytest.mark.slow
def test_an_older_value_is_shown_after_the_short_stale_wait():
    """Under constant labelling every request has a new key: with a value to show it waits only ``wait_stale``."""
    bg = Background(processes=False)
    assert bg.get("slot", 1, partial(math.factorial, 4), wait=60).value == 24
    started = time.monotonic()
    shown = bg.get("slot", 2, partial(_slow_factorial, 5), wait=60, wait_stale=0.05)
    assert time.monotonic() - started < 1.5  # not the 2 s the computation takes
    assert (shown.value, shown.key) == (24, 1) and bg.state("slot")[1] is True
    assert _settled(bg, "slot")[0].value == 120


def _slow_factorial(n: int) -> int:
    time.sleep(2)
    return math.factorial(n)


def test_the_worker_never_runs_the_page_that_streamlit_made_main(tmp_path, monkeypatch):
    """Streamlit runs a page as ``__main__``: a spawned worker must not re-run that file (it broke the pool)."""
    import sys
    import types

    page = tmp_path / "page.py"
    page.write_text("raise RuntimeError('the page ran in the worker')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(page)
    monkeypatch.setitem(sys.modules, "__main__", main)
    bg = Background(processes=True)
    shown = bg.get("slot", 1, partial(math.factorial, 5), wait=60)
    assert shown is not None and shown.value == 120, bg.state("slot")
    assert sys.modules["__main__"] is main


def test_a_wait_that_sees_the_result_returns_it_before_the_done_callback_runs():
    """A future wakes its waiters before it runs its done callbacks: ``get`` must not return the older snapshot.

    The Review page's Adjudication tab draws the queue right after a reassignment: with the callback late,
    the table showed the old 4th annotator (tests/app/test_review_scale.py).
    """
    bg = Background(processes=False)
    assert bg.get("slot", 1, partial(math.factorial, 4), wait=60).value == 24
    on_time = bg._done

    def late(*args):  # the callback's thread loses the race to the waiting page
        time.sleep(0.5)
        on_time(*args)

    bg._done = late  # type: ignore[method-assign]
    shown = bg.get("slot", 2, partial(math.factorial, 5), wait=60)
    assert shown is not None and (shown.value, shown.key) == (120, 2)
    assert _settled(bg, "slot")[0] is shown  # the late callback changes nothing


def test_with_an_older_value_the_page_asks_for_no_wait(monkeypatch):
    """A tab switch under constant labelling (a new key each request) shows the table it has at once.

    ``shown_value`` asks ``Background.get`` for a stale wait of 0 (unless ``$POOLJUDGE_BACKGROUND_WAIT`` is set),
    and ``get`` with that wait returns the older snapshot while the new computation is still blocked.
    """
    import threading

    import pooljudge.ui.background as background_module

    monkeypatch.delenv(background_module.WAIT_VARIABLE, raising=False)
    bg = Background(processes=False)
    assert bg.get("slot", 1, partial(math.factorial, 4), wait=60).value == 24
    gate = threading.Event()
    asked: list[tuple[float, float | None]] = []
    real_get = bg.get

    def recording_get(slot, key, compute, *, wait=0.0, wait_stale=None, wait_queued=None):
        asked.append((wait, wait_stale))
        return real_get(slot, key, compute, wait=wait, wait_stale=wait_stale, wait_queued=wait_queued)

    monkeypatch.setattr(bg, "get", recording_get)
    monkeypatch.setattr(background_module, "background", lambda: bg)
    monkeypatch.setattr(background_module, "_newer", lambda *args: None)  # the note is a Streamlit fragment
    shown = background_module.shown_value("slot", 2, partial(_gated_factorial, gate, 5), what="the table")
    assert shown == 24 and asked == [(background_module.FIRST_WAIT, 0.0)]
    assert bg.state("slot")[1] is True  # the new value is still being computed: nothing waited for it
    gate.set()
    assert _settled(bg, "slot")[0].value == 120

    monkeypatch.setenv(background_module.WAIT_VARIABLE, "7")  # the app tests: the store as it is
    assert background_module.shown_value("slot", 2, partial(math.factorial, 5), what="the table") == 120
    assert asked[-1] == (7.0, 7.0)


def test_a_first_computation_queued_behind_another_is_not_waited_for():
    """The one worker computes one table at a time: a table first asked for while another is being computed
    cannot be in within the first wait, so the page shows its notice at once (``wait_queued``).

    Found with the page-budget benchmark: under steady labelling the worker recomputes the agreement report
    (about 24 s on the 20,000-pair store) and every first visit of another Review tab waited its 0.2 s for
    nothing before the notice.
    """
    import threading

    bg = Background(processes=False)
    gate = threading.Event()
    assert bg.get("slow", 1, partial(_gated_factorial, gate, 4), wait=0.0) is None  # the worker is busy
    started = time.monotonic()
    assert bg.get("quick", 1, partial(math.factorial, 3), wait=60, wait_queued=0.0) is None
    assert time.monotonic() - started < 1.0 and bg.state("quick")[1] is True  # queued, not waited for
    gate.set()
    assert _settled(bg, "slow")[0].value == 24
    assert _settled(bg, "quick")[0].value == 6
    # alone on the worker, a first computation is waited for as before
    assert bg.get("alone", 1, partial(math.factorial, 5), wait=60, wait_queued=0.0).value == 120


def test_the_page_asks_not_to_wait_behind_another_table_unless_told_to_wait(monkeypatch):
    import pooljudge.ui.background as background_module

    asked = []

    class Recording:
        def get(self, slot, key, compute, *, wait=0.0, wait_stale=None, wait_queued=None):
            asked.append((wait, wait_stale, wait_queued))
            return background_module.Snapshot(1, key, datetime.now())

    monkeypatch.setattr(background_module, "background", lambda: Recording())
    monkeypatch.delenv(background_module.WAIT_VARIABLE, raising=False)
    assert background_module.shown_value("slot", 1, partial(math.factorial, 1), what="the table") == 1
    monkeypatch.setenv(background_module.WAIT_VARIABLE, "7")  # the app tests: every table as the store is
    assert background_module.shown_value("slot", 1, partial(math.factorial, 1), what="the table") == 1
    assert asked == [(background_module.FIRST_WAIT, 0.0, 0.0), (7.0, 7.0, 7.0)]


def _gated_factorial(gate, n: int) -> int:
    assert gate.wait(60)
    return math.factorial(n)


def test_the_worker_process_runs_below_the_server_s_priority():
    """Tables recomputed after every label must not take CPU from the requests that draw pages."""
    import os

    from pooljudge.ui.background import WORKER_NICENESS

    bg = Background(processes=True)
    shown = bg.get("slot", 1, partial(os.nice, 0), wait=60)  # os.nice(0): the calling process's niceness
    assert shown is not None and shown.value == min(os.nice(0) + WORKER_NICENESS, 19) > os.nice(0)


@pytest.mark.slow  # a worker process: 1.7 s in a full run
def test_the_worker_outlives_the_thread_that_started_it():
    """The server starts its worker from a page's script thread, which ends with the page's run; the next table
    must find the same worker (a parent-death signal bound to that thread killed it after its first table)."""
    import os
    import threading

    bg = Background(processes=True)
    first: list = []
    starter = threading.Thread(target=lambda: first.append(bg.get("slot", 1, partial(os.getpid), wait=60)))
    starter.start()
    starter.join()
    time.sleep(1.5)  # the signal came at once; the worker's own parent check runs every second
    again = bg.get("slot", 2, partial(os.getpid), wait=60)
    assert first[0] is not None and again is not None and again.key == 2, bg.state("slot")
    assert again.value == first[0].value  # the same worker process, alive


@pytest.mark.slow  # a server process and its worker: 2.1 s in a full run
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_worker_process_ends_when_its_server_is_killed(tmp_path):
    """A server killed without its shutdown (SIGKILL, out of memory) must not leave its worker behind for good."""
    script = tmp_path / "server.py"
    script.write_text(
        "import os, signal\n"
        "from functools import partial\n"
        "from pooljudge.ui.background import Background\n"
        "shown = Background(processes=True).get('slot', 1, partial(os.getpid), wait=60)\n"
        "print(shown.value, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    worker = int(done.stdout.split()[0])
    deadline = time.monotonic() + 30
    while _alive(worker):
        assert time.monotonic() < deadline, f"worker {worker} still running 30 s after its server was killed"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its exit status waits to be read
