"""Fixtures that serve the real app and drive it in headless Chromium (the steps they use: browser_helpers.py),
and the store the pages under AppTest open."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import streamlit as st

from db.engine import Store, sqlite_url
from db.users import add_user
from tests.app import apptest_runtime
from tests.app.browser_helpers import (
    ACCOUNTS,
    LIVE_REFRESH_SECONDS,
    TEST_CHROMIUM,
    ContextPool,
    add_users,
    cli,
    launch_chromium,
    screenshot,
    serve_sqlite,
)
from tests.sqlite_template import copy_store

# pages wait this long for a table computed in the background (pooljudge.ui.background) before showing the
# last one: on a loaded test machine every page shows the store as it is, in AppTest and in served apps alike
os.environ.setdefault("POOLJUDGE_BACKGROUND_WAIT", "300")
os.environ.setdefault("POOLJUDGE_BACKGROUND", "thread")  # in this process: tests patch what the tables call


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (``--dist loadgroup``)
def pytest_collection_modifyitems(items):
    """The tests of one browser module run on one xdist worker, in their order: the module's collection (or
    server) is set up once, in that worker's own ``app_server``."""
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))


SERVER_LOG_LINES = 60
PAGE_TEXT_CHARS = 4000
_server_logs: list[Path] = []  # this worker's app_server log folder, once it started
_open_pages: dict[str, list] = {}  # a running test's node id -> the pages new_page gave it
_page_events: dict[int, list[str]] = {}  # id(page) -> its loads, websockets opened and closed, errors, in order
PAGE_EVENTS = 40


def _record_events(page) -> None:
    """Note what a failure report cannot see afterwards: each load, each websocket of Streamlit's (a reconnect
    reruns the whole app), the console's errors and the page's uncaught exceptions, with the time."""
    events = _page_events.setdefault(id(page), [])
    start = time.monotonic()

    def note(text: str) -> None:
        events.append(f"{time.monotonic() - start:7.2f} s  {text}")

    def websocket(ws) -> None:
        note(f"websocket opened {ws.url}")
        ws.on("close", lambda ws: note(f"websocket closed {ws.url}"))

    page.on("websocket", websocket)
    page.on("framenavigated", lambda frame: frame == page.main_frame and note(f"loaded {frame.url}"))
    page.on("console", lambda message: message.type == "error" and note(f"console error: {message.text}"))
    page.on("pageerror", lambda error: note(f"page error: {error}"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that used the session's app server reports the end of the server's log and of its jobs'
    logs: a browser test that times out shows only what the browser did not see, and the logs are in a
    temporary folder gone by the time a CI run is read."""
    report = yield
    if report.failed:
        _report_pages(report, _open_pages.get(item.nodeid, ()))
    if report.failed and "app_server" in getattr(item, "fixturenames", ()) and _server_logs:
        for log in sorted(_server_logs[0].glob("*.log"), key=lambda p: p.stat().st_mtime)[-3:]:
            lines = log.read_text(encoding="utf-8", errors="replace").splitlines()[-SERVER_LOG_LINES:]
            report.sections.append((f"app_server {log.name} (last {len(lines)} lines)", "\n".join(lines)))
    return report


def _report_pages(report, pages) -> None:
    """What each of a failed test's open pages showed when it failed (its text, and a screenshot under
    test-artifacts/), read before the pages close: a timed-out wait names only what it looked for."""
    for number, page in enumerate(pages, 1):
        if page.is_closed():
            continue
        try:
            text = page.inner_text("body", timeout=5_000)
            shot = screenshot(page, f"failed-{report.nodeid.rsplit('::', 1)[-1]}-{report.when}-page{number}")
        except Exception as exc:  # noqa: BLE001 (a crashed or hung page: report that instead)
            text, shot = f"(could not read the page: {exc})", None
        events = "\n".join(_page_events.get(id(page), [])[-PAGE_EVENTS:])
        report.sections.append((f"page {number} at {page.url}, screenshot {shot}", text[-PAGE_TEXT_CHARS:]))
        report.sections.append((f"page {number}'s events (seconds after it opened)", events))


@pytest.fixture(scope="session", autouse=True)
def apptest_runtime_once():
    """Every ``AppTest`` in this process shares the component discovery and the compiled page scripts."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        apptest_runtime.install(monkeypatch)
        yield


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """``streamlit run app.py`` on a fresh store (as `make run` does), yielding its base URL, its store's file and
    a :class:`Store` of it, and the folder its training jobs save models in (``POOLJUDGE_MODELS``; their logs go
    to the log folder)."""
    db = tmp_path_factory.mktemp("app") / "pooljudge.db"
    add_users(db, ACCOUNTS)
    cli(db, "demo")
    logs, models = tmp_path_factory.mktemp("log"), tmp_path_factory.mktemp("models")
    _server_logs[:] = [logs]
    jobs = {
        "POOLJUDGE_MODELS": str(models),
        "POOLJUDGE_JOB_LOGS": str(logs),
        "POOLJUDGE_LIVE_REFRESH_SECONDS": str(LIVE_REFRESH_SECONDS),
    }
    store = Store(sqlite_url(db), upgrade=False)  # the tests' own connections: accounts, sessions, checks
    # every page is visited on this server: it warms them up at its start, as a team's server does
    with serve_sqlite(db, logs / "streamlit.log", warm_up=True, **jobs) as url:
        yield {"url": url, "db": db, "models": models, "store": store}
    store.dispose()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium through Playwright (the browser is never downloaded): its headless shell when
    installed (``make chromium``), else the full browser."""
    if not Path(TEST_CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{TEST_CHROMIUM} is missing: `make test` installs it (apt-get install chromium)")
        pytest.skip(f"{TEST_CHROMIUM} is not installed (run `make chromium`)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p, TEST_CHROMIUM)
        yield b
        b.close()


@pytest.fixture(scope="session")
def browser_contexts(browser):
    """The browser sessions the tests of this process take in turn (``ContextPool``): each test's own
    cookies and storage, the HTTP cache kept from one test to the next."""
    pool = ContextPool(browser)
    yield pool
    pool.close()


@pytest.fixture
def new_page(browser_contexts, request):
    """Pages in contexts of their own (each a separate browser session: its own login, like another tab);
    ``new_page(width=..., height=...)`` sizes the window (1400x1000 by default)."""
    contexts = []

    def make(width: int = 1400, height: int = 1000):
        context = browser_contexts.take()
        contexts.append(context)
        page = context.new_page()
        _open_pages.setdefault(request.node.nodeid, []).append(page)
        _record_events(page)
        if (width, height) != (1400, 1000):
            page.set_viewport_size({"width": width, "height": height})
        return page

    yield make
    for page in _open_pages.pop(request.node.nodeid, ()):
        _page_events.pop(id(page), None)
    for context in contexts:
        browser_contexts.give_back(context)


@pytest.fixture
def page(new_page):
    """A page in a browser session of its own, 1400x1000."""
    return new_page()


@pytest.fixture
def db(sqlite_template, tmp_path, monkeypatch):
    """A fresh SQLite store with one admin (``db.admin_id``), the one the pages under AppTest open."""
    path = copy_store(sqlite_template, tmp_path / "app.db")
    monkeypatch.delenv("POOLJUDGE_DB_URL", raising=False)
    monkeypatch.setenv("POOLJUDGE_DB", str(path))
    st.cache_resource.clear()
    store = Store(sqlite_url(path), upgrade=False)  # the template is at the newest schema already
    with store.write() as session:
        store.admin_id = add_user(session, "admin", "correct horse", "admin").id
    yield store
    store.dispose()
    st.cache_resource.clear()
