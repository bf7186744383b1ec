"""The Error analysis page under AppTest, against a real store: sampling, suggestions, tagging, dashboards."""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core.types import CollectionSource, Passage, QrelEntry, Query
from db.engine import Store, sqlite_url
from db.error_analysis import (
    category_distribution,
    collection_term_frequencies,
    failing_queries,
    list_tags,
    sample_error_pairs,
    set_tag_status,
    suggest_tags,
    tag_pair,
)
from db.importer import import_collection, save_run
from db.queries import stored_qrels, stored_run
from db.users import add_user
from tests.app.apptest import VIEWS, admin_seeded_file, open_as_admin, page_store
from tests.sqlite_template import fresh_sqlite

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = VIEWS / "errors.py"
EVIDENCE = "background-color: #ffd8cc"
RAW_TAG = re.compile(r"(?<!\\)<(script|img)")  # an unescaped tag (md_escape writes "\\<script")
C = "dureader-like"
SONGS_2017 = "2017年最好听的歌曲排行榜：第1名是《演员》，第2名是《告白气球》。"
ALIPAY = "支付宝实名认证怎么修改？登录支付宝，进入账户设置，点击实名认证即可修改。"
EIFFEL_0 = "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris."
EIFFEL_1 = "It was completed in 1889 as the entrance arch to the 1889 World's Fair."
EVIL = "<script>alert(1)</script> **bold** [link](http://e.com)"
PASSAGES = [
    Passage("s17", SONGS_2017, doc_id="S", position=0),
    Passage("s16", "2016年最好听的歌曲：《演员》。", doc_id="S2", position=0),
    Passage("alipay", ALIPAY, doc_id="P", position=0),
    Passage("taobao", "淘宝实名认证修改：进入淘宝账户设置。", doc_id="T", position=0),
    Passage("e1", EIFFEL_0, title="Eiffel Tower", doc_id="E", position=0),
    Passage("e2", EIFFEL_1, title="Eiffel Tower", doc_id="E", position=1),
    Passage("x", EVIL, doc_id="X", position=0),
]
QUERIES = [
    Query("q1", "最近有什么好听的歌2016"),
    Query("q2", "淘宝修改实名认证"),
    Query("q3", "when was the eiffel tower completed"),
    Query("q4", "<script>alert('q')</script> tower"),
    Query("q5", "2016 好听的歌"),
]
QRELS = [
    QrelEntry("q1", "s16", 2),
    QrelEntry("q1", "s17", 0),
    QrelEntry("q2", "taobao", 2),
    QrelEntry("q2", "alipay", 0),
    QrelEntry("q3", "e1", 2),
    QrelEntry("q4", "e1", 2),
    QrelEntry("q5", "s16", 2),
    QrelEntry("q5", "x", 1),
]  # relevant at level 1 only: dense ranks it first for q5
# every query but q5 misses its relevant passage in the top 5
BM25 = {"q1": {"s17": 3.0, "x": 1.0}, "q2": {"alipay": 2.0}, "q3": {"e2": 5.0}, "q4": {"x": 1.0}, "q5": {"s16": 1.0}}
# reciprocal ranks at level 2: q1 0.5, q2 1, q3 0.5, q4 0 (not in the run), q5 0.5 (1 at level 1)
DENSE = {
    "q1": {"s17": 2.0, "s16": 1.0},
    "q2": {"taobao": 1.0},
    "q3": {"e2": 2.0, "e1": 1.0},
    "q5": {"x": 2.0, "s16": 1.0},
}


def seed(store: Store) -> None:
    """The collection and its bm25 run (test_metric_per_category_per_run_by_hand adds DENSE itself)."""
    source = CollectionSource(passages=lambda: iter(PASSAGES), queries=lambda: iter(QUERIES), qrels=lambda: iter(QRELS))
    with store.write() as s:
        import_collection(s, source, name=C, format="test", location="mem")
        save_run(s, C, "bm25", BM25)


@pytest.fixture(scope="module")
def seeded(sqlite_template, tmp_path_factory) -> tuple[Path, int]:
    """A store with the admin and the collection (:func:`seed`), built once for the module: ``(file, admin id)``."""
    return admin_seeded_file(sqlite_template, tmp_path_factory.mktemp("errors-page"), seed)


@pytest.fixture
def db(seeded, tmp_path, monkeypatch):
    """A store of the test's own, a copy of :func:`seeded`'s (``db.admin_id``), the one the page opens."""
    yield from page_store(seeded, tmp_path, monkeypatch)


def tags(store: Store, **filters) -> list[dict]:
    with store.read() as s:
        return list_tags(s, C, **filters)


def sampled(store: Store, **params) -> AppTest:
    """The page as admin, the imported qrels chosen and a sample drawn (the qrels default is the live labels)."""
    at = open_as_admin(store, PAGE, default_timeout=60)
    # the page reads the source, the numbers and the button in one run, as after the last of these clicks
    at.selectbox(key="errors_source").select("imported")
    for key, value in params.items():
        at.number_input(key=f"errors_{key}").set_value(value)
    at.button(key="errors_sample_button").click().run()
    assert not at.exception
    return at


def open_tab(at: AppTest, tab: str) -> AppTest:
    """The page rerun with ``tab`` open (the page computes only the open tab)."""
    at.session_state["errors_tab"] = tab
    at.run()
    assert not at.exception
    return at


def dashboards(at: AppTest) -> AppTest:
    return open_tab(at, "Dashboards")


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def texts(at: AppTest) -> list[str]:
    """Markdown and caption sources, and the HTML bodies of st.html (where untrusted text is shown verbatim)."""
    return [m.value for m in at.markdown] + [c.value for c in at.caption] + [h.value for h in at.html]


def visible(at: AppTest) -> list[str]:
    """What the browser shows of each st.html body: <br> a line break, tags dropped, entities decoded."""
    return [html.unescape(re.sub(r"<[^>]*>", "", h.value.replace("<br>", "\n"))) for h in at.html]


def chart_bars(at: AppTest, title: str) -> dict[tuple[str, str], float]:
    """``{(trace, x): y}`` of the plotly bar chart with this title (plotly ships numeric arrays base64-encoded)."""
    [spec] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if title in c.proto.spec]
    bars = {}
    for trace in spec["data"]:
        y = trace["y"]
        if isinstance(y, dict):
            y = np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]).tolist()
        bars.update({(trace["name"], x): v for x, v in zip(trace["x"], y)})
    return bars


def frame_with(at: AppTest, column: str):
    [frame] = [d.value for d in at.dataframe if column in d.value.columns]
    return frame


def test_sample_shows_failing_queries_and_pairs_and_stores_nothing(db):
    first = open_as_admin(db, PAGE, default_timeout=60)
    # nobody has labelled: the newest frozen version is chosen rather than the empty live labels
    assert first.selectbox(key="errors_source").options == ["live final labels", "imported"]
    assert first.selectbox(key="errors_source").value == "imported"
    assert not first.metric  # nothing sampled yet
    at = sampled(db)
    with db.read() as s:
        qrels = stored_qrels(s, C, "imported")
        failing = failing_queries(qrels, stored_run(s, C, "bm25"), k=5, level=2)
        expected = sample_error_pairs(s, C, "bm25", qrels=qrels, k=5, n=100, level=2, seed=0)
    assert failing == ["q1", "q2", "q3", "q4"]
    shown = metrics(at)
    assert shown["Failing queries"] == "4" and shown["Judged queries"] == "5"
    assert shown["Sampled queries"] == "4" and shown["Sampled pairs"] == str(len(expected)) == "5"
    assert at.session_state["errors_sample"]["pairs"] == expected
    assert len(at.selectbox(key="errors_pair").options) == 5
    assert tags(db) == []  # sampling stores nothing

    # N and seed: a seeded sample of 2 of the 4 failing queries, exactly as sample_error_pairs draws it
    at = sampled(db, n=2, seed=7)
    with db.read() as s:
        expected = sample_error_pairs(s, C, "bm25", qrels=qrels, k=5, n=2, level=2, seed=7)
    assert at.session_state["errors_sample"]["pairs"] == expected
    assert metrics(at)["Sampled queries"] == "2" and metrics(at)["Failing queries"] == "4"
    # k = 1 and level = 1: q1's top passage s17 is labelled 0, so still failing; nothing passes but q5
    at = sampled(db, k=1, level=1)
    with db.read() as s:
        assert (
            metrics(at)["Failing queries"]
            == str(len(failing_queries(qrels, stored_run(s, C, "bm25"), k=1, level=1)))
            == "4"
        )
    assert metrics(at)["Sampled pairs"] == "4"  # one pair per query at k = 1


def test_suggest_tags_stores_exactly_what_suggest_tags_produces(db, tmp_path):
    reference = Store(sqlite_url(fresh_sqlite(tmp_path / "reference.db")), upgrade=False)
    seed(reference)
    with reference.write() as s:
        qrels = stored_qrels(s, C, "imported")
        pairs = sample_error_pairs(s, C, "bm25", qrels=qrels)
        expected_count = suggest_tags(s, C, "bm25", pairs, term_frequencies=collection_term_frequencies(s, C))
        expected = [
            (t["query_id"], t["doc_id"], t["category"], t["status"], t["source"], t["run"], t["evidence"])
            for t in list_tags(s, C)
        ]
    reference.dispose()

    at = sampled(db)
    at.button(key="errors_suggest").click().run()
    assert not at.exception
    assert at.success[0].value.startswith(f"Stored {expected_count} new suggestions for the 5 sampled pairs")
    stored = [
        (t["query_id"], t["doc_id"], t["category"], t["status"], t["source"], t["run"], t["evidence"]) for t in tags(db)
    ]
    assert stored == expected and expected_count == 10
    assert (
        "q1",
        "s17",
        "numeral_mismatch",
        "suggested",
        "auto",
        "bm25",
        {
            "category": "numeral_mismatch",
            "evidence": {"query": ["2016"], "passage": ["2017"]},
            "spans": [[0, 4]],
            "detector": "numerals",
        },
    ) in stored
    assert {(q, d, c) for q, d, c, *_ in stored} >= {
        ("q2", "alipay", "entity_mismatch"),
        ("q3", "e2", "coreference"),
        ("q3", "e2", "main_topic"),
    }
    # the first pair (q1, s17) now shows its suggestions with their evidence text and the 2017 span marked
    shown = texts(at)
    assert "query has 2016; passage has 2017" in visible(at)
    assert any(f'<mark style="{EVIDENCE}">2017</mark>' in t for t in shown)
    assert at.button(key=f"errors_pair_confirm_{tags(db, category='numeral_mismatch')[0]['id']}")
    # suggesting again stores nothing new
    at.button(key="errors_suggest").click().run()
    assert at.success[0].value.startswith("Stored 0 new suggestions")
    assert len(tags(db)) == 10


def test_confirm_and_reject_change_the_stored_status(db):
    at = sampled(db)
    at.button(key="errors_suggest").click().run()
    [numeral] = tags(db, category="numeral_mismatch")
    [false_negative] = tags(db, category="false_negative", query_id="q1")[:1]
    assert false_negative["doc_id"] == "s17"
    at.button(key=f"errors_pair_confirm_{numeral['id']}").click().run()
    at.button(key=f"errors_pair_reject_{false_negative['id']}").click().run()
    assert not at.exception
    [after] = tags(db, category="numeral_mismatch")
    assert after["status"] == "confirmed" and after["user_id"] == db.admin_id
    assert tags(db, status="rejected") == [{**false_negative, "status": "rejected", "user_id": db.admin_id}]
    assert at.button(key=f"errors_pair_confirm_{numeral['id']}").disabled
    assert not at.button(key=f"errors_pair_reject_{numeral['id']}").disabled
    assert "1 of 5 pairs have a confirmed tag" in at.get("progress")[0].proto.text


def test_prev_next_step_through_the_pairs(db):
    at = sampled(db)
    assert at.button(key="errors_prev").disabled
    assert "Passage s17 · rank 1, score 3 · label 0" in [c.value for c in at.caption]
    at.button(key="errors_next").click().run()
    assert at.selectbox(key="errors_pair").value == 1
    assert "Passage x · rank 2, score 1 · unjudged" in [c.value for c in at.caption]
    for _ in range(3):
        at.button(key="errors_next").click().run()
    assert at.selectbox(key="errors_pair").value == 4 and at.button(key="errors_next").disabled
    at.button(key="errors_prev").click().run()
    assert at.selectbox(key="errors_pair").value == 3
    assert "Passage e2 · rank 1, score 5 · unjudged" in [c.value for c in at.caption]
    # the DAPR pair shows its document context: the earlier passage of document E
    assert "Document E, passage 2" in [c.value for c in at.caption]
    assert [e.label for e in at.expander if e.label.startswith("Document context")] == [
        "Document context: 1 earlier passage"
    ]
    assert any("wrought-iron lattice <mark>tower</mark>" in h.value for h in at.html)


def test_a_category_clashing_with_the_taxonomy_or_malformed_is_refused(db):
    at = sampled(db)
    at.text_input(key="errors_new_id").input("numeral_mismatch")
    at.button(key="errors_define").click().run()
    assert "There already is a category numeral\\_mismatch." in [e.value for e in at.error]
    at.text_input(key="errors_new_id").input("Bad Id")
    at.button(key="errors_define").click().run()
    assert at.error and "lowercase letters" in at.error[0].value
    _define(at, "outdated_answer", "Outdated answer")
    assert at.multiselect(key="errors_new_tags").options[-1] == "Your categories · Outdated answer"
    assert tags(db) == []  # a category alone stores nothing


def _tag_first_pair(store: Store) -> AppTest:
    """The first pair (q1, s17) tagged modifier_mismatch and a category defined on the page, with a note."""
    at = _define(sampled(store), "outdated_answer", "Outdated answer")
    at.multiselect(key="errors_new_tags").select("modifier_mismatch").select("outdated_answer")
    at.text_input(key="errors_note").input("2016 <b>vs</b> 2017")
    at.button(key="errors_add_tags").click().run()
    assert not at.exception
    return at


def test_analyst_tags_with_a_user_defined_category(db):
    at = _tag_first_pair(db)
    stored = tags(db)
    assert [
        (t["query_id"], t["doc_id"], t["category"], t["status"], t["source"], t["user_id"], t["run"], t["evidence"])
        for t in stored
    ] == [
        (
            "q1",
            "s17",
            "modifier_mismatch",
            "confirmed",
            "analyst",
            db.admin_id,
            "bm25",
            {"note": "2016 <b>vs</b> 2017"},
        ),
        (
            "q1",
            "s17",
            "outdated_answer",
            "confirmed",
            "analyst",
            db.admin_id,
            "bm25",
            {"note": "2016 <b>vs</b> 2017", "category_name": "Outdated answer"},
        ),
    ]
    assert at.multiselect(key="errors_new_tags").value == []  # cleared for the next pair
    shown = texts(at)
    assert ":material/check_circle: **Outdated answer**  \n:small[confirmed · analyst · admin]" in shown
    assert "note: 2016 <b>vs</b> 2017" in visible(at)  # the note is shown as it was typed
    assert any("note: 2016 &lt;b&gt;vs&lt;/b&gt; 2017" in t for t in shown)  # escaped

    # nothing was selected: nothing stored, a warning
    at.button(key="errors_add_tags").click().run()
    assert at.warning[0].value == "Choose at least one category." and len(tags(db)) == 2


def test_a_new_session_tags_with_the_category_by_its_name(db):
    _tag_first_pair(db)
    fresh = open_as_admin(db, PAGE, default_timeout=60)
    fresh.selectbox(key="errors_source").select("imported").run()
    fresh.button(key="errors_sample_button").click().run()
    # the name the category was defined with, not only its id
    assert fresh.multiselect(key="errors_new_tags").options[-1] == "Your categories · Outdated answer"
    fresh.multiselect(key="errors_new_tags").select("outdated_answer")
    fresh.button(key="errors_next").click().run()
    fresh.multiselect(key="errors_new_tags").select("outdated_answer")
    fresh.button(key="errors_add_tags").click().run()
    assert [(t["query_id"], t["doc_id"], t["category"]) for t in tags(db, category="outdated_answer")] == [
        ("q1", "s17", "outdated_answer"),
        ("q1", "x", "outdated_answer"),
    ]


def _hand_tagging(store: Store) -> dict[str, int]:
    """Confirmed: q1 numeral, q2 entity + numeral, q3 coreference (twice on one pair); a rejected and a suggested tag."""
    ids = {}
    with store.write() as s:
        ids["q1"] = tag_pair(s, C, "q1", "s17", "numeral_mismatch", user_id=store.admin_id, run_name="bm25")
        tag_pair(s, C, "q2", "alipay", "entity_mismatch", user_id=store.admin_id)
        tag_pair(s, C, "q2", "alipay", "numeral_mismatch", note="<script>alert(2)</script>")
        tag_pair(s, C, "q3", "e2", "coreference")
        tag_pair(s, C, "q3", "e2", "coreference", note="same pair, counted once")
        ids["q4"] = tag_pair(s, C, "q4", "x", "other")
        set_tag_status(s, ids["q4"], "rejected")
        ids["q5"] = tag_pair(s, C, "q5", "s16", "typo")
        set_tag_status(s, ids["q5"], "suggested")
    return ids


def test_category_distribution_dashboard_equals_the_store(db):
    _hand_tagging(db)
    at = dashboards(open_as_admin(db, PAGE, default_timeout=60))
    with db.read() as s:
        confirmed = category_distribution(s, C)
        both = category_distribution(s, C, statuses=("confirmed", "suggested"))
    assert confirmed == {"numeral_mismatch": 2, "coreference": 1, "entity_mismatch": 1}
    table = frame_with(at, "pairs")
    assert dict(zip(table["category"], table["pairs"])) == confirmed
    assert list(table["name"]) == [
        "Salient phrase mismatch: numeral",
        "Coreference resolution",
        "Salient phrase mismatch: entity",
    ]
    assert list(table["group"]) == ["DuReader-retrieval", "DAPR", "DuReader-retrieval"]
    assert chart_bars(at, "Tagged pairs per category") == {
        ("DuReader-retrieval", "Salient phrase mismatch: numeral"): 2,
        ("DuReader-retrieval", "Salient phrase mismatch: entity"): 1,
        ("DAPR", "Coreference resolution"): 1,
    }
    at.checkbox(key="errors_include_suggested").check().run()
    table = frame_with(at, "pairs")
    assert dict(zip(table["category"], table["pairs"])) == both == {**confirmed, "typo": 1}


def test_metric_per_category_per_run_by_hand(db):
    with db.write() as s:  # the seeded store has bm25 only
        save_run(s, C, "dense", DENSE)
    _hand_tagging(db)
    at = dashboards(open_as_admin(db, PAGE, default_timeout=60))
    at.selectbox(key="errors_source").select("imported").run()
    at.selectbox(key="errors_measure").select("MRR@10").run()
    assert not at.exception
    table = frame_with(at, "queries")
    # bm25 RR: q5 1, others 0; dense RR: q1 .5, q2 1, q3 .5, q4 0, q5 .5
    # numeral {q1, q2}, entity {q2}, coreference {q3}; untagged {q4 (its tag rejected), q5 (suggested only)}
    assert table.to_dict("records") == [
        {"category": "coreference", "name": "Coreference resolution", "queries": 1, "bm25": 0.0, "dense": 0.5},
        {
            "category": "entity_mismatch",
            "name": "Salient phrase mismatch: entity",
            "queries": 1,
            "bm25": 0.0,
            "dense": 1.0,
        },
        {
            "category": "numeral_mismatch",
            "name": "Salient phrase mismatch: numeral",
            "queries": 2,
            "bm25": 0.0,
            "dense": 0.75,
        },
        {"category": "untagged", "name": "Untagged (no confirmed tag)", "queries": 2, "bm25": 0.5, "dense": 0.25},
    ]
    assert chart_bars(at, "MRR@10 per error category and run") == {
        ("bm25", "Coreference resolution"): 0.0,
        ("bm25", "Salient phrase mismatch: entity"): 0.0,
        ("bm25", "Salient phrase mismatch: numeral"): 0.0,
        ("bm25", "Untagged (no confirmed tag)"): 0.5,
        ("dense", "Coreference resolution"): 0.5,
        ("dense", "Salient phrase mismatch: entity"): 1.0,
        ("dense", "Salient phrase mismatch: numeral"): 0.75,
        ("dense", "Untagged (no confirmed tag)"): 0.25,
    }
    [chart] = [c for c in at.get("plotly_chart") if "MRR@10 per error category and run" in c.proto.spec]
    assert json.loads(chart.proto.spec)["layout"]["barmode"] == "group"
    # Success@10 at level 2 of dense: q1 1, q2 1, q3 1, q4 0, q5 1
    at.selectbox(key="errors_measure").select("Success@10").run()
    table = frame_with(at, "queries").set_index("category")
    assert table.loc["numeral_mismatch", "dense"] == 1.0 and table.loc["untagged", "dense"] == 0.5


def test_examples_table_filters_and_drill_down(db):
    ids = _hand_tagging(db)
    at = dashboards(open_as_admin(db, PAGE, default_timeout=60))
    examples = frame_with(at, "evidence")
    assert list(examples["tag"]) == [
        t["id"] for t in tags(db) if t["status"] != "rejected"
    ]  # default: confirmed, suggested
    first = examples.iloc[0].to_dict()
    assert first["query"] == "最近有什么好听的歌2016" and first["passage"] == SONGS_2017
    assert first["category"] == "Salient phrase mismatch: numeral" and first["status"] == "confirmed"
    assert first["source"] == "analyst" and first["run"] == "bm25" and first["by"] == "admin"
    at.multiselect(key="errors_filter_statuses").unselect("suggested").run()
    at.multiselect(key="errors_filter_categories").select("numeral_mismatch").run()
    examples = frame_with(at, "evidence")
    assert list(examples["query id"]) == ["q1", "q2"]
    assert list(examples["evidence"]) == [
        "",
        "note: <script>alert(2)</script>",
    ]  # raw in a dataframe cell: rendered as text
    at.multiselect(key="errors_filter_statuses").set_value(["rejected"]).run()
    at.multiselect(key="errors_filter_categories").set_value([]).run()
    examples = frame_with(at, "evidence")
    assert list(examples["tag"]) == [ids["q4"]]
    assert examples.iloc[0]["passage"] == EVIL

    # drill-down into the rejected tag: the full pair, its tags, and confirming from there
    assert at.selectbox(key="errors_drill").value == ids["q4"]
    assert "Query q4" in [c.value for c in at.caption]
    at.button(key=f"errors_drill_confirm_{ids['q4']}").click().run()
    assert tags(db, query_id="q4")[0]["status"] == "confirmed"
    assert f"Tag #{ids['q4']} confirmed." in [s.value for s in at.success]


def test_untrusted_text_stays_escaped(db):
    at = sampled(db)
    at.button(key="errors_suggest").click().run()
    at.selectbox(key="errors_pair").set_value(4).run()  # (q4, x): query and passage both carry <script>
    assert not at.exception
    shown = texts(at)
    assert any(t.endswith(">&lt;script&gt;alert('q')&lt;/script&gt; tower</div>") for t in shown)  # the query, escaped
    # the passage, query terms marked inside the escaped text
    assert any("&lt;<mark>script</mark>&gt;<mark>alert</mark>(1)&lt;/<mark>script</mark>&gt;" in t for t in shown)
    assert not any("<script>" in t for t in shown)
    assert EVIL in visible(at)  # verbatim: st.html runs no Markdown, so "**bold**" and "[link](...)" stay text

    # a user category and a note with HTML, shown in the tag list and the drill-down
    at.text_input(key="errors_new_id").input("evil")
    at.text_input(key="errors_new_name").input("<script>x</script>")
    at.button(key="errors_define").click().run()
    at.multiselect(key="errors_new_tags").select("evil")
    at.text_input(key="errors_note").input("<img src=x onerror=alert(3)>")
    at.button(key="errors_add_tags").click().run()
    shown = texts(at) + [s.value for s in at.success]
    assert not any(RAW_TAG.search(t) for t in shown)
    assert any("\\<script\\>x\\<\\/script\\>" in t for t in shown)  # the category name, markdown-escaped
    assert "note: <img src=x onerror=alert(3)>" in visible(at)
    dashboards(at)
    assert not any(RAW_TAG.search(t) for t in texts(at))


@pytest.mark.parametrize("role, allowed", [("reviewer", True), ("annotator", False)])
def test_roles(db, role, allowed):
    with db.write() as s:
        uid = add_user(s, "someone", "correct horse", role).id
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state["pooljudge_user_id"] = uid
    at.run()
    assert not at.exception
    assert bool(at.error) is not allowed
    assert [t.value for t in at.title] == (["Error analysis"] if allowed else [])
    if allowed:
        assert at.selectbox(key="errors_collection").value == C


STORED_LABEL = '"quoted" <b>dom</b> & co &amp;'  # plotly would draw <b> bold and decode &amp;
CHART_LABEL = '"quoted" &lt;b&gt;dom&lt;/b&gt; &amp; co &amp;amp;'  # drawn by plotly as STORED_LABEL


def test_chart_labels_show_the_stored_text(db):
    # the category name and the run name reach plotly escaped exactly as plotly reads labels: <, > and & as
    # entities it decodes, quotes as they are (html.escape's &quot; used to be drawn literally)
    with db.write() as s:
        save_run(s, C, '<i>run</i> "2"', DENSE)
        tag_pair(
            s, C, "q1", "s17", "own_cat", user_id=db.admin_id, extra_categories=["own_cat"], category_name=STORED_LABEL
        )
        tag_pair(s, C, "q2", "alipay", "numeral_mismatch", user_id=db.admin_id)
    at = dashboards(open_as_admin(db, PAGE, default_timeout=60))
    at.selectbox(key="errors_source").select("imported").run()
    at.selectbox(key="errors_measure").select("MRR@10").run()
    assert not at.exception
    [distribution] = [
        json.loads(c.proto.spec) for c in at.get("plotly_chart") if "Tagged pairs per category" in c.proto.spec
    ]
    assert sorted(x for trace in distribution["data"] for x in trace["x"]) == [
        CHART_LABEL,
        "Salient phrase mismatch: numeral",
    ]
    assert distribution["layout"]["xaxis"]["type"] == "category"
    bars = chart_bars(at, "MRR@10 per error category and run")
    # the run (DENSE) on q1 ranks s16 (grade 2) second
    assert bars[('&lt;i&gt;run&lt;/i&gt; "2"', CHART_LABEL)] == 0.5
    assert {run for run, _ in bars} == {"bm25", '&lt;i&gt;run&lt;/i&gt; "2"'}  # the legend's entries
    assert frame_with(at, "queries").set_index("category").loc["own_cat", "name"] == STORED_LABEL  # the table: raw
    assert not any("&quot;" in c.proto.spec for c in at.get("plotly_chart"))


def test_the_level_starts_at_the_collections(db):
    from db.queries import set_relevance_level

    at = open_as_admin(db, PAGE, default_timeout=60)
    assert at.number_input(key="errors_level").value == 2
    assert "Binary measures count grade ≥ 2 as relevant (the collection's level); nDCG uses the graded labels." in [
        c.value for c in at.caption
    ]
    assert metrics(sampled(db))["Failing queries"] == "4"  # q5 finds s16 (grade 2)
    with db.write() as s:
        set_relevance_level(s, C, 3)
    at = sampled(db)  # a new session: no option touched but the qrels source
    assert at.number_input(key="errors_level").value == 3
    assert metrics(at)["Failing queries"] == "5"  # no grade reaches 3
    assert any("relevant at grade ≥ 3" in c.value for c in at.caption)


# ---------------------------------------------------------------------------- stored categories, lazy tabs


def _define(at: AppTest, key: str, name: str, description: str = "") -> AppTest:
    at.text_input(key="errors_new_id").input(key)
    at.text_input(key="errors_new_name").input(name)
    at.text_area(key="errors_new_description").input(description)
    at.button(key="errors_define").click().run()
    assert not at.exception
    return at


def _categories_tab(at: AppTest) -> AppTest:
    return open_tab(at, "Categories")


def test_a_category_defined_on_the_page_is_stored_and_survives_a_new_session(db):
    from db.error_categories import list_error_categories

    at = _define(sampled(db), "outdated_answer", "Outdated answer", "True once, no longer.")
    assert [s.value for s in at.success] == ["Category Outdated answer (outdated\\_answer) stored for this collection."]
    with db.read() as s:
        [stored] = list_error_categories(s, C)
    assert (stored.key, stored.name, stored.description, stored.created_by) == (
        "outdated_answer",
        "Outdated answer",
        "True once, no longer.",
        "admin",
    )
    assert tags(db) == []  # stored without any tag

    fresh = sampled(db)  # a new session, no tag uses the category: it comes from the store
    assert fresh.multiselect(key="errors_new_tags").options[-1] == "Your categories · Outdated answer"
    taxonomy = frame_with(fresh, "description").set_index("id")
    assert taxonomy.loc["outdated_answer", "description"] == "True once, no longer."
    assert taxonomy.loc["outdated_answer", "group"] == "Your categories"
    # a stored key is taken, in this session and the new one
    _define(fresh, "outdated_answer", "Again")
    assert [e.value for e in fresh.error] == ["There already is a category outdated\\_answer."]
    _define(fresh, "bad_name", "x\ny")  # check_name refuses a control character, escaped in the message
    assert "contains a control character \\(U\\+000A\\) at position 2" in fresh.error[0].value
    with db.read() as s:
        assert [c.key for c in list_error_categories(s, C)] == ["outdated_answer"]


def test_the_categories_tab_renames_and_deletes_only_unused_categories(db):
    from db.error_categories import list_error_categories

    at = sampled(db)
    _define(at, "outdated_answer", "Outdated answer")
    _define(at, "evil", "<script>x</script> **b**")
    at.multiselect(key="errors_new_tags").select("outdated_answer")
    at.button(key="errors_add_tags").click().run()
    assert len(tags(db, category="outdated_answer")) == 1

    _categories_tab(at)
    table = frame_with(at, "tags")
    assert list(zip(table["id"], table["name"], table["tags"], table["by"])) == [
        ("outdated_answer", "Outdated answer", 1, "admin"),
        ("evil", "<script>x</script> **b**", 0, "admin"),
    ]
    assert at.button(key="errors_delete").disabled  # the first, used by a tag
    at.selectbox(key="errors_manage").select("evil").run()
    at.text_input(key="errors_rename_name::evil").input("Evil <b>twin</b>")
    at.text_area(key="errors_rename_description::evil").input("made up")
    at.button(key="errors_rename").click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["Category evil is now called Evil \\<b\\>twin\\<\\/b\\>."]
    with db.read() as s:
        assert [(c.key, c.name, c.description) for c in list_error_categories(s, C)] == [
            ("outdated_answer", "Outdated answer", ""),
            ("evil", "Evil <b>twin</b>", "made up"),
        ]
    assert not any(RAW_TAG.search(t) for t in texts(at) + [s.value for s in at.success])

    at.selectbox(key="errors_manage").select("evil").run()
    at.button(key="errors_delete").click().run()
    assert [s.value for s in at.success] == ["Category evil deleted."]
    with db.read() as s:
        assert [c.key for c in list_error_categories(s, C)] == ["outdated_answer"]
    assert list(frame_with(at, "tags")["id"]) == ["outdated_answer"]


def test_only_the_open_tab_runs(db):
    _hand_tagging(db)
    at = sampled(db)
    assert "Tag each pair" in [h.value for h in at.subheader]
    assert not at.get("plotly_chart") and "Error categories" not in [h.value for h in at.subheader]
    at = dashboards(at)
    assert [h.value for h in at.subheader] == [
        "Error categories",
        "Metric per error category",
        "Examples",
        "Drill-down",
    ]
    assert not at.metric and "errors_pair" not in [b.key for b in at.selectbox]  # the sample tab did not run
    at.session_state["errors_tab"] = "Sample and tag"
    at.run()
    assert metrics(at)["Sampled pairs"] == "5"  # the sample drawn before is still there
