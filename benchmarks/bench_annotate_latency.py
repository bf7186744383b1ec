"""Key press to next passage: how long an annotator waits between items, in headless Chromium.

Starts the real app on a scratch store holding the demo collection, gives one
annotator a pool of demo pairs, logs in, and presses grade keys; each timing
runs from the key press until the next passage's text is in the DOM.  Prints
the median and 95th percentile over the labels, e.g.::

    annotate: key press -> next passage over 60 labels: median 95 ms, p95 150 ms (max 210 ms); target p95 <= 200 ms: met

Each label goes through the whole correct path: the key's callback submits the
(assignment, render token) shown, the store checks account, owner, package and
standing label in one short write, and only the fragment is drawn again.

Usage: python benchmarks/bench_annotate_latency.py [--labels 60]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from core.scale import GRADES

REPO = Path(__file__).resolve().parents[1]
PASSWORD = "correct horse battery"
TARGET_P95_MS = 200  # issue 9: key press -> next passage, headless Chromium, 2-core machine
# drawn: the progress line is there and no element is left over from the previous run
SETTLED = """() => document.querySelector('[data-testid="stProgress"]')
    && !document.querySelector('[data-stale="true"]')"""
# the next passage is visible: the progress line names the next item and nothing stale remains
NEXT_SHOWN = """(prev) => { const p = document.querySelector('[data-testid="stProgress"]');
    return p && p.innerText !== prev && !document.querySelector('[data-stale="true"]'); }"""


def cli(db: Path, *args: str) -> None:
    env = {**os.environ, "POOLJUDGE_PASSWORD": PASSWORD}
    subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "--db", str(db), "-q", *args], env=env, check=True, capture_output=True
    )


def _labels_stored(db: Path) -> int:
    """Label judgments in the store, provided each lies on a distinct assignment (else -1)."""
    import sqlite3

    with sqlite3.connect(db) as conn:
        n, distinct = conn.execute(
            "SELECT count(*), count(DISTINCT assignment_id) FROM judgments WHERE action = 'label'"
        ).fetchone()
    return n if n == distinct else -1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=60)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="pooljudge-latency-"))
    db = work / "s.db"
    cli(db, "demo")
    cli(db, "user", "add", "ann", "--role", "annotator")
    cli(db, "pool", "-c", "demo-bilingual", "--name", "bench", "--run", "bm25", "--run", "minilm", "--depth", "3")
    cli(db, "assign", "-c", "demo-bilingual", "--pool", "bench", "--per-pair", "1", "--seed", "3")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "POOLJUDGE_DB": str(db), "POOLJUDGE_CACHE": str(work / "cache")}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            str(REPO / "app.py"),
            "--server.port",
            str(port),
            "--server.headless",
            "true",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(work / "server.log", "w"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(url + "/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(url)
            page.get_by_label("Username").fill("ann")
            page.get_by_label("Password", exact=True).fill(PASSWORD)
            page.get_by_role("button", name="Log in").click()
            page.get_by_text("Passage", exact=True).wait_for(timeout=60_000)
            # the login's follow-up runs can show the old and the new panel side by side for a moment
            page.wait_for_function(SETTLED, timeout=60_000)
            page.wait_for_timeout(1000)  # keyboard shortcuts attach a moment after the buttons first mount
            timings = []
            for i in range(args.labels):
                page.wait_for_function(SETTLED, timeout=30_000)  # the previous item is fully drawn
                progress = page.locator('[data-testid="stProgress"]').inner_text()
                start = time.perf_counter()
                page.keyboard.press(str(GRADES[i % len(GRADES)]))  # a graded level's shortcut is its digit
                page.wait_for_function(NEXT_SHOWN, arg=progress, polling="raf", timeout=30_000)
                timings.append((time.perf_counter() - start) * 1000)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)
    stored = _labels_stored(db)
    if stored != args.labels:  # a fast page that lost or doubled a key press would be no result at all
        sys.exit(f"expected {args.labels} labels on {args.labels} distinct items, the store holds {stored}")
    timings.sort()
    p95 = timings[min(len(timings) - 1, int(round(0.95 * (len(timings) - 1))))]
    median = statistics.median(timings)
    verdict = "met" if p95 <= TARGET_P95_MS else "NOT met"
    print(
        f"annotate: key press -> next passage over {len(timings)} labels: median {median:.0f} ms, "
        f"p95 {p95:.0f} ms (max {timings[-1]:.0f} ms); target p95 <= {TARGET_P95_MS} ms: {verdict}"
    )


if __name__ == "__main__":
    main()
