"""Issue 20: the keyboard works wherever labels are given on the Review page: the override of a final label takes
0-3 and X (exclude); the ranked list moves its cursor with J/K and sets the passage under it with 0-3 and X.
Streamlit binds each key to one button (``shortcut``), which the browser presses for it (the rework screen:
test_keyboard_rework.py)."""

from __future__ import annotations

import pytest

from tests.app.test_review_scale import _open as _open_review
from tests.app.test_review_scale import db, template  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def test_the_override_of_a_final_label_takes_keys(db):
    at = _open_review(db, "rev1", "Pairs")
    at.selectbox(key="override_query").select("q2").run()
    keys = {b.key: b.proto.shortcut for b in at.button if b.key and b.key.startswith("override_key_")}
    assert keys == {f"override_key_{g}": str(g) for g in range(4)} | {"override_key_exclude": "x"}
    at.button(key="override_key_exclude").click().run()
    assert at.radio(key="override_grade").value == "exclude"
    at.button(key="override_key_2").click().run()
    assert at.radio(key="override_grade").value == 2


def _set_not_applied(at) -> str:
    return next(c.value for c in at.caption if c.value.startswith("Set and not applied yet"))


def test_the_ranked_list_moves_a_cursor_and_sets_the_passage_under_it(db):
    at = _open_review(db, "rev1", "Ranked list")
    keys = {b.key: b.proto.shortcut for b in at.button if b.key and b.key.startswith("ranked_key_")}
    assert keys == {f"ranked_key_{g}": str(g) for g in range(4)} | {
        "ranked_key_exclude": "x",
        "ranked_key_keep": "u",
        "ranked_key_next": "j",
        "ranked_key_previous": "k",
    }
    assert _set_not_applied(at) == "Set and not applied yet: 0 labels."
    at.button(key="ranked_key_3").click().run()  # the cursor starts on the first passage
    at.button(key="ranked_key_next").click().run()
    at.button(key="ranked_key_1").click().run()
    at.button(key="ranked_key_next").click().run()
    at.button(key="ranked_key_exclude").click().run()
    at.button(key="ranked_key_previous").click().run()
    at.button(key="ranked_key_keep").click().run()  # U takes back the 1 set on #2
    assert _set_not_applied(at) == "Set and not applied yet: 2 labels (#1: 3, #3: exclude)."
    assert at.selectbox(key="ranked_jump").value == 1  # the box follows the cursor
    [listing] = [h.value for h in at.html if "the keys set this passage" in h.value]
    marked = listing.split("▶ the keys set this passage")[1]
    assert "#2 · d1" in marked.split("#3 · d2")[0]  # the cursor marks the second passage
    assert listing.count("set to: ") == 2
    at.selectbox(key="ranked_jump").select(2).run()  # the mouse moves the cursor with the box
    assert any(c.value.startswith("Keys: J/K move the cursor (now #3)") for c in at.caption)
    at.button(key="ranked_key_0").click().run()
    assert _set_not_applied(at) == "Set and not applied yet: 2 labels (#1: 3, #3: 0)."
