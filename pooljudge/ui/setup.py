"""First start: a store without accounts asks for the first admin."""

from __future__ import annotations

import streamlit as st

from db import users
from db.users import add_user
from db.vocab import Role
from pooljudge.ui.common import md_escape


def has_users(store) -> bool:
    with store.read() as session:
        return users.has_users(session)


def first_admin_form() -> None:
    from db.sessions import create_session
    from pooljudge.ui.auth import client_address, sign_in
    from pooljudge.ui.common import get_store

    st.title("Welcome to pooljudge")
    st.write(
        "This store has no accounts yet. Create the first administrator; add annotators and reviewers "
        "on the Admin page or with `pooljudge user add`."
    )
    with st.form("first-admin"):
        username = st.text_input("Admin username", value="admin")
        password = st.text_input("Password (at least 8 characters)", type="password")
        again = st.text_input("Password again", type="password")
        submitted = st.form_submit_button("Create admin", type="primary")
    if submitted:
        if password != again:
            st.error("The passwords differ.")
            return
        try:
            with get_store().write() as session:
                if users.has_users(session):
                    st.error("An account was created meanwhile: log in instead.")
                    return
                account = add_user(session, username.strip(), password, Role.ADMIN)  # add_user refuses, not strips
                token = create_session(session, account.id, client_address())
        except ValueError as exc:
            st.error(md_escape(str(exc)))
            return
        sign_in(account, token)
