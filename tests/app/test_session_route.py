"""Issue 21, finding 3: the session cookie is set by the server's own route, HttpOnly, once per nonce.

The route and the security headers driven as an ASGI app (no server, no browser): the exact ``Set-Cookie``,
a nonce that works once and only for the app's own pages, and the Content-Security-Policy on every response.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from starlette.applications import Starlette

from pooljudge.ui import session_route
from pooljudge.ui.session_route import COOKIE, ROUTE, CookieExchange, content_security_policy, middleware, routes


@pytest.fixture
def exchange(monkeypatch) -> CookieExchange:
    fresh = CookieExchange()
    monkeypatch.setattr(session_route, "EXCHANGE", fresh)
    return fresh


def _get(path: str, query: str = "", *, scheme: str = "http", site: str | None = "same-origin"):
    """``GET path?query`` through the app with the routes and the middleware: (status, headers as (name, value))."""
    app = Starlette(routes=routes(), middleware=middleware())
    headers = [(b"host", b"127.0.0.1:8501")] + ([(b"sec-fetch-site", site.encode())] if site else [])
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": scheme,
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "headers": headers,
        "server": ("127.0.0.1", 8501),
        "client": ("127.0.0.1", 50000),
        "root_path": "",
    }
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    # in a thread of its own: the browser tests' Playwright keeps an event loop running in this one
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, app(scope, receive, send)).result()
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start["status"], [(k.decode(), v.decode()) for k, v in start["headers"]]


def _set_cookies(headers) -> list[str]:
    return [v for k, v in headers if k == "set-cookie"]


def test_a_nonce_sets_the_httponly_cookie_once(exchange):
    nonce = exchange.offer("set", "tok-123", max_age=1_209_600)
    assert not exchange.done(nonce) and exchange.pending(nonce)
    status, headers = _get(ROUTE, f"n={nonce}")
    assert status == 200 and ("content-type", "image/gif") in headers and ("cache-control", "no-store") in headers
    assert _set_cookies(headers) == [f"{COOKIE}=tok-123; HttpOnly; Max-Age=1209600; Path=/; SameSite=strict"]
    assert exchange.done(nonce) and exchange.wait(nonce, 0) and not exchange.pending(nonce)
    # used: the same nonce again sets nothing
    status, headers = _get(ROUTE, f"n={nonce}")
    assert status == 404 and _set_cookies(headers) == []


def test_over_https_the_cookie_is_secure_and_a_clear_deletes_it(exchange):
    nonce = exchange.offer("set", "tok-456", max_age=60)
    _, headers = _get(ROUTE, f"n={nonce}", scheme="https")
    assert _set_cookies(headers) == [f"{COOKIE}=tok-456; HttpOnly; Max-Age=60; Path=/; SameSite=strict; Secure"]
    clear = exchange.offer("clear")
    _, headers = _get(ROUTE, f"n={clear}")
    [deleted] = _set_cookies(headers)
    assert deleted.startswith(f'{COOKIE}=""; expires=') and "Max-Age=0; Path=/; SameSite=strict" in deleted
    assert "HttpOnly" in deleted


def test_unknown_expired_and_cross_site_requests_set_nothing(exchange, monkeypatch):
    status, headers = _get(ROUTE, "n=guessed")
    assert status == 404 and _set_cookies(headers) == []
    status, headers = _get(ROUTE)
    assert status == 404 and _set_cookies(headers) == []
    nonce = exchange.offer("set", "tok-789", max_age=60)
    status, headers = _get(ROUTE, f"n={nonce}", site="cross-site")  # another site's <img> or link
    assert status == 403 and _set_cookies(headers) == []
    assert exchange.pending(nonce)  # still usable by the app's own page
    monkeypatch.setattr(session_route, "NONCE_TTL", -1.0)
    stale = exchange.offer("set", "tok-000", max_age=60)
    status, headers = _get(ROUTE, f"n={stale}")
    assert status == 404 and _set_cookies(headers) == [] and not exchange.wait(stale, 0)


def test_a_waiting_sign_in_goes_on_once_the_cookie_is_sent(exchange):
    nonce = exchange.offer("set", "tok-abc", max_age=60)
    waited: list[bool] = []
    waiter = threading.Thread(target=lambda: waited.append(exchange.wait(nonce, 30)))
    waiter.start()
    _get(ROUTE, f"n={nonce}")
    waiter.join(30)
    assert waited == [True]
    assert exchange.wait(exchange.offer("clear"), 0.05) is False  # nobody asked: the wait times out


def test_every_response_carries_the_content_security_policy(exchange):
    status, headers = _get("/anything-else")
    assert status == 404
    policy = dict(headers)["content-security-policy"]
    assert policy == content_security_policy()
    directives = dict(d.split(" ", 1) for d in policy.split("; "))
    assert directives["script-src"].startswith("'self' 'sha256-")  # Streamlit's one inline line, by hash
    assert "'unsafe-inline'" not in directives["script-src"] and "'unsafe-eval'" not in directives["script-src"]
    assert directives["connect-src"] == "'self'" and directives["frame-ancestors"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert dict(headers)["x-content-type-options"] == "nosniff"


def test_bad_offers_are_refused(exchange):
    with pytest.raises(ValueError):
        exchange.offer("set")  # no token
    with pytest.raises(ValueError):
        exchange.offer("delete")
