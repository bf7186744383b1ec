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
written or deleted by the server's own route (:mod:`pooljudge.ui.session_route`,
``streamlit run serve.py``) as ``HttpOnly; SameSite=Strict``: no page script
can read it.  A sign-in shows the signed-in page only once the browser holds
the cookie (:mod:`pooljudge.ui.session_cookie`), so a URL opened straight
after is signed in too.

Page tests (AppTest) put only an account id into the session, without a
token: such a session re-reads the account (active, role) on every run.
"""

from __future__ import annotations

import math

import streamlit as st
from sqlalchemy.exc import OperationalError

from db.sessions import SESSION_TTL, check_session, login, revoke_session, touch_session
from db.users import Account, get_account
from pooljudge.ui import session_cookie
from pooljudge.ui.common import get_store
from pooljudge.ui.script_control import stop_run

COOKIE = "pooljudge_session"
_KEY = "pooljudge_user_id"
_TOKEN = "pooljudge_session_token"
_NOTICE = "pooljudge_signed_out"  # why the login screen is shown, until the next sign-in
_DEAD = "pooljudge_dead_token"  # a token known not to work: st.context.cookies keeps offering it
_COOKIE_OP = "pooljudge_cookie_op"  # the nonce of a cookie deletion the browser has not asked for yet
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
        if in_fragment_run():
            st.rerun()  # scope "app": the page is replaced by the login screen and its notice
        notice = st.session_state.get(_NOTICE)
        if notice:  # this browser was signed in a moment ago: say why it no longer is
            st.warning(notice)
        else:
            st.error("You do not have access to this page.")
        stop_run()
    if account.role not in roles:
        st.error("You do not have access to this page.")
        stop_run()
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
    """Keep the new session in this browser (the HttpOnly cookie first, then the state) and rerun."""
    with st.spinner("Signing in…"):
        session_cookie.write_now("set", token, max_age=int(SESSION_TTL.total_seconds()))
    st.session_state[_KEY] = account.id
    st.session_state[_TOKEN] = token
    for key in (_NOTICE, _DEAD, _COOKIE_OP):
        st.session_state.pop(key, None)
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
    session_cookie.write_now("clear", timeout=10)  # the token is revoked already: this only tidies the browser
    st.rerun()


def sync_cookie() -> None:
    """Show the pending deletion of a dead token's cookie until the browser asked for it (once per full run,
    from app.py; not from fragments, whose elements belong to them)."""
    nonce = st.session_state.get(_COOKIE_OP)
    if nonce is not None and session_cookie.show_pending(nonce):
        del st.session_state[_COOKIE_OP]


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
    if token:  # the cookie holds this dead token (set at login, or it came with the page): drop it
        st.session_state[_COOKIE_OP] = session_cookie.offer_clear()


def _cookie_token() -> str | None:
    try:
        value = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no client context: no cookies
        return None
    return value if isinstance(value, str) and value else None  # AppTest's context is a stand-in


def in_fragment_run() -> bool:
    """Whether this script run reruns fragments only (then the login screen needs a full rerun)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "fragment_ids_this_run", None))
