"""The steps the browser tests (and the annotate-latency benchmark) share: serve the app, log in, wait, label.

Every wait here is for a condition on the page (an element, a text, Streamlit being idle), with timeouts
generous enough for a loaded 2-core machine.  No pytest in here, so that ``benchmarks/`` can use it too;
the fixtures that wrap these steps live in ``tests/app/conftest.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.clirun import run_captured

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
# Debian's build of Chromium's headless shell (package chromium-headless-shell): the same Blink and V8 without
# the browser's own UI, half the CPU of the full browser per page load; the browser tests use it when installed
HEADLESS_SHELL = "/usr/lib/chromium/chromium-headless-shell"
TEST_CHROMIUM = HEADLESS_SHELL if Path(HEADLESS_SHELL).exists() else CHROMIUM
# what a reused browser context forgets between tests (Storage.clearDataForOrigin): everything an origin
# stores except the HTTP cache, which holds nothing of a test's own
CLEARED_STORAGE = "local_storage,indexeddb,websql,service_workers,cache_storage,file_systems,shared_storage"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# how often a wait re-checks its condition in the page, in ms: Playwright's default re-checks it on every animation
# frame, which keeps Chromium drawing 60 frames a second in software for as long as a test waits
POLL_MS = 100
# how long a test waits for a background job to get somewhere (a step, its end).  Jobs run at a lower CPU priority
# than the server and the browser (pooljudge.jobs.JOB_NICENESS): beside a CPU-bound process a training job got
# about a tenth of a core and showed no step after 120 s.  A wait for a condition, so only a broken job waits this
# long; on an idle machine each of these jobs takes 2-20 s.
JOB_WAIT_MS = 480_000
PASSWORD = "correct horse battery"
# how often the shared server's open Metrics pages follow new labels (the app's default is 10 s: the tests that
# wait for a refresh would wait that long, a core idle)
LIVE_REFRESH_SECONDS = 2
# the accounts of the shared server (``app_server``): name -> role
ACCOUNTS = {
    "admin": "admin",
    "rev1": "reviewer",
    "rev2": "reviewer",
    "ann1": "annotator",
    "ann2": "annotator",
    "ann3": "annotator",
    "ann4": "annotator",
}
MAIN = '[data-testid="stMain"]'
# passages that each start with their own marker word, so that a test can tell which one a page shows
ALPHA_PASSAGES = {
    "d1": "Alpha passage about the Eiffel Tower.",
    "d2": "Bravo passage on the Seine river.",
    "d3": "Charlie passage with the tower's height, 330 metres.",
    "d4": "Delta passage on Paris museums.",
    "d5": "Echo passage about bridges over the Seine.",
    "d6": "Foxtrot passage on French cooking.",
}
# the passage shown is exactly one of ``markers`` and nothing of an earlier run is left on the page
ONE_MARKER_SHOWN = """(markers) => {
    const main = document.querySelector('[data-testid="stMain"]');
    return main && !document.querySelector('[data-stale="true"]')
        && markers.filter((m) => main.innerText.includes(m)).length === 1;
}"""
PLOT_MARKS = "g.trace path, g.trace rect, g.point path, g.bars path"  # what a drawn plotly chart shows
MARKER_GONE = "(m) => !document.querySelector('[data-testid=\"stMain\"]').innerText.includes(m)"
# the grade buttons are drawn and nothing of an earlier run is left (a rerun after login can briefly show the
# old and the new copy of the panel side by side)
# the Annotate page's queue (pooljudge/ui/annotate_component) has no answer waiting for the server
ANSWERS_SAVED = """() => { const q = document.querySelector('[data-testid="annotate-queue"]');
    return !q || q.dataset.pending === "0"; }"""
# the Annotate page's queue (pooljudge/ui/annotate_component) shows an item and its grade buttons
QUEUE_SHOWS_ITEM = """() => { const q = document.querySelector('[data-testid="annotate-queue"]');
    return !!(q && q.dataset.shown && [...q.querySelectorAll('button')].some((b) => b.innerText.startsWith('0 · '))); }"""
GRADE_BUTTONS_SETTLED = """() => [...document.querySelectorAll('button')].some((b) => b.innerText.startsWith('0 · '))
    && !document.querySelector('[data-stale="true"]')"""


# ---------------------------------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sqlite_env(db: Path | str, **extra: str) -> dict[str, str]:
    """This process's environment with the app pointed at the SQLite file ``db`` (and ``extra`` variables)."""
    env = {**os.environ, "POOLJUDGE_DB": str(db), **extra}
    env.pop("POOLJUDGE_DB_URL", None)  # it would win over POOLJUDGE_DB
    return env


def _wait_healthy(url: str, proc: subprocess.Popen, log, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"streamlit did not start:\n{log.read()}") from None
            time.sleep(0.3)


@contextlib.contextmanager
def serve_app(
    env: dict[str, str],
    log_path: Path,
    *,
    timeout: float = 90,
    script: Path = REPO / "app.py",
    plain: bool = False,
    warm_up: bool = False,
):
    """``streamlit run serve.py`` serving ``script`` (the app by default; ``$POOLJUDGE_APP``) with ``env`` on a free
    port until the block ends, as ``make run`` does (the HttpOnly session cookie's route included); yields its
    base URL.  With ``plain``, ``streamlit run script`` itself: a script that is not the app needs neither the
    cookie route nor the warm-up of the app's page imports (seconds of CPU).

    ``warm_up``: the server imports every page's modules at its start, as ``make run`` does; a module's own
    server, which serves a few pages, leaves them to the first visit (``POOLJUDGE_WARMUP=off``: about 3 CPU-s
    less per server, measured on four of them)."""
    env = {**env, "POOLJUDGE_WARMUP": "on" if warm_up else "off"}
    port = _free_port()
    flags = ["--server.headless", "true", "--server.port", str(port), "--browser.gatherUsageStats", "false"]
    with open(log_path, "w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script if plain else REPO / "serve.py"), *flags],
            cwd=REPO,
            env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **env, "POOLJUDGE_APP": str(script)},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_healthy(url, proc, log, timeout)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def serve_sqlite(db: Path | str, log_path: Path, *, warm_up: bool = False, **extra_env: str) -> Iterator[str]:
    """:func:`serve_app` on the SQLite store ``db``; yields the base URL."""
    with serve_app(sqlite_env(db, **extra_env), log_path, warm_up=warm_up) as url:
        yield url


def cli(db: Path | str, *args: str, check: bool = True) -> str:
    """``pooljudge --db <db> -q ...`` (a SQLite file or a SQLAlchemy URL), as an admin would run it; its stdout.

    Run in this process (the same functions and writes as a ``pooljudge`` process, without the two CPU-seconds
    of an interpreter start and its imports per call), with ``POOLJUDGE_PASSWORD`` set and ``POOLJUDGE_DB_URL``
    unset for the call only.  Accounts it adds get :data:`PASSWORD`.  With ``check`` (the default) a non-zero
    exit fails the caller with the command's stderr.
    """
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "POOLJUDGE_PASSWORD": PASSWORD, "POOLJUDGE_DB_URL": None}
    done = run_captured(["--db", str(db), "-q", *args], env)
    if check:
        assert done.status == 0, done.stderr
    return done.stdout


def add_users(db: Path | str, accounts: Mapping[str, str]) -> None:
    """``pooljudge user add`` for each ``name: role`` of ``accounts`` (password :data:`PASSWORD`)."""
    for name, role in accounts.items():
        cli(db, "user", "add", name, "--role", role)


def write_beir(
    folder: Path,
    passages: Mapping[str, str],
    queries: Mapping[str, str],
    runs: Mapping[str, Sequence[tuple[str, str]]],
    *,
    qrels: str | None = None,
) -> Path:
    """A BEIR folder: ``corpus.jsonl``, ``queries.jsonl``, one TREC run per ``runs`` entry (its (qid, docid)
    pairs in rank order, scores 10, 9, ...) and, if given, ``qrels/test.tsv`` with the text ``qrels``
    (else an empty ``qrels`` folder).  Returns ``folder``."""
    (folder / "runs").mkdir(parents=True)
    (folder / "qrels").mkdir()
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in passages.items()), encoding="utf-8"
    )
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries.items()), encoding="utf-8"
    )
    for name, pairs in runs.items():
        (folder / "runs" / f"{name}.trec").write_text(
            "".join(f"{q} Q0 {d} {i + 1} {10 - i}.0 {name}\n" for i, (q, d) in enumerate(pairs)), encoding="utf-8"
        )
    if qrels is not None:
        (folder / "qrels" / "test.tsv").write_text(qrels, encoding="utf-8")
    return folder


# --------------------------------------------------------------------------------------------- the browser


def launch_chromium(playwright: Any, executable: str = CHROMIUM):
    """Headless Debian Chromium through Playwright (the browser is never downloaded): the full browser by
    default, as a user runs it; ``executable=TEST_CHROMIUM`` for the tests' headless shell."""
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


def new_context(browser, width: int = 1400, height: int = 1000):
    """A browser session of its own (its own cookies, like another browser), ``width`` x ``height``, that prefers
    reduced motion: the frontend's entrance animations and spinners, which the tests do not look at, are not
    drawn frame by frame."""
    return browser.new_context(viewport={"width": width, "height": height}, reduced_motion="reduce")


class ContextPool:
    """Browser contexts of ``browser`` that one test at a time holds, kept for the next tests: the HTTP cache
    of each survives, so a page load fetches Streamlit's frontend bundles (a few MB, served cacheable) from
    the server only once per context and server.  A context handed back forgets what a test leaves: its
    pages, cookies, each visited origin's storage, permissions, extra headers and routes.

    ``take`` hands out a context no one else holds: contexts taken together are separate browser sessions.
    Init scripts and event handlers a test adds to a context would outlive the test: such a test makes a
    context of its own (:func:`new_context`) and closes it.
    """

    def __init__(self, browser) -> None:
        self.browser = browser
        self.idle: list[Any] = []
        self.origins: dict[Any, set[str]] = {}  # context -> the origins its pages visited

    def take(self):
        """A context of its own for the caller (1400x1000, reduced motion), fresh or reset."""
        if self.idle:
            return self.idle.pop()
        context = new_context(self.browser)
        visited = self.origins[context] = set()

        def track(page) -> None:
            page.on("framenavigated", lambda frame: visited.add(_origin(frame.url)))

        context.on("page", track)
        return context

    def give_back(self, context) -> None:
        """Reset ``context`` and keep it for the next :meth:`take`; a context that cannot be reset is closed."""
        try:
            self._reset(context)
        except Exception:  # noqa: BLE001 - a crashed or closed context: the next take makes a new one
            self.origins.pop(context, None)
            with contextlib.suppress(Exception):
                context.close()
            return
        self.idle.append(context)

    def _reset(self, context) -> None:
        for page in context.pages:
            page.close()
        context.clear_cookies()
        context.clear_permissions()
        context.set_extra_http_headers({})
        context.unroute_all(behavior="ignoreErrors")
        context.set_offline(False)
        visited = self.origins[context] - {""}
        if visited:
            blank = context.new_page()
            cdp = context.new_cdp_session(blank)
            for origin in visited:
                cdp.send("Storage.clearDataForOrigin", {"origin": origin, "storageTypes": CLEARED_STORAGE})
            cdp.detach()
            blank.close()
        self.origins[context].clear()

    def close(self) -> None:
        """Close every idle context."""
        for context in self.idle:
            with contextlib.suppress(Exception):
                context.close()
        self.idle.clear()


def _origin(url: str) -> str:
    """``scheme://host:port`` of an http(s) ``url``; ``""`` for any other (about:blank, data:)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") else ""


def wait_for_js(page, expression: str, arg: Any = None, *, timeout: float) -> Any:
    """Until the JavaScript ``expression`` (called with ``arg``) is truthy in ``page``, re-checked every
    :data:`POLL_MS` ms; its value (a JSHandle)."""
    return page.wait_for_function(expression, arg=arg, polling=POLL_MS, timeout=timeout)


def screenshot(page, name: str, *, full_page: bool = True) -> Path:
    """``test-artifacts/<name>.png``: the whole page, or with ``full_page=False`` the viewport as a user sees it."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path


def wait_idle(page, timeout: float = 30_000, *, fresh: bool = False) -> None:
    """Until Streamlit reports no script running (the status widget is gone); with ``fresh``, also until no
    element of an earlier run is left on the page."""
    stale = " && !document.querySelector('[data-stale=\"true\"]')" if fresh else ""
    wait_for_js(page, f"() => !document.querySelector('[data-testid=\"stStatusWidget\"]'){stale}", timeout=timeout)


def fill_login(page, username: str, password: str = PASSWORD) -> None:
    """Fill the login form and press Log in (nothing waited for)."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Log in").click()


def login(page, base_url: str, username: str, password: str = PASSWORD, path: str = "") -> None:
    """Open the app at ``path`` and log in through the login form (as a new browser: cookies cleared first)."""
    page.context.clear_cookies()  # the session cookie of an earlier login would sign the page in by itself
    page.goto(base_url + path)
    fill_login(page, username, password)
    page.get_by_text(f"Logged in as {username}").wait_for(timeout=60_000)
    # The session cookie is set before the signed-in page is shown; wait for it all the same (a server started
    # without serve.py sets none, hence the bounded wait) and until the app is idle.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(c["name"] == "pooljudge_session" for c in page.context.cookies()):
        page.wait_for_timeout(100)
    wait_idle(page)


def sign_in(page, base_url: str, store, username: str, *, path: str = "") -> None:
    """Open the app at ``path`` signed in as ``username`` with a session the store issued, held by the browser
    as its session cookie: as a reload or a second tab of a signed-in browser opens the app.

    For the tests whose subject comes after the sign-in.  The sign-in form itself (:func:`login`) is what the
    session, cookie and sign-in tests drive; it costs a test about 0.8 s and 1.2 CPU-s more per sign-in (the
    login screen drawn, the form's rerun, the password hashed), ``benchmarks/bench_browser_cpu.py --cookie``.
    """
    from sqlalchemy import select

    from db.models import User
    from db.sessions import create_session
    from pooljudge.ui.session_route import COOKIE

    with store.write() as session:
        user_id = session.scalar(select(User.id).where(User.username == username))
        if user_id is None:
            raise ValueError(f"no account {username!r} in the store to sign in")
        token = create_session(session, user_id)
    page.context.clear_cookies()
    page.context.add_cookies(
        [{"name": COOKIE, "value": token, "url": base_url, "httpOnly": True, "sameSite": "Strict"}]
    )
    page.goto(base_url + path)
    page.get_by_text(f"Logged in as {username}").wait_for(timeout=60_000)
    wait_idle(page)


def open_page(page, title: str) -> None:
    """Go to a page through the sidebar navigation, inside the logged-in session."""
    heading = page.get_by_role("heading", name=title.split(" ")[0]).first
    for attempt in range(3):  # a click that lands during a rerun of the previous page can be dropped
        page.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
        try:
            heading.wait_for(timeout=30_000 if attempt == 2 else 15_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


@contextlib.contextmanager
def signed_in_page(
    contexts: ContextPool,
    base_url: str,
    store,
    username: str,
    *,
    path: str = "",
    width: int = 1400,
    height: int = 1000,
) -> Iterator[Any]:
    """A page of a context taken from ``contexts``, signed in as ``username`` of ``store`` at ``path`` once
    (:func:`sign_in`), for the tests of a module that need no fresh session of their own: each goes to its page
    through the sidebar (:func:`open_page`), which switches pages without loading the frontend again.  The
    context goes back to ``contexts`` at the end."""
    context = contexts.take()
    try:
        page = context.new_page()
        if (width, height) != (1400, 1000):
            page.set_viewport_size({"width": width, "height": height})
        sign_in(page, base_url, store, username, path=path)
        yield page
    finally:
        contexts.give_back(context)


def choose(page, box, option: str, *, exact: bool = True, tries: int = 10) -> None:
    """Pick ``option`` in the selectbox ``box`` (its combobox), again if a rerun closed the list under the
    pointer, until the box shows it; with ``exact=False``, the first option whose name contains ``option``,
    until the box shows a value starting with ``option``."""
    for _ in range(tries):
        wait_idle(page, 60_000)
        box.click()
        try:
            page.get_by_role("option", name=option, exact=exact).first.click(timeout=10_000)
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            continue
        if box.input_value().startswith(option):
            return
    screenshot(page, "choose-failed")
    raise AssertionError(f"could not choose {option!r}: {box.input_value()!r}")


def choose_in(page, label: str, option: str, *, scope=None, nth: int = 0) -> None:
    """:func:`choose` in the selectbox labelled ``label`` (the ``nth`` one in ``scope``, the page by default)."""
    boxes = (scope or page).locator('[data-testid="stSelectbox"]').filter(has_text=label)
    choose(page, boxes.nth(nth).get_by_role("combobox"), option)


def wait_for_value(read: Callable[[], Any], expected: Any, *, what: str, timeout: float = 60) -> None:
    """Until ``read()`` returns ``expected`` (for what the page fills in stages, such as a grid's cells, where
    no single element marks the end); fails naming ``what`` and the last value read after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while (value := read()) != expected:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: {value!r}, expected {expected!r}")
        time.sleep(0.25)


def wait_drawn(plot, what: str, *, legend: bool = False, timeout: int = 30_000) -> None:
    """Until the plotly chart ``plot`` has drawn bars or points (and, with ``legend``, its legend): plotly
    draws a moment after the chart's element mounts.  Fails with ``what`` named if it never does."""
    try:
        plot.locator(PLOT_MARKS).first.wait_for(state="attached", timeout=timeout)
        if legend:
            plot.locator(".legendtext").first.wait_for(state="attached", timeout=timeout)
    except PlaywrightTimeout:
        raise AssertionError(f"{what} has no bars or points{' or legend' if legend else ''}") from None


# ------------------------------------------------------------------------------------ the Annotate page


def shown_doc(page, markers: Mapping[str, str], *, settled: str = ONE_MARKER_SHOWN) -> str:
    """The passage the Annotate page shows now, as the key of ``markers`` (a text unique to each passage):
    waits until ``settled`` (by default: exactly one marker is drawn and nothing stale is left)."""
    wait_for_js(page, settled, list(markers.values()), timeout=60_000)
    body = page.locator(MAIN).inner_text()
    shown = [d for d, marker in markers.items() if marker in body]
    assert len(shown) == 1, body
    return shown[0]


def markers_of(passages: Mapping[str, str]) -> dict[str, str]:
    """docid -> the marker of an :data:`ALPHA_PASSAGES` text (``"Alpha passage"``), unique on a page."""
    return {d: t.split()[0] + " passage" for d, t in passages.items()}


def wait_gone(page, marker: str, timeout: int = 30_000) -> None:
    """Until the main area no longer shows ``marker`` (the item it marks was replaced)."""
    wait_for_js(page, MARKER_GONE, marker, timeout=timeout)


def ready_for_keys(page) -> None:
    """Until the grade buttons of the item shown are drawn and their keyboard shortcuts can be pressed."""
    wait_for_js(page, GRADE_BUTTONS_SETTLED, timeout=60_000)
    if page.evaluate(QUEUE_SHOWS_ITEM):
        return  # the queue listens for keys from the moment it is built, before it shows its first item
    # Streamlit attaches a button's shortcut (an earlier item, a rework) a moment after the button mounts and
    # leaves no trace of it in the DOM to wait for: this pause is the one fixed wait left
    page.wait_for_timeout(1000)


def wait_saved(page, timeout: int = 60_000) -> None:
    """Until the Annotate page's queue holds no answer the server has not acknowledged (stored or refused)."""
    wait_for_js(page, ANSWERS_SAVED, timeout=timeout)


def press_grade(page, key: str, marker: str, timeout: int = 30_000) -> None:
    """Press ``key`` on the item marked ``marker`` once it takes keys, and wait until the next item replaced it
    and the server has the answer (the queue shows the next item before the answer is stored)."""
    ready_for_keys(page)
    page.keyboard.press(key)
    wait_gone(page, marker, timeout)
    wait_saved(page, max(timeout, 60_000))


# ------------------------------------------------------------------------------- a store set up in-process


def add_accounts(session, accounts: Mapping[str, str]) -> dict[str, int]:
    """Add each ``name: role`` of ``accounts`` (password :data:`PASSWORD`) in ``session``; their user ids."""
    from db.users import add_user

    return {name: add_user(session, name, PASSWORD, role).id for name, role in accounts.items()}


def import_pooled(
    session,
    passages: Mapping[str, tuple[str, str]],
    queries: Mapping[str, str],
    *,
    collection: str = "tower",
    runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None,
) -> None:
    """Import ``collection`` (``passages``: docid -> (qid, text), ``queries``: qid -> text, ``runs``: name ->
    qid -> docid -> score) and save pool ``p`` of every query with its own passages, through the library."""
    from core.types import CollectionSource, Passage, Query, RunEntry
    from db.importer import import_collection
    from db.pools import save_pool

    source = CollectionSource(
        passages=lambda: iter([Passage(d, t, title="") for d, (_q, t) in passages.items()]),
        queries=lambda: iter([Query(q, t) for q, t in queries.items()]),
        qrels=lambda: iter(()),
        runs={
            name: (lambda run=run: iter([RunEntry(q, d, s) for q, docs in run.items() for d, s in docs.items()]))
            for name, run in (runs or {}).items()
        },
    )
    import_collection(session, source, name=collection, format="t", location="m")
    pool = {q: {d: [] for d, (qq, _t) in passages.items() if qq == q} for q in queries}
    save_pool(session, collection, "p", pool, method="depth")
