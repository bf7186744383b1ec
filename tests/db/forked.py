"""Run a function in several separate OS processes forked from one interpreter that imported it once.

A multi-process test needs real processes of their own on one store, but a fresh interpreter per process
spends 1-2 CPU-s importing SQLAlchemy, Alembic and the project before a few milliseconds of work.
:class:`Forked` starts one fresh interpreter (``python -m tests.db.forked``), which imports the
modules named in ``preload`` and the target's module, then forks one child per argument tuple; each child calls ``target(*args)`` and reports
what it returned (or its traceback) and what it printed.  Nothing is opened before the fork, so no engine
or connection crosses it: each child opens its own store.

A fresh interpreter rather than a fork of pytest's process: that one has threads and open stores, and
AppTest replaces ``__main__``, which multiprocessing's spawn and forkserver children would run again.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_siblings: Any = None  # in a child: the barrier shared by all children of one run


@dataclass(frozen=True)
class Outcome:
    """What one child did: its process id, exit code, return value or traceback, and its printed text."""

    pid: int
    exitcode: int
    result: Any
    error: str
    stdout: str
    stderr: str


class Forked:
    """``target`` (``"module:function"``) called once per entry of ``calls``, each in a child process of its own.

    ``preload`` names the modules the children need (the target may import them inside the function): the
    helper imports them once, before it forks.  The children start at once; ``pids`` is known when the
    constructor returns.  ``timeout`` bounds the whole run: past it, :meth:`outcomes` kills the helper and
    its children and raises ``TimeoutExpired``.
    """

    def __init__(
        self, target: str, calls: Sequence[Sequence[Any]], *, preload: Sequence[str] = (), timeout: float = 600
    ) -> None:
        self.timeout = timeout
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.db.forked", json.dumps([target, [list(a) for a in calls], list(preload)])],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # one process group: a timeout ends the helper and every child
        )
        assert self.proc.stdout is not None
        started = first_line(self.proc.stdout.fileno())
        if not started:
            raise RuntimeError(f"the helper failed before forking: {self.proc.communicate()[1][-2000:]}")
        self.pids: list[int] = json.loads(started)

    def running(self) -> bool:
        """True while any child is still running."""
        return self.proc.poll() is None

    def outcomes(self) -> list[Outcome]:
        """Wait for every child; their outcomes in the order of ``calls``."""
        try:
            out, err = self.proc.communicate(timeout=self.timeout)
        except BaseException:  # the timeout, or Ctrl-C (the helper's own session does not receive it)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.communicate()
            raise
        if self.proc.returncode != 0:
            raise RuntimeError(f"the helper failed: {err[-2000:]}")
        # The last line: anything a child wrote to its file descriptors directly comes before it.
        return [Outcome(**row) for row in json.loads(out.splitlines()[-1])]


def first_line(fd: int) -> str:
    """The helper's first line, read from ``fd`` a byte at a time.

    A buffered ``readline`` may take the outcomes' line too when the children finish at once (a loaded machine),
    and ``communicate`` reads the descriptor itself: that line would be lost.
    """
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        line += byte
    return line.decode()


def run_forked(
    target: str, calls: Sequence[Sequence[Any]], *, preload: Sequence[str] = (), timeout: float = 600
) -> list[Outcome]:
    """Call ``target(*args)`` for every ``args`` in ``calls``, each in a forked child; wait for all of them."""
    return Forked(target, calls, preload=preload, timeout=timeout).outcomes()


def wait_for_siblings(timeout: float = 120) -> None:
    """In a child: return once every child of this run has called it (so that they all go on together)."""
    _siblings.wait(timeout)


def _child(target: Callable[..., Any], args: Sequence[Any], siblings: Any, report: Any) -> None:
    global _siblings
    _siblings = siblings
    stdout, stderr = io.StringIO(), io.StringIO()
    result, error = None, ""
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            result = target(*args)
        except BaseException:  # reported to the test, which shows it
            error = traceback.format_exc()
            siblings.abort()  # the others stop waiting for this one at once
    report.send((result, error, stdout.getvalue(), stderr.getvalue()))
    report.close()
    if error:
        raise SystemExit(1)


def serve(spec: str, calls: Sequence[Sequence[Any]], preload: Sequence[str]) -> None:
    """The helper: fork the children of ``spec`` (``"module:function"``), print their ids, then their outcomes."""
    import multiprocessing

    for preloaded in preload:
        importlib.import_module(preloaded)
    module, name = spec.split(":")
    target = getattr(importlib.import_module(module), name)
    if "sqlalchemy.orm" in sys.modules:
        sys.modules["sqlalchemy.orm"].configure_mappers()  # once here rather than in every child
    # This interpreter has no threads and nothing open: forking it is safe.
    context = multiprocessing.get_context("fork")
    siblings = context.Barrier(len(calls))
    children = []
    for args in calls:
        receive, send = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(target, args, siblings, send))
        child.start()
        send.close()
        children.append((child, receive))
    print(json.dumps([child.pid for child, _ in children]), flush=True)
    rows = []
    for child, receive in children:
        try:
            result, error, out, err = receive.recv()
        except EOFError:  # the child ended without reporting (killed)
            result, error, out, err = None, "", "", ""
        child.join()
        rows.append(
            {
                "pid": child.pid,
                "exitcode": child.exitcode,
                "result": result,
                "error": error,
                "stdout": out,
                "stderr": err,
            }
        )
    print(json.dumps(rows), flush=True)


if __name__ == "__main__":
    # Through the module's importable name, so that the children's wait_for_siblings sees the barrier.
    from tests.db.forked import serve as serve_imported

    serve_imported(*json.loads(sys.argv[1]))
