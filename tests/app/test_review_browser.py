"""Acceptance (issue 11): Review at scale and the per-query ranked-list view in the browser.

A reviewer filters the pairs table (search and state), then opens the ranked-list view of a query ordered by a
run's ranking and sets a final label there; screenshots ``test-artifacts/review_filters.png`` and
``test-artifacts/ranked_list.png`` are checked for what they must show.  Setup that is not the point goes
through the library.
"""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from sqlalchemy import select

from core.types import CollectionSource, Passage, Query, RunEntry
from db.annotation import create_assignments, record_judgment
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.models import Assignment, FinalLabel, LabelOverride, QueryRecord
from db.models import Passage as PassageRow
from db.pools import save_pool
from db.users import add_user
from tests.app.conftest import PASSWORD, login, open_page, screenshot, serve_app

pytestmark = pytest.mark.browser

QUERIES = {"q1": "how tall is the <b>Eiffel</b> tower", "q2": "best croissant in Paris"}
PASSAGES = {
    "d0": ("q1", "The Eiffel Tower is 330 metres tall."),
    "d1": ("q1", "Paris lies on the Seine <i>river</i>."),
    "d2": ("q1", "The tower's height changed with its antennas."),
    "d3": ("q2", "Croissants are best eaten warm."),
    "d4": ("q2", "A bakery near the Louvre sells croissants."),
}
BM25 = {"q1": {"d2": 9.0, "d0": 7.5, "d1": 1.0}, "q2": {"d3": 4.0, "d4": 3.0}}
LABELS = {"d0": (3, 3, 3), "d1": (0, 1, 2), "d2": (2, 2, 1), "d3": (1, 1, 0)}  # d1 split, d4 unlabelled


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("review_scale")
    db = folder / "pooljudge.db"
    store = Store(sqlite_url(db))
    source = CollectionSource(
        passages=lambda: iter([Passage(d, t, title="") for d, (_q, t) in PASSAGES.items()]),
        queries=lambda: iter([Query(q, t) for q, t in QUERIES.items()]),
        qrels=lambda: iter(()),
        runs={"bm25": lambda: iter([RunEntry(q, d, s) for q, docs in BM25.items() for d, s in docs.items()])},
    )
    with store.write() as s:
        import_collection(s, source, name="tower", format="t", location="m")
        save_pool(
            s,
            "tower",
            "p",
            {q: {d: [] for d, (qq, _t) in PASSAGES.items() if qq == q} for q in QUERIES},
            method="depth",
        )
        ids = {
            n: add_user(s, n, PASSWORD, r).id
            for n, r in (("rev1", "reviewer"), ("ann1", "annotator"), ("ann2", "annotator"), ("ann3", "annotator"))
        }
        create_assignments(s, "tower", "p", annotators=["ann1", "ann2", "ann3"], seed=3, package_size=10)
    for doc, grades in LABELS.items():
        for name, grade in zip(("ann1", "ann2", "ann3"), grades):
            with store.write() as s:
                pid = s.scalar(select(PassageRow.id).where(PassageRow.ext_id == doc))
                aid = s.scalar(
                    select(Assignment.id).where(Assignment.user_id == ids[name], Assignment.passage_id == pid)
                )
                record_judgment(s, ids[name], aid, grade)
    env = {**os.environ, "POOLJUDGE_DB": str(db)}
    env.pop("POOLJUDGE_DB_URL", None)
    with serve_app(env, folder / "streamlit.log") as url:
        yield {"url": url, "store": store}
    store.dispose()


def _panel(page):
    return page.locator('[data-testid="stTabs"] [role="tabpanel"]:visible').first


def _pick(page, combobox, option: str) -> None:
    """Open a selectbox and click ``option``; a click that lands during a rerun can leave the list closed."""
    for attempt in range(3):
        _idle(page)
        combobox.click()
        try:
            page.get_by_role("option", name=option, exact=True).click(timeout=10_000 if attempt < 2 else 30_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")


def _choose(page, label: str, option: str) -> None:
    _pick(page, page.locator('[data-testid="stSelectbox"]').filter(has_text=label).get_by_role("combobox"), option)


def _idle(page) -> None:
    page.wait_for_function("() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)


def test_review_filters_and_the_ranked_list_view(server, page):
    login(page, server["url"], "rev1")
    open_page(page, "Review")
    page.get_by_role("tab", name="Pairs").click()
    panel = _panel(page)
    panel.get_by_text("5 of 5 pairs.").wait_for(timeout=60_000)
    # a filter applied: the search finds the q1 pairs by the query's text, the state keeps the split one
    panel.get_by_label("Search query text or id, passage id").fill("EIFFEL")
    panel.get_by_label("Search query text or id, passage id").press("Enter")
    panel.get_by_text("3 of 5 pairs.").wait_for(timeout=60_000)
    _choose(page, "State", "needs fourth")
    panel.get_by_text("1 of 5 pairs.").wait_for(timeout=60_000)
    _idle(page)
    table = panel.locator('[data-testid="stDataFrame"]').first
    table.wait_for(timeout=30_000)
    box = table.bounding_box()
    assert box and box["height"] > 30 and box["width"] > 300
    # choosing the row (its checkbox, drawn on the table's canvas) shows that pair below the table
    table.click(position={"x": 17, "y": 52})
    panel.get_by_text("Paris lies on the Seine <i>river</i>.").wait_for(timeout=60_000)
    _idle(page)
    screenshot(page, "review_filters")
    text = panel.inner_text()
    assert "1 of 5 pairs. Select a row to see the pair and override its final label." in text
    assert "Bulk actions on the 1 pair shown" in text
    assert "how tall is the <b>Eiffel</b> tower" in text  # the chosen pair's query, shown as text
    assert panel.locator('[data-testid="stException"]').count() == 0

    page.get_by_role("tab", name="Ranked list").click()
    panel = _panel(page)
    panel.get_by_text("Query q1 · how tall is the <b>Eiffel</b> tower").wait_for(timeout=60_000)
    _choose(page, "Order", "rank in run bm25")
    panel.get_by_text("#1 · rank 1 · d2").wait_for(timeout=60_000)
    _idle(page)
    screenshot(page, "ranked_list")
    text = panel.inner_text()
    # the whole pooled list in bm25's order, every final label and every annotator's label at once
    order = [text.index(f"#{i} · rank {i} · {d}") for i, d in ((1, "d2"), (2, "d0"), (3, "d1"))]
    assert order == sorted(order)
    for shown in (
        "final: 2 (majority)",
        "final: 3 (unanimous)",
        "final: needs fourth",
        "labels · ann1: 0, ann2: 1, ann3: 2",
        "Paris lies on the Seine <i>river</i>.",
        "3 pooled passages",
    ):
        assert shown in text, shown
    assert panel.locator("i", has_text="river").count() == 0  # passage HTML is shown as text, never rendered

    # adjust a label right there: the split d1 becomes 0, with a reason
    _pick(
        page,
        panel.locator('[data-testid="stSelectbox"]').filter(has_text="Set final label").nth(2).get_by_role("combobox"),
        "0",
    )
    panel.get_by_label("Reason for the labels you set (required)").fill("only the river is named")
    panel.get_by_role("button", name="Apply the labels set").click()
    page.get_by_text("Set 1 final label of query q1.").wait_for(timeout=60_000)
    _idle(page)
    _panel(page).get_by_text("final: 0 (overridden)").wait_for(timeout=60_000)
    store = server["store"]
    with store.read() as s:
        q1 = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == "q1"))
        d1 = s.scalar(select(PassageRow.id).where(PassageRow.ext_id == "d1"))
        override = s.execute(
            select(LabelOverride.grade, LabelOverride.reason).where(
                LabelOverride.query_id == q1, LabelOverride.passage_id == d1
            )
        ).one()
        final = s.execute(
            select(FinalLabel.grade, FinalLabel.method).where(FinalLabel.query_id == q1, FinalLabel.passage_id == d1)
        ).one()
    assert tuple(override) == (0, "only the river is named") and tuple(final) == (0, "overridden")
