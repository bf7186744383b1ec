"""The collection's relevance level on the pages: the input that starts at it, the caption that names it, the
admin's control that changes it.

The level is one value per collection (:func:`db.queries.relevance_level`),
the default of ``pooljudge eval --collection`` and of every page that shows a
measure, so a page and the CLI print the same numbers without any option.
"""

from __future__ import annotations

import streamlit as st

from core.limits import CUTOFF_MAX
from db.vocab import Role


def level_input(container, info, *, key: str, label: str = "Relevance level", help: str | None = None) -> int:
    """A number input (widget ``key``) for the level of binary measures, starting at the collection's level.

    It starts again at the level whenever another collection is chosen or the
    collection's level changes (here or elsewhere); in between it keeps what
    the user typed.
    """
    state = st.session_state
    shown_for = (info.name, info.relevance_level)
    if state.get(f"{key}__for") != shown_for:
        state[f"{key}__for"] = shown_for
        state[key] = info.relevance_level  # set before the widget exists: the widget takes it as its value
    return int(
        container.number_input(
            label,
            min_value=1,
            max_value=CUTOFF_MAX,
            key=key,
            help=help
            or "Binary measures count grade >= level as relevant; nDCG always uses the graded label. "
            "Starts at the collection's level, which `pooljudge eval -c` uses too.",
        )
    )


def _whose(level: int, collection_level: int) -> str:
    return "the collection's level" if level == collection_level else f"the collection's level is {collection_level}"


def level_caption(level: int, collection_level: int) -> str:
    """Which grades the binary measures shown count as relevant, and whether that is the collection's level."""
    return f"Binary measures count grade ≥ {level} as relevant ({_whose(level, collection_level)}); nDCG uses the graded labels."


def relevant_caption(level: int, collection_level: int) -> str:
    """For statistics of relevant passages: which grades count as relevant, and whether that is the collection's level."""
    return f"Relevant = grade ≥ {level} ({_whose(level, collection_level)})."


def _save(store, collection: str, level: int, user_id: int) -> None:
    from db.access import SignedOut
    from db.queries import NotFound, set_relevance_level
    from pooljudge.ui.common import flash, md_escape

    try:
        with store.write() as session:
            set_relevance_level(session, collection, level, acting_user_id=user_id)
    except (NotFound, SignedOut, ValueError) as exc:
        flash(md_escape(str(exc)), "error", where="level")  # names the collection: untrusted
    else:
        flash(f"The collection's relevance level is now {level}.", where="level")


def level_control(container, store, info, level: int, account, *, key: str) -> None:
    """For an admin, a button making ``level`` the collection's level (shown when it differs); then its outcome.

    The account is re-checked as an active admin inside the write
    (:func:`db.queries.set_relevance_level`).
    """
    from pooljudge.ui.common import show_flash

    show_flash("level", container)
    if account.role == Role.ADMIN and level != info.relevance_level:
        container.button(
            f"Make {level} the collection's level",
            key=f"{key}_save",
            on_click=_save,
            args=(store, info.name, level, account.id),
            help=f"Now {info.relevance_level}. The level every page and `pooljudge eval -c` use by "
            "default, for everyone.",
        )
