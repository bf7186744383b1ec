"""Login state for the Streamlit app: who is logged in, and the role check every page makes on every run.

Only the account id is kept in ``st.session_state``; the role is read from
the store on every run, so disabling an account or changing its role takes
effect at the next interaction.
"""

from __future__ import annotations

import streamlit as st

from db.users import Account, authenticate, get_account
from pooljudge.ui.common import get_store

_KEY = "pooljudge_user_id"


def current_account() -> Account | None:
    """The logged-in, still active account, or None."""
    user_id = st.session_state.get(_KEY)
    if user_id is None:
        return None
    with get_store().read() as session:
        account = get_account(session, user_id)
    if account is None:
        st.session_state.pop(_KEY, None)
    return account


def require_role(*roles: str) -> Account:
    """Stop the page unless the logged-in account has one of ``roles`` (checked on every run)."""
    account = current_account()
    if account is None or account.role not in roles:
        st.error("You do not have access to this page.")
        st.stop()
    return account


def login_form() -> None:
    """The login screen; on success the account id goes into the session and the app reruns."""
    st.title("pooljudge")
    with st.form("login"):
        username = st.text_input("Username")
        password = st.text_input("Password", type="password")
        submitted = st.form_submit_button("Log in", type="primary")
    if submitted:
        with get_store().write() as session:
            account = authenticate(session, username, password)
        if account is None:
            st.error("Unknown user, wrong password, or a disabled account.")
        else:
            sign_in(account)


def sign_in(account: Account) -> None:
    st.session_state[_KEY] = account.id
    st.rerun()


def logout() -> None:
    st.session_state.clear()
    st.rerun()
