"""Tables a page shows without computing them on the request: computed in a background thread, kept per key.

A page names what it needs (``slot``: e.g. the Review page's adjudication queue of a collection) and the
key of its inputs (e.g. the collection's judgment marker, which changes with every label).  If the last
result was computed for that key it is shown; otherwise one computation starts in the server's
background worker and the page waits for it at most ``wait`` seconds (a small collection's table is
there by then, so nothing changes for it); past that it shows the last result, said to be updating,
or, the first time, a notice that refreshes the page once the result is in.  One computation per slot
at a time, one worker process for all, at a lower CPU priority (:data:`WORKER_NICENESS`): a page's request
threads keep the other core and the GIL, and get a busy core first.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import pickle
import sys
import threading
import time
import types
from collections.abc import Callable, Hashable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool as BrokenExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import streamlit as st

from pooljudge.transfer import Sliced, in_slices
from pooljudge.ui.script_control import stop_run
from pooljudge.ui.warmup import PATIENCE_S, wait_for_page_runs
from pooljudge.worker_init import start_worker


class Decoding:
    """A :class:`~pooljudge.transfer.Sliced` list, decoded a slice at a time.

    :meth:`start` decodes it in a thread that takes each slice only while no page is drawn (or after
    ``patience_s``), until :meth:`cancel`; :meth:`value` decodes what is left at once, in the caller's thread (a
    page that needs it).
    """

    def __init__(self, sliced: Sliced) -> None:
        self._slices = list(sliced.slices)
        self._items: list = []
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self.decoded = 0
        """Slices decoded so far."""

    def _step(self) -> bool:
        """Decode the next slice; False when none is left."""
        with self._lock:
            if self.decoded == len(self._slices):
                return False
            self._items.extend(pickle.loads(self._slices[self.decoded]))
            self._slices[self.decoded] = b""  # its bytes are not needed again
            self.decoded += 1
            return True

    def value(self) -> list:
        while self._step():
            pass
        return self._items

    def start(self, patience_s: float = PATIENCE_S) -> threading.Thread:
        def decode() -> None:
            while not self._cancelled.is_set():
                wait_for_page_runs(patience_s)
                if self._cancelled.is_set() or not self._step():
                    return

        thread = threading.Thread(target=decode, name="pooljudge-decode", daemon=True)
        thread.start()
        return thread

    def cancel(self) -> None:
        """Stop decoding in the background (a newer table replaced this one); :meth:`value` still works."""
        self._cancelled.set()


@dataclass
class Snapshot:
    """A computed value, the key of the inputs it was computed from, and when it was finished.

    ``payload`` is the value, or a :class:`Decoding` of it (a long list from the worker process).
    """

    payload: Any
    key: Hashable
    finished: datetime

    @property
    def value(self) -> Any:
        return self.payload.value() if isinstance(self.payload, Decoding) else self.payload


@dataclass
class _Slot:
    snapshot: Snapshot | None = None
    error: str | None = None
    running: Future | None = None
    running_key: Hashable = None
    started: float = 0.0
    history: list[float] = field(default_factory=list)  # the last computations' durations, seconds


class Background:
    """The process-wide slots and their one worker (:func:`background`).

    The worker is a separate process by default (``$POOLJUDGE_BACKGROUND=process``): the tables' pure-Python
    work then never holds this server's GIL while a page is drawn, and ``compute`` must be picklable (a
    module-level function or a ``functools.partial`` of one).  ``thread`` runs it in a thread of this process
    (the app tests, which patch the functions it calls).
    """

    def __init__(self, *, processes: bool | None = None) -> None:
        self._lock = threading.RLock()  # a done callback may run in the submitting thread, under the lock
        self._slots: dict[Hashable, _Slot] = {}
        mode = os.environ.get(MODE_VARIABLE) or "process"
        self._processes = mode == "process" if processes is None else processes
        self._pool: Executor = self._new_pool()
        self._generations: dict[Hashable, int] = {}

    @property
    def in_processes(self) -> bool:
        """Whether the worker is a separate process (the app) rather than a thread (the app tests)."""
        return self._processes

    def _new_pool(self) -> Executor:
        if self._processes:  # spawn: forking a server with running threads could copy a held lock
            return ProcessPoolExecutor(
                max_workers=1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,  # a standard-library-only module: the bare worker imports little
                initargs=(WORKER_NICENESS,),
            )
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="pooljudge-background")

    def touch(self, scope: Hashable) -> None:
        """Note a write under ``scope`` that the inputs' key does not see (a reassignment moves no judgment)."""
        with self._lock:
            self._generations[scope] = self._generations.get(scope, 0) + 1

    def generation(self, scope: Hashable) -> int:
        """How many :meth:`touch` calls ``scope`` had: part of the key of what depends on those writes."""
        with self._lock:
            return self._generations.get(scope, 0)

    def get(
        self,
        slot: Hashable,
        key: Hashable,
        compute: Callable[[], Any],
        *,
        wait: float = 0.0,
        wait_stale: float | None = None,
        wait_queued: float | None = None,
    ) -> Snapshot | None:
        """The newest snapshot of ``slot`` after starting (and awaiting up to ``wait`` s) a computation for ``key``.

        ``wait_stale``: the wait instead when the slot already has an older snapshot to show (default ``wait``).
        ``wait_queued``: the wait instead when another slot's computation is ahead of this one on the worker
        (default ``wait``).
        """
        with self._lock:
            s = self._slots.setdefault(slot, _Slot())
            if s.snapshot is not None and s.snapshot.key != key and wait_stale is not None:
                wait = wait_stale
            if wait_queued is not None and any(o.running is not None for o in self._slots.values() if o is not s):
                wait = min(wait, wait_queued)
            if (s.snapshot is None or s.snapshot.key != key) and s.running is None:
                s.started = time.monotonic()
                try:
                    future = self._submit(compute)
                except (BrokenExecutor, RuntimeError):  # the worker died (killed, out of memory): a new one
                    self._pool = self._new_pool()
                    future = self._submit(compute)
                s.running, s.running_key = future, key
                future.add_done_callback(functools.partial(self._done, s, key))
            running = s.running
        if running is not None and wait > 0:
            try:
                running.result(timeout=wait)
            except Exception:  # noqa: BLE001 (a timeout, or the computation's own error, kept in the slot)
                pass
        with self._lock:
            # a future wakes its waiters before it runs its done callbacks: settle it here, not a moment later
            if running is not None and running.done() and s.running is running:
                self._done(s, s.running_key, running)
            return s.snapshot

    def _submit(self, compute: Callable[[], Any]) -> Future:
        """Submit ``compute``; a spawned worker starts with a bare ``__main__``.

        Streamlit runs each page as the module ``__main__`` (with the page's ``__file__``), and a spawned
        process re-runs its parent's ``__main__`` file first: it would run the page script.  The worker is
        started here, in this call, so ``__main__`` is a bare module for the moment it takes.
        """
        if not self._processes:
            return self._pool.submit(compute)
        main = sys.modules.get("__main__")
        sys.modules["__main__"] = types.ModuleType("__main__")
        try:
            return self._pool.submit(in_slices, compute)
        finally:
            if main is not None:
                sys.modules["__main__"] = main

    def _done(self, s: _Slot, key: Hashable, future: Future) -> None:
        error = future.exception()
        with self._lock:
            if s.running is not future:  # settled already, by the request that awaited it
                return
            s.running = None
            if error is not None:  # shown by the page; the next request tries again
                s.error = str(error) or type(error).__name__
                return
            payload = future.result()
            if isinstance(payload, Sliced):  # decoded between page runs, or by the first page that reads it
                payload = Decoding(payload)
                payload.start()
            if s.snapshot is not None and isinstance(s.snapshot.payload, Decoding):
                s.snapshot.payload.cancel()  # replaced: a page still showing it decodes what it reads itself
            s.snapshot, s.error = Snapshot(payload, key, datetime.now()), None
            s.history = [*s.history[-4:], time.monotonic() - s.started]

    def state(self, slot: Hashable) -> tuple[Snapshot | None, bool, str | None, float | None]:
        """``(snapshot, computing, last error, seconds the last computation took)`` of ``slot``."""
        with self._lock:
            s = self._slots.get(slot, _Slot())
            return s.snapshot, s.running is not None, s.error, (s.history[-1] if s.history else None)


@st.cache_resource(show_spinner=False)
def background() -> Background:
    """The server's one :class:`Background` (a Streamlit resource: shared by every session)."""
    return Background()


WORKER_NICENESS = 10
"""How much lower the worker process's CPU priority is than the server's: while labels arrive every table is
recomputed again and again, and the requests that draw pages must not wait behind it for a core."""
FIRST_WAIT = 0.2
"""Seconds a request waits for a table computed for the first time: a small collection's table is in by then
(no notice flashes).  Not waited when the one worker is computing another table first (under steady labelling it
always is): this one cannot be in by then, and the notice shows at once."""
MODE_VARIABLE = "POOLJUDGE_BACKGROUND"
"""``process`` (the default) or ``thread``: where :class:`Background` computes."""
WAIT_VARIABLE = "POOLJUDGE_BACKGROUND_WAIT"
"""Seconds a page waits for a table before showing the last one (default :data:`FIRST_WAIT`; the app tests set minutes, so a
loaded test machine sees every table computed for the store as it is)."""


def shown_value(
    slot: Hashable, key: Hashable, compute: Callable[[], Any], *, what: str, wait: float | None = None
) -> Any:
    """The value to show for ``slot``: fresh if it is ready within ``wait`` s, else the last one with a note.

    The first time (nothing computed yet) the page shows a notice and stops; a fragment reruns the page
    when the value is in.  ``what`` names the table in the notices; ``wait`` defaults to
    ``$POOLJUDGE_BACKGROUND_WAIT`` or :data:`FIRST_WAIT`.  When an older value can be shown it is shown at once, without
    waiting (unless the variable is set: the app tests want the store as it is); the note under it says that
    a newer one is being computed and offers it once it is in.
    """
    configured = os.environ.get(WAIT_VARIABLE)
    if wait is None:
        wait = float(configured) if configured else FIRST_WAIT
    # with a table to show, a request under constant labelling (a new key each time) must not wait at all, nor
    # for a table the one worker can start only after another one
    no_wait = wait if configured else 0.0
    snap = background().get(slot, key, compute, wait=wait, wait_stale=no_wait, wait_queued=no_wait)
    if snap is None:
        _, computing, error, _ = background().state(slot)
        if error is not None and not computing:
            st.error(f"Computing {what} failed: {error}")
            stop_run()
        st.info(f"Computing {what} in the background: this page shows it as soon as it is ready.")
        _await_first(slot)
        stop_run()
    if snap.key != key:
        _newer(slot, snap.finished, what)
    return snap.value


_polling = threading.local()  # the container a page's tabs named for the refresher (polls_in), per script run


@contextmanager
def polls_in(container: Any) -> Iterator[None]:
    """Draw the first-time refresher (:func:`shown_value`) into ``container`` while the block runs.

    A page whose tabs are one fragment names a container it draws at the same place on every run, above the
    tabs.  A refresher drawn inside a tab would be a new fragment in each tab; once its tab is closed
    Streamlit drops it, but the browser keeps asking for it every second.  At one place it is the same
    fragment whichever tab waits, and it goes when the page reruns with the table.
    """
    _polling.home = container
    try:
        yield
    finally:
        _polling.home = None


def _await_first(slot: Hashable) -> None:
    home = getattr(_polling, "home", None)
    if home is None:
        _refresher(slot)
    else:
        with home:
            _refresher(slot)


@st.fragment(run_every=1.0)
def _refresher(slot: Hashable) -> None:
    if background().state(slot)[0] is not None:
        st.rerun(scope="app")


def _newer(slot: Hashable, shown: datetime, what: str) -> None:
    """Under a table computed for older inputs: the newer one's button once it is in, else when this one was computed.

    Drawn on each run, not refreshed on a timer: under steady labelling a newer table is always being counted,
    and a timer per table kept asking the server for reruns after its tab was closed.
    """
    snap, computing, _, took = background().state(slot)
    if snap is not None and snap.finished > shown:
        # the click's rerun draws the newest snapshot, which the slot holds by then
        st.button(f"Show the newer {what} (computed at {snap.finished:%H:%M:%S})", key=f"newer_{hash(slot)}")
        return
    cost = f" (takes about {took:.0f} s)" if took else ""
    st.caption(
        f"Computed at {shown:%H:%M:%S}; labels stored since are being counted in the background{cost}."
        if computing
        else f"Computed at {shown:%H:%M:%S}."
    )
