"""Annotate: one query and one passage at a time, graded with the keyboard (0-3), blind by construction.

The page shows only the texts, verbatim (``st.html`` of escaped HTML, never
Markdown): never the run, rank or score that brought the passage, nor anyone
else's label; it reads no query parameters.

A grade lands on the item that was on screen, never on "whatever is next
now": each rendered item gets a fresh render token, and its buttons (and
their keyboard shortcuts) submit ``(assignment id, token)`` through
``on_click`` callbacks.  ``db.annotation.record_judgment`` checks the account,
the owner, the package and any standing label in the same write transaction:
a repeat of the same submission stores nothing, a stale one (labelled in
another tab, package closed) is refused with a message and the page moves on.
Only the fragment reruns after a key press; it re-checks the account first.
"""

import secrets
import time

import streamlit as st

from core.scale import BINARY_LEVELS as BINARY
from core.scale import LEVELS
from db.annotation import Forbidden, StaleSubmission, my_packages, next_item, record_judgment, resubmit_package, undo_last
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import get_store, md_escape
from pooljudge.ui.highlight import highlighted_html, verbatim_html

ROLES = ("annotator", "reviewer", "admin")
# the scale lives in core.scale; binary mode (a pool assigned on the binary scale) has its own keys
GRADED = [(g, name, str(g)) for g, name, _d, _e in LEVELS]

VIEW = "annotate_view"  # the item on screen: {"assignment_id", "token", "shown_at"}
FLASH = "annotate_flash"  # (user id, message) for the next fragment run: a refused submission, nothing to undo

account = require_role(*ROLES)
store = get_store()
state = st.session_state
state.setdefault("skipped", [])


@st.cache_resource(show_spinner=False)
def _warm_highlighting() -> bool:
    # jieba loads its dictionary (about a second) on first use: pay it when the page opens, not on the
    # key press that happens to bring the first Chinese passage
    highlighted_html("埃菲尔铁塔有多高", "埃菲尔铁塔高330米", "zh")
    return True


_warm_highlighting()

with st.sidebar:
    st.subheader("Levels")
    for grade, name, definition, example in LEVELS:
        st.markdown(f"**{grade} · {name}**  \n{definition}  \n*{example}*")
    st.caption("Keys: 0-3 grade (binary pools: N not relevant, Y relevant) · S skip · U undo")


def _submit(user_id: int, assignment_id: int, token: str, grade: int | None, action: str = "label") -> None:
    """A button's callback: store the judgment on the item it was rendered with, nothing else."""
    view = state.get(VIEW) or {}
    if view.get("token") != token:
        # a press that reached a button of an earlier render (a double tap, or a key pressed while the next
        # item was being drawn): its item is no longer on screen, so it stores nothing
        state[FLASH] = (user_id, "That key press reached the previous item after it was replaced: nothing was stored.")
        return
    elapsed = int((time.monotonic() - view["shown_at"]) * 1000)
    note = state.get(f"note-{token}", "") if action == "flag" else ""
    try:
        with store.write() as session:
            record_judgment(session, user_id, assignment_id, grade, action=action, note=note, elapsed_ms=elapsed,
                            token=token)
    except StaleSubmission as exc:
        state[FLASH] = (user_id, f"{exc} Showing the next one.")
    except Forbidden as exc:  # a signed-out account: the fragment's require_role says so next
        state[FLASH] = (user_id, str(exc))
    else:
        if action in ("skip", "flag"):
            state["skipped"].append(assignment_id)
    state.pop(VIEW, None)  # this render is used up: the next run shows the next item with a fresh token


def _undo(user_id: int, token: str) -> None:
    """U: withdraw the latest label, once per item on screen (a repeated key press undoes nothing more)."""
    if (state.get(VIEW) or {}).get("token") != token:
        state[FLASH] = (user_id, "That key press reached the previous item after it was replaced: nothing was undone.")
        return
    try:
        with store.write() as session:
            undone = undo_last(session, user_id)
    except Forbidden as exc:
        state[FLASH] = (user_id, str(exc))
        return
    if undone is None:
        state[FLASH] = (user_id, "Nothing to undo.")
    elif undone in state["skipped"]:
        state["skipped"].remove(undone)
    state.pop(VIEW, None)


@st.fragment
def annotation_panel() -> None:
    me = require_role(*ROLES)  # every fragment run: a disabled or demoted account stops here
    flash = state.pop(FLASH, None)
    if flash and flash[0] == me.id:  # not a message left over from an account that was signed out here
        st.warning(md_escape(flash[1]))
    with store.read() as session:
        item = next_item(session, me.id, skipped=state["skipped"])
    if item is None:
        st.success("Nothing left to label. Thank you!")
        state["skipped"] = []
        state.pop(VIEW, None)
        return
    view = state.get(VIEW)
    if view is None or view["assignment_id"] != item.assignment_id:
        view = {"assignment_id": item.assignment_id, "token": secrets.token_hex(16), "shown_at": time.monotonic()}
        state[VIEW] = view
    token = view["token"]

    label = "Adjudication" if item.purpose == "fourth" else ("Quality review" if item.purpose == "qc" else "Package")
    st.progress(item.done / item.total if item.total else 0.0,
                text=f"{label} {md_escape(item.package)}: {item.done} of {item.total} labelled · item {item.position}")
    with st.container(border=True):
        st.caption("Query")
        st.html(verbatim_html(item.query, language=item.query_language))
    with st.container(border=True):
        st.caption("Passage")
        if item.title:
            st.html(verbatim_html(item.title, query=item.query, language=item.passage_language, bold=True))
        st.html(verbatim_html(item.passage, query=item.query, language=item.passage_language))

    # keys carry the token: a press that reaches the server after the next item was drawn belongs to a
    # button that no longer exists (or to its own item), never to the new one
    # rows are horizontal containers, not st.columns: half the elements to send and draw on every key press
    buttons = BINARY if item.scale == "binary" else GRADED
    grades = st.container(horizontal=True)
    for grade, name, key in buttons:
        grades.button(f"{grade} · {name}", key=f"grade-{grade}-{token}", shortcut=key, width="stretch",
                      type="primary" if grade == buttons[-1][0] else "secondary",
                      on_click=_submit, args=(me.id, item.assignment_id, token, grade))
    actions = st.container(horizontal=True)
    actions.button("Skip", key=f"skip-{token}", shortcut="s", width="stretch",
                   on_click=_submit, args=(me.id, item.assignment_id, token, None, "skip"))
    actions.button("Undo last label", key=f"undo-{token}", shortcut="u", width="stretch",
                   on_click=_undo, args=(me.id, token))
    with actions.popover("Flag as unclear", width="stretch"):
        st.text_area("What is unclear?", key=f"note-{token}")
        st.button("Flag", key=f"flag-{token}", on_click=_submit, args=(me.id, item.assignment_id, token, None, "flag"))


st.title("Annotate")
annotation_panel()

with st.expander("My packages"):
    with store.read() as session:
        packages = my_packages(session, account.id)
    if not packages:
        st.caption("No packages assigned to you yet.")
    for package in packages:
        cols = st.columns([3, 2, 2, 2])
        cols[0].text(package["name"])
        cols[1].text(f"{package['done']} / {package['total']}")
        cols[2].text(package["status"])
        if package["status"] == "revise" and cols[3].button("Revision done", key=f"resubmit-{package['id']}"):
            try:
                with store.write() as session:
                    resubmit_package(session, account.id, package["id"])
            except Forbidden as exc:
                st.error(md_escape(str(exc)))
            else:
                st.rerun()
