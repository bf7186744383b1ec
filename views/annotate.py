"""Annotate: one query and one passage at a time, graded with the keyboard (0-3), blind by construction.

The page shows only the texts, verbatim (``st.html`` of escaped HTML, never
Markdown): never the run, rank or score that brought the passage, nor anyone
else's label; it reads no query parameters.

A grade lands on the item that was on screen, never on "whatever is next
now": each rendered item gets a fresh render token, and its buttons (and
their keyboard shortcuts) submit ``(assignment id, token)`` through
``on_click`` callbacks.  ``db.labelling.record_judgment`` checks the account,
the owner, the package and any standing label in the same write transaction:
a repeat of the same submission stores nothing, a stale one (labelled in
another tab, package closed) is refused with a message and the page moves on.
Only the fragment reruns after a key press; it re-checks the account first.

All grade buttons look the same (no primary colour that would pull towards
one grade); each shows its full name, with the definition as its tooltip.
The sidebar shows the guide of the item's collection and scale (a binary
pool shows the binary guide).  P goes back through one's own earlier items
(a grade there appends a relabel), F flags an item for the reviewers.
While a package returned by QC has an unanswered disputed item, the rework
screen above owns the keys and no item view is drawn (the queue's key handler
would take 0-3 first); the sidebar lists the keys of the screen shown.
"""

import secrets
import time

import streamlit as st

from core.scale import BINARY_GUIDE, BINARY_LEVELS, LEVELS, default_guide
from db.access import Forbidden, StaleSubmission
from db.guidelines import (
    assignment_collection,
    get_guidelines,
    is_custom,
    reset_guidelines,
    scale_guide,
    set_guidelines,
)
from db.labelling import next_item, record_judgment, undo_last
from db.navigation import history, open_own_item, overview
from db.package_qc import my_packages, resubmit_package
from db.qc_rounds import waiting_on_flags
from db.vocab import PackageStatus, Purpose, Role
from pooljudge.ui.annotate_component import show_queue, upcoming
from pooljudge.ui.auth import in_fragment_run, note_refused, require_role
from pooljudge.ui.common import flash, get_store, md_escape, show_flash
from pooljudge.ui.highlight import verbatim_html
from pooljudge.ui.keys import KEEP_KEY, keys_text
from pooljudge.ui.qc_states import own_flag_wait_text
from pooljudge.ui.rework import rework_screen

ROLES = (Role.ANNOTATOR, Role.REVIEWER, Role.ADMIN)
# the scale lives in core.scale; binary mode (a pool assigned on the binary scale) has its own keys
KEYS = {"graded": {lv.grade: str(lv.grade) for lv in LEVELS}, "binary": {g: k for g, _n, k in BINARY_LEVELS}}
BUILT_IN_NAMES = {"graded": {lv.grade: lv.name for lv in LEVELS}, "binary": {lv.grade: lv.name for lv in BINARY_GUIDE}}
SCALE_TITLES = {"graded": "graded scale, 0-3", "binary": "binary scale"}

VIEW = "annotate_view"  # the item on screen: {"assignment_id", "token", "shown_at", "standing"}
FLASH = "annotate"  # the flash slot (pooljudge.ui.common.flash) of the next fragment run: a refusal, nothing to undo
REVISIT = "annotate_revisit"  # the earlier item on screen (an assignment id); absent while new items are shown
GUIDE = "annotate_guide"  # {"key": (collection, scale), "levels": [...]}: the guide of the item on screen
# "queue" (the default): new items come from the browser's queue (pooljudge.ui.annotate_component);
# "server": each key press goes to the server before the next item is drawn, as earlier items always do
# (the AppTest page tests drive this view: AppTest cannot press keys in a component)
ITEM_VIEW = "annotate_item_view"
# the scale of the first unanswered disputed item of a QC rework on the page: its buttons own the grade keys and K,
# so no item view (whose keys are the same) is shown; None when there is none
REWORK = "annotate_rework"
KEYS_SHOWN = "annotate_keys"  # (screen, scale) of what the panel shows, for the sidebar's list of keys that work

account = require_role(*ROLES)
store = get_store()
state = st.session_state


def _open_history(user_id: int) -> list[int]:
    """The user's earlier items that can still take a label, oldest first."""
    with store.read() as session:
        return [e.assignment_id for e in history(session, user_id) if e.open]


def _forward(user_id: int, current: int) -> None:
    """After a relabel: the next newer earlier item, or back to new items after the newest."""
    ids = _open_history(user_id)
    later = ids[ids.index(current) + 1 :] if current in ids else []
    if later:
        state[REVISIT] = later[0]
    else:
        state.pop(REVISIT, None)


def _warn(user_id: int, message: str) -> None:
    """Keep a warning for the account's next fragment run (one signed out here since never sees it)."""
    flash(md_escape(message), "warning", where=FLASH, user_id=user_id)


def _fresh(token: str, user_id: int, what: str) -> bool:
    if (state.get(VIEW) or {}).get("token") != token:
        # a press that reached a button of an earlier render (a double tap, or a key pressed while the next
        # item was being drawn): its item is no longer on screen
        _warn(user_id, f"That key press reached the previous item after it was replaced: {what}.")
        return False
    return True


def _submit(user_id: int, assignment_id: int, token: str, grade: int | None, action: str = "label") -> None:
    """A button's callback: store the judgment on the item it was rendered with, nothing else."""
    if not _fresh(token, user_id, "nothing was stored"):
        return
    view = state[VIEW]
    revisit = state.get(REVISIT) == assignment_id
    if revisit and action == "label" and view.get("standing") == grade:
        _forward(user_id, assignment_id)  # the same grade again keeps the label: nothing to append
        state.pop(VIEW, None)
        return
    elapsed = int((time.monotonic() - view["shown_at"]) * 1000)
    note = state.get(f"note-{token}", "") if action == "flag" else ""
    try:
        with store.write() as session:
            record_judgment(
                session,
                user_id,
                assignment_id,
                grade,
                action=action,
                note=note,
                elapsed_ms=elapsed,
                token=token,
                relabel=revisit,
            )
    except StaleSubmission as exc:
        _warn(user_id, f"{exc} Showing the next one.")
        state.pop(REVISIT, None)
    except Forbidden as exc:  # a signed-out account: the fragment's require_role says so next
        _warn(user_id, str(exc))
    else:
        if revisit:
            _forward(user_id, assignment_id)
    state.pop(VIEW, None)  # this render is used up: the next run shows the next item with a fresh token


def _undo(user_id: int, token: str) -> None:
    """U: withdraw the latest label, once per item on screen (a repeated key press undoes nothing more)."""
    if not _fresh(token, user_id, "nothing was undone"):
        return
    if _undo_latest(user_id):
        state.pop(VIEW, None)


def _undo_latest(user_id: int) -> bool:
    """Withdraw the account's latest label (a warning says when there is none); False when refused."""
    try:
        with store.write() as session:
            undone = undo_last(session, user_id)
    except Forbidden as exc:
        _warn(user_id, str(exc))
        return False
    if undone is None:
        _warn(user_id, "Nothing to undo.")
    return True


def _previous(user_id: int, token: str) -> None:
    """P: the earlier item before the one on screen (one's own, still open), to look at or relabel."""
    if not _fresh(token, user_id, "nothing changed"):
        return
    ids = _open_history(user_id)
    current = state.get(REVISIT)
    if current in ids:
        earlier = ids[: ids.index(current)]
    else:  # from the new item on screen (which may itself be an item skipped before)
        earlier = [aid for aid in ids if aid != state[VIEW]["assignment_id"]]
    if not earlier:
        _warn(user_id, "There is no earlier item of yours to go back to.")
        return
    state[REVISIT] = earlier[-1]
    state.pop(VIEW, None)


def _back(token: str) -> None:
    """B: leave the earlier items and go on with new ones."""
    if (state.get(VIEW) or {}).get("token") == token:
        state.pop(REVISIT, None)
        state.pop(VIEW, None)


def _jump(assignment_id: int) -> None:
    state[REVISIT] = assignment_id
    state.pop(VIEW, None)


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    if minutes < 1:
        return "under a minute"
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def _sync_guide(collection: str | None, scale: str) -> None:
    """Keep the guide of the item's collection and scale in the session; a change redraws the sidebar."""
    key = (collection, scale)
    fragment_run = in_fragment_run()
    # a key press reads no guide; a whole run reads it again, so an admin's edit shows up
    if fragment_run and (state.get(GUIDE) or {}).get("key") == key:
        return
    if collection is None:
        levels = default_guide()[scale]
    else:
        with store.read() as session:
            levels = scale_guide(session, collection, scale)
    state[GUIDE] = {"key": key, "levels": levels}
    if fragment_run:
        st.rerun()  # the sidebar lives outside the fragment: a whole run shows the new guide


def _sync_keys(screen: str, scale: str) -> None:
    """Keep what the panel shows in the session for the sidebar's keys; a change redraws the sidebar."""
    changed = state.get(KEYS_SHOWN) != (screen, scale)
    state[KEYS_SHOWN] = (screen, scale)
    if changed and in_fragment_run():
        st.rerun()  # the sidebar lives outside the fragment (P, B and the queue's end change the keys)


def _keys_help(screen: str, scale: str) -> str:
    """The keys that work on ``screen`` ("rework", "new", "revisit", "empty", "none"), as the sidebar lists them."""
    if screen == "rework":
        return f"Keys: {keys_text(scale)} answer the first unanswered disputed item · {KEEP_KEY} keep your label"
    grades = (
        "N not relevant, Y relevant" if scale == "binary" else ("0-3 relabel" if screen == "revisit" else "0-3 grade")
    )
    return {
        "new": f"Keys: {grades} · S skip · U undo · P previous item · F flag",
        "revisit": f"Keys: {grades} · P previous item · B back to new items",
        "empty": "Keys: U undo · P previous item",
    }.get(screen, "")


def _label(scale: str, grade: int, name: str) -> str:
    # the built-in names are ours; an admin's own names are untrusted and shown literally
    return f"{grade} · {name if name == BUILT_IN_NAMES[scale][grade] else md_escape(name)}"


def _item_for(user_id: int):
    """``(item, standing label, overview, collection)``: the earlier item being revisited, else the next new one."""
    standing = None
    with store.read() as session:
        item = None
        if state.get(REVISIT) is not None:
            try:
                item, standing = open_own_item(session, user_id, state[REVISIT])
            except Forbidden:
                state.pop(REVISIT, None)
        if item is None:
            item = next_item(session, user_id)
        mine = overview(session, user_id)
        collection = assignment_collection(session, item.assignment_id) if item is not None else None
    return item, standing, mine, collection


def _work_caption(mine) -> None:
    """All of the account's work: done, left, flagged, and the time left at its median pace."""
    eta = (
        ""
        if mine.eta_s is None or not mine.left
        else (f" · about {_duration(mine.eta_s)} left at your median of {mine.median_s:.0f} s per label")
    )
    flagged = f" · {mine.flagged} flagged, with the reviewers" if mine.flagged else ""
    st.caption(f"All your work: {mine.done} of {mine.total} labelled · {mine.left} left{flagged}{eta}")


def _render_token(item, standing: int | None) -> str:
    """The token of the item on screen: kept across reruns of the same item, fresh for a new one."""
    view = state.get(VIEW)
    if view is None or view["assignment_id"] != item.assignment_id:
        view = {"assignment_id": item.assignment_id, "token": secrets.token_hex(16), "shown_at": time.monotonic()}
        state[VIEW] = view
    view["standing"] = standing
    return view["token"]


def _show_item(item, standing: int | None, levels: list[dict], revisit: bool) -> None:
    """The package's progress, the revisit notice, then the query and the passage, verbatim."""
    label = (
        "Adjudication"
        if item.purpose == Purpose.FOURTH
        else ("Quality review" if item.purpose == Purpose.QC else "Package")
    )
    st.progress(
        item.done / item.total if item.total else 0.0,
        text=f"{label} {md_escape(item.package)}: {item.done} of {item.total} labelled · item {item.position}",
    )
    if getattr(item, "note", ""):  # a label the annotator kept after QC rework: your review alone decides it
        st.info(md_escape(item.note) + " Your label decides this item; the earlier reviewers' labels do not count.")
    if revisit:
        mark = (
            "no label" if standing is None else f"your label {_label(item.scale, standing, levels[standing]['name'])}"
        )
        st.info(
            f"An earlier item ({mark}). A grade relabels it (a new judgment; the earlier one is kept), the same "
            "grade keeps it; B goes back to new items."
        )
    with st.container(border=True):
        st.caption("Query")
        st.html(verbatim_html(item.query, language=item.query_language))
    with st.container(border=True):
        st.caption("Passage")
        if item.title:
            st.html(verbatim_html(item.title, query=item.query, language=item.passage_language, bold=True))
        st.html(verbatim_html(item.passage, query=item.query, language=item.passage_language))


def _grade_buttons(user_id: int, item, token: str, levels: list[dict]) -> None:
    """One button per grade, each submitting that grade for the item it was drawn with.

    Keys carry the token: a press that reaches the server after the next item was drawn belongs to a
    button that no longer exists (or to its own item), never to the new one.  Two grades per row in equal
    columns, so every full name fits at 1280 px and no grade looks bigger; every grade the same type.
    """
    keys = KEYS[item.scale]
    for i in range(0, len(levels), 2):
        for cell, level in zip(st.columns(2), levels[i : i + 2], strict=False):
            grade = level["grade"]
            cell.button(
                _label(item.scale, grade, level["name"]),
                key=f"grade-{grade}-{token}",
                shortcut=keys[grade],
                width="stretch",
                type="secondary",
                help=md_escape(level["definition"]),
                on_click=_submit,
                args=(user_id, item.assignment_id, token, grade),
            )


def _action_buttons(user_id: int, item, token: str, revisit: bool) -> None:
    """Previous, then Back (an earlier item) or Skip, Undo, Flag and the flag's note (a new item)."""
    actions = st.container(horizontal=True)
    actions.button(
        "Previous",
        key=f"previous-{token}",
        shortcut="p",
        width="stretch",
        icon=":material/undo:",
        help="Go back to your earlier items to check or relabel them",
        on_click=_previous,
        args=(user_id, token),
    )
    if revisit:
        actions.button(
            "Back to new items", key=f"back-{token}", shortcut="b", width="stretch", on_click=_back, args=(token,)
        )
        return
    actions.button(
        "Skip",
        key=f"skip-{token}",
        shortcut="s",
        width="stretch",
        on_click=_submit,
        args=(user_id, item.assignment_id, token, None, "skip"),
    )
    actions.button(
        "Undo last label", key=f"undo-{token}", shortcut="u", width="stretch", on_click=_undo, args=(user_id, token)
    )
    actions.button(
        "Flag",
        key=f"flag-{token}",
        shortcut="f",
        width="stretch",
        help="Unclear or broken: the item goes to the reviewers and is not shown to you again",
        on_click=_submit,
        args=(user_id, item.assignment_id, token, None, "flag"),
    )
    with actions.popover("Note for a flag", width="stretch"):
        st.text_area("What is unclear?", key=f"note-{token}")


def _queue_command(user_id: int, name: str, shown: int | None) -> None:
    """U and P pressed in the queue, after the answers sent with them are stored: undo, or go back."""
    if name == "undo":
        _undo_latest(user_id)
    elif name == "previous":
        earlier = [aid for aid in _open_history(user_id) if aid != shown]
        if not earlier:
            _warn(user_id, "There is no earlier item of yours to go back to.")
            return
        state[REVISIT] = earlier[-1]
        state.pop(VIEW, None)


def _queue_panel(user_id: int) -> None:
    """New items: the browser's queue (pooljudge.ui.annotate_component) shows them and sends the answers."""
    items = upcoming(store, user_id)
    with store.read() as session:
        mine = overview(session, user_id)
        collection = assignment_collection(session, items[0][0].assignment_id) if items else None
    _work_caption(mine)
    scale = items[0][0].scale if items else "graded"
    _sync_guide(collection, scale)
    levels = {**default_guide(), scale: state[GUIDE]["levels"]}
    _sync_keys("new" if items else "empty", scale)
    show_queue(store, user_id, items, levels, KEYS, lambda name, shown: _queue_command(user_id, name, shown))
    if not items:
        st.success("Nothing left to label. Thank you!")


@st.fragment
def annotation_panel() -> None:
    me = require_role(*ROLES)  # every fragment run: a disabled or demoted account stops here
    note_refused(None)  # still signed in: nothing to add to a sign-out notice
    show_flash(FLASH, user_id=me.id)  # not a message left over from an account signed out here
    if state.get(REWORK) is not None:  # the queue's key handler would take 0-3 before the rework's buttons
        state.pop(VIEW, None)
        st.info("New items follow once the disputed items above are answered: until then the keys are theirs.")
        _sync_keys("rework", state[REWORK])
        return
    queue = state.get(ITEM_VIEW, "queue") == "queue"
    if queue and state.get(REVISIT) is None:
        state.pop(VIEW, None)
        _queue_panel(me.id)
        return
    item, standing, mine, collection = _item_for(me.id)
    if queue and state.get(REVISIT) is None:  # the earlier item is no longer open: back to the queue
        _queue_panel(me.id)
        return
    revisit = state.get(REVISIT) is not None
    _work_caption(mine)
    if item is None:
        st.success("Nothing left to label. Thank you!")
        state.pop(VIEW, None)
        _sync_keys("none", "graded")
        return
    token = _render_token(item, standing)
    _sync_guide(collection, item.scale)
    levels = state[GUIDE]["levels"]
    _sync_keys("revisit" if revisit else "new", item.scale)
    _show_item(item, standing, levels, revisit)
    _grade_buttons(me.id, item, token, levels)
    _action_buttons(me.id, item, token, revisit)


st.title("Annotate")
state[REWORK] = rework_screen(store, account)  # packages returned by QC: their disputed items come first
annotation_panel()

with st.sidebar:
    guide = state.get(GUIDE) or {"key": (None, "graded"), "levels": default_guide()["graded"]}
    where, scale = guide["key"]
    st.subheader("Guide")
    st.caption(md_escape(f"{where} · {SCALE_TITLES[scale]}" if where else SCALE_TITLES[scale]))
    for level in guide["levels"]:
        examples = "".join(f"  \n*{md_escape(e)}*" for e in level["examples"])
        st.markdown(f"**{level['grade']} · {md_escape(level['name'])}**  \n{md_escape(level['definition'])}{examples}")
    if keys_help := _keys_help(*state.get(KEYS_SHOWN, ("none", scale))):
        st.caption(keys_help)

with st.expander("My packages"):
    with store.read() as session:
        packages = my_packages(session, account.id)
        held = {p.id: p for p in waiting_on_flags(session, account.id)}
    if not packages:
        st.caption("No packages assigned to you yet.")
    for package in packages:
        cols = st.columns([3, 2, 2, 2])
        cols[0].text(package.name)
        cols[1].text(f"{package.done} / {package.total}")
        cols[2].text(package.status)
        if package.id in held:  # finished but for its flags: say why it does not go on to QC
            st.warning(own_flag_wait_text(held[package.id]))
        if (
            package.id is None or package.status != PackageStatus.REVISE
        ):  # adjudication and QC entries have no package id
            continue
        if cols[3].button("Revision done", key=f"resubmit-{package.id}"):
            try:
                with store.write() as session:
                    resubmit_package(session, account.id, package.id)
            except (Forbidden, ValueError) as exc:  # ValueError: disputed items not yet answered
                st.error(md_escape(str(exc)))
            else:
                st.rerun()

with st.expander("My earlier items"):
    with store.read() as session:
        earlier = [e for e in history(session, account.id, limit=500) if e.open][::-1]
    if not earlier:
        st.caption("Nothing labelled yet.")
    else:

        def _describe(entry) -> str:
            said = f"label {entry.grade}" if entry.grade is not None else (entry.mark or "no label")
            return f"{entry.package} · {said} · {entry.query[:60]} | {entry.passage[:60]}"

        chosen = st.selectbox("Your items, newest first", earlier, format_func=_describe, key="annotate_jump")
        st.button("Open this item", key="annotate_jump_open", on_click=_jump, args=(chosen.assignment_id,))

if account.role == Role.ADMIN:
    with st.expander("Annotation guidelines (admin)"):
        from db.queries import list_collections

        with store.read() as session:
            names = [c.name for c in list_collections(session)]
        if not names:
            st.caption("No collections yet.")
        else:
            target = st.selectbox("Guide of collection", names, key="guide_collection")
            edit_scale = st.radio(
                "Scale", list(SCALE_TITLES), format_func=SCALE_TITLES.get, horizontal=True, key="guide_scale"
            )
            with store.read() as session:
                current = get_guidelines(session, target)
                custom = is_custom(session, target)
            st.caption("This collection has its own guide." if custom else "This collection shows the built-in guide.")
            with st.form(f"guide-{target}-{edit_scale}"):
                edited = []
                for level in current[edit_scale]:
                    g = level["grade"]
                    st.markdown(f"**Grade {g}**")
                    # keys per collection and scale: switching either shows that guide, not the typed one
                    at = f"{g}-{edit_scale}-{target}"
                    name = st.text_input("Name", level["name"], key=f"guide-name-{at}")
                    definition = st.text_area("Definition", level["definition"], key=f"guide-def-{at}", height=68)
                    listed = level["examples"]  # a validated guide: a list of strings (core.scale.Guide is loose)
                    examples = st.text_area(
                        "Examples (one per line)",
                        "\n".join(map(str, listed)) if isinstance(listed, list) else "",
                        key=f"guide-ex-{at}",
                        height=68,
                    )
                    edited.append(
                        {
                            "grade": g,
                            "name": name,
                            "definition": definition,
                            "examples": [e for e in examples.splitlines() if e.strip()],
                        }
                    )
                save = st.form_submit_button("Save guide")
            if save:
                try:
                    with store.write() as session:
                        set_guidelines(session, account.id, target, {**current, edit_scale: edited})
                except (ValueError, Forbidden) as exc:
                    st.error(md_escape(str(exc)))
                else:
                    state.pop(GUIDE, None)  # the sidebar reads the new guide on this run
                    st.success("Saved: annotators see it from their next item.")
            if custom and st.button("Reset to the built-in guide", key="guide_reset"):
                with store.write() as session:
                    reset_guidelines(session, account.id, target)
                state.pop(GUIDE, None)
                for key in [k for k in state if str(k).startswith("guide-") and str(k).endswith(f"-{target}")]:
                    del state[key]  # the fields show the built-in text again
                st.rerun()
