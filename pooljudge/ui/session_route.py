"""The session cookie set by an HTTP response of the app's own server: HttpOnly, so no page script can read it.

Streamlit writes no cookie itself and a component can only write one from
JavaScript (``document.cookie``: never HttpOnly).  So the server that runs the
app (``serve.py``: ``st.App`` with :func:`routes` and :func:`middleware`)
answers one more path, :data:`ROUTE`.  A sign-in (or a sign-out) registers a
one-time nonce here (:meth:`CookieExchange.offer`: random, single use, valid
:data:`NONCE_TTL` seconds, never the token itself) and the page shows an
``<img>`` of ``ROUTE?n=<nonce>``; the browser's request for it gets back
``Set-Cookie: pooljudge_session=<token>; HttpOnly; SameSite=Strict; Path=/``
(``Secure`` over HTTPS) or the cookie's deletion.  The script run that
registered the nonce waits (:meth:`CookieExchange.wait`) until that response
has gone out, so the sign-in completes only once the browser holds the cookie:
a URL opened straight after is already signed in.  The token comes back to
the app through ``st.context.cookies`` (the cookies of the websocket
handshake), never through the page.

A plain ``<img>`` rather than JavaScript: nothing of ours runs in the page,
and a Content-Security-Policy (:class:`SecurityHeaders`) can forbid inline
scripts.  The request must come from the app's own pages (``Sec-Fetch-Site``),
so another site cannot plant a session in the browser.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROUTE = "/_pooljudge/session"
COOKIE = "pooljudge_session"
NONCE_TTL = 60.0
"""Seconds a nonce stays valid: the page asks for the image at once; a slow browser gets a minute."""

# the smallest transparent GIF: what the <img> shows (nothing)
_GIF = base64.b64decode("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7")
_NO_STORE = {"Cache-Control": "no-store"}


@dataclass
class _Offer:
    action: str  # "set" or "clear"
    token: str | None
    max_age: int
    expires_at: float
    done: threading.Event = field(default_factory=threading.Event)


class CookieExchange:
    """One-time nonces for cookie writes, shared by the script threads (offer, wait) and the route (take)."""

    def __init__(self) -> None:
        self._offers: dict[str, _Offer] = {}
        self._lock = threading.Lock()
        self.installed = False  # set by routes(): the server answers ROUTE (not when run as `streamlit run app.py`)

    def offer(self, action: str, token: str | None = None, max_age: int = 0) -> str:
        """Register a cookie write (``"set"`` with ``token`` for ``max_age`` seconds, or ``"clear"``); its nonce."""
        if action not in ("set", "clear") or (action == "set" and not token):
            raise ValueError(f"bad cookie offer: {action!r}")
        nonce = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            for old in [n for n, o in self._offers.items() if o.expires_at < now]:
                del self._offers[old]  # nonces nobody asked for in time
            self._offers[nonce] = _Offer(action, token, max_age, now + NONCE_TTL)
        return nonce

    def take(self, nonce: str) -> _Offer | None:
        """The offer of ``nonce``, once (None when unknown, already taken or expired)."""
        with self._lock:
            offer = self._offers.get(nonce)
            if offer is None or offer.token == "" or offer.expires_at < time.monotonic():
                return None
            taken = _Offer(offer.action, offer.token, offer.max_age, offer.expires_at, offer.done)
            offer.token = ""  # used: the entry stays only so that wait() and done() can see it
        return taken

    def wait(self, nonce: str, timeout: float) -> bool:
        """Block until the response that carries ``nonce``'s cookie has been sent (True), or ``timeout`` (False)."""
        with self._lock:
            offer = self._offers.get(nonce)
        return offer is not None and offer.done.wait(timeout)

    def done(self, nonce: str) -> bool:
        """Whether the response carrying ``nonce``'s cookie has been sent."""
        with self._lock:
            offer = self._offers.get(nonce)
        return offer is not None and offer.done.is_set()

    def pending(self, nonce: str) -> bool:
        """Whether ``nonce`` can still be taken (registered, not used, not expired)."""
        with self._lock:
            offer = self._offers.get(nonce)
            return offer is not None and offer.token != "" and offer.expires_at >= time.monotonic()


EXCHANGE = CookieExchange()


def image_html(nonce: str) -> str:
    """The invisible ``<img>`` whose request exchanges ``nonce`` for the cookie (for ``st.html``)."""
    return f'<img src="{ROUTE}?n={nonce}" alt="" width="1" height="1" style="position:absolute;opacity:0">'


async def _session_cookie(request: Any) -> Any:
    """``GET ROUTE?n=<nonce>``: set or clear the session cookie, once per nonce."""
    from starlette.background import BackgroundTask
    from starlette.responses import Response

    if request.headers.get("sec-fetch-site", "same-origin") != "same-origin":  # another site's page
        return Response(status_code=403, headers=_NO_STORE)
    offer = EXCHANGE.take(request.query_params.get("n", ""))
    if offer is None:
        return Response(status_code=404, headers=_NO_STORE)
    # marked done once the response (and its Set-Cookie) has been sent: the waiting sign-in goes on then
    response = Response(_GIF, media_type="image/gif", headers=_NO_STORE, background=BackgroundTask(offer.done.set))
    secure = request.url.scheme == "https"
    if offer.action == "set":
        response.set_cookie(
            COOKIE, offer.token or "", max_age=offer.max_age, path="/", secure=secure, httponly=True, samesite="strict"
        )
    else:
        response.delete_cookie(COOKIE, path="/", secure=secure, httponly=True, samesite="strict")
    return response


def routes() -> list[Any]:
    """The server's extra routes (for ``st.App(routes=...)``): :data:`ROUTE`."""
    from starlette.routing import Route

    EXCHANGE.installed = True
    return [Route(ROUTE, _session_cookie, methods=["GET"])]


# ------------------------------------------------------------------------------------------ security headers


def _inline_script_hashes() -> list[str]:
    """CSP hashes of the inline scripts of Streamlit's own index.html (one line that sets ``prerenderReady``)."""
    import streamlit

    index = Path(streamlit.__file__).parent / "static" / "index.html"
    try:
        html = index.read_text(encoding="utf-8")
    except OSError:
        return []
    bodies = re.findall(r"<script>(.*?)</script>", html, flags=re.S)
    return [f"'sha256-{base64.b64encode(hashlib.sha256(b.encode()).digest()).decode()}'" for b in bodies]


def content_security_policy() -> str:
    """The Content-Security-Policy every response carries.

    Scripts only from the app's own origin (plus Streamlit's one inline line,
    by hash, and the ``blob:`` URLs Streamlit makes of components' scripts):
    markup injected into a page cannot run script; nothing is loaded
    from or sent to another origin (``connect-src``; ``img-src`` allows only
    Google's font server, where Streamlit takes the ``:material/...:`` page
    icon), so a script that did run could hardly send anything away; no other
    site may frame the app.
    Styles may be inline (Streamlit's CSS-in-JS), images ``data:``/``blob:``
    (charts, downloads).
    """
    # blob: is where Streamlit puts the script of a st.components.v2 component given as text (the Annotate
    # queue); markup injected into a page cannot make one
    scripts = " ".join(["'self'", *_inline_script_hashes(), "blob:"])
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src {scripts}",
            "style-src 'self' 'unsafe-inline' blob:",
            "img-src 'self' data: blob: https://fonts.gstatic.com",  # the page icon (:material/...:) comes from there
            "font-src 'self' data:",
            "connect-src 'self'",
            "frame-src 'self' blob: data:",
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'self'",
        ]
    )


class SecurityHeaders:
    """ASGI middleware: the Content-Security-Policy and its companions on every HTTP response."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.headers = [
            (b"content-security-policy", content_security_policy().encode("latin-1")),
            (b"x-content-type-options", b"nosniff"),
            (b"referrer-policy", b"same-origin"),
        ]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                names = {name.lower() for name, _ in message.get("headers", [])}
                extra = [(name, value) for name, value in self.headers if name not in names]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def middleware() -> list[Any]:
    """The server's extra middleware (for ``st.App(middleware=...)``): :class:`SecurityHeaders`."""
    from starlette.middleware import Middleware

    return [Middleware(SecurityHeaders)]
