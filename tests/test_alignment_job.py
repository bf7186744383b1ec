"""The alignment job (issue 22): the embedding-alignment detector over a whole pool, stored as suggested tags.

A deterministic fake encoder (tests/core/detectors/test_alignment_detector.py) stands for the collection's:
Toyota and Honda are close names, so a Toyota query against a Honda passage is an entity mismatch that the
rules (a single sentence-initial name) miss.
"""

from __future__ import annotations

from core.types import CollectionSource, Passage, Query
from db.error_analysis import list_tags, set_tag_status
from db.importer import import_collection, save_run
from db.jobs import create_job, get_job
from db.pools import save_pool
from pooljudge import alignment_job
from pooljudge.jobs import run_job
from tests.core.detectors.test_alignment_detector import FakeEncoder

C = "cars"
PASSAGES = [
    Passage("honda", "Honda averages 36 mpg in the city."),  # alignment: Toyota -> Honda
    Passage("toyota", "Toyota averages 30 mpg in the city."),  # the query's own name: nothing
    Passage("iphone12", "The iPhone 12 costs 699 dollars."),  # the numeral rule finds 13 -> 12: alignment adds nothing
]
QUERIES = [Query("q1", "Toyota mileage"), Query("q2", "iPhone 13 price")]


def seed(store) -> None:
    source = CollectionSource(passages=lambda: iter(PASSAGES), queries=lambda: iter(QUERIES), qrels=lambda: iter(()))
    run = {"q1": {"honda": 2.0, "toyota": 1.0}, "q2": {"iphone12": 1.0}}
    with store.write() as s:
        import_collection(s, source, name=C, format="t", location="m")
        save_run(s, C, "bm25", run)
        pool = {
            q: {d: [("bm25", rank, score)] for rank, (d, score) in enumerate(docs.items(), 1)}
            for q, docs in run.items()
        }
        save_pool(s, C, "p1", pool, method="depth")


def _queue(store) -> int:
    with store.write() as s:
        return create_job(s, alignment_job.KIND, {"collection": C, "pool": "p1", "language": "en", "model": ""})


def test_the_job_stores_the_alignment_suggestions_of_the_pool(store, monkeypatch):
    seed(store)
    encoder = FakeEncoder()
    monkeypatch.setattr(alignment_job, "load_encoder", lambda language, model="": encoder)
    job_id = _queue(store)
    result = run_job(store, job_id)
    assert result == {"pool": "p1", "pairs": 3, "found": 1, "stored": 1}
    with store.read() as s:
        info = get_job(s, job_id)
        tags = list_tags(s, C)
    assert (info.status, info.done, info.total) == ("done", 3, 3)
    [tag] = tags
    assert (tag["query_id"], tag["doc_id"], tag["category"], tag["status"], tag["source"]) == (
        "q1",
        "honda",
        "entity_mismatch",
        "suggested",
        "auto",
    )
    evidence = tag["evidence"]
    assert evidence["detector"] == "alignment"
    assert (evidence["evidence"]["query_phrase"], evidence["evidence"]["passage_phrase"]) == ("Toyota", "Honda")
    assert 0.4 < evidence["evidence"]["cosine"] < 1.0
    assert evidence["spans"] == [[0, 5]]  # Honda in the passage
    # run again after the analyst rejected it: nothing comes back
    with store.write() as s:
        set_tag_status(s, tag["id"], "rejected")
    assert run_job(store, _queue(store))["stored"] == 0
    with store.read() as s:
        assert [(t["doc_id"], t["status"]) for t in list_tags(s, C)] == [("honda", "rejected")]
