"""Keyboard keys for giving labels outside the Annotate page's queue (rework, Review overrides); the ranked list
(:mod:`pooljudge.ui.ranked_component`) handles the same keys in the browser.

Streamlit binds a key to a button (``st.button(..., shortcut=...)``) and ignores it while a text box has the
focus, so typing a reason never sets a label.  One key belongs to one button on a page: the screens give the
grade keys to one item at a time (the first unanswered rework item).
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from core.scale import BINARY_LEVELS, LEVELS

GRADE_KEYS: dict[str, dict[int, str]] = {
    "graded": {lv.grade: str(lv.grade) for lv in LEVELS},
    "binary": {grade: key.upper() for grade, _name, key in BINARY_LEVELS},
}
"""The key of each grade on each scale: the Annotate page's (0-3; N and Y on the binary scale)."""
KEEP_KEY = "K"
EXCLUDE_KEY = "X"
UNDO_KEY = "U"
"""Takes back a label set on the ranked list's passage under the cursor."""
NEXT_KEY, PREVIOUS_KEY = "J", "K"
"""Move the ranked list's cursor down and up."""


def keys_text(scale: str) -> str:
    """``0-3`` or ``N/Y``: the grade keys of ``scale`` as a caption names them."""
    keys = list(GRADE_KEYS[scale].values())
    return f"{keys[0]}-{keys[-1]}" if scale == "graded" else "/".join(keys)


def _shortcut(value: int | str) -> str:
    return {"exclude": EXCLUDE_KEY, "keep": UNDO_KEY}.get(str(value), str(value))


def _set(target: str, value: int | str) -> None:
    st.session_state[target] = value


def value_keys(target: str, values: Sequence[int | str], *, prefix: str) -> None:
    """A row of small buttons, one per value, each setting the widget ``target`` to it (a grade: its digit;
    ``"exclude"``: X).  Drawn before the widget (a callback may set a widget's value only before it is drawn)."""
    row = st.container(horizontal=True, key=f"{prefix}_row")
    for value in values:
        row.button(
            f"{value}",
            key=f"{prefix}_{value}",
            type="tertiary",
            shortcut=_shortcut(value),
            on_click=_set,
            args=(target, value),
        )
