"""Manage: archive, restore and rename collections, pools, runs and qrels versions (admins only).

Archiving hides an item from every listing and picker, with who and when; nothing is deleted and
restoring brings it back as it was.  Each action re-checks the acting account inside its write
(:mod:`db.archive`).
"""

import pandas as pd
import streamlit as st

from db.access import SignedOut
from db.archive import archive, as_rows, list_items, rename, restore
from db.queries import NotFound
from db.vocab import Role
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import flash, get_store, md_escape, show_flash

account = require_role(Role.ADMIN)
st.title("Manage")
st.caption(
    "Archive hides a collection, pool, run or qrels version from every list and picker; its judgments and "
    "data stay in the store, and Restore brings it back exactly as it was. Rename keeps everything attached."
)
store = get_store()

show_flash("manage")

with store.read() as session:
    items = list_items(session)

archived_only = st.toggle("Show archived items only", key="manage_archived_only")
shown = [i for i in items if i.archived] if archived_only else items
if shown:
    # st.dataframe shows cells as plain text: stored names need no escaping here
    st.dataframe(pd.DataFrame(as_rows(shown)), hide_index=True, width="stretch")
else:
    st.caption("Nothing archived." if archived_only else "No collections yet.")

LABELS = {"collection": "collection", "pool": "pool", "run": "run", "qrels": "qrels version"}


def _label(key: tuple[str, str | None, str]) -> str:
    kind, collection, name = key
    item = next((i for i in items if (i.kind, i.collection, i.name) == key), None)
    state = " (archived)" if item is not None and item.archived else ""
    return f"{LABELS[kind]} {name}" + (f" in {collection}" if collection else "") + state


if items:
    with st.form("manage"):
        key = st.selectbox(
            "Item", [(i.kind, i.collection, i.name) for i in items], format_func=_label, key="manage_item"
        )
        new_name = st.text_input("New name (for Rename)", key="manage_new_name")
        archive_col, restore_col, rename_col = st.columns(3)
        do_archive = archive_col.form_submit_button("Archive", key="manage_archive")
        do_restore = restore_col.form_submit_button("Restore", key="manage_restore")
        do_rename = rename_col.form_submit_button("Rename", key="manage_rename")
    if key is not None and (do_archive or do_restore or do_rename):
        kind, collection, name = key
        try:
            with store.write() as session:
                if do_archive:
                    archive(session, kind, name, collection=collection, acting_user_id=account.id)
                    done = f"Archived {LABELS[kind]} {name}: hidden from every list, nothing deleted."
                elif do_restore:
                    restore(session, kind, name, collection=collection, acting_user_id=account.id)
                    done = f"Restored {LABELS[kind]} {name}."
                else:
                    rename(session, kind, name, new_name, collection=collection, acting_user_id=account.id)
                    done = f"Renamed {LABELS[kind]} {name} to {new_name}."
        except (NotFound, SignedOut, ValueError) as exc:
            st.error(md_escape(str(exc)), icon=":material/error:")  # the message quotes stored names
        else:
            flash(md_escape(done), where="manage")
            st.rerun()
