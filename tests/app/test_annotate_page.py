"""The Annotate page under AppTest: every button submits the item it was drawn with, and nothing else.

The browser tests (test_binding_browser.py) drive the same page through the keyboard in Chromium; these
cover each action (grade, skip, flag with a note, undo) and the refusals quickly, asserting the judgments
table row by row.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select, update
from streamlit.testing.v1 import AppTest

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import record_judgment
from db.models import Assignment, Judgment, PassageRecord, User
from db.pools import save_pool
from db.users import add_user
from tests.app.apptest import judgment_rows

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = str(Path(__file__).resolve().parents[2] / "views" / "annotate.py")
TEXTS = {"d1": "Alpha passage.", "d2": "Bravo passage.", "d3": "Charlie passage."}


@pytest.fixture
def ann(db):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, t) for d, t in TEXTS.items()]),
        queries=lambda: iter([Query("q1", "which passage")]),
        qrels=lambda: iter(()),
    )
    with db.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p", {"q1": {d: [] for d in TEXTS}}, method="depth")
        uid = add_user(s, "ann", "correct horse", "annotator").id
        create_assignments(s, "c", "p", annotators=["ann"], per_pair=1, seed=1)
    return db, uid


def _open(uid: int) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=30)
    at.session_state["pooljudge_user_id"] = uid
    # the server-drawn item view: AppTest clicks its buttons (the browser queue has its own Chromium tests)
    at.session_state["annotate_item_view"] = "server"
    return at.run()


def _shown(at) -> str:
    body = " ".join(h.value for h in at.html)
    [doc] = [d for d, text in TEXTS.items() if text.split()[0] in body]  # query terms are marked up
    return doc


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def _rows(store) -> list[tuple]:
    return judgment_rows(store)


def test_grade_skip_flag_and_undo_land_on_the_item_shown(ann):
    store, uid = ann
    at = _open(uid)
    first = _shown(at)
    _button(at, "2 · Partly satisfies").click().run()
    assert not at.exception and _rows(store) == [(first, "label", 2, "")]
    second = _shown(at)
    assert second != first
    _button(at, "Skip").click().run()
    third = _shown(at)
    assert third not in (first, second)
    at.text_area[0].input("is *this* <b>relevant</b>?")
    _button(at, "Flag").click().run()
    assert _rows(store) == [
        (first, "label", 2, ""),
        (second, "skip", None, ""),
        (third, "flag", None, "is *this* <b>relevant</b>?"),
    ]
    _button(at, "Undo last label").click().run()  # withdraws the label on the first item, which comes back
    assert _rows(store)[-1] == (first, "undo", None, "")
    assert _shown(at) == first
    _button(at, "0 · No match").click().run()
    assert _rows(store)[-1] == (first, "label", 0, "")
    with store.read() as s:  # each submission carried its own render token
        tokens = s.scalars(select(Judgment.submission_token).where(Judgment.action != "undo")).all()
    assert len(set(tokens)) == len(tokens) == 4 and all(len(t) == 32 for t in tokens)


def test_an_item_labelled_elsewhere_is_refused_with_a_message(ann):
    store, uid = ann
    at = _open(uid)
    shown = _shown(at)
    with store.write() as s:  # another tab labels the item this page shows
        aid = s.scalar(
            select(Assignment.id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(PassageRecord.ext_id == shown)
        )
        record_judgment(s, uid, aid, 3, token="other-tab")
    _button(at, "1 · On topic, does not meet the need").click().run()
    assert not at.exception
    assert "already labelled" in at.warning[0].value
    assert _rows(store) == [(shown, "label", 3, "")]  # nothing stored by this page
    assert _shown(at) != shown  # and it moved on


def test_a_disabled_account_stores_nothing(ann):
    store, uid = ann
    at = _open(uid)
    shown = _shown(at)
    with store.write() as s:
        s.execute(update(User).where(User.id == uid).values(active=False))
    _button(at, "3 · Precisely answers").click().run()
    assert _rows(store) == []
    assert TEXTS[shown].split()[0] not in " ".join(h.value for h in at.html)  # the item is gone


def _package_warnings(at) -> list[str]:
    assert not at.exception
    [package] = [e for e in at.expander if e.label == "My packages"]
    return [w.value.replace("\\", "") for w in package.warning]


def test_my_packages_says_a_package_waits_for_its_flag(ann):
    """Only the Admin page said so; the annotator's list showed the package as open, with nothing left (issue 20)."""
    store, uid = ann
    with store.read() as s:
        own = dict(s.execute(select(PassageRecord.ext_id, Assignment.id).join(Assignment)).all())
    with store.write() as s:
        record_judgment(s, uid, own["d1"], 2)
        record_judgment(s, uid, own["d2"], None, action="flag", note="<b>which</b> city?")
    assert _package_warnings(_open(uid)) == []  # one item still to label: not waiting for the flag
    with store.write() as s:
        record_judgment(s, uid, own["d3"], 0)
    assert _package_warnings(_open(uid)) == [
        "Package ann-p001 waits for 1 flagged item to be resolved (q1 / d2): a reviewer answers the flag, then "
        "you label it from 'My earlier items'; the package can go to quality control after that."
    ]
