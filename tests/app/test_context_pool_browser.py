"""The browser contexts the tests share (``ContextPool``, behind the ``new_page`` fixture): each test holds
contexts no other test holds, a context handed back forgets its cookies, storage, headers and routes, and its
HTTP cache survives (the point of sharing: the frontend's bundles are fetched once per context and server).

Served by a small HTTP server in this process, not the app: no Streamlit start for a test of the fixtures.
"""

from __future__ import annotations

import http.server
import threading
from collections import Counter

import pytest

from tests.app.browser_helpers import ContextPool

pytestmark = pytest.mark.browser

PAGE = b"<html><body><script src='/bundle.js'></script><p id='p'>page</p></body></html>"
BUNDLE = b"window.bundleRuns = (window.bundleRuns || 0) + 1;"


@pytest.fixture(scope="module")
def site():
    """``{"url", "hits": Counter of paths, "headers": the X-Test header of each request}``: ``/`` is a page
    that loads ``/bundle.js``, served cacheable for an hour like Streamlit's hashed bundles."""
    hits: Counter[str] = Counter()
    headers: list[str | None] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            hits[self.path] += 1
            headers.append(self.headers.get("X-Test"))
            bundle = self.path == "/bundle.js"
            self.send_response(200)
            self.send_header("Content-Type", "text/javascript" if bundle else "text/html")
            self.send_header("Cache-Control", "public, max-age=3600" if bundle else "no-cache")
            self.end_headers()
            self.wfile.write(BUNDLE if bundle else PAGE)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield {"url": f"http://127.0.0.1:{server.server_address[1]}", "hits": hits, "headers": headers}
    server.shutdown()
    server.server_close()


def _open(context, url: str):
    page = context.new_page()
    page.goto(url + "/")
    page.wait_for_function("() => window.bundleRuns === 1", timeout=30_000)
    return page


def _stored(page) -> tuple[str, str | None]:
    return tuple(page.evaluate("() => [document.cookie, localStorage.getItem('who')]"))


def test_contexts_taken_together_are_separate_sessions(browser, site):
    pool = ContextPool(browser)
    first, second = pool.take(), pool.take()
    assert first is not second
    a, b = _open(first, site["url"]), _open(second, site["url"])
    a.evaluate("() => { document.cookie = 'who=alice'; localStorage.setItem('who', 'alice'); }")
    b.evaluate("() => { document.cookie = 'who=bob'; localStorage.setItem('who', 'bob'); }")
    assert _stored(a) == ("who=alice", "alice")
    assert _stored(b) == ("who=bob", "bob")
    assert [c["value"] for c in first.cookies()] == ["alice"]
    assert [c["value"] for c in second.cookies()] == ["bob"]
    pool.give_back(first)
    pool.give_back(second)
    pool.close()


def test_a_context_handed_back_forgets_the_test_but_keeps_its_http_cache(browser, site):
    pool = ContextPool(browser)
    context = pool.take()
    start = site["hits"]["/bundle.js"]
    page = _open(context, site["url"])
    page.evaluate("() => { document.cookie = 'who=alice'; localStorage.setItem('who', 'alice'); }")
    context.set_extra_http_headers({"X-Test": "alice"})
    context.route("**/nowhere", lambda route: route.abort())
    assert page.evaluate("() => fetch('/').then((r) => r.status)") == 200
    assert site["headers"][-1] == "alice"
    before = site["hits"].copy()
    pool.give_back(context)

    again = pool.take()
    assert again is context and again.pages == [] and again.cookies() == []
    page = _open(again, site["url"])
    assert _stored(page) == ("", None)
    assert site["headers"][-1] is None  # the extra header is gone
    assert page.evaluate("() => fetch('/nowhere').then((r) => r.status)") == 200  # and so is the route
    # the page was asked for again (no-cache), the bundle came from the context's HTTP cache
    assert site["hits"]["/"] == before["/"] + 1
    assert site["hits"]["/bundle.js"] == before["/bundle.js"] == start + 1
    pool.give_back(again)
    pool.close()


def test_a_context_that_cannot_be_reset_is_not_handed_out_again(browser, site):
    pool = ContextPool(browser)
    context = pool.take()
    context.close()  # as a test that closed its context itself
    pool.give_back(context)
    assert pool.idle == []
    fresh = pool.take()
    assert fresh is not context and _stored(_open(fresh, site["url"])) == ("", None)
    pool.give_back(fresh)
    pool.close()
