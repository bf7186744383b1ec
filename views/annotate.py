"""Annotate: one query and one passage at a time, graded with the keyboard (0-3), blind by construction.

The page shows only the texts: never the run, rank or score that brought the
passage, nor anyone else's label; it reads no query parameters, and every
write is checked against the logged-in account in ``db.annotation``.
"""

import time

import streamlit as st

from db.annotation import Forbidden, my_packages, next_item, record_judgment, resubmit_package, undo_last
from pooljudge.ui.auth import require_role
from pooljudge.ui.common import get_store
from pooljudge.ui.highlight import highlighted_html

LEVELS = [
    (0, "No match", "The passage has nothing to do with the query.",
     "Query: how tall is the Eiffel Tower. Passage: a recipe for French onion soup."),
    (1, "On topic, does not meet the need", "About the query's subject but does not answer it.",
     "Passage: the Eiffel Tower was built for the 1889 World's Fair (no height)."),
    (2, "Partly satisfies", "Answers part of the need, or answers it vaguely or indirectly.",
     "Passage: the tower is taller than any building in Paris at the time."),
    (3, "Precisely answers", "Contains the exact answer to the query.",
     "Passage: the Eiffel Tower is 330 metres tall including its antennas."),
]

# binary mode (a pool assigned on the binary scale): relevant or not, with their own keys
BINARY = [(0, "Not relevant", "n"), (1, "Relevant", "y")]

account = require_role("annotator", "reviewer", "admin")
store = get_store()
state = st.session_state
state.setdefault("skipped", [])

with st.sidebar:
    st.subheader("Levels")
    for grade, name, definition, example in LEVELS:
        st.markdown(f"**{grade} · {name}**  \n{definition}  \n*{example}*")
    st.caption("Keys: 0-3 grade (binary pools: N not relevant, Y relevant) · S skip · U undo")


@st.fragment
def annotation_panel() -> None:
    with store.read() as session:
        item = next_item(session, account.id, skipped=state["skipped"])
    if item is None:
        st.success("Nothing left to label. Thank you!")
        state["skipped"] = []
        return
    if state.get("shown_item") != item.assignment_id:
        state["shown_item"] = item.assignment_id
        state["shown_at"] = time.monotonic()

    label = "Adjudication" if item.purpose == "fourth" else ("Quality review" if item.purpose == "qc" else "Package")
    st.progress(item.done / item.total if item.total else 0.0,
                text=f"{label} {item.package}: {item.done} of {item.total} labelled · item {item.position}")
    with st.container(border=True):
        st.caption("Query")
        st.markdown(highlighted_html(item.query, item.query, item.query_language, mark=False), unsafe_allow_html=True)
    with st.container(border=True):
        st.caption("Passage")
        if item.title:
            st.markdown(f"<b>{highlighted_html(item.query, item.title, item.passage_language)}</b>", unsafe_allow_html=True)
        st.markdown(highlighted_html(item.query, item.passage, item.passage_language), unsafe_allow_html=True)

    def elapsed_ms() -> int:
        return int((time.monotonic() - state.get("shown_at", time.monotonic())) * 1000)

    def judge(grade: int | None, action: str = "label", note: str = "") -> None:
        try:
            with store.write() as session:
                record_judgment(session, account.id, item.assignment_id, grade, action=action, note=note,
                                elapsed_ms=elapsed_ms())
        except Forbidden as exc:
            st.error(str(exc))

    buttons = BINARY if item.scale == "binary" else [(g, name, str(g)) for g, name, _d, _e in LEVELS]
    for (grade, name, key), column in zip(buttons, st.columns(len(buttons))):
        if column.button(f"{grade} · {name}", key=f"grade-{grade}", shortcut=key, width="stretch",
                         type="primary" if grade == buttons[-1][0] else "secondary"):
            judge(grade)
            st.rerun(scope="fragment")
    left, middle, right = st.columns(3)
    if left.button("Skip", key="skip", shortcut="s", width="stretch"):
        judge(None, action="skip")
        state["skipped"].append(item.assignment_id)
        st.rerun(scope="fragment")
    if middle.button("Undo last label", key="undo", shortcut="u", width="stretch"):
        with store.write() as session:
            undone = undo_last(session, account.id)
        if undone is not None and undone in state["skipped"]:
            state["skipped"].remove(undone)
        st.rerun(scope="fragment")
    with right.popover("Flag as unclear", width="stretch"):
        note = st.text_area("What is unclear?", key=f"note-{item.assignment_id}")
        if st.button("Flag", key="flag"):
            judge(None, action="flag", note=note)
            state["skipped"].append(item.assignment_id)
            st.rerun(scope="fragment")


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
            with store.write() as session:
                resubmit_package(session, account.id, package["id"])
            st.rerun()
