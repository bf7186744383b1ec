"""Pools in the store: provenance, selection order, near-duplicates, missing documents, pre-labels."""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Passage, Query, RunEntry
from db.importer import import_collection
from db.pools import list_pools, load_pool, load_prelabels, save_pool, save_prelabels
from db.queries import NotFound


@pytest.fixture
def seeded(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"text {d}") for d in ("a", "b", "c", "d")]),
        queries=lambda: iter([Query("q1", "one"), Query("q2", "two")]),
        qrels=lambda: iter(()),
        runs={
            "bm25": lambda: iter([RunEntry("q1", "a", 3.0), RunEntry("q1", "b", 2.0), RunEntry("q2", "zz", 1.0)]),
            "dense": lambda: iter([RunEntry("q1", "b", 0.9), RunEntry("q1", "c", 0.8)]),
        },
    )
    with store.write() as s:
        # bm25 retrieves "zz", a passage the store lacks, on purpose
        import_collection(s, source, name="c", format="t", location="m", allow_unknown_ids=True)
    return store


POOL = {
    "q1": {"a": [("bm25", 1, 3.0)], "b": [("bm25", 2, 2.0), ("dense", 1, 0.9)], "c": [("dense", 2, 0.8)]},
    "q2": {"zz": [("bm25", 1, 1.0)]},
}


def test_pool_round_trips_with_provenance_and_selection(seeded):
    with seeded.write() as s:
        summary = save_pool(
            s,
            "c",
            "p1",
            POOL,
            method="depth",
            params={"depth": 2},
            selection={"q1": ["b", "c", "a"]},
            duplicates={"q1": {"c": "b"}},
        )
    assert (summary.queries, summary.pairs, summary.duplicates, summary.missing_documents) == (2, 3, 1, 1)
    assert summary.missing_examples == ["zz"] and summary.selected == 2
    with seeded.read() as s:
        pool, selected = load_pool(s, "c", "p1")
        [info] = list_pools(s, "c")
    assert pool == {
        "q1": {"a": [("bm25", 1, 3.0)], "b": [("bm25", 2, 2.0), ("dense", 1, 0.9)], "c": [("dense", 2, 0.8)]}
    }
    assert selected == {"q1": ["b", "a"]}  # c was a near-duplicate of b
    assert (info.name, info.method, info.pairs, info.selected, info.params) == ("p1", "depth", 3, 2, {"depth": 2})


def test_pool_without_selection_selects_everything(seeded):
    with seeded.write() as s:
        summary = save_pool(s, "c", "all", POOL, method="depth")
    assert summary.selected == 3
    with seeded.read() as s:
        _, selected = load_pool(s, "c", "all")
    assert {q: sorted(d) for q, d in selected.items()} == {"q1": ["a", "b", "c"]}


def test_pool_refuses_unknown_runs_and_duplicate_names(seeded):
    with pytest.raises(NotFound, match="runs not in collection 'c': splade"):
        with seeded.write() as s:
            save_pool(s, "c", "x", {"q1": {"a": [("splade", 1, 1.0)]}}, method="depth")
    with seeded.write() as s:
        save_pool(s, "c", "x", POOL, method="depth")
    with pytest.raises(ValueError, match="already exists"):
        with seeded.write() as s:
            save_pool(s, "c", "x", POOL, method="depth")


def test_prelabels_replace_per_pair(seeded):
    with seeded.write() as s:
        assert save_prelabels(s, "c", [("q1", "a", 0.5, {"answer": "x"}), ("q1", "zz", 1.0, {})]) == 1
        assert save_prelabels(s, "c", [("q1", "a", 0.75, {"answer": "y"}), ("q2", "b", 0.6, {})]) == 2
    with seeded.read() as s:
        assert load_prelabels(s, "c") == {"q1": {"a": 0.75}, "q2": {"b": 0.6}}


@pytest.mark.parametrize(
    "name, problem", [("", "must not be empty"), (" p", "whitespace"), ("p\n1", "printable"), ("p" * 201, "200")]
)
def test_pool_names_follow_the_name_rule_and_nothing_is_stored(seeded, name, problem):
    with pytest.raises(ValueError, match=problem):
        with seeded.write() as s:
            save_pool(s, "c", name, POOL, method="depth")
    with seeded.read() as s:
        assert list_pools(s, "c") == []
