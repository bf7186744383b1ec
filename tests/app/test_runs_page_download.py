"""Runs and export: the run's TREC file is written when its download button is clicked, not on the page's run.

Writing a 20,000-entry run took about 0.4 CPU-s of the page's first run on the page-budget store (the button was
given the file's text); the button gets a function that writes it (Streamlit's deferred download).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st

import core.formats.trec
from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer import import_collection, save_run
from tests.app.apptest import open_as_admin

VIEWS = Path(__file__).resolve().parents[2] / "views"


@pytest.fixture(params=[False])
def with_run(db, request):
    qrels = [QrelEntry("q1", "d1", 1)] if request.param else []
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"text {d}") for d in ("d1", "d2")]),
        queries=lambda: iter([Query("q1", "a query"), Query("q2", "another")]),
        qrels=lambda: iter(qrels),
    )
    with db.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_run(s, "c", "bm25 k1", {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"d2": 0.5}})
    return db


def test_the_run_file_is_written_on_the_click_only(with_run, monkeypatch):
    written = []
    real = core.formats.trec.write_run

    def counted(*args, **kwargs):
        written.append(kwargs.get("tag"))
        return real(*args, **kwargs)

    buttons = {}
    real_button = st.download_button

    def spy(label, data, *args, **kwargs):
        buttons[label] = (data, kwargs.get("file_name"))
        return real_button(label, data, *args, **kwargs)

    monkeypatch.setattr(core.formats.trec, "write_run", counted)
    monkeypatch.setattr(st, "download_button", spy)
    at = open_as_admin(with_run, VIEWS / "runs.py")
    assert not at.exception
    assert written == []
    data, name = buttons["Download run (TREC)"]
    assert name == "bm25 k1.trec"
    assert data().splitlines() == [
        "q1 Q0 d1 1 2.0 bm25_k1",
        "q1 Q0 d2 2 1.0 bm25_k1",
        "q2 Q0 d2 1 0.5 bm25_k1",
    ]
    assert written == ["bm25_k1"]


@pytest.mark.parametrize("with_run", [True], indirect=True)  # with qrels: the qrels button too
def test_a_click_on_a_download_button_does_not_rerun_the_page(with_run):
    """The browser asks for a deferred file after the click's rerun has started: that rerun registers the button's
    function under a new id and drops the old one, so under load the request could name an id already gone, and
    no file came (seen in the browser test of this page on a loaded machine).  A download needs no rerun."""
    at = open_as_admin(with_run, VIEWS / "runs.py")
    assert not at.exception
    buttons = {b.proto.label: b.proto for b in at.get("download_button")}
    assert set(buttons) == {"Download run (TREC)", "Download qrels (TREC)"}
    assert all(proto.ignore_rerun for proto in buttons.values())


def test_every_page_downloads_through_the_helper_that_does_not_rerun():
    """A page that called ``st.download_button`` itself would bring the lost deferred download back."""
    direct = [p.name for p in sorted(VIEWS.glob("*.py")) if "st.download_button(" in p.read_text(encoding="utf-8")]
    assert direct == []
    assert all(
        "download_button(" in (VIEWS / p).read_text(encoding="utf-8") for p in ("runs.py", "dataset_statistics.py")
    )
