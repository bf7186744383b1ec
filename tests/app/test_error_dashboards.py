"""pooljudge.ui.error_dashboards: category lists, evidence text and spans, metric per category and run, by hand."""

from __future__ import annotations

import math

from core.analysis import UNTAGGED
from core.detectors import TAXONOMY, detect_numeral_mismatch, suggest
from pooljudge.ui.error_dashboards import (
    UNTAGGED_NAME,
    USER_GROUP,
    category_metric_rows,
    category_metric_table,
    category_name,
    evidence_spans,
    evidence_summary,
    marked_html,
    ordered_categories,
    shorten,
    user_categories,
    user_category_names,
)

SONGS_2017 = "2017年最好听的歌曲排行榜：第1名是《演员》，第2名是《告白气球》。"


# --------------------------------------------------------------------------- categories


def test_ordered_categories_groups_then_user():
    out = ordered_categories({"outdated": "Outdated answer", "numeral_mismatch": "clash", "blank": "  "})
    ids = [c.id for c in out]
    assert ids[:13] == [c.id for c in TAXONOMY]  # the built-in order already has DuReader-retrieval then DAPR
    assert ids[13:] == ["outdated", "blank"]  # the clash with a built-in id is left out
    assert [(c.name, c.group) for c in out[13:]] == [("Outdated answer", USER_GROUP), ("blank", USER_GROUP)]
    # interleaved groups are gathered
    a, b, c = TAXONOMY[0], TAXONOMY[8], TAXONOMY[1]  # dureader, dapr, dureader
    assert [x.id for x in ordered_categories(base=[a, b, c])] == [a.id, c.id, b.id]


def test_user_categories_and_names():
    tags = [{"category": "numeral_mismatch"}, {"category": "zeta"}, {"category": "alpha"}, {"category": "zeta"}]
    assert user_categories(tags) == ["alpha", "zeta"]
    assert user_categories(tags, known=["zeta"]) == ["alpha", "numeral_mismatch"]
    assert category_name("numeral_mismatch") == "Salient phrase mismatch: numeral"
    assert category_name(UNTAGGED) == UNTAGGED_NAME
    assert category_name("zeta") == "zeta"
    assert category_name("zeta", {"zeta": "Zeta"}) == "Zeta"


def test_user_category_names_come_from_the_newest_tag_that_recorded_one():
    tags = [
        {"category": "zeta", "evidence": {"note": "", "category_name": "Zeta v1"}},
        {"category": "alpha", "evidence": {"note": "x"}},
        {"category": "numeral_mismatch", "evidence": {"category_name": "ignored: a taxonomy id"}},
        {"category": "zeta", "evidence": {"category_name": "Zeta v2"}},
        {"category": "zeta", "evidence": {"category_name": "  "}},
        {"category": "beta", "evidence": None},
    ]
    assert user_category_names(iter(tags)) == {"alpha": "alpha", "beta": "beta", "zeta": "Zeta v2"}


# --------------------------------------------------------------------------- evidence


def test_evidence_summary_of_stored_suggestions():
    [numeral] = detect_numeral_mismatch("最近有什么好听的歌2016", SONGS_2017)
    assert evidence_summary(numeral.to_dict()) == "query has 2016; passage has 2017"
    cases = {
        "entity_mismatch": (
            {"query": ["淘宝"], "passage": ["支付宝"], "method": "jieba_pos"},
            "query entity 淘宝 not in the passage; passage has 支付宝",
        ),
        "syntactic_mismatch": (
            {"query": ["台北", "瑞芳"], "passage": ["瑞芳", "台北"], "relation": "from-to"},
            "query: 台北 → 瑞芳; passage: 瑞芳 → 台北",
        ),
        "term_overlap": (
            {"overlap": 0.75, "shared": ["修改", "实名", "认证"], "query_terms": 4, "label": 0},
            "75% of the query terms in the passage (修改, 实名, 认证); label 0",
        ),
        "typo": (
            {"query_term": "ipone", "correction": "iphone", "distance": 1, "frequency": 50, "word": "ipone"},
            "'ipone' may be a typo of 'iphone' (used 50 times)",
        ),
        "false_negative": ({"rank": 2, "score": 1.0, "label": None}, "rank 2, unjudged"),
        "main_topic": (
            {"title": "Eiffel Tower", "terms": ["eiffel", "tower"]},
            "query terms eiffel, tower are in the title 'Eiffel Tower' but not in the passage",
        ),
        "acronym": (
            {"acronym": "ISS", "expansion": "International Space Station", "defined_in": "chunk"},
            "ISS = International Space Station (defined in chunk)",
        ),
    }
    for category, (evidence, text) in cases.items():
        assert evidence_summary({"category": category, "evidence": evidence, "spans": []}) == text, category
    assert evidence_summary({"category": "false_negative", "evidence": {"rank": 1, "label": 0}}) == "rank 1, label 0"
    assert (
        evidence_summary({"category": "false_negative", "evidence": {"rank": 1, "label": None, "answer": "2487万"}})
        == "rank 1, unjudged, contains the answer '2487万'"
    )


def test_evidence_summary_of_coreference_notes_and_unknowns():
    got = suggest(
        "when was the eiffel tower completed",
        "It was completed in 1889.",
        title="Eiffel Tower",
        earlier_chunks=["The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris."],
    )
    [coref] = [s for s in got if s.category == "coreference"]
    assert evidence_summary(coref.to_dict()) == (
        "'It' refers back to earlier passage 0: The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris."
    )
    title_only = {
        "category": "coreference",
        "evidence": {"reference": "He", "antecedent_chunk": None, "antecedent": "Bob"},
    }
    assert evidence_summary(title_only) == "'He' refers back to the title: Bob"
    assert evidence_summary({"note": "  looks outdated "}) == "note: looks outdated"
    assert evidence_summary({"note": ""}) == ""
    assert evidence_summary(None) == "" and evidence_summary({}) == ""
    unknown = {"category": "mine", "evidence": {"a": [1, 2], "b": None, "c": "x"}}
    assert evidence_summary(unknown) == "a: 1, 2; b: -; c: x"
    assert evidence_summary(unknown, "numeral_mismatch") == "query has -; passage has -"


def test_evidence_spans_clean_and_merge():
    ev = {"spans": [[5, 9], [0, 2], [1, 3], [8, 12], [3, 3], [-1, 2], [10, 99], "x", [1.0, 2], [True, 2]]}
    assert evidence_spans(ev, 20) == [(0, 3), (5, 12)]
    assert evidence_spans({"note": "n"}, 20) == [] and evidence_spans(None, 5) == []


def test_marked_html_escapes_and_windows():
    text = "<b>2017</b> it's *new*\nline"
    # escaped by pooljudge.ui.highlight.escape_text: HTML only, for st.html (no Markdown runs over it)
    assert marked_html(text, [(3, 7)]) == ("&lt;b&gt;<mark>2017</mark>&lt;/b&gt; it's *new*<br>line")
    assert "<b>" not in marked_html(text, [])
    long = "a" * 50 + "2017" + "b" * 50 + "2016" + "c" * 50
    assert marked_html(long, [(50, 54), (104, 108)], window=3) == (
        "… aaa<mark>2017</mark>bbb … bbb<mark>2016</mark>ccc …"
    )
    # windows that touch are joined; a window at the start has no leading ellipsis
    assert marked_html("2017 and 2016 x", [(0, 4), (9, 13)], window=5) == "<mark>2017</mark> and <mark>2016</mark> x"
    assert marked_html("abc", [], window=2) == "abc"
    # a trusted style for the marks, escaped as an attribute value
    assert marked_html("a-2017", [(2, 6)], style="background-color: #ffd8cc") == (
        'a-<mark style="background-color: #ffd8cc">2017</mark>'
    )
    assert marked_html("a\r\nb", []) == "a<br>b"  # every line break, as highlight writes them


def test_shorten():
    assert shorten("a  b\nc") == "a b c"
    assert shorten("x" * 10, 5) == "xxxx…"
    assert shorten(None) == "" and shorten("") == ""


# --------------------------------------------------------------------------- metric per category


PER_RUN = {
    "bm25": {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 0.0, "q5": 1.0, "all": 0.2},
    "dense": {"q1": 0.5, "q2": 1.0, "q3": 0.5, "q4": 0.0, "q5": 0.5, "all": 0.5},
}
CATEGORIES = {
    "q1": {"numeral_mismatch"},
    "q2": {"entity_mismatch", "numeral_mismatch"},
    "q3": {"coreference"},
    "q9": {"typo"},
}


def test_category_metric_rows_by_hand():
    rows = category_metric_rows(PER_RUN, CATEGORIES)
    assert rows == [
        {"run": "bm25", "category": "coreference", "mean": 0.0, "n": 1},
        {"run": "bm25", "category": "entity_mismatch", "mean": 0.0, "n": 1},
        {"run": "bm25", "category": "numeral_mismatch", "mean": 0.0, "n": 2},
        {"run": "bm25", "category": UNTAGGED, "mean": 0.5, "n": 2},
        {"run": "dense", "category": "coreference", "mean": 0.5, "n": 1},
        {"run": "dense", "category": "entity_mismatch", "mean": 1.0, "n": 1},
        {"run": "dense", "category": "numeral_mismatch", "mean": 0.75, "n": 2},
        {"run": "dense", "category": UNTAGGED, "mean": 0.25, "n": 2},
    ]


def test_category_metric_table_by_hand():
    table = category_metric_table(category_metric_rows(PER_RUN, CATEGORIES), {"coreference": "Coref"})
    assert table == [
        {"category": "coreference", "name": "Coref", "queries": 1, "bm25": 0.0, "dense": 0.5},
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
        {"category": UNTAGGED, "name": UNTAGGED_NAME, "queries": 2, "bm25": 0.5, "dense": 0.25},
    ]
    assert category_metric_table([]) == []


def test_category_metric_table_when_runs_cover_different_queries():
    # dense has no value for q3 (e.g. evaluated on the intersection): coreference is missing for it
    per_run = {"bm25": PER_RUN["bm25"], "dense": {q: v for q, v in PER_RUN["dense"].items() if q != "q3"}}
    table = {r["category"]: r for r in category_metric_table(category_metric_rows(per_run, CATEGORIES))}
    assert table["coreference"]["queries"] == 1 and table["coreference"]["bm25"] == 0.0
    assert math.isnan(table["coreference"]["dense"])
    assert (table["coreference"]["n bm25"], table["coreference"]["n dense"]) == (1, 0)
    assert (table["numeral_mismatch"]["n bm25"], table["numeral_mismatch"]["n dense"]) == (2, 2)
    assert list(table) == ["coreference", "entity_mismatch", "numeral_mismatch", UNTAGGED]
