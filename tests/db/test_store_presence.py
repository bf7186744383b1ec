"""What the first start and the demo seed ask the store: db.users.has_users and db.queries.has_collections."""

from __future__ import annotations

from sqlalchemy import update

from core.types import CollectionSource, Passage
from db.importer import import_collection
from db.models import Collection
from db.queries import has_collections
from db.users import add_user, has_users, set_active


def _source() -> CollectionSource:
    return CollectionSource(
        passages=lambda: iter([Passage("d1", "text")]), queries=lambda: iter([]), qrels=lambda: iter([]), runs={}
    )


def test_has_users_counts_a_disabled_account_too(store):
    with store.read() as s:
        assert has_users(s) is False
    with store.write() as s:
        add_user(s, "ann", "correct horse", "annotator")
        set_active(s, "ann", False)
    with store.read() as s:
        assert has_users(s) is True  # a disabled admin still means the store is set up: no first-admin form


def test_has_collections_any_or_by_name_whatever_the_status(store):
    with store.read() as s:
        assert (has_collections(s), has_collections(s, "c")) == (False, False)
    with store.write() as s:
        import_collection(s, _source(), name="c", format="t", location="m")
    with store.read() as s:
        assert (has_collections(s), has_collections(s, "c"), has_collections(s, "C"), has_collections(s, "d")) == (
            True,
            True,
            False,
            False,
        )
    with store.write() as s:  # a collection still being imported takes its name too
        s.execute(update(Collection).values(status="importing"))
    with store.read() as s:
        assert (has_collections(s), has_collections(s, "c")) == (True, True)
