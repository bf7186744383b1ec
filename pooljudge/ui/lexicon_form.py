"""The Error analysis page's Lexicon tab: a collection's own names and kinds for the entity detector.

Everyone who sees the page sees the list; only an admin adds and removes
names (checked again in each callback, against the store: an account
demoted since the page was drawn cannot write).  Writes go through
:mod:`db.lexicon`; names are untrusted text, escaped in every message and
shown in tables as text.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from db.engine import Store
from db.lexicon import add_lexicon_name, list_lexicon, remove_lexicon_name
from db.queries import NotFound
from db.vocab import Role
from pooljudge.ui.auth import current_account
from pooljudge.ui.common import flash, md_escape, show_flash

WHERE = "errors_lexicon"
"""The flash slot of the tab's messages."""


def _admin() -> str | None:
    """The signed-in admin's username, or None (with an error shown) when the account is no longer an admin."""
    account = current_account()
    if account is None or account.role != Role.ADMIN:
        flash("Only an admin can change the lexicon.", "error", where=WHERE)
        return None
    return account.username


def _add(store: Store, collection: str) -> None:
    state = st.session_state
    name, kind = state.get("errors_lexicon_name", "").strip(), state.get("errors_lexicon_kind", "").strip()
    username = _admin()
    if username is None:
        return
    try:
        with store.write() as session:
            add_lexicon_name(session, collection, name, kind, created_by=username)
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where=WHERE)
        return
    state["errors_lexicon_name"] = ""
    flash(f"Added {md_escape(name)} ({md_escape(kind)}) to the lexicon.", where=WHERE)


def _remove(store: Store, collection: str) -> None:
    name = st.session_state.get("errors_lexicon_remove")
    if name is None or _admin() is None:
        return
    try:
        with store.write() as session:
            remove_lexicon_name(session, collection, name)
    except (NotFound, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where=WHERE)
        return
    st.session_state.pop("errors_lexicon_remove", None)
    flash(f"Removed {md_escape(name)} from the lexicon.", where=WHERE)


def lexicon_tab(store: Store, collection: str, role: str) -> None:
    """Draw the lexicon of ``collection``: its names, and for an admin (``role``) a form to add and remove one."""
    st.caption(
        "Names of this collection the entity detector should know, each with its kind (liquor, phone, site...): "
        "a query name of a kind the passage lacks, while the passage names another of that kind, is suggested "
        "as an entity mismatch. Also `pooljudge lexicon add/list/remove/import -c COLLECTION`."
    )
    show_flash(WHERE)
    with store.read() as session:
        entries = list_lexicon(session, collection)
    if entries:
        rows = [{"name": e.name, "kind": e.kind, "by": e.created_by, "added": e.created_at} for e in entries]
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch", key="errors_lexicon_table")
    else:
        st.caption("The lexicon of this collection is empty: the packaged name list is used alone.")
    if role != Role.ADMIN:
        st.caption("Only an admin can add or remove names.")
        return
    with st.form("errors_lexicon_form"):
        left, right = st.columns(2)
        left.text_input("Name", key="errors_lexicon_name", max_chars=200)
        right.text_input("Kind", key="errors_lexicon_kind", max_chars=64, placeholder="liquor, phone, site...")
        st.form_submit_button("Add to the lexicon", key="errors_lexicon_add", on_click=_add, args=(store, collection))
    if entries:
        st.selectbox("Name to remove", [e.name for e in entries], key="errors_lexicon_remove")
        st.button(
            "Remove",
            key="errors_lexicon_delete",
            on_click=_remove,
            args=(store, collection),
            icon=":material/delete:",
        )
