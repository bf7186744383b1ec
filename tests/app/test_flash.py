"""pooljudge.ui.common.flash / show_flash: a message kept for the next run, shown once, in its slot."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def _page():
    import streamlit as st

    from pooljudge.ui.common import flash, show_flash

    shown = show_flash("a", user_id=st.session_state.get("me"))
    show_flash("b")
    st.session_state["shown"] = shown
    if st.button("Store", key="store"):
        flash("Stored **3** labels.", where="a")
    if st.button("Refuse", key="refuse"):
        flash("Refused.", "error", where="b")
    if st.button("For 7", key="for7"):
        flash("Only for account 7.", "warning", where="a", user_id=7)


def test_a_flash_shows_once_on_the_next_run_in_its_slot():
    at = AppTest.from_function(_page, default_timeout=30).run()
    assert not at.success and at.session_state["shown"] is None
    at.button(key="store").click().run()  # flashed during this run: shown by the next
    assert not at.success
    at.run()
    assert [s.value for s in at.success] == ["Stored **3** labels."] and at.session_state[
        "shown"
    ] == "Stored **3** labels."
    at.run()
    assert not at.success  # once
    at.button(key="refuse").click().run()
    at.run()
    assert [e.value for e in at.error] == ["Refused."] and not at.success


def test_a_flash_for_an_account_is_dropped_for_another():
    at = AppTest.from_function(_page, default_timeout=30).run()
    at.session_state["me"] = 8
    at.button(key="for7").click().run()
    at.run()
    assert not at.warning and at.session_state["shown"] is None  # account 8 never sees account 7's message
    at.session_state["me"] = 7
    at.button(key="for7").click().run()
    at.run()
    assert [w.value for w in at.warning] == ["Only for account 7."]


def test_an_unknown_kind_is_refused():
    from pooljudge.ui.common import flash

    with pytest.raises(ValueError, match="kind must be success, info, warning or error, got 'toast'"):
        flash("x", "toast")


def _index_of(at, key: str) -> int:
    return next(i for i, node in at.main.children.items() if getattr(node, "key", None) == key)


def test_a_slot_keeps_its_place_with_or_without_a_message():
    # Until a run's element arrives, the browser keeps what the earlier run drew at its place (a block keeps
    # its children): had the message's slot gone with the message, everything below would have moved up one
    # place and shown the earlier run's elements meanwhile, a text twice or another item's texts in a box.
    at = AppTest.from_function(_page, default_timeout=30).run()
    without = _index_of(at, "store")
    at.button(key="store").click().run()
    at.run()
    assert at.success and _index_of(at, "store") == without
    at.run()
    assert not at.success and _index_of(at, "store") == without
