"""The Annotate page's first run loads no more than its items need: jieba's dictionary only for Chinese text.

Loading jieba's dictionary takes about a second of CPU; the page loaded it on every first run after a server
start, whatever the language of the items (5 s of a 5.1 s first paint on the page-budget store, English only).
The server's warm-up thread (``pooljudge.ui.warmup.warm_segmenter``) loads it when annotators may be given
non-English text; tests/test_warmup.py covers that side.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import core.text
from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.importer import import_collection
from db.pools import save_pool
from db.users import add_user

PAGE = str(Path(__file__).resolve().parents[2] / "views" / "annotate.py")
TEXTS = {"d1": "Alpha passage.", "d2": "Bravo passage."}


@pytest.fixture
def english(db):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, t, language="en") for d, t in TEXTS.items()]),
        queries=lambda: iter([Query("q1", "which passage", language="en")]),
        qrels=lambda: iter(()),
    )
    with db.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in TEXTS}}, method="depth")
        uid = add_user(s, "ann", "correct horse", "annotator").id
        create_assignments(s, "c", "p", annotators=["ann"], per_pair=1, seed=1)
    return db, uid


@pytest.mark.parametrize("view", ["queue", "server"])
def test_english_items_are_shown_without_loading_jieba(english, monkeypatch, view):
    _store, uid = english
    calls = []
    real = core.text._jieba

    def counted():
        calls.append(1)
        return real()

    monkeypatch.setattr(core.text, "_jieba", counted)
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["pooljudge_user_id"] = uid
    at.session_state["annotate_item_view"] = view
    at.run()
    assert not at.exception
    assert at.title[0].value == "Annotate"
    assert calls == []
    if view == "server":  # the item itself is drawn (the queue's items go to the browser component)
        assert any("passage" in h.value for h in at.html)
