"""Manage page (issue 11): archive, restore and rename from the app, the account re-checked in each write."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.importer import import_collection, save_run
from db.models import Judgment
from db.queries import list_collections
from db.users import add_user, set_active
from tests.app.apptest import VIEWS, open_as_admin, open_as_new_account

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = VIEWS / "manage.py"


def _plain(elements) -> list[str]:
    """Messages as read: md_escape's backslashes removed."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in elements]


def _collections(db, *names):
    source = CollectionSource(
        passages=lambda: iter([Passage("d1", "text")]), queries=lambda: iter([Query("q1", "q")]), qrels=lambda: iter(())
    )
    with db.write() as s:
        for name in names:
            import_collection(s, source, name=name, format="t", location="m")
        save_run(s, names[0], "bm25", {"q1": {"d1": 1.0}})


def test_archive_then_restore_a_collection_from_the_page(db):
    _collections(db, "alpha", "beta")
    at = open_as_admin(db, PAGE)
    assert not at.exception
    assert list(at.dataframe[0].value["name"]) == ["alpha", "bm25", "beta"]
    assert at.selectbox(key="manage_item").options == ["collection alpha", "run bm25 in alpha", "collection beta"]
    at.selectbox(key="manage_item").set_value(("collection", None, "alpha"))
    at.button(key="manage_archive").click().run()
    assert not at.exception and not at.error
    assert _plain(at.success) == ["Archived collection alpha: hidden from every list, nothing deleted."]
    with db.read() as s:
        assert [c.name for c in list_collections(s)] == ["beta"]
    table = at.dataframe[0].value
    assert list(table["state"]) == ["archived", "shown", "shown"] and list(table["archived by"]) == ["admin", "", ""]
    assert table["archived at"][0].endswith(" UTC") and table["archived at"][1] == ""
    assert at.selectbox(key="manage_item").options[0] == "collection alpha (archived)"
    at.button(key="manage_archive").click().run()  # the same item again: refused, said so
    assert _plain(at.error)[0].startswith("collection 'alpha' is already archived (by admin at ")
    at.button(key="manage_restore").click().run()
    assert _plain(at.success) == ["Restored collection alpha."]
    with db.read() as s:
        assert [c.name for c in list_collections(s)] == ["alpha", "beta"]


def test_rename_from_the_page_refuses_a_clash(db):
    _collections(db, "alpha", "beta")
    at = open_as_admin(db, PAGE)
    at.selectbox(key="manage_item").set_value(("collection", None, "alpha"))
    at.text_input(key="manage_new_name").input("beta")
    at.button(key="manage_rename").click().run()
    assert _plain(at.error) == ["a collection named 'beta' already exists; nothing was renamed"]
    at.text_input(key="manage_new_name").input("gamma")
    at.button(key="manage_rename").click().run()
    assert _plain(at.success) == ["Renamed collection alpha to gamma."]
    with db.read() as s:
        assert [c.name for c in list_collections(s)] == ["beta", "gamma"]


def test_an_admin_disabled_after_the_page_loaded_changes_nothing(db):
    _collections(db, "alpha")
    with db.write() as s:
        add_user(s, "other", "correct horse", "admin")
    at = open_as_admin(db, PAGE)
    with db.write() as s:
        set_active(s, "admin", False)
    at.button(key="manage_archive").click().run()
    with db.read() as s:
        assert [c.name for c in list_collections(s)] == ["alpha"]
        assert s.scalar(select(func.count()).select_from(Judgment)) == 0


def test_the_page_is_for_admins_only(db):
    at = open_as_new_account(db, PAGE, "rev", "reviewer")
    assert _plain(at.error) == ["You do not have access to this page."]
    assert not at.dataframe and not at.button
