"""The Annotate page under AppTest (issue 11): equal grade buttons, the guide of the item's scale, the admin's
guide editor, going back to relabel, flagging, adjudication in "My packages", and distinct qrels file names."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from core.scale import BINARY_GUIDE, LEVELS
from core.types import CollectionSource, Passage, QrelEntry, Query
from db.assignments import create_assignments
from db.guidelines import get_guidelines, set_guidelines
from db.importer import import_collection
from db.models import Assignment, Collection
from db.pools import save_pool
from db.users import add_user
from tests.app.apptest import judgment_rows

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

VIEWS = Path(__file__).resolve().parents[2] / "views"
PAGE = str(VIEWS / "annotate.py")
TEXTS = {"d1": "Alpha passage.", "d2": "Bravo passage.", "d3": "Charlie passage.", "d4": "Delta passage."}


@pytest.fixture
def world(db):
    """ann labels pool ``g`` (q1: d1, d2, d3) on the graded scale; bin labels pool ``b`` (q2: d4) on the binary one."""
    source = CollectionSource(
        passages=lambda: iter([Passage(d, t) for d, t in TEXTS.items()]),
        queries=lambda: iter([Query("q1", "which passage"), Query("q2", "binary query")]),
        qrels=lambda: iter([QrelEntry("q1", "d1", 2)]),
    )
    with db.write() as s:
        import_collection(s, source, name="c <i>", format="t", location="m")
        save_pool(s, "c <i>", "g", {"q1": {d: [] for d in ("d1", "d2", "d3")}}, method="depth")
        save_pool(s, "c <i>", "b", {"q2": {"d4": []}}, method="depth")
        users = {
            "ann": add_user(s, "ann", "correct horse", "annotator").id,
            "bin": add_user(s, "bin", "correct horse", "annotator").id,
        }
        create_assignments(s, "c <i>", "g", annotators=["ann"], per_pair=1, seed=1)
        create_assignments(s, "c <i>", "b", annotators=["bin"], per_pair=1, seed=1, scale="binary")
    return db, users


def _open(uid: int, script: str = PAGE) -> AppTest:
    at = AppTest.from_file(script, default_timeout=30)
    at.session_state["pooljudge_user_id"] = uid
    # the server-drawn item view: AppTest clicks its buttons (the browser queue has its own Chromium tests)
    at.session_state["annotate_item_view"] = "server"
    return at.run()


def _grade_buttons(at) -> list:
    return [b for b in at.button if b.label[:1].isdigit() and " · " in b.label]


def _sidebar(at) -> str:
    return " ".join(m.value for m in [*at.sidebar.markdown, *at.sidebar.caption, *at.sidebar.subheader])


def _shown(at) -> str:
    body = " ".join(h.value for h in at.html)
    [doc] = [d for d, text in TEXTS.items() if text.split()[0] in body]
    return doc


def _rows(store, uid) -> list[tuple]:
    return judgment_rows(store, uid)


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def test_every_grade_button_has_the_same_type_and_its_definition_as_help(world):
    store, users = world
    at = _open(users["ann"])
    assert not at.exception
    graded = _grade_buttons(at)
    assert [b.label for b in graded] == [f"{lv.grade} · {lv.name}" for lv in LEVELS]
    assert {b.proto.type for b in graded} == {"secondary"}  # 3 is no longer red/primary
    assert [b.help.replace("\\", "") for b in graded] == [lv.definition for lv in LEVELS]
    binary = _grade_buttons(_open(users["bin"]))
    assert [b.label for b in binary] == [f"{lv.grade} · {lv.name}" for lv in BINARY_GUIDE]
    assert {b.proto.type for b in binary} == {"secondary"}


def test_the_sidebar_shows_the_guide_of_the_items_scale(world):
    store, users = world
    graded = _sidebar(_open(users["ann"])).replace("\\", "")
    assert "c <i> · graded scale, 0-3" in graded
    assert all(lv.definition in graded and lv.example in graded for lv in LEVELS)
    assert BINARY_GUIDE[1].definition not in graded
    binary = _sidebar(_open(users["bin"])).replace("\\", "")
    assert "c <i> · binary scale" in binary
    assert all(lv.definition in binary for lv in BINARY_GUIDE)
    assert not any(lv.definition in binary for lv in LEVELS)  # not the 0-3 guide
    assert "Keys: N not relevant, Y relevant" in binary


def test_an_admin_edits_and_resets_the_guide_and_annotators_see_it_escaped(world):
    store, users = world
    at = _open(store.admin_id)
    assert not at.exception
    assert at.selectbox(key="guide_collection").value == "c <i>"
    at.text_input(key="guide-name-3-graded-c <i>").input("Spot on")
    at.text_area(key="guide-def-3-graded-c <i>").input("Answers it **exactly** <b>x</b>")
    at.text_area(key="guide-ex-3-graded-c <i>").input("first example\n\nsecond [link](http://e.org)")
    next(b for b in at.button if b.label == "Save guide").click().run()
    assert not at.exception and any(m.value.startswith("Saved") for m in at.success)
    with store.read() as s:
        stored = get_guidelines(s, "c <i>")
    assert stored["graded"][3] == {
        "grade": 3,
        "name": "Spot on",
        "definition": "Answers it **exactly** <b>x</b>",
        "examples": ["first example", "second [link](http://e.org)"],
    }
    ann = _open(users["ann"])
    side = _sidebar(ann)
    assert r"Answers it \*\*exactly\*\* \<b\>x\<\/b\>" in side  # Markdown and HTML shown literally
    assert "*second \\[link\\]\\(http\\:\u2060\\/\\/e\\.org\\)*" in side
    assert "3 · Spot on" in [b.label for b in ann.button]
    # an invalid edit names the field and stores nothing
    at.text_input(key="guide-name-0-graded-c <i>").input(" ")
    next(b for b in at.button if b.label == "Save guide").click().run()
    assert at.error[0].value.replace("\\", "") == "guide['graded'][0]['name'] must be a non-empty text"
    with store.read() as s:
        assert get_guidelines(s, "c <i>") == stored
    _button(at, "Reset to the built-in guide").click().run()
    with store.read() as s:
        assert s.scalar(select(Collection.guidelines)) is None
    assert at.text_input(key="guide-name-3-graded-c <i>").value == LEVELS[3].name  # the fields show it too
    at.radio(key="guide_scale").set_value("binary").run()
    assert at.text_input(key="guide-name-1-binary-c <i>").value == BINARY_GUIDE[1].name


def test_the_guide_editor_is_for_admins_only(world):
    store, users = world
    at = _open(users["ann"])
    assert "Annotation guidelines (admin)" not in [e.label for e in at.expander]
    with store.write() as s:  # and the write itself checks the role
        from db.access import SignedOut

        with pytest.raises(SignedOut):
            set_guidelines(s, users["ann"], "c <i>", {})


def test_previous_goes_back_and_a_grade_there_appends_a_relabel(world):
    store, users = world
    uid = users["ann"]
    at = _open(uid)
    first = _shown(at)
    _button(at, "2 · Partly satisfies").click().run()
    second = _shown(at)
    assert "All your work: 1 of 3 labelled · 2 left" in [c.value for c in at.caption]
    _button(at, "Previous").click().run()
    assert _shown(at) == first
    assert at.info[0].value.startswith("An earlier item (your label 2 · Partly satisfies)")
    assert "Skip" not in [b.label for b in at.button]  # an earlier item is relabelled, not skipped
    _button(at, "2 · Partly satisfies").click().run()  # the same grade keeps it: nothing appended
    assert _rows(store, uid) == [(first, "label", 2, "")]
    assert _shown(at) == second
    _button(at, "Previous").click().run()
    _button(at, "0 · No match").click().run()  # a relabel, appended; then on to the new item
    assert _rows(store, uid) == [(first, "label", 2, ""), (first, "label", 0, "")]
    assert _shown(at) == second
    _button(at, "Previous").click().run()
    _button(at, "Back to new items").click().run()
    assert _shown(at) == second and not at.info


def test_a_flagged_item_leaves_the_queue_and_the_list_jumps_to_own_items(world):
    store, users = world
    uid = users["ann"]
    at = _open(uid)
    first = _shown(at)
    [note] = at.text_area  # "What is unclear?", in the flag's popover
    note.input("unclear <b>")
    _button(at, "Flag").click().run()
    second = _shown(at)
    assert second != first
    _button(at, "Skip").click().run()
    third = _shown(at)
    _button(at, "1 · On topic, does not meet the need").click().run()
    assert _shown(at) == second  # the skipped item comes back; the flagged one does not
    _button(at, "3 · Precisely answers").click().run()
    assert at.success[0].value == "Nothing left to label. Thank you!"
    assert "All your work: 2 of 3 labelled · 0 left · 1 flagged, with the reviewers" in [c.value for c in at.caption]
    assert _rows(store, uid) == [
        (first, "flag", None, "unclear <b>"),
        (second, "skip", None, ""),
        (third, "label", 1, ""),
        (second, "label", 3, ""),
    ]
    # the list of own items, newest first, opens the flagged one to label after all
    jump = at.selectbox(key="annotate_jump")
    assert [o.split(" · ")[1] for o in jump.options] == ["label 1", "label 3", "flag"]
    jump.select_index(2).run()
    _button(at, "Open this item").click().run()
    assert _shown(at) == first and at.info[0].value.startswith("An earlier item (no label)")
    _button(at, "1 · On topic, does not meet the need").click().run()
    assert _rows(store, uid)[-1] == (first, "label", 1, "")
    assert "All your work: 3 of 3 labelled · 0 left" in [c.value for c in at.caption]


def test_my_packages_lists_an_adjudication(world):
    store, users = world
    with store.write() as s:
        q, d = s.execute(
            select(Assignment.query_id, Assignment.passage_id).where(Assignment.user_id == users["ann"]).limit(1)
        ).one()
        s.add(Assignment(query_id=q, passage_id=d, user_id=users["bin"], package="bin-adjudication", purpose="fourth"))
    at = _open(users["bin"])
    assert at.progress[0].proto.text.startswith(r"Adjudication bin\-adjudication: 0 of 1 labelled")
    texts = [t.value for t in at.text]
    assert texts[-3:] == ["adjudication", "0 / 1", "open"]


def test_graded_and_binary_qrels_downloads_get_distinct_names(world, monkeypatch):
    store, _users = world
    names = []
    real = st.download_button

    def spy(*args, **kwargs):
        names.append(kwargs.get("file_name"))
        return real(*args, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    at = _open(store.admin_id, str(VIEWS / "runs.py"))
    assert not at.exception
    at.number_input[0].set_value(2).run()
    assert names[0] == "c <i>-imported-graded.qrels"
    assert names[-1] == "c <i>-imported-binary-ge2.qrels"
