"""Login state for the Streamlit app: who is logged in, and the role check every page makes on every run.

A login starts a server-side session (:mod:`db.sessions`); its random token
lives in ``st.session_state`` and in a cookie, so that a reload (a new
Streamlit session) signs the browser in again.  Every page run and every
fragment run validates the token against the store: a revoked session
(logout, account disabled, role or password changed), an expired one or a
disabled account signs the browser out at its next interaction, with a
message saying so.

The cookie is read with Streamlit's own ``st.context.cookies`` (the cookies
the browser sent when the page was opened, so available on the first run) and
written or deleted with ``extra_streamlit_components.CookieManager`` (a
maintained component; no JavaScript of ours).  A component only acts once the
browser has rendered it, so a write is kept pending in the session, and the
component rendered on every full run by :func:`sync_cookie`, until the
browser reports it done.

Page tests (AppTest) put only an account id into the session, without a
token: such a session re-reads the account (active, role) on every run.
"""

from __future__ import annotations

import math
import secrets
from datetime import UTC, datetime

import streamlit as st
from sqlalchemy.exc import OperationalError

from db.sessions import SESSION_TTL, check_session, login, revoke_session, touch_session
from db.users import Account, get_account
from pooljudge.ui.common import get_store

COOKIE = "pooljudge_session"
_KEY = "pooljudge_user_id"
_TOKEN = "pooljudge_session_token"
_NOTICE = "pooljudge_signed_out"  # why the login screen is shown, until the next sign-in
_DEAD = "pooljudge_dead_token"  # a token known not to work: st.context.cookies keeps offering it
_COOKIE_OP = "pooljudge_cookie_op"  # a cookie write waiting for the browser: {"kind", "nonce", ...}
_REQUESTED = "pooljudge_requested_page"  # the page a logged-out browser asked for: (url path, query params)
_DETAIL = "pooljudge_signed_out_detail"  # what a page refused to store as the account was signed out (Markdown)

SIGNED_OUT = "You were signed out: the session ended, or the account was disabled or its role changed. Log in again."


def current_account() -> Account | None:
    """The logged-in, still active account, or None (validated against the store on every call)."""
    store = get_store()
    user_id = st.session_state.get(_KEY)
    token = st.session_state.get(_TOKEN)
    if user_id is not None and token:
        account = _validate(store, token)
        if account is None or account.id != user_id:
            _signed_out(token)
            return None
        return account
    if user_id is not None:  # an id without a session token (page tests): the account as it is now
        with store.read() as session:
            account = get_account(session, user_id)
        if account is None:
            st.session_state.pop(_KEY, None)
            st.session_state[_NOTICE] = SIGNED_OUT + st.session_state.pop(_DETAIL, "")
        return account
    token = _cookie_token()
    if token and token != st.session_state.get(_DEAD):
        account = _validate(store, token)
        if account is not None:  # a reload or a new tab: the browser's session goes on
            st.session_state[_KEY] = account.id
            st.session_state[_TOKEN] = token
            return account
        _signed_out(token)
    return None


def note_refused(detail: str | None) -> None:
    """Keep ``detail`` (Markdown, untrusted parts escaped) for the signed-out notice this run is about to show.

    A page that refused to store something because the account was signed out says what (the Annotate page's
    queued answers); None forgets it (the account is still signed in).
    """
    if detail is None:
        st.session_state.pop(_DETAIL, None)
    else:
        st.session_state[_DETAIL] = detail


def require_role(*roles: str) -> Account:
    """Stop the page (or the fragment) unless the logged-in account is active and has one of ``roles``.

    Call it at the start of every page and of every fragment function: the
    check is made against the store on each call.  A signed-out session in a
    fragment run reruns the whole app, which then shows the login screen.
    """
    account = current_account()
    if account is None:
        if _in_fragment_run():
            st.rerun()  # scope "app": the page is replaced by the login screen and its notice
        notice = st.session_state.get(_NOTICE)
        if notice:  # this browser was signed in a moment ago: say why it no longer is
            st.warning(notice)
        else:
            st.error("You do not have access to this page.")
        st.stop()
    if account.role not in roles:
        st.error("You do not have access to this page.")
        st.stop()
    return account


def login_form() -> None:
    """The login screen; on success a session starts, its token goes into a cookie and the app reruns."""
    st.title("pooljudge")
    notice = st.session_state.get(_NOTICE)
    if notice:
        st.warning(notice)
    with st.form("login"):
        username = st.text_input("Username")
        password = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Log in", type="primary")
    if submitted:
        result = login(get_store(), username, password, client_address())
        if result.retry_after > 0:
            st.error(f"Too many failed logins: wait {math.ceil(result.retry_after)} s before the next attempt.")
        elif result.account is None or result.token is None:  # login sets both on success
            st.error("Unknown user, wrong password, or a disabled account.")
        else:
            sign_in(result.account, result.token)


def remember_requested_page(page) -> None:
    """Keep the page (an ``st.Page``) and query parameters the URL of a logged-out browser asks for.

    A deep link (``/metrics?collection=x``) opened while logged out shows the
    login screen; after the login :func:`take_requested_page` sends the browser
    on to that page instead of the default one.
    """
    if getattr(page, "_default", False):
        st.session_state.pop(_REQUESTED, None)
    else:
        st.session_state[_REQUESTED] = (page.url_path, st.query_params.to_dict())


def take_requested_page() -> tuple[str, dict[str, str]] | None:
    """The ``(url path, query parameters)`` kept by :func:`remember_requested_page`, once (None if there is none)."""
    return st.session_state.pop(_REQUESTED, None)


def sign_in(account: Account, token: str) -> None:
    """Keep the new session in this browser (state now, cookie as soon as the browser confirms) and rerun."""
    st.session_state[_KEY] = account.id
    st.session_state[_TOKEN] = token
    for key in (_NOTICE, _DEAD):
        st.session_state.pop(key, None)
    expires = datetime.now(UTC) + SESSION_TTL
    _queue_cookie("set", token=token, expires=expires)
    st.rerun()


def logout() -> None:
    """Revoke this browser's server session, delete its cookie, forget everything in the session, rerun."""
    token = st.session_state.get(_TOKEN)
    if token:
        with get_store().write() as session:
            revoke_session(session, token)
    st.session_state.clear()
    if token:
        st.session_state[_DEAD] = token
    _queue_cookie("delete")
    st.rerun()


def sync_cookie() -> None:
    """Render the pending cookie write until the browser reports it done (call once per full run, from app.py).

    Not from fragments: a component rendered inside a fragment belongs to it.
    The components have no height; they sit at the top of the page.
    """
    op = st.session_state.get(_COOKIE_OP)
    if op is None:
        return
    done_key = f"pooljudge_cookie_{op['kind']}_{op['nonce']}"
    if st.session_state.get(done_key):  # the component's value: True once the browser did it
        del st.session_state[_COOKIE_OP]
        return
    from extra_streamlit_components import CookieManager

    manager = CookieManager(key=f"pooljudge_cookies_{op['nonce']}")
    if op["kind"] == "set":
        manager.set(
            COOKIE,
            op["token"],
            key=done_key,
            path="/",
            expires_at=op["expires"],
            same_site="strict",
            secure=_https() or None,
        )  # HTTPS-only when served over HTTPS; plain HTTP on localhost
    else:
        try:
            manager.delete(COOKIE, key=done_key)
        except KeyError:  # the component was rendered; CookieManager only failed to drop it from its own dict
            pass


def client_address() -> str:
    """The browser's address for login throttling ("" without a client context).

    The TCP peer's, or the rightmost untrusted ``X-Forwarded-For`` hop when the
    peer is a proxy named in ``$POOLJUDGE_TRUSTED_PROXIES`` (see core.client_address).
    """
    import os

    from core.client_address import TRUSTED_PROXIES_ENV, parse_trusted_proxies
    from core.client_address import client_address as resolve

    try:
        peer = st.context.ip_address  # None for 127.0.0.1 and ::1
        headers = st.context.headers
    except Exception:  # noqa: BLE001 - no client context (bare mode): no address
        return ""
    if peer is not None and not isinstance(peer, str):
        return ""  # AppTest's context is a stand-in
    get_all = getattr(headers, "get_all", None)
    lines = get_all("X-Forwarded-For") if callable(get_all) else []
    trusted = parse_trusted_proxies(os.environ.get(TRUSTED_PROXIES_ENV))
    return resolve(peer, [line for line in lines if isinstance(line, str)], trusted)


def _validate(store, token: str) -> Account | None:
    with store.read() as session:
        check = check_session(session, token)
    if check is None:
        return None
    if check.touch_due:  # last_seen_at: one tiny write a minute at most, never one per rerun
        try:
            with store.write() as session:
                touch_session(session, token)
        except OperationalError:  # a busy store must not cost the annotator the page; try next minute
            pass
    return check.account


def _signed_out(token: str | None) -> None:
    for key in (_KEY, _TOKEN):
        st.session_state.pop(key, None)
    if token:
        st.session_state[_DEAD] = token
    st.session_state[_NOTICE] = SIGNED_OUT + st.session_state.pop(_DETAIL, "")
    _queue_cookie("delete")  # the cookie holds this dead token (set at login, or it came with the page)


def _https() -> bool:
    try:
        url = st.context.url
    except Exception:  # noqa: BLE001 - no client context
        return False
    return isinstance(url, str) and url.lower().startswith("https://")


def _cookie_token() -> str | None:
    try:
        value = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no client context: no cookies
        return None
    return value if isinstance(value, str) and value else None  # AppTest's context is a stand-in


def _queue_cookie(kind: str, **values) -> None:
    st.session_state[_COOKIE_OP] = {"kind": kind, "nonce": secrets.token_hex(4), **values}


def _in_fragment_run() -> bool:
    """Whether this script run reruns fragments only (then the login screen needs a full rerun)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "fragment_ids_this_run", None))
