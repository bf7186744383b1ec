"""Review at scale (issue 11) under AppTest: filters, a pair chosen from the table, bulk override, an admin's
reassignment of an open adjudication, adjudicator lists and the per-query ranked-list view."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.models import Assignment, FinalLabel, LabelOverride, PassageRecord, PoolAdjudicator, User
from db.pools import save_pool
from db.users import add_user
from pooljudge.ui.ranked_component import parse_apply
from tests.app.apptest import judge, open_as, open_tab, pair_ids, private_store
from tests.sqlite_template import fresh_sqlite

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

REVIEW = str(Path(__file__).resolve().parents[2] / "views" / "review.py")
QUERY_OF = {"d0": "q1", "d1": "q1", "d2": "q1", "d3": "q2", "d4": "q2", "d5": "q2"}
ANNOTATORS = ["ann1", "ann2", "ann3", "ann4", "ann5"]
# d0 unanimous 3, d1 split (needs a 4th), d2 majority 2, d3 majority 1, d4 split, d5 unlabelled
GRADES = {"d0": (3, 3, 3), "d1": (0, 1, 2), "d2": (2, 2, 1), "d3": (1, 1, 0), "d4": (0, 1, 2)}


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """Built once (password hashing is slow on purpose) and copied for every test."""
    path = fresh_sqlite(tmp_path_factory.mktemp("scale") / "app.db")
    store = Store(sqlite_url(path), upgrade=False)
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"passage <b>{d}</b> about towers", title=f"T{d}") for d in QUERY_OF]),
        queries=lambda: iter([Query("q1", "tall <script>towers</script>"), Query("q2", "second query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_pool(
            s, "c", "p", {q: {d: [] for d, qq in QUERY_OF.items() if qq == q} for q in ("q1", "q2")}, method="depth"
        )
        ids = {
            n: add_user(s, n, "correct horse", r).id
            for n, r in (
                ("admin", "admin"),
                ("rev1", "reviewer"),
                *((a, "annotator") for a in ANNOTATORS),
                ("other", "annotator"),
            )
        }
        create_assignments(s, "c", "p", annotators=ANNOTATORS, seed=2, package_size=10)
    for doc, grades in GRADES.items():
        for name, grade in zip(_holders(store, doc, "label"), grades):
            judge(store, ids[name], QUERY_OF[doc], doc, grade)
    store.dispose()
    return path, ids


@pytest.fixture
def db(template, tmp_path, monkeypatch):
    with private_store(*template, tmp_path, monkeypatch) as store:
        yield store


def _holders(store, doc, purpose):
    with store.read() as s:
        q, d = pair_ids(s, QUERY_OF[doc], doc)
        return list(
            s.scalars(
                select(User.username)
                .join(Assignment, Assignment.user_id == User.id)
                .where(Assignment.query_id == q, Assignment.passage_id == d, Assignment.purpose == purpose)
                .order_by(User.username)
            )
        )


def _open(store, user, tab):
    """The Review page as ``user`` with the tab ``tab`` open (only the open tab's body runs)."""
    return open_tab(open_as(store, REVIEW, user, default_timeout=60), "review_tab", tab)


def _pairs(at):
    [table] = [d for d in at.dataframe if d.key == "review_table"]
    return table.value


def _plain(text):
    return text.replace("\\", "")


def _verbatim(at):
    """Each verbatim text of the page (a ``pj-verbatim`` div; a ranked-list passage is one element of several)."""
    divs = [d for h in at.html for d in re.findall(r'<div class="pj-verbatim"[^>]*>(.*?)</div>', h.value, re.S)]
    return [html.unescape(re.sub(r"<[^>]*>", "", d.replace("<br>", "\n"))) for d in divs]


def test_filters_and_search_narrow_the_pairs_table(db):
    at = _open(db, "rev1", "Pairs")
    assert not at.exception, at.exception
    table = _pairs(at)
    assert list(table["passage id"]) == ["d0", "d1", "d2", "d3", "d4", "d5"]
    assert list(table["state"]) == ["resolved", "needs fourth", "resolved", "resolved", "needs fourth", "pending"]
    assert list(table["final"]) == ["3 (unanimous)", "–", "2 (majority)", "1 (majority)", "–", "–"]
    assert "6 of 6 pairs. Select a row to see the pair and override its final label." in [c.value for c in at.caption]
    at.selectbox(key="review_state").select("needs_fourth").run()
    assert list(_pairs(at)["passage id"]) == ["d1", "d4"]
    assert "2 of 6 pairs. Select a row to see the pair and override its final label." in [c.value for c in at.caption]
    at.selectbox(key="review_state").select(None)
    at.text_input(key="review_search").input("SECOND").run()
    assert list(_pairs(at)["passage id"]) == ["d3", "d4", "d5"]
    at.text_input(key="review_search").input("<script>").run()  # the query's text, matched literally
    assert list(_pairs(at)["query"]) == ["tall <script>towers</script>"] * 3
    at.text_input(key="review_search").input("").run()
    at.selectbox(key="review_final").select(2).run()
    assert list(_pairs(at)["passage id"]) == ["d2"]
    at.selectbox(key="review_final").select(None)
    labeller = _holders(db, "d3", "label")[2]  # gave d3 its 0
    at.selectbox(key="review_annotator").select(labeller)
    at.selectbox(key="review_label").select(0).run()
    assert "d3" in list(_pairs(at)["passage id"])
    assert at.selectbox(key="review_label").label == f"Label by {labeller}"
    at.text_input(key="review_search").input("no such thing").run()
    assert _pairs(at).empty and [i.value for i in at.info] == ["No pair matches these filters."]


def test_choosing_a_row_shows_that_pair(db):
    at = _open(db, "rev1", "Pairs")
    at.selectbox(key="review_state").select("needs_fourth").run()
    at.session_state["review_table"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    assert (at.selectbox(key="override_query").value, at.selectbox(key="override_passage").value) == ("q2", "d4")
    assert "passage <b>d4</b> about towers" in _verbatim(at)  # shown literally
    at.session_state["review_table"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert (at.selectbox(key="override_query").value, at.selectbox(key="override_passage").value) == ("q1", "d1")
    assert "tall <script>towers</script>" in _verbatim(at)
    assert not any("<script>" in h.value for h in at.html)


def test_bulk_override_of_the_filtered_pairs_with_one_reason(db):
    at = _open(db, "rev1", "Pairs")
    at.selectbox(key="review_state").select("needs_fourth").run()
    at.radio(key="bulk_grade").set_value(1)
    at.button(key="bulk_override_submit").click().run()
    assert [e.value for e in at.error] == ["an override needs a reason"]
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(LabelOverride)) == 0
    at.text_area(key="bulk_reason").input("both <i>on topic</i> only")
    at.radio(key="bulk_grade").set_value(1)
    at.button(key="bulk_override_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == ["Overrode 2 final labels (1)."]
    with db.read() as s:
        rows = s.execute(
            select(PassageRecord.ext_id, LabelOverride.grade, LabelOverride.reason, LabelOverride.user_id)
            .join(PassageRecord, PassageRecord.id == LabelOverride.passage_id)
            .order_by(PassageRecord.ext_id)
        ).all()
        finals = s.execute(
            select(PassageRecord.ext_id, FinalLabel.grade, FinalLabel.method)
            .join(PassageRecord, PassageRecord.id == FinalLabel.passage_id)
            .order_by(PassageRecord.ext_id)
        ).all()
    assert [tuple(r) for r in rows] == [
        ("d1", 1, "both <i>on topic</i> only", db.ids["rev1"]),
        ("d4", 1, "both <i>on topic</i> only", db.ids["rev1"]),
    ]
    assert [tuple(f) for f in finals if f[0] in ("d1", "d4")] == [("d1", 1, "overridden"), ("d4", 1, "overridden")]
    assert _pairs(at).empty  # the tables refreshed: no pair needs a 4th any more
    # a subset chosen by name: only those are overridden
    at.selectbox(key="review_state").select("resolved").run()
    at.multiselect(key="bulk_pairs").select("q1 / d0").run()  # the browser reruns on every change
    at.radio(key="bulk_grade").set_value("exclude")
    at.text_area(key="bulk_reason").input("duplicate passage")
    at.button(key="bulk_override_submit").click().run()
    assert [_plain(s.value) for s in at.success] == ["Overrode 1 final label (excluded)."]
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(LabelOverride)) == 3


def test_reviewers_get_no_admin_controls(db):
    at = _open(db, "rev1", "Pairs")
    assert "bulk_override_submit" in {b.key for b in at.button}  # the tab is drawn, without the admin's form
    keys = {b.key for b in open_tab(at, "review_tab", "Adjudication").button}
    keys |= {b.key for b in open_tab(at, "review_tab", "Pairs").button}
    assert "reassign_submit" not in keys and "bulk_assign_submit" not in keys and "adjudicators_submit" not in keys
    headers = [h.value for h in open_tab(at, "review_tab", "Adjudication").subheader]
    assert headers == ["Waiting for a 4th annotator", "Excluded pairs"]  # drawn, without the admin's sections


def test_admin_reassigns_an_open_adjudication_from_the_app(db):
    [fourth] = _holders(db, "d1", "fourth")
    labellers = _holders(db, "d1", "label")
    [other] = sorted(set(ANNOTATORS) - set(labellers) - {fourth})
    at = _open(db, "admin", "Adjudication")
    assert not at.exception, at.exception
    box = at.selectbox(key="reassign_pair")
    assert box.options == [f"q1 / d1 (now: {fourth})", f"q2 / d4 (now: {_holders(db, 'd4', 'fourth')[0]})"]
    assert f"Eligible now: {other}." in [c.value for c in at.caption]  # the pool's last free annotator, not "other"
    at.button(key="reassign_submit").click().run()
    assert [_plain(e.value) for e in at.error] == ["Choose the account to give the adjudication to."]
    at.selectbox(key="reassign_user").select(other)
    at.button(key="reassign_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == [f"Adjudication of q1 / d1 given to {other} (was {fourth})."]
    assert _holders(db, "d1", "fourth") == [other]
    queue = [d.value for d in at.dataframe if "4th annotator" in d.value.columns][0]
    assert dict(zip(queue["passage"], queue["4th annotator"]))["d1"] == other  # the table follows at once
    # the write refuses a target that is not eligible (the account left the pool's list meanwhile)
    with db.write() as s:
        from db.adjudication import set_pool_adjudicators

        set_pool_adjudicators(s, "c", "p", ["rev1"])
    at.selectbox(key="reassign_pair").select_index(0)
    at.selectbox(key="reassign_user").select("rev1")
    at.run()
    assert "Eligible now: rev1." in [c.value for c in at.caption]
    with db.write() as s:
        set_pool_adjudicators(s, "c", "p", ["admin"])  # changed again after the page was drawn
    at.button(key="reassign_submit").click().run()
    assert [_plain(e.value) for e in at.error] == ["rev1 may not adjudicate q1 / d1 (eligible: admin)"]
    assert _holders(db, "d1", "fourth") == [other]


def test_admin_sets_a_pools_adjudicators_and_assigns_waiting_pairs_in_bulk(db):
    at = _open(db, "admin", "Adjudication")
    at.multiselect(key="adjudicators_p").select("other")
    at.button(key="adjudicators_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == ["Adjudicators of pool p: other."]
    with db.read() as s:
        assert s.scalar(select(func.count()).select_from(PoolAdjudicator)) == 1
    open_tab(at, "review_tab", "Pairs")
    at.selectbox(key="review_state").select("needs_fourth").run()
    at.selectbox(key="bulk_assign_user").select("other")
    at.button(key="bulk_assign_submit").click().run()
    assert not at.exception and not at.error
    assert [_plain(s.value) for s in at.success] == ["Gave 2 adjudications to other."]
    assert _holders(db, "d1", "fourth") == _holders(db, "d4", "fourth") == ["other"]
    at.selectbox(key="bulk_assign_user").select("ann1")  # a labeller of both: refused, nothing changes
    at.button(key="bulk_assign_submit").click().run()
    assert len(at.error) == 1 and _plain(at.error[0].value).startswith("ann1 may not adjudicate q1 / d")
    assert _holders(db, "d1", "fourth") == ["other"]


def _ranked(at) -> dict:
    """What the Review page sent its ranked-list component (pooljudge.ui.ranked_component): the list, as data."""
    [component] = [e for e in at.get("bidi_component") if e.proto.component_name == "pooljudge.ranked_list"]
    return json.loads(component.proto.json)


def _texts(segments) -> str:
    return "".join(text for text, _marked in segments)


def test_ranked_list_shows_a_querys_pool_with_every_label(db):
    at = _open(db, "rev1", "Ranked list")
    assert at.selectbox(key="ranked_pool").value == "p"
    assert at.selectbox(key="ranked_query").options == [
        "q1 · tall <script>towers</script> (3 passages)",
        "q2 · second query (3 passages)",
    ]
    assert "Query q1 · tall <script>towers</script>" in _verbatim(at)
    entries = _ranked(at)["entries"]
    assert [(e["where"], e["docid"], _texts(e["title"])) for e in entries] == [
        ("#1", "d0", "Td0"),
        ("#2", "d1", "Td1"),
        ("#3", "d2", "Td2"),
    ]
    assert [e["final"] for e in entries] == ["3 (unanimous)", "needs fourth", "2 (majority)"]
    assert all(e["labels"].count(":") == 3 for e in entries)  # three annotators on each
    with db.read() as s:
        assert [(e["query_id"], e["passage_id"]) for e in entries] == [pair_ids(s, "q1", d) for d in ("d0", "d1", "d2")]
    at.selectbox(key="ranked_query").select_index(1).run()
    assert "Query q2 · second query" in _verbatim(at)
    assert [(e["docid"], e["final"]) for e in _ranked(at)["entries"]] == [
        ("d3", "1 (majority)"),
        ("d4", "needs fourth"),
        ("d5", "not labelled yet"),
    ]


def test_ranked_list_apply_message_is_checked_against_the_list_sent(db):
    """The browser's apply message names pairs of the list this session was sent, each once, with a grade of the
    scale or None (exclude); anything else is refused before a write (storing it: test_review_browser.py)."""
    at = _open(db, "rev1", "Ranked list")
    data = _ranked(at)
    d1, d2 = (data["entries"][i] for i in (1, 2))
    allowed = {(e["query_id"], e["passage_id"]) for e in data["entries"]}
    serial, changes, reason = parse_apply(
        {
            "serial": 3,
            "list": data["list"],
            "changes": [[d1["query_id"], d1["passage_id"], 2], [d2["query_id"], d2["passage_id"], None]],
            "reason": "read side by side",
        },
        allowed,
    )
    assert (serial, changes, reason) == (
        3,
        [(d1["query_id"], d1["passage_id"], 2), (d2["query_id"], d2["passage_id"], None)],
        "read side by side",
    )
    for bad, problem in (
        ({"serial": 4, "changes": [[999, d1["passage_id"], 2]], "reason": "r"}, "not in the list shown"),
        ({"serial": 4, "changes": [[d1["query_id"], d1["passage_id"], 7]], "reason": "r"}, "is not one of 0, 1, 2, 3"),
        ({"serial": 4, "changes": [[d1["query_id"], d1["passage_id"], 1]] * 2, "reason": "r"}, "set twice"),
        ({"changes": [], "reason": "r"}, "no serial"),
    ):
        with pytest.raises(ValueError, match=problem):
            parse_apply(bad, allowed)


def test_ranked_list_is_drawn_as_one_element_below_its_boxes(db):
    """A browser styles and lays out every element of a page: a box per passage, a button per key and a form
    were most of a tab switch's script time under load; the list, its keys and its form are one component."""
    at = _open(db, "rev1", "Ranked list")
    assert [s.key for s in at.selectbox][-3:] == ["ranked_pool", "ranked_query", "ranked_order"]
    assert len(at.html) == 1  # the query
    assert not [b for b in at.button if b.key and b.key.startswith("ranked_")]
    assert len(at.columns) == 3  # the pool, query and order boxes' row only
    assert [e["docid"] for e in _ranked(at)["entries"]] == ["d0", "d1", "d2"]
    # the pool's order is an option the box shows (a None value would show the box's placeholder instead)
    order = at.selectbox(key="ranked_order")
    assert (order.value, order.options[0]) == ("", "pool order")
