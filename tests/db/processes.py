"""What the multi-process tests run in each child process (through :mod:`tests.db.forked`).

Every function opens its own store: nothing opened by the test process or the helper is shared.  The
imports inside the functions are what :data:`PRELOAD` lists: the helper imports them once before it forks.
"""

from __future__ import annotations

from typing import Any

PRELOAD = {
    "label_all": ("sqlalchemy", "db.engine", "db.labelling", "db.models"),
    "open_store": ("alembic.command", "db.engine", "db.migrate"),
    "wrong_sign_ins": ("db.engine", "db.sessions"),
    "cli": ("alembic.command", "pooljudge.cli", "pooljudge.cli.import_", "db.opening", "db.importer", "db.migrate"),
}
"""The modules each function needs, by function name."""


def label_all(url: str, username: str) -> int:
    """Label every assignment of ``username``, one write transaction each, racing the other children."""
    from sqlalchemy import select

    from db.engine import Store
    from db.labelling import record_judgment
    from db.models import Assignment, User
    from tests.db.forked import wait_for_siblings

    store = Store(url, upgrade=False)
    with store.read() as s:
        uid = s.scalar(select(User.id).where(User.username == username))
        ids = list(s.scalars(select(Assignment.id).where(Assignment.user_id == uid).order_by(Assignment.id)))
    wait_for_siblings()  # every writer starts labelling together
    for n, aid in enumerate(ids):
        with store.write() as s:
            record_judgment(s, uid, aid, (n + uid) % 4, elapsed_ms=1)
    store.dispose()
    return len(ids)


def open_store(url: str) -> None:
    """Open the store at ``url`` the way an app server does (migrating it to the head), then close it.

    The children open it together, once every one has started.
    """
    from db.engine import Store
    from tests.db.forked import wait_for_siblings

    wait_for_siblings()
    Store(url).dispose()


def wrong_sign_ins(url: str, client: str, threads: int) -> int:
    """One app server: ``threads`` wrong sign-ins as ``ann`` from ``client`` at once; how many passwords it verified.

    The children fire together, once every one has opened the store.
    """
    import threading
    import time
    from concurrent.futures import ThreadPoolExecutor
    from datetime import UTC, datetime

    import db.sessions as sessions
    from db.engine import Store
    from tests.db.forked import wait_for_siblings

    store = Store(url, upgrade=False)
    real = sessions.verify_password
    calls: list[str] = []
    lock = threading.Lock()

    def counting(stored_hash: str, password: str) -> bool:
        with lock:
            calls.append(password)
        time.sleep(0.05)  # production Argon2 time
        return real(stored_hash, password)

    sessions.verify_password = counting  # this process is ours alone
    barrier = threading.Barrier(threads, timeout=60)
    now = datetime(2026, 11, 27, 8, 0, 0, tzinfo=UTC)

    def attempt(i: int) -> None:
        barrier.wait()
        sessions.login(store, "ann", f"wrong {i}", client, now=now)

    wait_for_siblings()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(attempt, range(threads)))
    store.dispose()
    return len(calls)


def cli(argv: list[str]) -> Any:
    """``pooljudge ARGV``: its exit code."""
    from pooljudge.cli import main

    return main(argv)
