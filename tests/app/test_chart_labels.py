"""Charts show stored text as stored: plotly draws a subset of HTML in labels, so the pages escape exactly that.

Run names (Pooling) and usernames (Review) reach plotly through
:func:`pooljudge.ui.highlight.chart_text`: ``<``, ``>`` and ``&`` as the entities
plotly decodes back to those characters, quotes untouched (plotly would draw
``&quot;`` literally).  The Metrics and Error analysis charts are checked in
their own page tests.
"""

from __future__ import annotations

import json

import pytest
import streamlit as st
from sqlalchemy import select

from db.assignments import create_assignments
from db.importer import save_run
from db.labelling import record_judgment
from db.models import Assignment
from db.pools import save_pool
from db.users import add_user
from pooljudge.ui.highlight import chart_text
from tests.app.apptest import VIEWS, import_tiny_collection, open_as_admin, open_tab

RUN = '<b>bm25</b> "k1=1.2" & more'
RUN_LABEL = '&lt;b&gt;bm25&lt;/b&gt; "k1=1.2" &amp; more'
ANNOTATORS = {'<i>ann</i>"1"': '&lt;i&gt;ann&lt;/i&gt;"1"', "a&amp;b": "a&amp;amp;b"}


@pytest.fixture(autouse=True)
def _fresh_data_cache():
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _spec(at, title):
    [spec] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if title in c.proto.spec]
    return spec


def test_chart_text_escapes_what_plotly_reads_and_nothing_else():
    assert chart_text("<b>dom</b>") == "&lt;b&gt;dom&lt;/b&gt;"
    assert chart_text('say "hi" & it\'s') == 'say "hi" &amp; it\'s'
    assert chart_text("&amp; &#60; &mu;") == "&amp;amp; &amp;#60; &amp;mu;"  # plotly decodes these: not ours
    assert chart_text("plain 2024") == "plain 2024"


@pytest.fixture
def collection(db):
    with db.write() as s:
        import_tiny_collection(s, run=RUN)
        save_run(s, "c", "2024", {"q1": {"d1": 2.0, "d2": 1.0}})
        save_pool(
            s,
            "c",
            "p",
            {"q1": {"d0": [(RUN, 1, 2.0)], "d1": [(RUN, 2, 1.0), ("2024", 1, 2.0)], "d2": [("2024", 2, 1.0)]}},
            method="depth",
        )
    return db


def test_pooling_charts_show_run_names_as_stored(collection):
    at = open_as_admin(collection, VIEWS / "pooling.py")
    assert not at.exception
    contributed = _spec(at, "Pairs contributed per run")
    assert {x for t in contributed["data"] for x in t["x"]} == {RUN_LABEL, "2024"}
    assert contributed["layout"]["xaxis"]["type"] == "category"  # "2024" is a run's name, not a year on a scale
    overlap = _spec(at, "Overlap between runs")
    assert set(overlap["data"][0]["x"]) == set(overlap["data"][0]["y"]) == {"2024", RUN_LABEL}
    assert not any("&quot;" in c.proto.spec for c in at.get("plotly_chart"))


def test_review_charts_show_usernames_as_stored(collection):
    db = collection
    with db.write() as s:
        ids = [add_user(s, name, "correct horse", "annotator").id for name in ANNOTATORS]
        create_assignments(s, "c", "p", annotators=list(ANNOTATORS), per_pair=2, seed=0)
    for uid in ids:
        with db.write() as s:
            for aid in s.scalars(select(Assignment.id).where(Assignment.user_id == uid).order_by(Assignment.id)):
                record_judgment(s, uid, aid, 2)
    at = open_tab(open_as_admin(db, VIEWS / "review.py"), "review_tab", "Throughput")  # the tabs are lazy
    assert not at.exception
    throughput = _spec(at, "Labels per annotator per day")
    assert sorted(t["name"] for t in throughput["data"]) == sorted(ANNOTATORS.values())  # the legend
    assert not any("&quot;" in c.proto.spec for c in at.get("plotly_chart"))
    open_tab(at, "review_tab", "Agreement")
    # the confusion matrix is an HTML table of counts; the annotators are named in the line above it, escaped
    # for HTML as plotly's labels are (the same entities)
    first, second = ANNOTATORS.values()  # the first pair of annotators with shared items
    [caption] = [h.proto.body for h in at.get("html") if "Rows: the label" in h.proto.body]
    assert f"Rows: the label {first} gave; columns: the label {second} gave" in caption


def test_the_pooling_page_builds_no_plotly_express_figure(collection, monkeypatch):
    """plotly.express spends 100-150 ms of CPU per figure; the Pooling page drew three on every run."""
    import plotly.express as px

    def refuse(*args, **kwargs):
        raise AssertionError("plotly.express figure built")

    for name in ("bar", "histogram", "imshow"):
        monkeypatch.setattr(px, name, refuse)
    at = open_as_admin(collection, VIEWS / "pooling.py")
    assert not at.exception, at.exception
    assert {json.loads(c.proto.spec)["data"][0]["type"] for c in at.get("plotly_chart")} == {
        "histogram",
        "bar",
        "heatmap",
    }
