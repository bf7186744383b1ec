"""db.training: a collection's queries, passage texts with their context, and the labels chosen, as LabelledData."""

from __future__ import annotations

import pytest

from db.queries import NotFound
from db.training import labelled_data, resolve_labels
from tests.training_store import add_final_labels, write_beir

PASSAGES = [
    {"_id": "p1", "title": "Albert Einstein", "text": "He was born in 1879."},
    {"_id": "p2", "title": "", "text": "No title here."},
    {"_id": "p3", "title": "Bread", "text": "Bread is baked in ovens."},  # the title already starts the text
]
QUERIES = [
    {"_id": "q1", "text": "when was einstein born", "split": "train"},
    {"_id": "q2", "text": "how is bread made", "split": "dev"},
    {"_id": "q3", "text": "unjudged question", "split": "test"},
]


@pytest.fixture
def toy(store, tmp_path):
    """Collection 'toy' (graded qrels version 'imported', so level 2) in the store, without final labels."""
    from db.importer import import_path

    folder = write_beir(
        tmp_path / "toy", passages=PASSAGES, queries=QUERIES, qrels={"q1": {"p1": 3, "p2": 0}, "q2": {"p3": 1}}
    )
    import_path(store, "beir", folder, name="toy")
    return store


def test_texts_get_the_title_context_and_queries_their_split(toy):
    with toy.read() as session:
        data, splits = labelled_data(session, "toy")
        raw, _ = labelled_data(session, "toy", context="none")
    assert data.passages == {
        "p1": "Albert Einstein He was born in 1879.",
        "p2": "No title here.",
        "p3": "Bread is baked in ovens.",
    }
    assert raw.passages == {"p1": "He was born in 1879.", "p2": "No title here.", "p3": "Bread is baked in ovens."}
    assert data.queries == {"q1": "when was einstein born", "q2": "how is bread made", "q3": "unjudged question"}
    assert splits == {"q1": "train", "q2": "dev", "q3": "test"}
    assert data.candidates == {}


def test_without_final_labels_the_newest_version_is_used_at_the_collection_level(toy):
    with toy.read() as session:
        data, _ = labelled_data(session, "toy")
        assert resolve_labels(session, "toy")[0] == "imported"
        level1, _ = labelled_data(session, "toy", level=1)
    assert data.qrels == {"q1": {"p1": 3, "p2": 0}, "q2": {"p3": 1}}
    assert data.level == 2  # graded qrels: the collection's level is 2
    assert data.positives("q1") == ["p1"] and data.positives("q2") == [] and data.trainable() == ["q1"]
    assert level1.level == 1 and level1.trainable() == ["q1", "q2"]


def test_final_labels_win_by_default_and_a_version_is_chosen_by_name(toy):
    add_final_labels(toy, "toy", {("q1", "p2"): 2, ("q3", "p1"): 1, ("q2", "p3"): None})  # q2/p3 excluded
    with toy.read() as session:
        default, _ = labelled_data(session, "toy")
        final, _ = labelled_data(session, "toy", labels="final")
        version, _ = labelled_data(session, "toy", labels="imported")
        assert resolve_labels(session, "toy")[0] == "final"
    assert default.qrels == final.qrels == {"q1": {"p2": 2}, "q3": {"p1": 1}}
    assert default.trainable() == ["q1"]  # q3's grade 1 is below level 2
    assert version.qrels == {"q1": {"p1": 3, "p2": 0}, "q2": {"p3": 1}}


def test_bad_labels_and_level_are_named(toy):
    with toy.read() as session:
        with pytest.raises(
            NotFound,
            match=r"labels: no qrels version named 'v9' in collection 'toy' \(use 'final'.*"
            r"versions: 'imported'\)",
        ):
            labelled_data(session, "toy", labels="v9")
        with pytest.raises(ValueError, match="labels: collection 'toy' has no final labels yet"):
            labelled_data(session, "toy", labels="final")
        with pytest.raises(ValueError, match=r"level must be an integer >= 1 \(at most \d+\), got 0"):
            labelled_data(session, "toy", level=0)
        with pytest.raises(ValueError, match="context must be one of title, keyphrases"):
            labelled_data(session, "toy", context="abstract")
        with pytest.raises(NotFound, match="no collection named 'nope'"):
            labelled_data(session, "nope")


def test_a_collection_without_any_labels_is_refused(store, tmp_path):
    from db.importer import import_path

    import_path(store, "beir", write_beir(tmp_path / "bare", passages=PASSAGES, queries=QUERIES, qrels={}), name="bare")
    with store.read() as session:
        with pytest.raises(ValueError, match="labels: collection 'bare' has neither final labels nor a qrels version"):
            labelled_data(session, "bare")
