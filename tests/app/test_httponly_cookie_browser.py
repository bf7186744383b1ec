"""Issue 21 acceptance 3 (and issue 20's cookie timing), in Chromium: no page script can read the session token.

The cookie is set by the server's own route (``serve.py``) as ``HttpOnly; SameSite=Strict`` before the
signed-in page is shown: ``document.cookie`` never holds it, a reload and a URL opened straight after sign-in
are signed in, and sign-out removes it before the login screen comes back.  Every response carries the
Content-Security-Policy, and the pages still work under it (no violation reported).
"""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from db.models import AuthSession
from tests.app.browser_helpers import PASSWORD, fill_login, wait_idle

pytestmark = pytest.mark.browser

COOKIE = "pooljudge_session"
DAY = 86400


@pytest.fixture(scope="module")
def server(app_server):
    """The shared server (``streamlit run serve.py`` on a store with the admin and the demo collection)."""
    return app_server


def _cookie(context) -> dict | None:
    return next((c for c in context.cookies() if c["name"] == COOKIE), None)


def _csp_violations(page) -> list[str]:
    found: list[str] = []
    page.on("console", lambda m: found.append(m.text) if "Content Security Policy" in m.text else None)
    return found


def _signed_in(page, timeout: int = 60_000) -> None:
    page.get_by_text("Logged in as admin").wait_for(timeout=timeout)
    page.get_by_role("button", name="Log in").wait_for(state="detached", timeout=timeout)  # stale until the rerun ends


def test_the_session_cookie_is_httponly_set_before_sign_in_ends_and_gone_after_sign_out(server, new_page):
    page = new_page()
    violations = _csp_violations(page)
    response = page.goto(server["url"] + "/metrics")
    policy = response.headers["content-security-policy"]
    assert "script-src 'self' 'sha256-" in policy and "frame-ancestors 'self'" in policy
    fill_login(page, "admin", PASSWORD)
    _signed_in(page)
    # the moment the signed-in page shows, the browser holds the cookie: no waiting for it
    cookie = _cookie(page.context)
    assert cookie is not None, "the signed-in page showed before the cookie was set"
    assert (cookie["httpOnly"], cookie["sameSite"], cookie["path"], cookie["secure"]) == (True, "Strict", "/", False)
    assert 13 * DAY < cookie["expires"] - time.time() <= 14 * DAY + 60  # the session's 14 days
    token = cookie["value"]
    assert COOKIE not in page.evaluate("document.cookie") and token not in page.evaluate("document.cookie")
    with server["store"].read() as s:  # the store keeps only the token's hash
        assert s.scalar(select(func.count()).select_from(AuthSession).where(AuthSession.token_hash == token)) == 0
    # the exchange image is gone with the rerun
    expect(page.locator('img[src*="/_pooljudge/session"]')).to_have_count(0, timeout=30_000)

    # another URL straight after sign-in (issue 20: it showed the login form for ~2 s): signed in
    other = page.context.new_page()
    other.goto(server["url"] + "/metrics")
    _signed_in(other)
    assert COOKIE not in other.evaluate("document.cookie")

    page.reload()
    _signed_in(page)
    wait_idle(page, 60_000)

    page.get_by_role("button", name="Log out").click()
    page.get_by_role("button", name="Log in").wait_for(timeout=60_000)
    assert _cookie(page.context) is None  # removed before the login screen came back
    other.reload()
    other.get_by_role("button", name="Log in").wait_for(timeout=60_000)
    expect(other.get_by_text("Logged in as")).to_have_count(0, timeout=30_000)
    assert violations == [], "\n".join(violations)


def test_a_cookie_write_cannot_be_replayed_or_planted_from_another_site(server, new_page):
    page = new_page()
    # any page of the server's origin sends the same same-origin request: its health check, not the whole app
    page.goto(server["url"] + "/_stcore/health")
    # an unknown nonce: nothing is set
    status = page.evaluate("(u) => fetch(u).then((r) => r.status)", server["url"] + "/_pooljudge/session?n=guessed")
    assert status == 404 and _cookie(page.context) is None
