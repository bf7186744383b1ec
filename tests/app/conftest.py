"""Fixtures that serve the real app and drive it in headless Chromium."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import streamlit as st
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from db.engine import Store, sqlite_url
from db.users import add_user

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "correct horse battery"
ACCOUNTS = {
    "admin": "admin",
    "rev1": "reviewer",
    "rev2": "reviewer",
    "ann1": "annotator",
    "ann2": "annotator",
    "ann3": "annotator",
    "ann4": "annotator",
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve_app(env: dict[str, str], log_path: Path, *, timeout: float = 90, script: Path = REPO / "app.py"):
    """``streamlit run script`` (the app by default) with ``env`` on a free port until the block ends; yields its
    base URL."""
    port = _free_port()
    with open(log_path, "w+") as log:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                str(script),
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=REPO,
            env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + timeout
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.status == 200:
                            break
                except OSError:
                    if time.monotonic() > deadline or proc.poll() is not None:
                        log.seek(0)
                        pytest.fail(f"streamlit did not start:\n{log.read()}")
                    time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def cli(db: str, *args: str) -> str:
    """``pooljudge --db <db> -q ...`` (a SQLite file or a SQLAlchemy URL), as an admin would run it; its stdout."""
    env = {**os.environ, "POOLJUDGE_PASSWORD": PASSWORD}
    env.pop("POOLJUDGE_DB_URL", None)
    out = subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "--db", str(db), "-q", *args],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """``streamlit run app.py`` on a fresh store (as `make run` does), yielding its base URL."""
    db = tmp_path_factory.mktemp("app") / "pooljudge.db"
    env = {**os.environ, "POOLJUDGE_DB": str(db), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("POOLJUDGE_DB_URL", None)
    for name, role in ACCOUNTS.items():
        subprocess.run(
            [sys.executable, "-m", "pooljudge.cli", "--db", str(db), "user", "add", name, "--role", role],
            env={**env, "POOLJUDGE_PASSWORD": PASSWORD},
            check=True,
            capture_output=True,
        )
    subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "--db", str(db), "-q", "demo"], env=env, check=True, capture_output=True
    )
    with serve_app(env, tmp_path_factory.mktemp("log") / "streamlit.log", timeout=60) as url:
        yield {"url": url, "db": db}


@pytest.fixture
def new_page(browser):
    """Pages in contexts of their own (each a separate browser session: its own login, like another tab)."""
    contexts = []

    def make():
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


@pytest.fixture(scope="session")
def browser():
    """Headless Debian Chromium through Playwright (the browser is never downloaded)."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: `make test` installs it (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is not installed (run `make chromium`)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    yield pg
    context.close()


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def login(page, base_url: str, username: str, password: str = PASSWORD, path: str = "") -> None:
    """Open the app at ``path`` and log in through the login form (as a new browser: cookies cleared first)."""
    page.context.clear_cookies()  # the session cookie of an earlier login would sign the page in by itself
    page.goto(base_url + path)
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Log in").click()
    page.get_by_text(f"Logged in as {username}").wait_for(timeout=60_000)
    # The session cookie is written by a component, which reruns the app once the browser confirms it;
    # a click during that rerun can be lost, so wait until the cookie is there and the app is idle.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(c["name"] == "pooljudge_session" for c in page.context.cookies()):
        page.wait_for_timeout(100)
    _wait_idle(page)


def _wait_idle(page, timeout: float = 30_000) -> None:
    """Until Streamlit reports no script running (the status widget is gone)."""
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)


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


@pytest.fixture
def db(tmp_path, monkeypatch):
    """A fresh SQLite store with one admin (``db.admin_id``), the one the pages under AppTest open."""
    path = tmp_path / "app.db"
    monkeypatch.delenv("POOLJUDGE_DB_URL", raising=False)
    monkeypatch.setenv("POOLJUDGE_DB", str(path))
    st.cache_resource.clear()
    store = Store(sqlite_url(path))
    with store.write() as session:
        store.admin_id = add_user(session, "admin", "correct horse", "admin").id
    yield store
    store.dispose()
    st.cache_resource.clear()
