"""The Error analysis page's Lexicon tab: an admin adds and removes a collection's names; a reviewer only sees them."""

from __future__ import annotations

import pytest

from db.lexicon import add_lexicon_name, collection_lexicon
from pooljudge.ui.common import md_escape
from tests.app.apptest import open_as_admin, open_as_new_account, open_tab
from tests.app.test_errors_page import PAGE, C, frame_with, seed

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def _lexicon(db) -> dict[str, str]:
    with db.read() as s:
        return collection_lexicon(s, C)


def _open(at):
    at = open_tab(at, "errors_tab", "Lexicon")
    assert not at.exception
    return at


def test_an_admin_adds_and_removes_names_escaped(db):
    seed(db)
    at = _open(open_as_admin(db, PAGE, default_timeout=60))
    assert any("lexicon of this collection is empty" in c.value for c in at.caption)
    at.text_input(key="errors_lexicon_name").set_value("<b>青川烧</b>")
    at.text_input(key="errors_lexicon_kind").set_value("liquor")
    at.button(key="errors_lexicon_add").click().run()
    assert not at.exception
    assert _lexicon(db) == {"<b>青川烧</b>": "liquor"}
    [message] = [m.value for m in at.success]
    assert message == f"Added {md_escape('<b>青川烧</b>')} (liquor) to the lexicon."  # escaped: shown as text
    assert "\\<b\\>" in message
    table = frame_with(at, "kind")
    assert table[["name", "kind", "by"]].values.tolist() == [["<b>青川烧</b>", "liquor", "admin"]]
    # the same name again (another case) is refused, and the lexicon stays as it was
    at.text_input(key="errors_lexicon_name").set_value("<B>青川烧</B>")
    at.text_input(key="errors_lexicon_kind").set_value("beer")
    at.button(key="errors_lexicon_add").click().run()
    assert [e.value for e in at.error] == [
        md_escape("'<b>青川烧</b>' is already in the lexicon of 'dureader-like', as 'liquor'")
    ]
    assert _lexicon(db) == {"<b>青川烧</b>": "liquor"}
    at.selectbox(key="errors_lexicon_remove").set_value("<b>青川烧</b>")
    at.button(key="errors_lexicon_delete").click().run()
    assert not at.exception
    assert _lexicon(db) == {}
    assert [m.value for m in at.success] == [f"Removed {md_escape('<b>青川烧</b>')} from the lexicon."]


def test_a_reviewer_sees_the_names_but_no_form(db):
    seed(db)
    with db.write() as s:
        add_lexicon_name(s, C, "Zorblax", "plan", created_by="admin")
    at = _open(open_as_new_account(db, PAGE, "rev", "reviewer", default_timeout=60))
    assert frame_with(at, "kind")["name"].tolist() == ["Zorblax"]
    assert any("Only an admin can add or remove names." in c.value for c in at.caption)
    keys = {b.key for b in at.button}
    assert "errors_lexicon_add" not in keys and "errors_lexicon_delete" not in keys
