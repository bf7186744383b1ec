"""Page budgets: how long each page of the real app takes to show its content, in headless Chromium, while another
client labels without pause.

Builds a generated, seeded store (``benchmarks/page_budget_store.py``: 2,000 queries, 20,000 pooled pairs, 60,000
assignments, about 54,000 labels), serves the app on it (``serve.py``, as ``make run`` does), starts a labeller
process that stores labels through the library (``db.labelling.record_judgment``, one transaction per label, as
fast as the store takes them: every label changes the judgment marker the Review page keys its tables on), logs
the admin in and opens every page from the sidebar, then every tab of the Review and Admin pages.

- first paint: from the click in the sidebar until the page's title and a first content element (a table, a
  form, a metric, a chart, a notice or the tabs) are on screen and nothing of the previous page is left; budget
  1 s;
- tab switch: from the click on a tab until its panel shows a content element; budget 0.5 s.

Two passes: ``cold`` (the first visit of each page after the server started: its imports, the first
computations) and ``warm`` (the second visit, as a user who works in the app sees it).  Prints one table per pass
(page, measured ms, budget, ratio) and the labeller's rate.  No assertion: the numbers go to the README.

Usage: python benchmarks/bench_page_budget.py [--queries 2000] [--store PATH (reuse a built store)] [--rate LABELS/S]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.page_budget_store import build  # noqa: E402
from tests.app.browser_helpers import launch_chromium, login, screenshot, serve_sqlite, wait_idle  # noqa: E402

FIRST_PAINT_MS = 1000
TAB_SWITCH_MS = 500
PAGES = [
    "Collections overview",
    "Import",
    "Pooling",
    "Runs and export",
    "Metrics",
    "Error analysis",
    "Dataset statistics",
    "Annotate",
    "Review",
    "Admin",
    "Labelling simulation",
    "Manage",
    "Models",
]
HEADINGS = {"Collections overview": "pooljudge", "Runs and export": "Runs"}  # a page whose title differs
TABS = {
    "Review": ["Pairs", "Ranked list", "Adjudication", "Quality control", "Throughput", "Final labels", "Agreement"],
    "Admin": ["Assignments", "Quality control", "Qrels", "Users"],
}
CONTENT = (
    '[data-testid="stDataFrame"], [data-testid="stForm"], [data-testid="stMetric"], [data-testid="stAlert"], '
    '[data-testid="stPlotlyChart"], [data-testid="stTabs"], [data-testid="stExpander"], [data-testid="stCaptionContainer"]'
)
PAINTED = """([heading, content]) => {
    const main = document.querySelector('[data-testid="stMain"]');
    if (!main || document.querySelector('[data-stale="true"]')) return false;
    const h1 = main.querySelector('h1');
    return !!h1 && h1.innerText.trim().startsWith(heading) && !!main.querySelector(content);
}"""
PANEL_FILLED = """([label, content]) => {
    const tab = [...document.querySelectorAll('[role="tab"]')].find((t) => t.innerText.trim() === label);
    if (!tab || tab.getAttribute('aria-selected') !== 'true' || document.querySelector('[data-stale="true"]')) return false;
    const panels = [...document.querySelectorAll('[data-testid="stTabs"] [role="tabpanel"]')];
    return panels.some((p) => p.offsetParent !== null && p.querySelector(content));
}"""
TIMEOUT_MS = 120_000
POLL_MS = 20
"""How often a wait re-checks its condition.  Not on every animation frame (``polling="raf"``): that keeps
Chromium drawing 60 frames a second in software for as long as a page loads, CPU taken from the server it
measures on the same two cores (a user's browser runs on the user's machine); 20 ms is finer than the budgets."""


def labeller(db: str, stop: multiprocessing.synchronize.Event, counter, rate: float = 0.0) -> None:  # type: ignore[name-defined]
    """Store labels on the open labelling assignments, one transaction each, until ``stop`` is set: as fast as
    the store takes them, or ``rate`` labels a second."""
    import random

    from sqlalchemy import select

    from core.scale import GRADES
    from db.engine import Store, sqlite_url
    from db.labelling import record_judgment
    from db.models import Assignment, Judgment

    store = Store(sqlite_url(db))
    with store.read() as s:
        labelled = set(s.scalars(select(Judgment.assignment_id)))
        todo = [
            (a, u)
            for a, u in s.execute(select(Assignment.id, Assignment.user_id).where(Assignment.purpose == "label"))
            if a not in labelled
        ]
    rng = random.Random(1)
    rng.shuffle(todo)
    due = time.monotonic()
    for aid, uid in todo:
        if stop.is_set():
            break
        if rate:
            due += 1 / rate
            stop.wait(max(0.0, due - time.monotonic()))
        try:
            with store.write() as s:
                record_judgment(s, uid, aid, rng.choice(GRADES), elapsed_ms=rng.randint(1500, 9000))
        except (ValueError, LookupError, PermissionError):
            continue  # an assignment closed meanwhile
        with counter.get_lock():
            counter.value += 1
    store.dispose()


def _ms(page, start: float, script: str, arg: list[str]) -> float:
    """Milliseconds since ``start`` until ``script(arg)`` holds; infinity (and a screenshot) after two minutes."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(script, arg=arg, timeout=TIMEOUT_MS, polling=POLL_MS)
    except PlaywrightTimeout:
        screenshot(page, f"page-budget-timeout-{arg[0]}".replace(" ", "-"))
        return float("inf")
    return (time.perf_counter() - start) * 1000


def first_paint(page, title: str) -> float:
    """Milliseconds from the sidebar click on ``title`` until the page's heading and a content element show."""
    wait_idle(page, 120_000)
    link = page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True)
    start = time.perf_counter()
    link.click()
    return _ms(page, start, PAINTED, [HEADINGS.get(title, title.split(" ")[0]), CONTENT])


def tab_switch(page, label: str) -> float:
    """Milliseconds from the click on the tab ``label`` until its panel shows a content element."""
    wait_idle(page, 120_000)
    tab = page.get_by_role("tab", name=label, exact=True)
    start = time.perf_counter()
    tab.click()
    return _ms(page, start, PANEL_FILLED, [label, CONTENT])


FAILED_TEXT = """() => [...document.querySelectorAll('[data-testid="stAlert"]')]
    .map((a) => a.innerText).filter((t) => t.includes('failed') || t.includes('Error')).join(' | ')"""


def _check(page, what: str) -> None:
    """Stop at a page that shows a failure: its notice would count as content."""
    failed = page.evaluate(FAILED_TEXT)
    if failed:
        screenshot(page, f"page-budget-failed-{what}".replace(" ", "-").replace(">", ""))
        raise SystemExit(f"{what} shows a failure: {failed}")


def measure(page) -> list[tuple[str, float, int]]:
    """One pass over every page and the tabs of Review and Admin: ``(what, ms, budget)``."""
    rows = []
    for title in PAGES:
        rows.append((title, first_paint(page, title), FIRST_PAINT_MS))
        _check(page, title)
        print(f"  {title}: {rows[-1][1]:.0f} ms", flush=True)
        for label in TABS.get(title, []):
            rows.append((f"{title} > {label}", tab_switch(page, label), TAB_SWITCH_MS))
            _check(page, rows[-1][0])
            print(f"  {rows[-1][0]}: {rows[-1][1]:.0f} ms", flush=True)
    return rows


def table(name: str, rows: list[tuple[str, float, int]]) -> str:
    lines = [f"{name}:", f"  {'page':34s} {'ms':>8s} {'budget':>7s} {'ratio':>6s}"]
    for what, ms, budget in rows:
        flag = "" if ms <= budget else "  over"
        lines.append(f"  {what:34s} {ms:8.0f} {budget:7d} {ms / budget:6.2f}{flag}")
    within = sum(ms <= budget for _w, ms, budget in rows)
    lines.append(f"  within budget: {within} of {len(rows)}")
    return "\n".join(lines)


def run(db: Path, work: Path, rate: float = 0.0) -> None:
    from playwright.sync_api import sync_playwright

    env = {k: v for k, v in os.environ.items() if k != "POOLJUDGE_BACKGROUND_WAIT"}  # the app's own 0.5 s
    os.environ.clear()
    os.environ.update(env)
    stop = multiprocessing.Event()
    counter = multiprocessing.Value("i", 0)
    with serve_sqlite(db, work / "streamlit.log", POOLJUDGE_CACHE=str(work / "cache")) as url:
        worker = multiprocessing.Process(target=labeller, args=(str(db), stop, counter, rate), daemon=True)
        worker.start()
        started = time.monotonic()
        try:
            with sync_playwright() as p:
                browser = launch_chromium(p)
                page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
                login(page, url, "admin")
                print("cold pass", flush=True)
                cold = measure(page)
                print("warm pass", flush=True)
                warm = measure(page)
                browser.close()
        finally:
            stop.set()
            worker.join(timeout=30)
        elapsed = time.monotonic() - started
    print(table("cold (first visit after the server started)", cold))
    print(table("warm (second visit)", warm))
    print(f"labeller: {counter.value:,} labels stored in {elapsed:.0f} s ({counter.value / elapsed:.1f}/s) meanwhile")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=2000, help="queries of the generated collection (10 pairs each)")
    parser.add_argument("--store", type=Path, help="a store built before (copied, so every run starts the same)")
    parser.add_argument(
        "--rate", type=float, default=0.0, help="labels a second the other client stores (default: as fast as it can)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:  # the server's worker may still be exiting
        work = Path(tmp)
        db = work / "s.db"
        if args.store:
            shutil.copyfile(args.store, db)
        else:
            t = time.perf_counter()
            summary = build(db, queries=args.queries)
            print(
                f"store: {summary['pairs']:,} pairs, {summary['assignments']:,} assignments, {summary['labels']:,} "
                f"labels, built in {time.perf_counter() - t:.0f} s"
            )
        run(db, work, args.rate)


if __name__ == "__main__":
    main()
