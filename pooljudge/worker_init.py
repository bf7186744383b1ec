"""What the server's background worker process does first: a lower CPU priority, and an exit with the server.

Kept free of imports beyond the standard library: the worker is spawned bare and imports this module to run
:func:`start_worker` before its first task.
"""

from __future__ import annotations

import os
import threading
import time

PARENT_CHECK_S = 1.0
"""How often the worker checks that the server that started it is still running."""


def start_worker(niceness: int) -> None:
    """Lower this process's priority by ``niceness`` and end it when its parent (the server) is gone.

    A server killed without its shutdown (SIGKILL, an out-of-memory kill, a crash) would otherwise leave the
    worker behind, blocked on its task queue for good, holding a few hundred MB.  The worker watches for its
    parent's end itself: Linux's parent-death signal (``PR_SET_PDEATHSIG``) fires when the *thread* that
    started the process ends, and the server starts its worker from a page's script thread, which ends with
    the page's run; the worker was killed after its first table.
    """
    os.nice(niceness)
    parent = os.getppid()
    threading.Thread(target=_exit_with, args=(parent,), name="pooljudge-parent-watch", daemon=True).start()


def _exit_with(parent: int) -> None:
    while os.getppid() == parent:  # a process whose parent ends is given another one (init or a subreaper)
        time.sleep(PARENT_CHECK_S)
    os._exit(0)
