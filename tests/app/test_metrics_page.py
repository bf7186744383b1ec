"""The Metrics page under AppTest: leaderboard, per-query drill-down, run comparison, qrels versions, groups."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import streamlit as st
from scipy import stats

from core.analysis import compare_qrels_versions, compare_runs
from core.metrics import DEFAULT_MEASURES, evaluate
from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer import import_collection, save_run
from db.users import add_user
from tests.app.apptest import VIEWS, admin_seeded_file, open_as_admin, open_as_new_account, page_store

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

NAME = "tiny *collection*"
PAGE = VIEWS / "metrics.py"
MEASURES = list(DEFAULT_MEASURES)  # the page's default selection (tests/test_default_measures.py spells it out)

PASSAGES = [
    Passage("d1", "The tower was built in 1889.", title="Eiffel"),
    Passage("d2", "<b>bold</b> **not markdown** [link](http://x)"),
    Passage("d3", "Completed for the World's Fair."),
    Passage("d4", "Fahrenheit minus 32, times 5/9."),
    Passage("d5", "Celsius is a temperature scale."),
    Passage("d6", "长城全长两万多公里。"),
]
QUERIES = [
    Query("q1", "When was the Eiffel Tower built?", split="test", type="ENTITY", domain="travel"),
    Query("q2", "How to convert *F* to C?", split="test", type="DESCRIPTION", domain="science"),
    Query("q3", "长城有多长？", split="dev", type="ENTITY", domain="history"),
    Query("q4", "An untyped training query", split="train"),
]
IMPORTED = {"q1": {"d1": 3, "d2": 0, "d3": 2}, "q2": {"d4": 2, "d5": 1}, "q3": {"d6": 2, "d1": 0}, "q4": {"d2": 2}}
# after relabelling two false negatives: (q1, d4) and (q2, d6)
RELABELLED = {
    "q1": {**IMPORTED["q1"], "d4": 2},
    "q2": {**IMPORTED["q2"], "d6": 2},
    "q3": IMPORTED["q3"],
    "q4": IMPORTED["q4"],
}
BM25 = {
    "q1": {"d2": 0.9, "d1": 0.8, "d4": 0.7, "d5": 0.6},
    "q2": {"d4": 0.9, "d5": 0.5},
    "q3": {"d1": 0.9, "d6": 0.1},
    "q4": {"d3": 1.0},
}
DENSE = {"q1": {"d1": 0.9, "d3": 0.8}, "q2": {"d5": 0.9, "d6": 0.8, "d4": 0.7}, "q3": {"d6": 0.9}, "q4": {"d2": 0.5}}


def _qrels_source(qrels):
    return lambda: iter([QrelEntry(q, d, g) for q, docs in qrels.items() for d, g in docs.items()])


@pytest.fixture(autouse=True)
def _fresh_data_cache():
    # the page caches runs and analyses by collection/run name: every test's store is new
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def _seed(db):
    """The collection, imported with two qrels versions and two runs."""
    with db.write() as s:
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter(PASSAGES), queries=lambda: iter(QUERIES), qrels=_qrels_source(IMPORTED)
            ),
            name=NAME,
            format="test",
            location="mem",
        )
        import_collection(
            s,
            CollectionSource(passages=lambda: iter(()), queries=lambda: iter(()), qrels=_qrels_source(RELABELLED)),
            name=NAME,
            format="test",
            location="mem",
            mode="merge",
            qrels_name="relabelled",
        )
        save_run(s, NAME, "bm25", BM25)
        save_run(s, NAME, "dense", DENSE)


@pytest.fixture(scope="module")
def seeded_file(sqlite_template, tmp_path_factory) -> tuple[Path, int]:
    """A store with the admin and :func:`_seed`'s collection, built once for the module: ``(file, admin id)``."""
    return admin_seeded_file(sqlite_template, tmp_path_factory.mktemp("metrics-page"), _seed)


@pytest.fixture
def seeded(seeded_file, tmp_path, monkeypatch):
    """A store of the test's own holding the admin and the collection (a copy of :func:`seeded_file`'s)."""
    yield from page_store(seeded_file, tmp_path, monkeypatch)


def _open_on(db, source="imported"):
    at = open_as_admin(db, PAGE)
    assert not at.exception
    at.selectbox[1].select(source).run()  # the Qrels selectbox above the tabs
    assert not at.exception
    return at


def _tab(at, label):
    """The tab ``label``, opened first: only the open tab's code runs."""
    at.session_state["metrics_tab"] = label
    at.run()
    assert not at.exception
    return next(t for t in at.tabs if t.label == label)


def test_tabs_and_live_default_without_labels(seeded):
    at = open_as_admin(seeded, PAGE)
    assert not at.exception
    assert [t.label for t in at.tabs] == ["Leaderboard", "Per query", "Compare runs", "Qrels versions", "Groups"]
    # nobody has labelled yet: the page opens on the newest qrels version, not on empty live labels
    assert at.selectbox[1].value == "relabelled"
    assert not _tab(at, "Leaderboard").warning and len(_tab(at, "Leaderboard").dataframe) == 1
    at.selectbox[1].select("live final labels").run()
    # the live labels are empty: the tabs that need them say so, the qrels versions still compare
    for label in ("Leaderboard", "Per query", "Compare runs", "Groups"):
        tab = _tab(at, label)
        assert [w.value for w in tab.warning] == ["No judgments in this qrels source yet."] and not tab.dataframe
    versions = _tab(at, "Qrels versions")
    assert not versions.warning and len(versions.dataframe) == 1


def test_only_the_open_tab_runs_and_a_tabs_choices_survive_another_tab(seeded):
    at = _open_on(seeded)
    # the first run opens the Leaderboard: no other tab has drawn anything
    assert [len(t.dataframe) for t in at.tabs] == [1, 0, 0, 0, 0]
    tab = _tab(at, "Compare runs")
    assert [len(t.dataframe) for t in at.tabs] == [0, 0, len(tab.dataframe), 0, 0] and len(tab.dataframe) == 4
    at.selectbox(key="compare_a").select("dense")
    at.selectbox(key="compare_b").select("bm25").run()
    assert len(_tab(at, "Groups").dataframe) == 1 and [len(t.dataframe) for t in at.tabs][:4] == [0, 0, 0, 0]
    _tab(at, "Compare runs")  # back: the runs chosen before are still chosen
    assert (at.selectbox(key="compare_a").value, at.selectbox(key="compare_b").value) == ("dense", "bm25")
    assert "A = dense, B = bm25" in " ".join(c.value for c in _tab(at, "Compare runs").caption)


def test_leaderboard_equals_eval(seeded):
    at = _open_on(seeded)
    board = _tab(at, "Leaderboard").dataframe[0].value
    assert list(board["run"]) == ["dense", "bm25"]  # sorted by MRR@10, the first measure
    for name, run in (("bm25", BM25), ("dense", DENSE)):
        expected = evaluate(IMPORTED, run, MEASURES, level=2)
        row = board[board["run"] == name].iloc[0]
        for m in MEASURES:
            assert row[m] == round(expected[m]["all"], 4)
    assert board[board["run"] == "bm25"]["MRR@10"].iloc[0] == 0.5  # (1/2 + 1 + 1/2 + 0) / 4


def test_per_query_drill_down_shows_the_ranking_labels_and_missed_relevant(seeded):
    at = _open_on(seeded)
    tab = _tab(at, "Per query")
    per_query = tab.dataframe[0].value
    assert list(per_query["query"]) == ["q1", "q2", "q3", "q4"]
    assert list(per_query["MRR@10"]) == [0.5, 1.0, 0.5, 0.0]  # bm25, the first run, at level 2
    assert per_query["text"].iloc[1] == "How to convert *F* to C?"

    at.selectbox(key="per_query_run").select("bm25")
    at.selectbox(key="per_query_query").select("q1")
    at.number_input(key="per_query_k").set_value(3).run()
    assert not at.exception
    tab = _tab(at, "Per query")
    top = tab.dataframe[1].value
    assert list(top["rank"]) == [1, 2, 3]
    assert list(top["doc id"]) == ["d2", "d1", "d4"]
    assert list(top["label"]) == ["0", "3", "unjudged"]
    assert list(top["score"]) == [0.9, 0.8, 0.7]
    assert top["passage"].iloc[0] == PASSAGES[1].text  # raw text in a dataframe cell, never markdown
    assert top["passage"].iloc[1] == "Eiffel | The tower was built in 1889."
    missed = tab.dataframe[2].value
    assert list(missed["doc id"]) == ["d3"] and list(missed["label"]) == ["2"]
    assert list(missed["rank"]) == ["not retrieved"]
    shown = " ".join(h.value for h in tab.html)  # the query is shown verbatim through st.html
    assert "<b>q1</b> · When was the Eiffel Tower built?</div>" in shown

    # q2 of dense: d4 (grade 2) is at rank 3, outside a top 2
    at.selectbox(key="per_query_run").select("dense")
    at.selectbox(key="per_query_query").select("q2")
    at.number_input(key="per_query_k").set_value(2).run()
    tab = _tab(at, "Per query")
    assert list(tab.dataframe[1].value["doc id"]) == ["d5", "d6"]
    assert list(tab.dataframe[1].value["label"]) == ["1", "unjudged"]
    missed = tab.dataframe[2].value
    assert list(missed["doc id"]) == ["d4"] and list(missed["rank"]) == ["3"] and list(missed["score"]) == [0.7]
    assert "<b>q2</b> · How to convert *F* to C?</div>" in " ".join(h.value for h in tab.html)  # no Markdown runs


def test_compare_runs_table_equals_compare_runs_and_scipy(seeded):
    at = _open_on(seeded)
    _tab(at, "Compare runs")
    at.selectbox(key="compare_a").select("bm25")
    at.selectbox(key="compare_b").select("dense").run()
    assert not at.exception
    tab = _tab(at, "Compare runs")
    table = tab.dataframe[0].value.set_index("measure")
    assert list(table.index) == MEASURES

    mrr = table.loc["MRR@10"]
    assert mrr["A"] == 0.5 and mrr["B"] == pytest.approx((1 + 1 / 3 + 1 + 1) / 4)
    assert mrr["delta (B - A)"] == pytest.approx(1 / 3)
    assert (mrr["wins"], mrr["losses"], mrr["ties"]) == (3, 1, 0)  # q1, q3, q4 better; q2 worse

    a_values = evaluate(IMPORTED, BM25, MEASURES, level=2)
    b_values = evaluate(IMPORTED, DENSE, MEASURES, level=2)
    expected = compare_runs(IMPORTED, BM25, DENSE, MEASURES, level=2, n_resamples=9999, seed=0)
    for m in MEASURES:
        row = table.loc[m]
        assert row["A"] == expected[m].a == a_values[m]["all"]
        assert row["B"] == expected[m].b == b_values[m]["all"]
        assert row["delta (B - A)"] == expected[m].delta
        assert (row["wins"], row["losses"], row["ties"]) == (expected[m].wins, expected[m].losses, expected[m].ties)
        assert row["randomisation p"] == expected[m].randomization.p_value
        qids = sorted(IMPORTED)
        xa = [a_values[m][q] for q in qids]
        xb = [b_values[m][q] for q in qids]
        if any(x != y for x, y in zip(xa, xb)) and len({y - x for x, y in zip(xa, xb)}) > 1:
            assert row["t-test p"] == pytest.approx(stats.ttest_rel(xb, xa).pvalue, rel=1e-12)
    mrr_a = [a_values["MRR@10"][q] for q in sorted(IMPORTED)]
    mrr_b = [b_values["MRR@10"][q] for q in sorted(IMPORTED)]
    assert mrr_b == pytest.approx([1.0, 1 / 3, 1.0, 1.0]) and mrr_a == [0.5, 1.0, 0.5, 0.0]
    assert table.loc["MRR@10", "t-test p"] == pytest.approx(stats.ttest_rel(mrr_b, mrr_a).pvalue, rel=1e-12)
    # 4 queries: the randomisation test is exact over the 16 sign patterns; MRR@10 deltas are
    # +1/2 (q1), -2/3 (q2), +1/2 (q3), +1 (q4), sum 4/3 of |d| total 8/3: a pattern reaches sum >= 4/3
    # when the |d| it makes negative add up to <= 2/3, i.e. none, one 1/2 (twice) or the 2/3: 4 of 16
    assert table.loc["MRR@10", "randomisation p"] == pytest.approx(2 * 4 / 16)

    # per-query deltas of MRR@10: chart sorted ascending, table by |delta| descending
    chart = tab.get("plotly_chart")[0]
    assert "MRR@10: B - A per query" in chart.proto.spec
    at.selectbox(key="compare_measure").select("MRR@10").run()
    tab = _tab(at, "Compare runs")
    differing = tab.dataframe[1].value
    assert list(differing["query"]) == ["q4", "q2", "q1", "q3"]
    assert list(differing["delta"]) == pytest.approx([1.0, -2 / 3, 0.5, 0.5])

    # side by side top k of the chosen query
    at.selectbox(key="compare_query").select("q2")
    at.number_input(key="compare_k").set_value(3).run()
    tab = _tab(at, "Compare runs")
    left, right = tab.dataframe[2].value, tab.dataframe[3].value
    assert list(left["doc id"]) == ["d4", "d5"] and list(left["label"]) == ["2", "1"]
    assert list(right["doc id"]) == ["d5", "d6", "d4"] and list(right["label"]) == ["1", "unjudged", "2"]
    assert "score" not in left.columns


def test_compare_needs_two_different_runs(seeded):
    at = _open_on(seeded)
    _tab(at, "Compare runs")
    at.selectbox(key="compare_b").select("bm25").run()
    assert any("two different runs" in w.value for w in _tab(at, "Compare runs").warning)


def test_qrels_versions_table_equals_hand_computed_values(seeded):
    at = _open_on(seeded)
    _tab(at, "Qrels versions")
    assert at.selectbox(key="versions_a").value == "imported"  # the oldest version
    assert at.selectbox(key="versions_b").value == "relabelled"  # the newest
    tab = _tab(at, "Qrels versions")
    table = tab.dataframe[0].value.set_index(["run", "measure"])
    # R@100 at level 2, by hand: bm25 (1/2 + 1 + 1 + 0)/4 -> (2/3 + 1/2 + 1 + 0)/4; dense 1 -> (2/3 + 1 + 1 + 1)/4
    assert table.loc[("bm25", "R@100"), "A"] == pytest.approx(0.625)
    assert table.loc[("bm25", "R@100"), "B"] == pytest.approx((2 / 3 + 0.5 + 1) / 4)
    assert table.loc[("dense", "R@100"), "A"] == pytest.approx(1.0)
    assert table.loc[("dense", "R@100"), "B"] == pytest.approx((2 / 3 + 3) / 4)
    assert table.loc[("dense", "R@100"), "delta (B - A)"] == pytest.approx((2 / 3 + 3) / 4 - 1)
    # MRR@10: dense finds d6 (now relevant) at rank 2 of q2 instead of d4 at rank 3
    assert table.loc[("dense", "MRR@10"), "B"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    assert table.loc[("bm25", "MRR@10"), "delta (B - A)"] == 0.0
    expected = compare_qrels_versions({"bm25": BM25, "dense": DENSE}, IMPORTED, RELABELLED, MEASURES, 2)
    assert len(table) == 2 * len(MEASURES)
    for (run, m), row in table.iterrows():
        assert (row["A"], row["B"], row["delta (B - A)"]) == tuple(expected[run][m])
    assert len(tab.get("plotly_chart")) == 1

    # live (empty) against a version: said, not crashed
    at.selectbox(key="versions_b").select("live final labels").run()
    assert not at.exception
    assert any("holds no judgments" in w.value for w in _tab(at, "Qrels versions").warning)


def test_groups_table_equals_hand_computed_split_means(seeded):
    at = _open_on(seeded)
    tab = _tab(at, "Groups")
    table = tab.dataframe[0].value
    # MRR@10 at level 2 per query: bm25 q1 1/2, q2 1, q3 1/2, q4 0; dense q1 1, q2 1/3, q3 1, q4 1
    rows = {(r["run"], r["split"]): r for _, r in table.iterrows()}
    assert list(table["split"]) == ["train", "dev", "test", "train", "dev", "test"]  # the usual order, not alphabetical
    assert rows[("bm25", "test")]["n"] == 2 and rows[("bm25", "test")]["MRR@10"] == 0.75
    assert rows[("bm25", "dev")]["MRR@10"] == 0.5 and rows[("bm25", "train")]["MRR@10"] == 0.0
    assert rows[("dense", "test")]["MRR@10"] == pytest.approx((1 + 1 / 3) / 2)
    assert rows[("dense", "dev")]["n"] == 1 and rows[("dense", "train")]["MRR@10"] == 1.0
    r100 = evaluate(IMPORTED, BM25, ["R@100"], level=2)["R@100"]
    assert rows[("bm25", "test")]["R@100"] == math.fsum([r100["q1"], r100["q2"]]) / 2
    assert len(tab.get("plotly_chart")) == 1

    at.selectbox(key="groups_by").select("type")
    at.multiselect(key="groups_runs").set_value(["bm25"]).run()
    table = _tab(at, "Groups").dataframe[0].value
    assert list(table["type"]) == ["DESCRIPTION", "ENTITY", "unknown"]  # q4 has no type
    assert list(table["n"]) == [1, 2, 1]
    assert list(table["MRR@10"]) == [1.0, 0.5, 0.0]

    at.selectbox(key="groups_by").select("language").run()
    table = _tab(at, "Groups").dataframe[0].value
    assert list(table["language"]) == ["en", "zh"] and list(table["n"]) == [3, 1]


def test_metrics_page_equals_eval_and_follows_new_labels(db):
    from sqlalchemy import select

    from db.assignments import create_assignments
    from db.labelling import record_judgment
    from db.models import Assignment
    from db.pools import save_pool

    with db.write() as s:  # the collection of tests/app/test_pages.py's _seed
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter(
                    [Passage("d1", "abcd", doc_id="A", position=0), Passage("d2", "abcdefgh", doc_id="A", position=1)]
                ),
                queries=lambda: iter(
                    [Query("q1", "<script>x</script>", split="test"), Query("q2", "xy", split="train")]
                ),
                qrels=_qrels_source({"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 1}}),
            ),
            name="tiny *collection*",
            format="test",
            location="mem",
        )
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 3.0, "d1": 1.0}}
    with db.write() as s:
        save_run(s, "tiny *collection*", "r", run)
    at = open_as_admin(db, PAGE)
    assert not at.exception
    at.selectbox[1].select("imported").run()  # the imported qrels version
    table = at.dataframe[0].value
    expected = evaluate({"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 1}}, run, MEASURES, level=2)
    for measure in MEASURES:
        assert table[measure].iloc[0] == round(expected[measure]["all"], 4)

    # live final labels: three annotators label (q2, d1) as 3 -> the leaderboard follows
    with db.write() as s:
        save_pool(s, "tiny *collection*", "p", {"q2": {"d1": []}}, method="depth")
        ids = [add_user(s, f"ann{i}", "correct horse", "annotator").id for i in range(3)]
        create_assignments(s, "tiny *collection*", "p", per_pair=3)
    with db.write() as s:
        for uid in ids:
            aid = s.scalar(select(Assignment.id).where(Assignment.user_id == uid))
            record_judgment(s, uid, aid, 3)
    at.selectbox[1].select("live final labels").run()
    live = at.dataframe[0].value
    expected = evaluate({"q2": {"d1": 3}}, run, ["MRR@10"], level=2)
    assert live["MRR@10"].iloc[0] == round(expected["MRR@10"]["all"], 4) == 0.5


# ---------------------------------------------------------------------------- the collection's relevance level

SHARED_MEASURES = ["MAP", "MRR@10", "nDCG@10", "R@100"]  # shown by default on the page and by `pooljudge eval`


def _eval_cli(db, collection, run, capsys, *extra):
    """``pooljudge eval -c COLLECTION latest RUN`` with no option: {measure: printed mean}, and its stderr."""
    from pooljudge.cli import main

    capsys.readouterr()
    assert main(["--db", db.url, "eval", "-c", collection, "latest", run, *extra]) == 0
    out, err = capsys.readouterr()
    return {
        m: v for m, q, v in (line.split("\t") for line in out.splitlines()) if q == "all" and m in SHARED_MEASURES
    }, err


def _page_means(at):
    board = _tab(at, "Leaderboard").dataframe[0].value
    return {
        name: {m: f"{board[board['run'] == name][m].iloc[0]:.4f}" for m in SHARED_MEASURES}
        for name in ("bm25", "dense")
    }


@pytest.fixture
def two_levels(seeded):
    from db.queries import set_relevance_level

    with seeded.write() as s:  # the newest labels and the runs in a collection whose level is 1
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter(PASSAGES), queries=lambda: iter(QUERIES), qrels=_qrels_source(RELABELLED)
            ),
            name="binary",
            format="test",
            location="mem",
        )
        save_run(s, "binary", "bm25", BM25)
        save_run(s, "binary", "dense", DENSE)
        set_relevance_level(s, "binary", 1)
        set_relevance_level(s, NAME, 2)
    return seeded


def test_metrics_page_and_eval_print_the_same_numbers_at_the_collections_level(two_levels, capsys):
    db = two_levels
    at = open_as_admin(db, PAGE)  # no option touched: the first collection ("binary", sorted by name)
    assert not at.exception
    assert at.selectbox[0].value == "binary" and at.selectbox[1].value == "imported"
    assert at.number_input(key="metrics_level").value == 1
    assert "Binary measures count grade ≥ 1 as relevant (the collection's level); nDCG uses the graded labels." in [
        c.value for c in at.caption
    ]
    at_level = {}
    for index, (name, level) in enumerate([("binary", 1), (NAME, 2)]):
        if index:
            at.selectbox[0].select_index(index).run()
            assert not at.exception and at.selectbox[1].value == "relabelled"  # the newest version, as eval's latest
        assert at.number_input(key="metrics_level").value == level
        page = _page_means(at)
        for run in ("bm25", "dense"):
            printed, note = _eval_cli(db, name, run, capsys)
            assert printed == page[run]
            assert note == f"binary measures count grade >= {level} as relevant (the collection's level)\n"
            expected = evaluate(RELABELLED, {"bm25": BM25, "dense": DENSE}[run], SHARED_MEASURES, level=level)
            assert printed == {m: f"{expected[m]['all']:.4f}" for m in SHARED_MEASURES}
        at_level[level] = page
    # the same labels, two levels, two MAPs: d5 of q2 (grade 1) is relevant only at level 1
    assert (at_level[1]["bm25"]["MAP"], at_level[2]["bm25"]["MAP"]) == ("0.3889", "0.3472")
    assert (at_level[1]["dense"]["MAP"], at_level[2]["dense"]["MAP"]) == ("0.9167", "0.8125")
    assert at_level[1]["bm25"]["nDCG@10"] == at_level[2]["bm25"]["nDCG@10"] == "0.4700"  # nDCG ignores the level


def test_an_admin_changes_the_collections_level_on_the_metrics_page(two_levels, capsys):
    from db.queries import relevance_level

    db = two_levels
    at = open_as_admin(db, PAGE)
    assert not at.button  # the shown level is the collection's: nothing to save
    at.number_input(key="metrics_level").set_value(2).run()
    assert (
        "Binary measures count grade ≥ 2 as relevant (the collection's level is 1); nDCG uses the graded labels."
        in [c.value for c in at.caption]
    )
    assert _page_means(at)["bm25"]["MAP"] == "0.3472"  # a view at level 2; the collection keeps 1
    with db.read() as s:
        assert relevance_level(s, "binary") == 1
    assert _eval_cli(db, "binary", "bm25", capsys)[0]["MAP"] == "0.3889"
    [save] = at.button
    assert save.label == "Make 2 the collection's level"
    save.click().run()
    assert not at.exception
    assert [s.value for s in at.success] == ["The collection's relevance level is now 2."]
    with db.read() as s:
        assert relevance_level(s, "binary") == 2
    assert at.number_input(key="metrics_level").value == 2 and not at.button
    assert _eval_cli(db, "binary", "bm25", capsys)[0]["MAP"] == "0.3472" == _page_means(at)["bm25"]["MAP"]


def test_a_reviewer_sees_the_level_but_cannot_change_the_collections(two_levels):
    at = open_as_new_account(two_levels, PAGE, "rev", "reviewer")
    at.number_input(key="metrics_level").set_value(3).run()
    assert not at.exception and not at.button
    assert (
        "Binary measures count grade ≥ 3 as relevant (the collection's level is 1); nDCG uses the graded labels."
        in [c.value for c in at.caption]
    )
    # another collection starts at its own level, and coming back at this one's again
    at.selectbox[0].select(NAME).run()
    assert at.number_input(key="metrics_level").value == 2
    at.selectbox[0].select("binary").run()
    assert at.number_input(key="metrics_level").value == 1


# ---------------------------------------------------------------------------- chart labels

ODD_RUN = 'say "hi" <i>&amp;</i>'


def _chart(at, title):
    import json

    [spec] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if title in c.proto.spec]
    return spec


def test_chart_labels_show_the_stored_text(db):
    # plotly draws <b> bold and decodes &amp;: the page hands it &lt;b&gt; (drawn as <b>) and leaves quotes alone
    queries = [
        Query("<b>q1</b>", "one", split="test", domain="<b>dom</b>"),
        Query('q"2"&', "two", split="test", domain='say "hi"'),
    ]
    qrels = {"<b>q1</b>": {"d1": 2}, 'q"2"&': {"d2": 2}}
    with db.write() as s:
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter(PASSAGES[:2]), queries=lambda: iter(queries), qrels=_qrels_source(qrels)
            ),
            name="odd",
            format="test",
            location="mem",
        )
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter(()), queries=lambda: iter(()), qrels=_qrels_source({**qrels, 'q"2"&': {"d2": 0}})
            ),
            name="odd",
            format="test",
            location="mem",
            mode="merge",
            qrels_name="<v> & w",
        )
        save_run(s, "odd", "plain", {"<b>q1</b>": {"d1": 1.0}, 'q"2"&': {"d1": 1.0, "d2": 0.5}})
        save_run(s, "odd", ODD_RUN, {"<b>q1</b>": {"d2": 1.0, "d1": 0.5}, 'q"2"&': {"d2": 1.0}})
    at = _open_on(db, "imported")
    escaped_run = 'say "hi" &lt;i&gt;&amp;amp;&lt;/i&gt;'

    _tab(at, "Groups")
    at.selectbox(key="groups_by").select("domain").run()
    assert not at.exception
    groups = _chart(at, "MRR@10 per domain")
    assert {(t["name"], x) for t in groups["data"] for x in t["x"]} == {
        (run, domain) for run in ("plain", escaped_run) for domain in ("&lt;b&gt;dom&lt;/b&gt;", 'say "hi"')
    }
    assert groups["layout"]["xaxis"]["type"] == "category"
    assert set(_tab(at, "Groups").dataframe[0].value["domain"]) == {"<b>dom</b>", 'say "hi"'}  # the table: raw

    _tab(at, "Compare runs")
    at.selectbox(key="compare_a").select("plain")
    at.selectbox(key="compare_b").select(ODD_RUN).run()
    compare = _chart(at, "MRR@10: B - A per query")
    # sorted by delta: q"2"& gains (1/2 -> 1), <b>q1</b> loses (1 -> 1/2)
    assert [x for t in compare["data"] for x in t["x"]] == ["&lt;b&gt;q1&lt;/b&gt;", 'q"2"&amp;']
    assert compare["layout"]["xaxis"]["categoryarray"] == ["&lt;b&gt;q1&lt;/b&gt;", 'q"2"&amp;']
    assert compare["layout"]["xaxis"]["type"] == "category"

    _tab(at, "Qrels versions")
    at.selectbox(key="versions_b").select("<v> & w").run()
    versions = _chart(at, "under both versions")
    assert {t["name"] for t in versions["data"]} == {"A: imported", "B: &lt;v&gt; &amp; w"}
    assert {x for t in versions["data"] for x in t["x"]} == {"plain", escaped_run}
    assert not any("&quot;" in c.proto.spec for c in at.get("plotly_chart"))


# ---------------------------------------------------------------------------- the live leaderboard's refresh


@pytest.mark.parametrize(
    ("configured", "label", "warning"),
    [
        (None, "Refresh every 10 s", None),
        ("3", "Refresh every 3 s", None),
        ("2.5", "Refresh every 2.5 s", None),
        ("0", "Refresh every 10 s", "`POOLJUDGE_LIVE_REFRESH_SECONDS='0'` is not a number of seconds above 0"),
        ("soon", "Refresh every 10 s", "`POOLJUDGE_LIVE_REFRESH_SECONDS='soon'` is not a number of seconds above 0"),
    ],
)
def test_the_live_leaderboard_refreshes_as_often_as_the_server_is_told(seeded, monkeypatch, configured, label, warning):
    """A team sets how often open Metrics pages follow new labels (a busy server less often, a demo more)."""
    if configured is None:
        monkeypatch.delenv("POOLJUDGE_LIVE_REFRESH_SECONDS", raising=False)
    else:
        monkeypatch.setenv("POOLJUDGE_LIVE_REFRESH_SECONDS", configured)
    at = _open_on(seeded, "live final labels")
    assert at.toggle(key="leaderboard_refresh").label == label
    warnings = [w.value for w in at.warning if "REFRESH" in w.value]
    assert [w.split(":")[0] for w in warnings] == ([] if warning is None else [warning])
