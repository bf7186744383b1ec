"""The annotator's QC rework screen: the disputed items of a package returned for revision.

For each package of the user in ``"revise"`` it shows the round that returned
it and, for every pair the reviewers disagreed on, the query and passage
(verbatim, escaped), the annotator's label, each reviewer's label and note;
the annotator relabels each one or keeps their label deliberately (both are
new judgments, :func:`db.rework.relabel_disputed`), then resubmits.  A
resubmission with an unanswered item is refused with the store's message.

Buttons bind to their item as the Annotate page's do: each rendered item has a
render token, and its buttons submit ``(assignment id, token)`` through
``on_click`` callbacks, so a press lands on the item it was drawn with and a
repeated press stores nothing more.
"""

from __future__ import annotations

import secrets

import streamlit as st

from core.scale import SCALES, grade_name
from db.access import Forbidden, StaleSubmission
from db.package_qc import resubmit_package
from db.qc_rounds import DisputedItem
from db.rework import ReworkPackage, relabel_disputed, rework_packages
from pooljudge.ui.common import flash, md_escape, show_flash
from pooljudge.ui.highlight import show_text
from pooljudge.ui.keys import GRADE_KEYS, KEEP_KEY, keys_text

TOKENS = "rework_tokens"  # assignment id -> render token of the item on screen
FLASH = "rework"  # the flash slot (pooljudge.ui.common.flash) of the outcome shown on the next run


def _label(grade: int | None, scale: str) -> str:
    return "none" if grade is None else f"{grade} · {grade_name(grade, scale)}"


def _token(assignment_id: int) -> str:
    tokens = st.session_state.setdefault(TOKENS, {})
    if assignment_id not in tokens:
        tokens[assignment_id] = secrets.token_hex(16)
    return tokens[assignment_id]


def _answer(store, user_id: int, assignment_id: int, token: str, grade: int) -> None:
    """A grade button's callback: store the answer on the item it was drawn with, once."""
    tokens = st.session_state.setdefault(TOKENS, {})
    if tokens.get(assignment_id) != token:
        flash(
            md_escape("That press reached an earlier view of the item: nothing was stored."),
            "warning",
            where=FLASH,
            user_id=user_id,
        )
        return
    # the annotator's own words for the next reviewer; without them a kept label says "kept after QC round N"
    note = str(st.session_state.get(f"rework-note-{assignment_id}") or "").strip()
    try:
        with store.write() as session:
            relabel_disputed(session, user_id, assignment_id, grade, token=token, note=note)
    except (StaleSubmission, Forbidden, ValueError) as exc:
        flash(md_escape(str(exc)), "warning", where=FLASH, user_id=user_id)
    tokens.pop(assignment_id, None)  # used up: the next run draws the item with a fresh token


def _resubmit(store, user_id: int, package_id: int, name: str) -> None:
    try:
        with store.write() as session:
            resubmit_package(session, user_id, package_id)
    except (Forbidden, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where=FLASH, user_id=user_id)
    else:
        flash(md_escape(f"Package {name} resubmitted for quality control."), where=FLASH, user_id=user_id)


def _item(store, user_id: int, item: DisputedItem, *, keyed: bool = False) -> None:
    """One disputed item; ``keyed``: its buttons take the grade keys and K (the first unanswered item)."""
    token = _token(item.assignment_id)
    with st.container(border=True, key=f"rework-item-{item.assignment_id}"):
        st.caption("Query")
        show_text(item.query, language=item.query_language, label=item.query_id)
        st.caption("Passage")
        show_text(item.title, query=item.query, language=item.passage_language, bold=True)
        show_text(item.passage, query=item.query, language=item.passage_language, label=item.passage_id)
        show_text(_label(item.annotator_label, item.scale), label="Your label when reviewed")
        show_text(
            "; ".join(f"{who}: {_label(g, item.scale)}" for who, g in item.reviewer_labels.items()),
            label="Reviewers' labels",
        )
        for who, note in item.notes.items():
            show_text(note, label=f"Note from {who}", small=True)
        # one block whatever the answer: the buttons below keep their place in the box (why: show_flash)
        with st.container():
            if item.answered:
                show_text(_label(item.current_label, item.scale), label="Answered: your label now")
            else:
                show_text("relabel it, or keep your label if you stand by it", label="Not answered yet")
                st.text_input(
                    "Note for the next reviewer (optional): a label you keep goes, with this note, to a reviewer "
                    "who has not seen it",
                    key=f"rework-note-{item.assignment_id}",
                )
        # every grade looks the same: no button is styled to nudge the answer
        row = st.container(horizontal=True)
        for grade in SCALES[item.scale]:
            row.button(
                _label(grade, item.scale),
                key=f"rework-{item.assignment_id}-{grade}-{token}",
                width="stretch",
                shortcut=GRADE_KEYS[item.scale][grade] if keyed else None,
                on_click=_answer,
                args=(store, user_id, item.assignment_id, token, grade),
            )
        if item.current_label is not None:
            row.button(
                "Keep my label",
                key=f"rework-keep-{item.assignment_id}-{token}",
                width="stretch",
                shortcut=KEEP_KEY if keyed else None,
                on_click=_answer,
                args=(store, user_id, item.assignment_id, token, item.current_label),
            )


def _package(store, user_id: int, package: ReworkPackage, *, keys: bool) -> str | None:
    """One returned package; with ``keys`` its first unanswered item takes the keys: returns its scale (or None)."""
    st.subheader(f"Rework: package {md_escape(package.name)}")
    accuracy = "n/a" if package.accuracy is None else f"{package.accuracy:.0%}"
    st.info(
        f"Quality control round {package.round_no} returned this package: accuracy {accuracy}, "
        f"below the {package.threshold:.0%} needed. The reviewers disagreed with {len(package.items)} of your "
        "labels: relabel each one (or keep your label if you stand by it), then resubmit. The next round "
        "reviews items no earlier round sampled, plus each label you kept, which a reviewer who has not seen it "
        "decides, with your note."
    )
    st.progress(
        package.answered / len(package.items) if package.items else 1.0,
        text=f"{package.answered} of {len(package.items)} disputed items answered",
    )
    # the keys go to the first unanswered item (a key belongs to one button); answered, the next one takes them
    # (of the first package with one: a key belongs to one button on the page)
    first = next((i for i in package.items if not i.answered), None) if keys else None
    # a caption in every run: the boxes below keep their place (why: pooljudge.ui.common.show_flash)
    if first is not None:
        st.caption(
            f"Keys: {keys_text(first.scale)} answer the first unanswered item, {KEEP_KEY} keeps your label; new items "
            "follow once every disputed item is answered."
        )
    elif package.answered == len(package.items):
        st.caption("Every disputed item is answered: resubmit the package for the next round of quality control.")
    else:
        st.caption("The keys answer the package above first: answer these with the buttons.")
    for item in package.items:
        _item(store, user_id, item, keyed=item is first)
    st.button(
        f"Resubmit package {md_escape(package.name)}",
        key=f"rework-resubmit-{package.id}",
        on_click=_resubmit,
        args=(store, user_id, package.id, package.name),
    )
    return None if first is None else first.scale


def rework_screen(store, account) -> str | None:
    """Show the rework of every package of ``account`` returned for revision.

    Returns the scale of the first unanswered disputed item, whose buttons then own the grade keys and K
    (the page shows no item view of its own meanwhile), or None when every disputed item is answered.

    Parameters
    ----------
    store : db.engine.Store
        The store.
    account : db.models.User
        The signed-in account (checked by the page's ``require_role``).
    """
    show_flash(FLASH, user_id=account.id)  # not a message left over from an account signed out here
    with store.read() as session:
        packages = rework_packages(session, account.id)
    keyed = None
    for package in packages:
        scale = _package(store, account.id, package, keys=keyed is None)
        keyed = keyed or scale
    return keyed
