"""What the server's background worker process does first: a lower CPU priority, and an exit with the server.

Kept free of imports beyond the standard library: the worker is spawned bare and imports this module to run
:func:`start_worker` before its first task.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def start_worker(niceness: int) -> None:
    """Lower this process's priority by ``niceness`` and, on Linux, have it terminated when its parent dies.

    A server killed without its shutdown (SIGKILL, an out-of-memory kill, a crash) would otherwise leave the
    worker behind, blocked on its task queue for good, holding a few hundred MB.
    """
    os.nice(niceness)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() == 1:  # the parent died before the line above: nobody would send the signal
            os._exit(0)
