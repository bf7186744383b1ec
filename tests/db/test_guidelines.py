"""Guidelines per collection in the store (db.guidelines): built-in fallback, admin-only writes, reset."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update

from core.scale import default_guide
from core.types import CollectionSource, Passage, Query
from db.access import SignedOut
from db.assignments import create_assignments
from db.guidelines import (
    assignment_collection,
    get_guidelines,
    is_custom,
    reset_guidelines,
    scale_guide,
    set_guidelines,
)
from db.importer import import_collection
from db.models import Assignment, Collection
from db.queries import NotFound
from db.users import add_user, set_active

GRADED = [
    {"grade": g, "name": f"G{g} <b>bold</b>", "definition": f"def {g}", "examples": [f"ex {g}"]} for g in range(4)
]


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter([Passage("d1", "text")]),
        queries=lambda: iter([Query("q1", "query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        for name in ("c", "other"):
            import_collection(s, source, name=name, format="t", location="m")
        admin = add_user(s, "admin", "correct horse", "admin").id
        reviewer = add_user(s, "rev", "correct horse", "reviewer").id
    return store, admin, reviewer


def _stored(store, name):
    with store.read() as s:
        return s.scalar(select(Collection.guidelines).where(Collection.name == name))


def test_no_guide_means_the_built_in_one(world):
    store, _admin, _rev = world
    with store.read() as s:
        assert get_guidelines(s, "c") == default_guide()
        assert scale_guide(s, "c", "binary") == default_guide()["binary"]
        assert not is_custom(s, "c")
        with pytest.raises(ValueError, match="scale must be one of graded, binary, got 'x'"):
            scale_guide(s, "c", "x")
        with pytest.raises(NotFound):
            get_guidelines(s, "missing")


def test_an_admin_sets_and_resets_a_collections_guide(world):
    store, admin, _rev = world
    with store.write() as s:
        stored = set_guidelines(s, admin, "c", {"graded": GRADED})
    assert stored["graded"] == GRADED and stored["binary"] == default_guide()["binary"]
    assert _stored(store, "c") == stored  # stored complete
    assert _stored(store, "other") is None  # per collection
    with store.read() as s:
        assert scale_guide(s, "c", "graded")[1]["name"] == "G1 <b>bold</b>"  # stored as given, escaped when shown
        assert is_custom(s, "c") and get_guidelines(s, "other") == default_guide()
    with store.write() as s:
        reset_guidelines(s, admin, "c")
    assert _stored(store, "c") is None


def test_only_an_active_admin_writes_and_an_invalid_guide_stores_nothing(world):
    store, admin, reviewer = world
    with pytest.raises(SignedOut, match="this reviewer account may not edit annotation guidelines"):
        with store.write() as s:
            set_guidelines(s, reviewer, "c", {"graded": GRADED})
    with pytest.raises(ValueError, match=r"guide\['graded'\] must be a list of 4 entries"):
        with store.write() as s:
            set_guidelines(s, admin, "c", {"graded": GRADED[:3]})
    assert _stored(store, "c") is None
    with store.write() as s:
        set_guidelines(s, admin, "c", {"graded": GRADED})
        set_active(s, "admin", False)
    with pytest.raises(SignedOut, match="signed out"):
        with store.write() as s:
            reset_guidelines(s, admin, "c")
    assert _stored(store, "c")["graded"] == GRADED


def test_a_broken_stored_guide_falls_back_to_the_built_in_one(world):
    store, _admin, _rev = world
    with store.write() as s:
        s.execute(update(Collection).where(Collection.name == "c").values(guidelines={"graded": "nonsense"}))
    with store.read() as s:
        assert get_guidelines(s, "c") == default_guide()


def test_the_collection_of_an_assignment(world):
    store, _admin, _rev = world
    from db.pools import save_pool

    with store.write() as s:
        save_pool(s, "other", "p", {"q1": {"d1": []}}, method="depth")
        add_user(s, "ann", "correct horse", "annotator")
        create_assignments(s, "other", "p", annotators=["ann"], per_pair=1)
        aid = s.scalar(select(Assignment.id))
    with store.read() as s:
        assert assignment_collection(s, aid) == "other"
        assert assignment_collection(s, aid + 1000) is None
