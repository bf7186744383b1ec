"""db.lexicon: a collection's own names for the entity-mismatch detector, stored (SQLite and PostgreSQL; issue 22)."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.error_analysis import list_tags, suggest_tags
from db.importer import import_collection
from db.lexicon import add_lexicon_name, collection_lexicon, import_lexicon, list_lexicon, remove_lexicon_name
from db.models import LexiconName
from db.queries import NotFound

QUERY, PASSAGE = "zorblax plan price", "the quintor plan costs ten dollars a month."


@pytest.fixture
def two(store):
    for name in ("c", "other"):
        source = CollectionSource(
            passages=lambda: iter([Passage("p1", PASSAGE)]),
            queries=lambda: iter([Query("q1", QUERY)]),
            qrels=lambda: iter(()),
        )
        with store.write() as s:
            import_collection(s, source, name=name, format="t", location="m")
    return store


def test_add_list_remove_round_trip_per_collection(two):
    with two.write() as s:
        made = add_lexicon_name(s, "c", "Zorblax", "plan", created_by="admin")
        add_lexicon_name(s, "c", "<b>五粮液</b>", "liquor")
        add_lexicon_name(s, "other", "Zorblax", "app")  # the same name in another collection
    assert (made.name, made.kind, made.created_by) == ("Zorblax", "plan", "admin")
    with two.read() as s:
        assert [(e.name, e.kind, e.created_by) for e in list_lexicon(s, "c")] == [
            ("Zorblax", "plan", "admin"),
            ("<b>五粮液</b>", "liquor", None),  # stored as given: escaping is the page's
        ]
        assert collection_lexicon(s, "other") == {"Zorblax": "app"}
    with two.write() as s:
        remove_lexicon_name(s, "c", "ZORBLAX")  # names match case-insensitively
    with two.read() as s:
        assert collection_lexicon(s, "c") == {"<b>五粮液</b>": "liquor"}
        assert collection_lexicon(s, "other") == {"Zorblax": "app"}


@pytest.mark.parametrize(
    "name, kind, problem",
    [
        ("", "plan", "lexicon name must not be empty"),
        ("a\tb", "plan", r"lexicon name 'a\\tb' contains a control character \(U\+0009\) at position 2"),
        ("Zorblax", " plan", "lexicon kind ' plan' has leading or trailing whitespace"),
        ("zorblax", "app", "'Zorblax' is already in the lexicon of 'c', as 'plan'"),
    ],
)
def test_a_bad_name_is_refused_and_nothing_is_written(two, name, kind, problem):
    with two.write() as s:
        add_lexicon_name(s, "c", "Zorblax", "plan")
    with pytest.raises(ValueError, match=problem):
        with two.write() as s:
            add_lexicon_name(s, "c", name, kind)
    with two.read() as s:
        assert collection_lexicon(s, "c") == {"Zorblax": "plan"}


def test_unknown_collection_or_name(two):
    with pytest.raises(NotFound, match="no name 'Nope' in the lexicon of 'c'"):
        with two.write() as s:
            remove_lexicon_name(s, "c", "Nope")
    with pytest.raises(NotFound):
        with two.read() as s:
            list_lexicon(s, "missing")


def test_import_adds_and_changes_kinds_in_one_go_or_not_at_all(two):
    with two.write() as s:
        add_lexicon_name(s, "c", "Zorblax", "app")
        assert import_lexicon(s, "c", {"zorblax": "plan", "Quintor": "plan", "茅台": "liquor"}) == (2, 1)
    with two.read() as s:
        assert collection_lexicon(s, "c") == {"Zorblax": "plan", "Quintor": "plan", "茅台": "liquor"}
    with pytest.raises(ValueError, match="lexicon kind must not be empty"):
        with two.write() as s:
            import_lexicon(s, "c", {"Newname": "plan", "Other": ""})
    with two.read() as s:
        assert s.scalar(select(func.count()).select_from(LexiconName)) == 3  # the good first name not written


def test_a_suggestion_appears_only_once_the_names_are_in_the_lexicon(two):
    pairs = [{"query_id": "q1", "doc_id": "p1", "query": QUERY, "text": PASSAGE}]

    def entity_tags():
        with two.read() as s:
            return [t for t in list_tags(s, "c") if t["category"] == "entity_mismatch"]

    with two.write() as s:
        suggest_tags(s, "c", None, pairs, language="en")
    assert entity_tags() == []
    with two.write() as s:
        add_lexicon_name(s, "c", "zorblax", "plan")
        add_lexicon_name(s, "c", "quintor", "plan")
        assert suggest_tags(s, "c", None, pairs, language="en") == 1
    [tag] = entity_tags()
    assert (tag["query_id"], tag["doc_id"], tag["status"]) == ("q1", "p1", "suggested")
    assert tag["evidence"]["detector"] == "entities"
    assert tag["evidence"]["evidence"] == {
        "query": ["zorblax"],
        "passage": ["quintor"],
        "method": "lexicon",
        "kind": "plan",
    }
    with two.write() as s:  # another collection's lexicon is not this one's
        assert suggest_tags(s, "other", None, pairs, language="en") == 0
