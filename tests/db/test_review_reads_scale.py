"""Issue 20: what the Review page reads on every run of its tabs costs the same on a small and a large collection.

A tab switch reruns the open tab; the reads it makes for one pair (the override form's pair) or for the cache
key (the judgment marker) must not walk every assignment or judgment of the collection.  Work is counted in
SQLite virtual-machine instructions (``sqlite3.Connection.set_progress_handler``), which is exact and does not
depend on the machine's load, on the benchmark's generated store (``benchmarks.page_budget_store``) at 100
and 1,000 pairs.
"""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from benchmarks.page_budget_store import COLLECTION, POOL
from db.engine import Store
from db.models import Judgment
from db.pools import list_pools, pool_names
from db.queries import list_runs, run_names
from db.ranked_lists import pool_queries, ranked_list
from db.review import activity_marker, pair_review, review_table
from tests.db.sqlite_work import generated_stores, vm_steps

pytestmark = pytest.mark.slow  # two generated stores: about 3 s


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    yield from generated_stores(tmp_path_factory.mktemp)


def _some_pair(store: Store) -> tuple[str, str]:
    with store.read() as session:
        row = review_table(session, COLLECTION)[-1]
    return row.qid, row.docid


def test_one_pair_is_read_without_walking_the_collection(stores):
    steps = {}
    for queries, store in stores.items():
        qid, docid = _some_pair(store)
        steps[queries], pair = vm_steps(store, lambda s, q=qid, d=docid: pair_review(s, COLLECTION, q, d))
        assert (pair.qid, pair.docid) == (qid, docid) and len(pair.labels) >= 1
    assert steps[100] <= 1.5 * steps[10] + 2_000, steps  # ten times the pairs: the same work


def test_the_judgment_marker_does_not_walk_every_judgment(stores):
    steps = {}
    for queries, store in stores.items():
        steps[queries], marker = vm_steps(store, lambda s: activity_marker(s, COLLECTION))
        with store.read() as session:
            assert marker[0] == session.scalar(select(func.max(Judgment.id)))  # one collection: the last label
    assert steps[100] <= 1.5 * steps[10] + 2_000, steps


def _a_query(store: Store) -> str:
    with store.read() as session:
        return pool_queries(session, COLLECTION, POOL)[0][0]


def test_one_ranked_list_is_read_without_walking_the_pool(stores):
    steps = {}
    for queries, store in stores.items():
        qid = _a_query(store)
        steps[queries], ranked = vm_steps(store, lambda s, q=qid: ranked_list(s, COLLECTION, POOL, q))
        assert ranked.qid == qid and [e.position for e in ranked.entries] == list(range(1, 11))
        assert all(e.labels for e in ranked.entries[:3])  # the generated store labels most pairs
    assert steps[100] <= 1.5 * steps[10] + 2_000, steps


def test_pool_and_run_names_are_read_without_counting_entries(stores):
    steps = {}
    for queries, store in stores.items():
        steps[queries], names = vm_steps(
            store,
            lambda s: (pool_names(s, COLLECTION), pool_names(s, COLLECTION, selected=True), run_names(s, COLLECTION)),
        )
        with store.read() as session:
            assert names == (
                [p.name for p in list_pools(session, COLLECTION)],
                [p.name for p in list_pools(session, COLLECTION) if p.selected],
                [r.name for r in list_runs(session, COLLECTION)],
            )
            assert names[1] == [POOL]
    assert steps[100] <= 1.5 * steps[10] + 2_000, steps
