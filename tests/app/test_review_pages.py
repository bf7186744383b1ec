"""The Review page's pairs table one page at a time (issue 20: 20,000 rows were sent on every run), under AppTest
on the six-pair store of test_review_scale with two rows a page."""

from __future__ import annotations

import pytest

import pooljudge.ui.table_pages as table_pages
from tests.app.test_review_scale import (  # noqa: F401 (fixtures)
    _open,
    _pairs,
    db,
    template,
)


@pytest.fixture
def two_a_page(monkeypatch):
    monkeypatch.setattr(table_pages, "PAGE_ROWS", 2)


def _captions(at):
    return [c.value for c in at.caption]


@pytest.mark.slow
def test_the_pairs_table_shows_one_page_and_the_box_moves_through_them(db, two_a_page):
    at = _open(db, "rev1", "Pairs")
    assert not at.exception, at.exception
    assert list(_pairs(at)["passage id"]) == ["d0", "d1"]
    assert "6 of 6 pairs. Select a row to see the pair and override its final label." in _captions(at)
    box = at.number_input(key="review_page")
    assert (box.value, box.label, box.max) == (1, "Page (of 3)", 3)
    assert "Rows 1-2 of 6, 2 rows a page." in _captions(at)
    assert at.multiselect(key="bulk_pairs").options == ["q1 / d0", "q1 / d1"]  # the page's pairs, not all
    box.set_value(3).run()
    assert list(_pairs(at)["passage id"]) == ["d4", "d5"]
    assert "Rows 5-6 of 6, 2 rows a page." in _captions(at)
    assert "Bulk actions on the 6 pairs shown" in [e.label for e in at.expander]


@pytest.mark.slow
def test_a_filter_finds_a_pair_of_a_later_page_and_starts_again_at_page_one(db, two_a_page):
    at = _open(db, "rev1", "Pairs")
    at.number_input(key="review_page").set_value(2).run()
    assert list(_pairs(at)["passage id"]) == ["d2", "d3"]
    at.text_input(key="review_search").input("d5").run()  # d5 is on page 3 of the whole table
    assert list(_pairs(at)["passage id"]) == ["d5"]
    assert "1 of 6 pairs. Select a row to see the pair and override its final label." in _captions(at)
    assert not at.number_input  # one page: no page box
    at.text_input(key="review_search").input("").run()
    assert at.number_input(key="review_page").value == 1  # other filters, other pages: back to the first
    assert list(_pairs(at)["passage id"]) == ["d0", "d1"]


@pytest.mark.slow
def test_a_row_chosen_on_a_later_page_shows_that_pair(db, two_a_page):
    at = _open(db, "rev1", "Pairs")
    at.number_input(key="review_page").set_value(2).run()
    at.session_state["review_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    assert (at.selectbox(key="override_query").value, at.selectbox(key="override_passage").value) == ("q2", "d3")


@pytest.mark.slow
def test_a_long_query_list_is_searched_before_it_is_offered(db, monkeypatch):
    """Past OPTIONS_LIMIT queries the ranked list's query box offers those the search box finds (2,000 queries
    with their texts are not sent on every run)."""
    monkeypatch.setattr(table_pages, "OPTIONS_LIMIT", 1)
    at = _open(db, "rev1", "Ranked list")
    assert not at.exception, at.exception
    assert at.text_input(key="ranked_find").label == "Find queries (id or text)"
    assert at.selectbox(key="ranked_query").options == ["q1 · tall <script>towers</script> (3 passages)"]
    assert "The first 1 of 2 queries: type to narrow them down." in _captions(at)
    at.text_input(key="ranked_find").input("SECOND").run()  # the query's text, any case
    assert at.selectbox(key="ranked_query").options == ["q2 · second query (3 passages)"]
    assert at.selectbox(key="ranked_query").value == "q2"
    at.text_input(key="ranked_find").input("q1").run()  # its id
    assert at.selectbox(key="ranked_query").options == ["q1 · tall <script>towers</script> (3 passages)"]
    at.text_input(key="ranked_find").input("no such query").run()
    assert "No queries match this search: the box offers the first 1 of all 2." in _captions(at)
    assert at.selectbox(key="ranked_query").options == ["q1 · tall <script>towers</script> (3 passages)"]
