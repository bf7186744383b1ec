"""db.queries.relevance_level / set_relevance_level: one relevance level per collection."""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Query
from db.access import SignedOut
from db.importer import import_collection
from db.queries import NotFound, list_collections, relevance_level, set_relevance_level
from db.users import add_user, set_active


def _collection(store, name):
    source = CollectionSource(
        passages=lambda: iter(()), queries=lambda: iter([Query("q1", "query")]), qrels=lambda: iter(())
    )
    with store.write() as s:
        import_collection(s, source, name=name, format="t", location="m")


def _levels(store):
    with store.read() as s:
        return {c.name: (c.relevance_level, relevance_level(s, c.name)) for c in list_collections(s)}


def test_read_and_set_the_level_of_one_collection(store):
    _collection(store, "a")
    _collection(store, "b")
    with store.read() as s:
        before = {n: relevance_level(s, n) for n in ("a", "b")}
    with store.write() as s:
        assert set_relevance_level(s, "a", 3) == before["a"]  # returns the previous level
    assert _levels(store) == {"a": (3, 3), "b": (before["b"],) * 2}
    with store.write() as s:
        assert set_relevance_level(s, "a", 2**31 - 1) == 3
    assert _levels(store)["a"] == (2**31 - 1, 2**31 - 1)


@pytest.mark.parametrize("bad", [0, -1, 2**31, True, False, 1.0, "2", None])
def test_a_bad_level_is_refused_naming_it_and_nothing_changes(store, bad):
    _collection(store, "a")
    with store.write() as s:
        set_relevance_level(s, "a", 1)
    with pytest.raises(ValueError) as raised, store.write() as s:
        set_relevance_level(s, "a", bad)
    assert str(raised.value) == f"relevance level must be an integer >= 1 (at most 2147483647), got {bad!r}"
    assert _levels(store) == {"a": (1, 1)}


def test_unknown_collection_is_not_found(store):
    _collection(store, "a")
    with store.read() as s, pytest.raises(NotFound, match=r"no collection named 'nope' \(collections: a\)"):
        relevance_level(s, "nope")
    with store.write() as s, pytest.raises(NotFound, match="no collection named 'nope'"):
        set_relevance_level(s, "nope", 2)


def test_only_an_active_admin_changes_it_from_the_app(store):
    _collection(store, "a")
    with store.write() as s:
        set_relevance_level(s, "a", 1)
        admin = add_user(s, "boss", "correct horse", "admin").id
        reviewer = add_user(s, "rev", "correct horse", "reviewer").id
    with (
        pytest.raises(SignedOut, match="this reviewer account may not change a collection's relevance level"),
        store.write() as s,
    ):
        set_relevance_level(s, "a", 2, acting_user_id=reviewer)
    assert _levels(store) == {"a": (1, 1)}
    with store.write() as s:
        set_active(s, "boss", False)
    with pytest.raises(SignedOut, match="signed out"), store.write() as s:
        set_relevance_level(s, "a", 2, acting_user_id=admin)
    assert _levels(store) == {"a": (1, 1)}
    with store.write() as s:
        set_active(s, "boss", True)
    with store.write() as s:
        set_relevance_level(s, "a", 2, acting_user_id=admin)
    assert _levels(store) == {"a": (2, 2)}


def test_error_sampling_defaults_to_the_collections_level(store):
    from core.types import Passage
    from db.error_analysis import failing_queries, sample_error_pairs
    from db.importer import save_run

    source = CollectionSource(
        passages=lambda: iter([Passage("d1", "one"), Passage("d2", "two")]),
        queries=lambda: iter([Query("q1", "query"), Query("q2", "other")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_run(s, "c", "r", {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 1.0}})
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 2}}  # q1's top passage is relevant at level 1 only
    for level, failing in ((1, []), (2, ["q1"]), (3, ["q1", "q2"])):
        with store.write() as s:
            set_relevance_level(s, "c", level)
        with store.read() as s:
            assert sorted({p["query_id"] for p in sample_error_pairs(s, "c", "r", qrels=qrels, k=1)}) == failing
            # an explicit level wins
            assert [p["query_id"] for p in sample_error_pairs(s, "c", "r", qrels=qrels, k=1, level=2)] == ["q1"]
    for bad in (0, True, 2.0, 2**31):
        with pytest.raises(ValueError, match=rf"^level must be an integer >= 1 \(at most 2147483647\), got {bad!r}$"):
            failing_queries(qrels, {}, level=bad)
