"""Acceptance (issue 21, item 2), in Chromium: typos on unknown names from one address never lock the admin out,
and ``X-Forwarded-For`` counts only from a trusted proxy.

The throttle keys every attempt by name, so the first test fills it on the shared server (``app_server``) with
names no other test signs in with (``fair-*``); the second needs a server of its own, started with a trusted proxy.
"""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from db.engine import Store, sqlite_url
from db.models import AuthSession, LoginThrottle, User
from tests.app.browser_helpers import add_users, fill_login, serve_sqlite
from tests.sqlite_template import copy_store

pytestmark = pytest.mark.browser

FORGED = "6.6.6.6, 198.51.100.7"  # a browser's own header; a trusted proxy would have appended the last hop
ADMIN = "fair-admin"  # this module's admin: the failed logins here are on names no other test signs in with


@pytest.fixture(scope="module")
def server(app_server):
    """The shared server (no trusted proxy, the default), its store holding this module's admin."""
    add_users(app_server["db"], {ADMIN: "admin"})
    return app_server


@pytest.fixture(scope="module")
def proxied(tmp_path_factory, sqlite_template):
    """A server of its own behind a proxy on the loopback address (``POOLJUDGE_TRUSTED_PROXIES=127.0.0.1``)."""
    folder = tmp_path_factory.mktemp("proxied")
    db = copy_store(sqlite_template, folder / "pooljudge.db")
    add_users(db, {ADMIN: "admin"})
    with serve_sqlite(db, folder / "streamlit.log", POOLJUDGE_TRUSTED_PROXIES="127.0.0.1, ::1") as url:
        store = Store(sqlite_url(db))
        yield {"url": url, "store": store}
        store.dispose()


def _failures(store, key: str) -> int:
    with store.read() as s:
        return s.scalar(select(LoginThrottle.failures).where(LoginThrottle.key == key)) or 0


def _admin_sessions(store) -> list[str]:
    with store.read() as s:
        return list(s.scalars(select(AuthSession.client).join(User).where(User.username == ADMIN)))


def _sign_in_admin(page) -> None:
    fill_login(page, ADMIN)
    page.get_by_text(f"Logged in as {ADMIN}").wait_for(timeout=60_000)
    assert not page.get_by_text("Too many failed logins").is_visible()


def test_20_failures_on_unknown_names_then_the_admin_signs_in_from_that_browser_at_once(server, new_page):
    store = server["store"]
    page = new_page()
    page.context.set_extra_http_headers({"X-Forwarded-For": FORGED})
    page.goto(server["url"])
    for i in range(20):
        fill_login(page, f"fair-guess{i}", "not a password")
        deadline = time.monotonic() + 60
        while _failures(store, f"user:fair-guess{i}") < 1:  # each failure is stored before the next attempt
            assert time.monotonic() < deadline, page.inner_text("body")
            page.wait_for_timeout(100)
    page.get_by_text("Unknown user, wrong password").wait_for(timeout=30_000)
    _sign_in_admin(page)
    # the forged header was ignored: no proxy is trusted, so the address is the TCP peer's
    assert _admin_sessions(store) == ["127.0.0.1"]
    assert _failures(store, "user+client:127.0.0.1:fair-guess19") == 1


def test_behind_a_trusted_proxy_the_forwarded_address_is_the_client(proxied, new_page):
    page = new_page()
    page.context.set_extra_http_headers({"X-Forwarded-For": FORGED})
    page.goto(proxied["url"])
    _sign_in_admin(page)
    assert _admin_sessions(proxied["store"]) == ["198.51.100.7"]
