"""The page side of the HttpOnly session cookie: show the exchange image, wait for the server to send the cookie.

:mod:`pooljudge.ui.session_route` is the server side.  A sign-in calls
:func:`write_now`, which shows the one-time image and blocks the script run
until the route has sent the ``Set-Cookie`` (the script thread waits; the
server's event loop serves the image meanwhile), so the signed-in page
appears only once the browser holds the cookie.  A sign-out does the same
with the cookie's deletion.  A token found dead on a later run is dropped
without waiting: :func:`offer_clear` registers the deletion and
:func:`show_pending` shows its image on each full run until it is done.

Served as ``streamlit run app.py`` (no route) or under AppTest, nothing is
written: the sign-in holds for its tab only, and the server log says why once.
"""

from __future__ import annotations

import logging

import streamlit as st

from pooljudge.ui.session_route import EXCHANGE, image_html

WAIT_S = 20.0
"""How long a sign-in or sign-out waits for the browser to ask for the cookie (a loaded machine takes < 1 s)."""

_LOG = logging.getLogger(__name__)
_warned: list[bool] = []


def served() -> bool:
    """Whether this server answers the cookie route (started as ``streamlit run serve.py``)."""
    if not EXCHANGE.installed and not _warned:
        _warned.append(True)
        _LOG.warning(
            "pooljudge was started without serve.py: no session cookie is written, a sign-in lasts as long as its "
            "tab; start it with `streamlit run serve.py` (make run)"
        )
    return EXCHANGE.installed


def write_now(kind: str, token: str | None = None, max_age: int = 0, timeout: float = WAIT_S) -> bool:
    """Have the browser store (``"set"``) or drop (``"clear"``) the session cookie before this run goes on.

    Returns True once the response carrying the cookie has been sent, False when the route is not served or
    the browser did not ask for the image within ``timeout`` seconds.
    """
    if not served():
        return False
    nonce = EXCHANGE.offer(kind, token, max_age)
    st.html(image_html(nonce))
    return EXCHANGE.wait(nonce, timeout)


def offer_clear() -> str | None:
    """Register the cookie's deletion for :func:`show_pending`; its nonce (None when the route is not served)."""
    return EXCHANGE.offer("clear") if served() else None


def show_pending(nonce: str) -> bool:
    """Show the image of a registered write unless it is over; True when it is over (done, or expired)."""
    if EXCHANGE.done(nonce) or not EXCHANGE.pending(nonce):
        return True
    st.html(image_html(nonce))
    return False
