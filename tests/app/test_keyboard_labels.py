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


def test_the_ranked_list_moves_a_cursor_and_sets_the_passage_under_it(db):
    at = _open_review(db, "rev1", "Ranked list")
    keys = {b.key: b.proto.shortcut for b in at.button if b.key and b.key.startswith("ranked_key_")}
    assert keys == {f"ranked_key_{g}": str(g) for g in range(4)} | {
        "ranked_key_exclude": "x",
        "ranked_key_next": "j",
        "ranked_key_previous": "k",
    }
    boxes = [s for s in at.selectbox if s.key and s.key.startswith("ranked_set_")]
    assert [b.value for b in boxes] == ["keep", "keep", "keep"]
    at.button(key="ranked_key_3").click().run()  # the cursor starts on the first passage
    at.button(key="ranked_key_next").click().run()
    at.button(key="ranked_key_next").click().run()
    at.button(key="ranked_key_exclude").click().run()
    at.button(key="ranked_key_previous").click().run()
    assert [s.value for s in at.selectbox if s.key and s.key.startswith("ranked_set_")] == [3, "keep", "exclude"]
    assert any(c.value.startswith("Keys: J/K move the cursor (now #2)") for c in at.caption)
