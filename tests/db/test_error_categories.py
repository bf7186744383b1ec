"""db.error_categories: a collection's own error categories, stored (SQLite and PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError

from core.types import CollectionSource, Passage, Query
from db.error_analysis import tag_pair
from db.error_categories import (
    create_error_category,
    delete_error_category,
    list_error_categories,
    rename_error_category,
)
from db.importer import import_collection
from db.models import ErrorCategory
from db.queries import NotFound, collection_id


@pytest.fixture
def two(store):
    for name in ("c", "other"):
        source = CollectionSource(
            passages=lambda: iter([Passage("p1", "text")]),
            queries=lambda: iter([Query("q1", "q")]),
            qrels=lambda: iter(()),
        )
        with store.write() as s:
            import_collection(s, source, name=name, format="t", location="m")
    return store


def test_create_list_rename_per_collection(two):
    with two.write() as s:
        made = create_error_category(
            s, "c", "outdated_answer", "Outdated answer", " Says what was true once. ", created_by="admin"
        )
        create_error_category(s, "c", "wrong_unit", "<b>Wrong</b> unit")
        create_error_category(s, "other", "outdated_answer", "Stale")  # the same key in another collection
    assert (made.key, made.name, made.description, made.created_by) == (
        "outdated_answer",
        "Outdated answer",
        "Says what was true once.",
        "admin",
    )
    with two.read() as s:
        listed = list_error_categories(s, "c")
        assert [(c.key, c.name, c.description, c.created_by) for c in listed] == [
            ("outdated_answer", "Outdated answer", "Says what was true once.", "admin"),
            ("wrong_unit", "<b>Wrong</b> unit", "", None),
        ]  # stored as given: escaping is the page's
        assert [(c.key, c.name) for c in list_error_categories(s, "other")] == [("outdated_answer", "Stale")]
    with two.write() as s:
        renamed = rename_error_category(s, "c", "wrong_unit", "Wrong unit", "kg for lb")
        assert (renamed.key, renamed.name, renamed.description) == ("wrong_unit", "Wrong unit", "kg for lb")
        kept = rename_error_category(s, "c", "wrong_unit", "Unit mix-up")  # no description: it stays
        assert (kept.name, kept.description) == ("Unit mix-up", "kg for lb")
    with two.read() as s:
        assert [c.name for c in list_error_categories(s, "c")] == ["Outdated answer", "Unit mix-up"]


@pytest.mark.parametrize(
    "key, name, message",
    [
        ("numeral_mismatch", "Numbers", "There already is a category numeral_mismatch."),  # built in
        ("outdated_answer", "Again", "There already is a category outdated_answer."),
        ("Bad Id", "x", "The id must be 2-64 characters"),
        ("a", "x", "The id must be 2-64 characters"),
        ("ok_key", "", "category name must not be empty"),
        ("ok_key", " padded", "category name ' padded' has leading or trailing whitespace"),
        ("ok_key", "a\nb", "contains a control character (U+000A)"),
        ("ok_key", "x" * 201, "category name is 201 characters long; the limit is 200"),
    ],
)
def test_create_refuses_taken_keys_and_bad_names(two, key, name, message):
    with two.write() as s:
        create_error_category(s, "c", "outdated_answer", "Outdated answer")
    with pytest.raises(ValueError, match=None) as raised:
        with two.write() as s:
            create_error_category(s, "c", key, name)
    assert message in str(raised.value)
    with two.read() as s:
        assert [c.key for c in list_error_categories(s, "c")] == ["outdated_answer"]


def test_unknown_collection_or_category_is_not_found(two):
    with pytest.raises(NotFound), two.write() as s:
        create_error_category(s, "nope", "k_1", "K")
    for call in (
        lambda s: rename_error_category(s, "c", "missing", "M"),
        lambda s: delete_error_category(s, "c", "missing"),
    ):
        with pytest.raises(NotFound, match="no error category 'missing'"), two.write() as s:
            call(s)


def test_delete_is_refused_while_a_tag_uses_the_category(two):
    with two.write() as s:
        create_error_category(s, "c", "outdated_answer", "Outdated answer")
        create_error_category(s, "c", "unused", "Unused")
        tag = tag_pair(s, "c", "q1", "p1", "outdated_answer", extra_categories=["outdated_answer"])
    with two.write() as s:
        delete_error_category(s, "c", "unused")
    with pytest.raises(ValueError, match="The category outdated_answer is used by 1 tag: it stays."), two.write() as s:
        delete_error_category(s, "c", "outdated_answer")
    with two.read() as s:
        assert [c.key for c in list_error_categories(s, "c")] == ["outdated_answer"]
    from db.models import ErrorTag

    with two.write() as s:  # once its tag is gone, it can go
        s.delete(s.get(ErrorTag, tag))
    with two.write() as s:
        delete_error_category(s, "c", "outdated_answer")
    with two.read() as s:
        assert list_error_categories(s, "c") == []


def test_the_database_keeps_keys_unique_per_collection(two):
    with two.write() as s:
        cid = collection_id(s, "c")
        s.add(ErrorCategory(collection_id=cid, key="k_1", name="K"))
    with pytest.raises(IntegrityError), two.write() as s:
        s.add(ErrorCategory(collection_id=cid, key="k_1", name="K again"))
