"""Issue 20: the keyboard works wherever labels are given on the Review page: the override of a final label takes
0-3 and X (exclude).  Streamlit binds each key to one button (``shortcut``), which the browser presses for it (the
rework screen: test_keyboard_rework.py; the ranked list handles its keys in the browser: test_review_browser.py)."""

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
