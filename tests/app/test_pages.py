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
from pooljudge.seed import DEMO_NAME
from tests.app.apptest import open_as_admin as _open

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

REPO_PAGES = str(Path(__file__).resolve().parents[2] / "views")


def _seed(store):
    source = CollectionSource(
        passages=lambda: iter(
            [Passage("d1", "abcd", doc_id="A", position=0), Passage("d2", "abcdefgh", doc_id="A", position=1)]
        ),
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
    # relevant at the collection's level, 2 for graded labels: train's only label is a 1
    # a missing value shows as a dash, not "None" (issue 11)
    assert list(table["avg relevant passage chars"]) == ["\u2013", "4.0"]
    assert (
        "Relevant = grade ≥ 2 (the collection's level) in qrels version imported (imported, 3 judgments) "
        "(pick another on Dataset statistics). Runs: none"
    ) in [c.value for c in at.caption]
    assert list(table["avg query chars"]) == [2.0, float(len("<script>x</script>"))]


def test_empty_store_receives_the_demo(db):
    at = _open(db, f"{REPO_PAGES}/home.py", default_timeout=60)
    assert not at.exception
    assert DEMO_NAME in [h.value.replace("\\", "") for h in at.subheader]


def _finished_import(store, timeout=180):
    """The newest import job once its background worker has finished (the page only reads the job row)."""
    import time

    from db.jobs import list_jobs

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with store.read() as s:
            [job] = list_jobs(s, kind="import", limit=1)
        if job.status in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"import job {job.id} still {job.status}: {job.message}")


def _import_run_file(store, text: str, path, collection: str, *, merge: bool = False):
    """The Import page with a TREC run file at ``path`` submitted into ``collection``; waits for the job."""
    path.write_text(text, encoding="utf-8")
    at = _open(store, f"{REPO_PAGES}/import_collections.py", default_timeout=30)
    at.text_input[0].input(str(path))
    at.selectbox[0].select("trec-run")
    at.text_input[1].input(collection)
    if merge:
        at.checkbox[0].check()
    at.button[0].click().run()
    return at, _finished_import(store)


def test_import_page_reports_file_and_line(db, tmp_path):
    _seed(db)
    bad = tmp_path / "bad.run"
    at, job = _import_run_file(db, "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 two t\n", bad, "runs")
    assert not at.exception
    assert job.status == "failed"
    at.run()
    [error] = at.error
    shown = error.value.replace("\\", "")  # the page escapes markdown in untrusted text
    assert "Nothing was imported" in shown and f"{bad}:2" in shown


def test_import_page_imports_a_run(db, tmp_path):
    _seed(db)
    good = tmp_path / "good.run"
    at, job = _import_run_file(db, "q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.5 t\n", good, "tiny *collection*", merge=True)
    assert job.status == "done"
    at.run()
    assert not at.exception and not at.error
    assert "2 runs" not in at.success[0].value and "1 runs" in at.success[0].value
    history = at.dataframe[0].value
    assert list(history["format"])[:2] == ["trec-run", "test"]


def test_runs_page_lists_runs_with_their_configuration(db):
    from db.importer import save_run

    _seed(db)
    with db.write() as s:
        save_run(
            s,
            "tiny *collection*",
            "bm25:k1=1.2",
            {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 0.5}},
            params={"spec": "bm25:k1=1.2", "k": 10, "config": {"class": "BM25Retriever", "params": {"k1": 1.2}}},
        )
    at = _open(db, f"{REPO_PAGES}/runs.py", default_timeout=30)
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["run"]) == ["bm25:k1=1.2"]
    assert list(table["queries"]) == [2] and list(table["entries"]) == [3]
    assert list(table["retriever"]) == ["bm25:k1=1.2"]
    assert '"k1": 1.2' in at.json[0].value


def test_annotate_page_binary_mode_and_blindness(db):
    from sqlalchemy import select

    from db.assignments import create_assignments
    from db.models import Judgment
    from db.pools import save_pool

    _seed(db)
    with db.write() as s:
        save_pool(s, "tiny *collection*", "p", {"q1": {"d1": [], "d2": []}}, method="depth")
        ann = add_user(s, "ann", "correct horse", "annotator").id
        create_assignments(s, "tiny *collection*", "p", annotators=["ann"], per_pair=1, scale="binary")
    at = AppTest.from_file(f"{REPO_PAGES}/annotate.py", default_timeout=30)
    at.session_state["pooljudge_user_id"] = ann
    # the server-drawn item view: AppTest clicks its buttons (the browser queue has its own Chromium tests)
    at.session_state["annotate_item_view"] = "server"
    at.run()
    assert not at.exception
    labels = [b.label for b in at.button]
    assert "0 · Not relevant" in labels and "1 · Relevant" in labels and not any("Precisely" in x for x in labels)
    shown = " ".join(m.value for m in [*at.markdown, *at.html])  # texts go through st.html, escaped
    assert "&lt;script&gt;x&lt;/script&gt;" in shown and "<script>" not in shown  # the query is escaped
    assert not any(w in shown for w in ("bm25", "rank", "score"))
    next(b for b in at.button if b.label == "1 · Relevant").click().run()
    with db.read() as s:
        assert s.execute(select(Judgment.user_id, Judgment.grade)).all() == [(ann, 1)]


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
