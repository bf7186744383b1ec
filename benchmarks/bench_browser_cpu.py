"""CPU seconds of Chromium (and of the Streamlit server) per page load, as the browser tests load pages.

Serves the app on a scratch store (the test accounts, no collection), then signs ``admin`` in ``--loads``
times: open the app, fill the login form, wait until the signed-in page is idle.  Each load happens in a
browser context taken from the test fixtures' ``ContextPool`` (``tests/app/browser_helpers``) in the tests'
browser (``TEST_CHROMIUM``: the headless shell when installed), so that the numbers are those a browser test
pays.  CPU is read from ``/proc`` (user + system, the processes that
ended included), for Chromium's process tree and for the server, before and after the loads::

    python benchmarks/bench_browser_cpu.py --loads 6
    6 sign-ins (chromium-headless-shell, pooled contexts): Chromium 17.5 CPU-s (2.92 per load), server 2.7 CPU-s
    (0.46 per load), wall 13.6 s; load average 2.4

``--fresh`` opens each load in a new browser context (nothing kept between loads) and ``--full`` runs the
full browser (``/usr/bin/chromium``), for comparison; ``--login-page`` only opens the login page;
``--cookie`` signs in the way most browser tests do (``sign_in``: a session the store issued, set as the
browser's cookie, instead of the sign-in form)::

    python benchmarks/bench_browser_cpu.py --loads 5            # Chromium 2.57-2.86, server 0.40 CPU-s per load
    python benchmarks/bench_browser_cpu.py --loads 5 --cookie   # Chromium 1.85-1.89, server 0.05 CPU-s per load
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from db.engine import Store, sqlite_url  # noqa: E402
from tests.app.browser_helpers import (  # noqa: E402
    ACCOUNTS,
    CHROMIUM,
    TEST_CHROMIUM,
    ContextPool,
    add_users,
    launch_chromium,
    login,
    new_context,
    serve_sqlite,
    sign_in,
)

TICKS = os.sysconf("SC_CLK_TCK")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue  # the process ended meanwhile
            kids.setdefault(ppid, []).append(int(entry))
    return kids


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system) of ``root`` and its descendants, those that ended and were reaped included."""
    kids, total, todo = _children(), 0.0, [root]
    while todo:
        pid = todo.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15]) / TICKS  # utime stime cutime cstime
        todo.extend(kids.get(pid, []))
    return total


def _pid_named(name: str, exclude: str = "") -> int:
    """The topmost descendant of this process whose command line contains ``name`` (and not ``exclude``)."""
    kids, todo = _children(), [os.getpid()]
    while todo:
        pid = todo.pop(0)
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if name in cmd and not (exclude and exclude in cmd):
            return pid
        todo.extend(kids.get(pid, []))
    raise RuntimeError(f"no process {name!r} under this one")


def _load(context, pool: ContextPool, url: str, store, args: argparse.Namespace) -> None:
    """One page load in ``context``, then the context closed (``--fresh``) or handed back to ``pool``."""
    page = context.new_page()
    if args.login_page:
        page.goto(url)
        page.get_by_label("Username").wait_for(timeout=60_000)
    elif args.cookie:
        sign_in(page, url, store, "admin")
    else:
        login(page, url, "admin")
    context.close() if args.fresh else pool.give_back(context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=10)
    parser.add_argument("--fresh", action="store_true", help="a new browser context per load")
    parser.add_argument("--full", action="store_true", help="the full browser, not the headless shell")
    parser.add_argument("--login-page", action="store_true", help="only open the login page")
    parser.add_argument("--cookie", action="store_true", help="sign in with a session cookie, not the form")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="pooljudge-browser-cpu-"))
    db = work / "s.db"
    add_users(db, ACCOUNTS)
    store = Store(sqlite_url(db), upgrade=False)
    with serve_sqlite(db, work / "server.log", warm_up=True) as url, sync_playwright() as p:
        browser = launch_chromium(p, CHROMIUM if args.full else TEST_CHROMIUM)
        pool = ContextPool(browser)
        chromium, server = _pid_named("chromium", exclude="--type="), _pid_named("serve.py")
        _load(pool.take(), pool, url, store, args)  # the server's first page run is not the loads' cost
        before, wall = (tree_cpu(chromium), tree_cpu(server)), time.perf_counter()
        for _ in range(args.loads):
            _load(new_context(browser) if args.fresh else pool.take(), pool, url, store, args)
        after, wall = (tree_cpu(chromium), tree_cpu(server)), time.perf_counter() - wall
        pool.close()
        browser.close()
    used = [a - b for a, b in zip(after, before, strict=True)]
    store.dispose()
    what = "login page loads" if args.login_page else "cookie sign-ins" if args.cookie else "sign-ins"
    how = f"{'full browser' if args.full else Path(TEST_CHROMIUM).name}, {'new' if args.fresh else 'pooled'} contexts"
    print(
        f"{args.loads} {what} ({how}): Chromium {used[0]:.1f} CPU-s "
        f"({used[0] / args.loads:.2f} per load), server {used[1]:.1f} CPU-s ({used[1] / args.loads:.2f} per load), "
        f"wall {wall:.1f} s; load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
