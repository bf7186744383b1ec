"""One app server process of a deployment, for tests/db/test_signin_throttle.py: N wrong sign-ins at once.

``python -m tests.db.signin_worker URL CLIENT THREADS GATE``: opens the store, prints ``ready``, waits until
the file GATE exists (so that every process fires together), signs in THREADS times at once with wrong
passwords as ``ann`` from CLIENT, and prints how many passwords it verified.  A subprocess of its own
rather than multiprocessing: AppTest replaces ``__main__``, which spawned children would re-run.
"""

from __future__ import annotations

import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import db.sessions as sessions
from db.engine import Store

T0 = datetime(2026, 11, 27, 8, 0, 0, tzinfo=UTC)


def main(url: str, client: str, threads: int, gate: Path) -> int:
    store = Store(url, upgrade=False)
    real = sessions.verify_password
    calls: list[str] = []
    lock = threading.Lock()

    def counting(password_hash: str, password: str) -> bool:
        with lock:
            calls.append(password)
        time.sleep(0.05)  # production Argon2 time
        return real(password_hash, password)

    sessions.verify_password = counting  # this process is ours alone
    barrier = threading.Barrier(threads, timeout=60)

    def attempt(i: int) -> None:
        barrier.wait()
        sessions.login(store, "ann", f"wrong {i}", client, now=T0)

    print("ready", flush=True)
    deadline = time.monotonic() + 120
    while not gate.exists():
        if time.monotonic() > deadline:
            return 2
        time.sleep(0.005)
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(attempt, range(threads)))
    store.dispose()
    print(len(calls), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])))
