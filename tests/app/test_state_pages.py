"""State that follows the user (issue 11, items 4 and 5): the collection, the qrels version, the page asked for.

AppTest drives the real entry point (``app.py``), so page switches go through
``st.navigation`` as in the browser: a page's widgets lose their state when
another page runs, which is what used to reset the collection.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer import import_collection
from db.models import QrelsEntry, QrelsVersion
from db.queries import collection_id
from db.version_summary import VersionSummary, version_summaries
from pooljudge.seed import DEMO_NAME
from pooljudge.ui.common import COLLECTION_STATE, MISSING, blank_missing, default_version
from tests.app.apptest import VIEWS, open_as_admin, open_tab

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def _import(store, name: str, judged: int = 4) -> None:
    """A collection with an unjudged train query, a judged test query and ``judged`` imported judgments in version
    "imported"."""
    passages = [Passage(f"d{i}", f"passage {i} of {name}", doc_id="A", position=i) for i in range(judged)]
    source = CollectionSource(
        passages=lambda: iter(passages),
        queries=lambda: iter([Query("q1", f"what is {name}", split="test"), Query("q2", "x", split="train")]),
        qrels=lambda: iter([QrelEntry("q1", p.id, 2 if i % 2 == 0 else 0) for i, p in enumerate(passages)]),
    )
    with store.write() as s:
        import_collection(s, source, name=name, format="test", location="mem")


def _freeze_later(store, collection: str, name: str, grades: dict[str, int]) -> None:
    """A newer frozen version with other judgments (as a freeze of the pool's few labels makes)."""
    with store.write() as s:
        version = QrelsVersion(collection_id=collection_id(s, collection), name=name, source="frozen")
        s.add(version)
        s.flush()
        s.add_all(QrelsEntry(version_id=version.id, query_id="q1", doc_id=d, grade=g) for d, g in grades.items())


@pytest.fixture
def two(db):
    """Collections "alpha" (listed first) and "beta"."""
    _import(db, "alpha")
    _import(db, "beta")
    return db


def _app(store) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["pooljudge_user_id"] = store.admin_id
    return at.run()


def _go(at: AppTest, view: str) -> AppTest:
    at.switch_page(str(VIEWS / view)).run()
    assert not at.exception, at.exception
    return at


@pytest.mark.slow
def test_the_collection_picked_on_one_page_holds_on_the_others(two):
    at = _app(two)
    _go(at, "runs.py")
    assert at.selectbox(key="runs_collection").value == "alpha"  # nothing picked yet: the first
    at.selectbox(key="runs_collection").select("beta").run()
    assert at.query_params["collection"] == "beta"  # the URL carries it: a reload or a link keeps it
    for view, key in (
        ("metrics.py", "metrics_collection"),
        ("errors.py", "errors_collection"),
        ("dataset_statistics.py", "stats_collection"),
        ("review.py", "review_collection"),
        ("pooling.py", "pooling_collection"),
        ("runs.py", "runs_collection"),
    ):
        _go(at, view)
        assert at.selectbox(key=key).value == "beta", view
        assert at.session_state[COLLECTION_STATE] == "beta"
        assert at.query_params["collection"] == "beta", view  # the URL shows it on every page
    _go(at, "admin.py")
    assert open_tab(at, "admin_tab", "Assignments").selectbox(key="assign_collection").value == "beta"
    assert open_tab(at, "admin_tab", "Qrels").selectbox(key="qrels_collection").value == "beta"
    at.selectbox(key="qrels_collection").select("alpha").run()  # either of the Admin page's two boxes moves it
    _go(at, "metrics.py")
    assert at.selectbox(key="metrics_collection").value == "alpha"


def test_the_url_collection_opens_the_page_there(two):
    at = AppTest.from_file(str(VIEWS / "runs.py"), default_timeout=30)
    at.session_state["pooljudge_user_id"] = two.admin_id
    at.session_state[COLLECTION_STATE] = "alpha"
    at.query_params["collection"] = "beta"  # a link wins over the session's last choice
    at.run()
    assert not at.exception
    assert at.selectbox(key="runs_collection").value == "beta"
    assert at.session_state[COLLECTION_STATE] == "beta"


@pytest.mark.parametrize("remembered, url", [("gone", None), (None, "gone"), ("gone", "also gone")])
def test_a_collection_that_no_longer_exists_falls_back_to_the_first(two, remembered, url):
    at = AppTest.from_file(str(VIEWS / "metrics.py"), default_timeout=30)
    at.session_state["pooljudge_user_id"] = two.admin_id
    if remembered:
        at.session_state[COLLECTION_STATE] = remembered
    if url:
        at.query_params["collection"] = url
    at.run()
    assert not at.exception
    assert at.selectbox(key="metrics_collection").value == "alpha"
    assert at.query_params["collection"] == "alpha"


def test_an_archived_collection_is_not_offered_and_falls_back_to_the_first(two):
    def page():
        from dataclasses import dataclass, field

        import streamlit as st

        from pooljudge.ui.common import collection_box

        @dataclass
        class Info:  # CollectionInfo with the archive flag (archived_at) the archive work adds
            name: str
            archived_at: object = field(default=None)

        info = collection_box(st, [Info("alpha"), Info("beta", archived_at="2026-11-26")], key="box")
        st.write(info.name)

    at = AppTest.from_function(page)
    at.session_state[COLLECTION_STATE] = "beta"
    at.run()
    assert not at.exception
    assert at.selectbox(key="box").options == ["alpha"] and at.markdown[0].value == "alpha"


def test_the_default_version_is_stable(two):
    with two.read() as s:
        summaries = version_summaries(s, "alpha")
    assert list(summaries) == ["imported"] and summaries["imported"].judgments == 4
    frozen = {
        "imported": summaries["imported"],
        "pool": VersionSummary("pool", "frozen", 1, summaries["imported"].created_at),
    }
    assert default_version(frozen) == "imported"  # a newer freeze does not replace the imported judgments
    assert default_version(frozen, "pool") == "pool"  # the one picked last wins
    assert default_version(frozen, "archived one") == "imported"
    only_frozen = {"a": frozen["pool"], "b": VersionSummary("b", "frozen", 9, frozen["pool"].created_at)}
    assert default_version(only_frozen) == "b"  # nothing imported: the newest
    assert default_version({}) is None


def test_statistics_name_their_version_and_a_pick_follows_to_home(two):
    _freeze_later(two, "alpha", "pool-labels", {"d1": 3})
    at = _app(two)
    caption = "Relevant = grade ≥ 2 (the collection's level) in qrels version {} (pick another on Dataset statistics)"
    home = [c.value for c in at.caption if c.value.startswith("Relevant")]
    # after the freeze Home still counts the imported judgments, and says so
    assert home[0].startswith(caption.format("imported (imported, 4 judgments)"))
    assert [list(d.value["judged pairs"]) for d in at.dataframe] == [[0, 4], [0, 4]]

    _go(at, "dataset_statistics.py")
    box = at.selectbox(key="stats_version::alpha")
    # newest first, each with where it came from and its size
    assert box.options == ["pool-labels (frozen final labels, 1 judgment)", "imported (imported, 4 judgments)"]
    assert box.value == "imported"
    per_split = next(d.value for d in at.dataframe if "judged pairs" in d.value.columns)
    assert list(per_split["judged pairs"]) == [0, 4]
    assert any(
        c.value.startswith("4 passages in the corpus; judgments from qrels version imported (imported, 4 judgments).")
        for c in at.caption
    )

    box.select("pool-labels").run()
    per_split = next(d.value for d in at.dataframe if "judged pairs" in d.value.columns)
    assert list(per_split["judged pairs"]) == [0, 1]
    assert any(
        "judgments from qrels version pool\\-labels (frozen final labels, 1 judgment)." in c.value for c in at.caption
    )

    _go(at, "home.py")  # the pick follows: Home counts the same version, and names it
    home = [c.value for c in at.caption if c.value.startswith("Relevant")]
    assert home[0].startswith(caption.format("pool\\-labels (frozen final labels, 1 judgment)"))
    assert home[1].startswith(caption.format("imported (imported, 4 judgments)"))  # beta keeps its own
    assert [list(d.value["judged pairs"]) for d in at.dataframe] == [[0, 1], [0, 4]]


def test_a_deep_link_opened_logged_out_lands_there_after_login(db):
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(str(VIEWS / "metrics.py"))  # the URL asks for /metrics
    at.query_params["collection"] = DEMO_NAME
    at.run()
    assert [t.value for t in at.title] == ["pooljudge"]  # the login screen
    at.text_input[0].input("admin")
    at.text_input[1].input("correct horse")
    at.button[0].click().run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Metrics"]
    assert at.selectbox(key="metrics_collection").value == DEMO_NAME


def test_a_deep_link_to_a_page_the_role_lacks_lands_on_the_default(db):
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(str(VIEWS / "import_collections.py"))
    at.run()
    from db.users import add_user

    with db.write() as s:
        add_user(s, "rev", "correct horse", "reviewer")
    at.text_input[0].input("rev")
    at.text_input[1].input("correct horse")
    at.button[0].click().run()
    assert not at.exception
    assert [t.value for t in at.title] == ["pooljudge"] and at.caption[0].value.startswith("Pool candidates")


def test_missing_values_show_as_a_dash():
    import pandas as pd

    frame = pd.DataFrame({"split": ["train", "test"], "chars": [None, 4.0], "n": [1, 2]})
    shown = blank_missing(frame)
    assert list(shown["chars"]) == [MISSING, "4.0"] and MISSING == "\u2013"
    assert shown["n"].dtype == frame["n"].dtype  # complete columns keep their type
    assert list(frame["chars"].isna()) == [True, False]  # the caller's frame is left alone


def test_no_table_on_the_statistics_page_shows_none(two):
    at = open_as_admin(two, VIEWS / "dataset_statistics.py")
    per_split = next(d.value for d in at.dataframe if "judged pairs" in d.value.columns)
    # train has no relevant passage: a dash; test's relevant d0 and d2 are "passage 0 of alpha" (18 characters)
    assert list(per_split["avg relevant passage chars"]) == [MISSING, "18.0"]
    assert not any(frame.value.isna().any().any() for frame in at.dataframe)


def test_an_imported_run_shows_a_dash_for_its_unknown_depth(two):
    from db.importer import save_run

    with two.write() as s:
        save_run(s, "alpha", "bm25", {"q1": {"d0": 2.0, "d1": 1.0}})
    at = open_as_admin(two, VIEWS / "runs.py")
    assert not at.exception
    runs = at.dataframe[0].value
    assert list(runs["run"]) == ["bm25"] and list(runs["hits per query"]) == [MISSING]
    assert list(runs["entries"]) == [2]  # complete columns stay numbers
