"""Issue 20: the rework screen's first unanswered item takes the grade keys (0-3, or N/Y on the binary scale) and K
keeps the label (it used to list its items as mouse buttons only, under a sidebar that advertised 0-3).  Streamlit
binds each key to one button (``shortcut``), which the browser presses for it."""

from __future__ import annotations

from tests.app.test_qc_rework_page import _ann_labels, _open, returned  # noqa: F401 (fixture)


def _keys(at) -> dict[str, str]:
    """Each button's shortcut, by label (buttons without one left out)."""
    return {b.label: b.proto.shortcut for b in at.button if b.proto.shortcut}


def test_the_first_unanswered_rework_item_takes_the_grade_keys(returned):
    store, ids, own, _package = returned
    at = _open(ids["ann"])
    assert not at.exception
    keys = {label: key for label, key in _keys(at).items() if "·" in label or label == "Keep my label"}
    assert keys == {
        "0 · No match": "0",
        "1 · On topic, does not meet the need": "1",
        "2 · Partly satisfies": "2",
        "3 · Precisely answers": "3",
        "Keep my label": "k",
    }
    assert any("Keys: 0-3 answer the first unanswered item" in c.value for c in at.caption)
    next(b for b in at.button if b.proto.shortcut == "2").click().run()  # what the key 2 presses
    assert _ann_labels(store, ids["ann"])[-1] == (own["d1"], 2, "")
    assert not any(b.proto.shortcut in ("0", "1", "2", "3", "k") for b in at.button)  # nothing left to answer
