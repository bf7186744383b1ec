"""The name lookups of :mod:`db.runs`, :func:`db.queries.query_splits`, and staged runs (issue 23: SQL only in db/).

These are the reads and writes that lived in ``pooljudge/`` and ``views/`` before; the tests there
(``tests/test_pipeline.py``, ``tests/test_pool_names.py``, ``tests/test_train_cli.py``) check the messages.
"""

from __future__ import annotations

import pytest

from core.types import CollectionSource, Passage, Query, RunEntry
from db.archive import archive
from db.importer import (
    ImportConflict,
    drop_staged_runs,
    import_collection,
    publish_staged_runs,
    refresh_staged_runs,
    stage_run,
)
from db.pools import save_pool
from db.queries import NotFound, list_runs, query_splits, stored_run
from db.runs import PoolName, RunName, pool_name, run_name, run_names


@pytest.fixture
def seeded(store):
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"text {d}") for d in ("a", "b", "c")]),
        queries=lambda: iter(
            [Query("q1", "one", split="test"), Query("q2", "two", split="zeta"), Query("q3", "three", split="train")]
            + [Query("q4", "four", split="alpha"), Query("q5", "five", split="dev")]
        ),
        qrels=lambda: iter(()),
        runs={"bm25": lambda: iter([RunEntry("q1", "a", 3.0), RunEntry("q1", "b", 2.0)])},
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(s, "c", "p1", {"q1": {"a": [("bm25", 1, 3.0)]}}, method="depth", params={})
        save_pool(s, "c", "p2", {"q1": {"a": [("bm25", 1, 3.0)]}}, method="depth", params={})
        archive(s, "pool", "p2", collection="c", by="test")
    return store


def test_run_names_and_pool_names_say_what_is_taken(seeded):
    with seeded.read() as s:
        assert run_names(s, "c") == {"bm25": RunName("bm25", "ready")}
        assert run_name(s, "c", "bm25") == RunName("bm25", "ready") and run_name(s, "c", "bm25").ready
        assert run_name(s, "c", "dense") is None
        assert pool_name(s, "c", "p1") == PoolName("p1", archived=False)
        assert pool_name(s, "c", "p2") == PoolName("p2", archived=True)
        assert pool_name(s, "c", "p3") is None
        with pytest.raises(NotFound, match="nope"):
            run_names(s, "nope")


def test_query_splits_put_train_dev_test_first(seeded):
    with seeded.read() as s:
        assert query_splits(s, "c") == ["train", "dev", "test", "alpha", "zeta"]


def test_a_staged_run_is_taken_but_hidden_until_published(seeded):
    first = stage_run(seeded, "c", "dense", {"q1": {"a": 1.0, "c": 0.5}}, params={"k": 2})
    second = stage_run(seeded, "c", "hybrid", {"q1": {"b": 1.0}})
    refresh_staged_runs(seeded, [first, second])
    with seeded.read() as s:
        assert run_names(s, "c") == {
            "bm25": RunName("bm25", "ready"),
            "dense": RunName("dense", "importing"),
            "hybrid": RunName("hybrid", "importing"),
        }
        assert [r.name for r in list_runs(s, "c")] == ["bm25"]
    with seeded.write() as s:
        publish_staged_runs(s, [first, second])
    with seeded.read() as s:
        assert not [n for n, r in run_names(s, "c").items() if not r.ready]
        assert stored_run(s, "c", "dense") == {"q1": {"a": 1.0, "c": 0.5}}
        assert [(r.name, r.params) for r in list_runs(s, "c")] == [("bm25", {}), ("dense", {"k": 2}), ("hybrid", {})]


def test_refreshing_a_staged_run_that_was_removed_is_refused(seeded):
    first = stage_run(seeded, "c", "dense", {"q1": {"a": 1.0}})
    second = stage_run(seeded, "c", "hybrid", {"q1": {"b": 1.0}})
    drop_staged_runs(seeded, [first])  # as the clean-up of a crashed import would
    with pytest.raises(ImportConflict, match="stalled"):
        refresh_staged_runs(seeded, [first, second])
    with seeded.read() as s:
        assert run_names(s, "c") == {"bm25": RunName("bm25", "ready"), "hybrid": RunName("hybrid", "importing")}


def test_stage_run_refuses_a_taken_name_and_stores_nothing(seeded):
    with pytest.raises(ImportConflict, match="already exists"):
        stage_run(seeded, "c", "bm25", {"q1": {"a": 1.0}})
    with seeded.read() as s:
        assert stored_run(s, "c", "bm25") == {"q1": {"a": 3.0, "b": 2.0}}
