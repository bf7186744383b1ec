"""The error-analysis drill-down of a stored run ranks near-ties as the measures do (issue 10, acceptance 4).

The store keeps scores as double precision; trec_eval compares them as
float32, so 1.0 and 1.0000000001 tie and the larger doc id ranks first.
"""

from __future__ import annotations

import pytest

from core.analysis import ranked_with_labels
from core.metrics import evaluate
from core.types import CollectionSource, Passage, Query
from db.error_analysis import sample_error_pairs
from db.importer import import_collection, save_run
from db.queries import stored_run

HIGH, LOW = 1.0000000001, 1.0
PASSAGES = [Passage("d0", "zero"), Passage("d1", "one"), Passage("d2", "two")]
RUN = {"q1": {"d1": HIGH, "d2": LOW, "d0": 0.5}}


@pytest.fixture
def world(store):
    source = CollectionSource(
        passages=lambda: iter(PASSAGES), queries=lambda: iter([Query("q1", "which")]), qrels=lambda: iter(())
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_run(s, "c", "r", RUN)
    return store


def test_stored_run_drill_down_ranks_agree_with_the_measures(world):
    with world.read() as s:
        stored = stored_run(s, "c", "r")
        pairs = sample_error_pairs(s, "c", "r", qrels={"q1": {"d0": 1}}, k=2, n=10, level=1)
    assert stored["q1"]["d1"] == HIGH  # the near-tie survives the store
    assert [(p["doc_id"], p["rank"]) for p in pairs] == [("d2", 1), ("d1", 2)]
    # the measures: with d2 alone relevant RR is 1, with d1 alone 1/2
    assert evaluate({"q1": {"d2": 1}}, stored, ["RR"])["RR"]["q1"] == 1.0
    assert evaluate({"q1": {"d1": 1}}, stored, ["RR"])["RR"]["q1"] == 0.5
    assert [(r.doc_id, r.rank) for r in ranked_with_labels(stored["q1"], {}, 2)] == [("d2", 1), ("d1", 2)]
