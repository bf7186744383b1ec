"""Pages rendered with streamlit's AppTest against a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from core.types import CollectionSource, Passage, QrelEntry, Query
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.users import add_user
from db.queries import iter_queries
from pooljudge.seed import DEMO_NAME
from tests.app.apptest import open_as_admin as _open

REPO_PAGES = str(Path(__file__).resolve().parents[2] / "views")


def _seed(store):
    source = CollectionSource(
        passages=lambda: iter([Passage("d1", "abcd", doc_id="A", position=0), Passage("d2", "abcdefgh", doc_id="A", position=1)]),
        queries=lambda: iter([Query("q1", "<script>x</script>", split="test"), Query("q2", "xy", split="train")]),
        qrels=lambda: iter([QrelEntry("q1", "d1", 2), QrelEntry("q1", "d2", 0), QrelEntry("q2", "d2", 1)]),
    )
    with store.write() as s:
        import_collection(s, source, name="tiny *collection*", format="test", location="mem")


def test_home_lists_collections_with_split_statistics(db):
    _seed(db)
    at = _open(db, f"{REPO_PAGES}/home.py", default_timeout=30)
    assert not at.exception
    assert [h.value for h in at.subheader] == [r"tiny \*collection\*"]
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Passages"] == "2" and metrics["Queries"] == "2" and metrics["Documents"] == "1"
    assert metrics["Avg passage chars"] == "6.0"
    table = at.dataframe[0].value
    assert list(table["split"]) == ["train", "test"]
    assert list(table["judged pairs"]) == [1, 2]
    assert list(table["avg relevant passage chars"]) == [8.0, 4.0]
    assert list(table["avg query chars"]) == [2.0, float(len("<script>x</script>"))]


def test_empty_store_receives_the_demo(db):
    at = _open(db, f"{REPO_PAGES}/home.py", default_timeout=60)
    assert not at.exception
    assert DEMO_NAME in [h.value.replace("\\", "") for h in at.subheader]


def test_import_page_reports_file_and_line(db, tmp_path):
    _seed(db)
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 two t\n", encoding="utf-8")
    at = _open(db, f"{REPO_PAGES}/collections.py", default_timeout=30)
    at.text_input[0].input(str(bad))
    at.selectbox[0].select("trec-run")
    at.text_input[1].input("runs")
    at.button[0].click().run()
    assert not at.exception
    [error] = at.error
    shown = error.value.replace("\\", "")  # the page escapes markdown in untrusted text
    assert "Nothing was imported" in shown and f"{bad}:2" in shown


def test_import_page_imports_a_run(db, tmp_path):
    _seed(db)
    good = tmp_path / "good.run"
    good.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.5 t\n", encoding="utf-8")
    at = _open(db, f"{REPO_PAGES}/collections.py", default_timeout=30)
    at.text_input[0].input(str(good))
    at.selectbox[0].select("trec-run")
    at.text_input[1].input("tiny *collection*")
    at.checkbox[0].check()
    at.button[0].click().run()
    assert not at.exception and not at.error
    assert "2 runs" not in at.success[0].value and "1 runs" in at.success[0].value
    history = at.dataframe[0].value
    assert list(history["format"])[:2] == ["trec-run", "test"]


def test_runs_page_lists_runs_with_their_configuration(db):
    from db.importer import save_run

    _seed(db)
    with db.write() as s:
        save_run(s, "tiny *collection*", "bm25:k1=1.2", {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 0.5}},
                 params={"spec": "bm25:k1=1.2", "k": 10, "config": {"class": "BM25Retriever", "params": {"k1": 1.2}}})
    at = _open(db, f"{REPO_PAGES}/runs.py", default_timeout=30)
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["run"]) == ["bm25:k1=1.2"]
    assert list(table["queries"]) == [2] and list(table["entries"]) == [3]
    assert list(table["retriever"]) == ["bm25:k1=1.2"]
    assert '"k1": 1.2' in at.json[0].value


def test_annotate_page_binary_mode_and_blindness(db):
    from sqlalchemy import select

    from db.annotation import create_assignments
    from db.models import Judgment
    from db.pools import save_pool

    _seed(db)
    with db.write() as s:
        save_pool(s, "tiny *collection*", "p", {"q1": {"d1": [], "d2": []}}, method="depth")
        ann = add_user(s, "ann", "correct horse", "annotator").id
        create_assignments(s, "tiny *collection*", "p", annotators=["ann"], per_pair=1, scale="binary")
    at = AppTest.from_file(f"{REPO_PAGES}/annotate.py", default_timeout=30)
    at.session_state["pooljudge_user_id"] = ann
    at.run()
    assert not at.exception
    labels = [b.label for b in at.button]
    assert "0 · Not relevant" in labels and "1 · Relevant" in labels and not any("Precisely" in x for x in labels)
    shown = " ".join(m.value for m in at.markdown)
    assert "&lt;script&gt;x&lt;/script&gt;" in shown and "<script>" not in shown  # the query is escaped
    assert not any(w in shown for w in ("bm25", "rank", "score"))
    next(b for b in at.button if b.label == "1 · Relevant").click().run()
    with db.read() as s:
        assert s.execute(select(Judgment.user_id, Judgment.grade)).all() == [(ann, 1)]


def test_metrics_page_equals_eval_and_follows_new_labels(db):
    from core.metrics import evaluate
    from db.annotation import create_assignments, record_judgment
    from db.importer import save_run
    from db.pools import save_pool

    _seed(db)
    run = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 3.0, "d1": 1.0}}
    with db.write() as s:
        save_run(s, "tiny *collection*", "r", run)
    at = _open(db, f"{REPO_PAGES}/metrics.py")
    assert not at.exception
    at.selectbox[1].select("imported").run()  # the imported qrels version
    table = at.dataframe[0].value
    expected = evaluate({"q1": {"d1": 2, "d2": 0}, "q2": {"d2": 1}}, run, ["MRR@10", "nDCG@10", "R@100", "MAP", "Judged@10"], level=2)
    for measure in ("MRR@10", "nDCG@10", "R@100", "MAP", "Judged@10"):
        assert table[measure].iloc[0] == round(expected[measure]["all"], 4)

    # live final labels: three annotators label (q2, d1) as 3 -> the leaderboard follows
    with db.write() as s:
        save_pool(s, "tiny *collection*", "p", {"q2": {"d1": []}}, method="depth")
        ids = [add_user(s, f"ann{i}", "correct horse", "annotator").id for i in range(3)]
        create_assignments(s, "tiny *collection*", "p", per_pair=3)
    from sqlalchemy import select

    from db.models import Assignment
    with db.write() as s:
        for uid in ids:
            aid = s.scalar(select(Assignment.id).where(Assignment.user_id == uid))
            record_judgment(s, uid, aid, 3)
    at.selectbox[1].select("live final labels").run()
    live = at.dataframe[0].value
    expected = evaluate({"q2": {"d1": 3}}, run, ["MRR@10"], level=2)
    assert live["MRR@10"].iloc[0] == round(expected["MRR@10"]["all"], 4) == 0.5


def test_first_start_asks_for_the_first_admin(tmp_path, monkeypatch):
    from sqlalchemy import select

    from db.models import User

    monkeypatch.delenv("POOLJUDGE_DB_URL", raising=False)
    monkeypatch.setenv("POOLJUDGE_DB", str(tmp_path / "fresh.db"))
    st.cache_resource.clear()
    app = str(Path(__file__).resolve().parents[2] / "app.py")
    at = AppTest.from_file(app, default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "Welcome to pooljudge"
    at.text_input[1].input("correct horse")
    at.text_input[2].input("correct horse")
    at.button[0].click().run()
    assert not at.exception
    store = Store(sqlite_url(tmp_path / "fresh.db"))
    with store.read() as s:
        users = s.execute(select(User.username, User.role)).all()
        hashes = s.scalars(select(User.password_hash)).all()
    store.dispose()
    st.cache_resource.clear()
    assert users == [("admin", "admin")] and hashes[0].startswith("$argon2id$")
    assert at.session_state["pooljudge_user_id"] == 1


def test_statistics_page_on_the_demo(db):
    from core.analysis import label_distribution, length_stats
    from db.queries import load_qrels
    from pooljudge.seed import ensure_demo

    ensure_demo(db)
    at = _open(db, f"{REPO_PAGES}/statistics.py", default_timeout=60)
    assert not at.exception
    lengths = at.dataframe[0].value
    with db.read() as s:
        queries = list(iter_queries(s, DEMO_NAME))
        qrels = load_qrels(s, DEMO_NAME)
    test_queries = [q.text for q in queries if q.split == "test"]
    row = lengths[lengths["texts"] == "queries (test)"].iloc[0]
    assert row["count"] == len(test_queries) and row["mean"] == length_stats(test_queries).mean
    bars = at.get("plotly_chart")
    assert len(bars) == 3  # lengths, labels, relevant positions
    assert sum(label_distribution(qrels).values()) == 399
