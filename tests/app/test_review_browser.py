"""Acceptance (issue 11): Review at scale and the per-query ranked-list view in the browser.

A reviewer filters the pairs table (search and state), then opens the ranked-list view of a query ordered by a
run's ranking and sets a final label there; screenshots ``test-artifacts/review_filters.png`` and
``test-artifacts/ranked_list.png`` are checked for what they must show.  Setup that is not the point goes
through the library, into the shared server's store: a collection and accounts of this module's own.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from db.assignments import create_assignments
from db.labelling import record_judgment
from db.models import Assignment, FinalLabel, LabelOverride, PassageRecord, QueryRecord
from db.queries import collection_id
from tests.app.browser_helpers import (
    add_accounts,
    choose_in,
    import_pooled,
    screenshot,
    sign_in,
    wait_for_value,
    wait_idle,
)

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
COLLECTION = "review-tower"
REVIEWER = "review-rev1"
ANNOTATORS = ("review-ann1", "review-ann2", "review-ann3")


def _label(store, ids: dict[str, int]) -> None:
    """The three ANNOTATORS give each passage of ``LABELS`` their grades, through the library."""
    for doc, grades in LABELS.items():
        for name, grade in zip(ANNOTATORS, grades):
            with store.write() as s:
                pid = _row_id(s, PassageRecord, doc)
                aid = s.scalar(
                    select(Assignment.id).where(Assignment.user_id == ids[name], Assignment.passage_id == pid)
                )
                record_judgment(s, ids[name], aid, grade)


def _row_id(s, table, ext_id: str) -> int:
    """The id of the passage or query ``ext_id`` of COLLECTION (other collections share the store)."""
    return s.scalar(select(table.id).where(table.collection_id == collection_id(s, COLLECTION), table.ext_id == ext_id))


@pytest.fixture(scope="module")
def server(app_server):
    store = app_server["store"]
    with store.write() as s:
        import_pooled(s, PASSAGES, QUERIES, collection=COLLECTION, runs={"bm25": BM25})
        ids = add_accounts(s, {REVIEWER: "reviewer", **dict.fromkeys(ANNOTATORS, "annotator")})
        create_assignments(s, COLLECTION, "p", annotators=list(ANNOTATORS), seed=3, package_size=10)
    _label(store, ids)
    return app_server


def _panel(page):
    return page.locator('[data-testid="stTabs"] [role="tabpanel"]:visible').first


def _filter_to_the_split_pair(page):
    """On the Pairs tab, search the q1 pairs by the query's text, keep the split one, and choose its row; the
    tab's panel."""
    page.get_by_role("tab", name="Pairs").click()
    panel = _panel(page)
    panel.get_by_text("5 of 5 pairs.").wait_for(timeout=60_000)
    search = panel.get_by_label("Search query text or id, passage id")
    search.fill("EIFFEL")
    search.press("Enter")
    panel.get_by_text("3 of 5 pairs.").wait_for(timeout=60_000)
    choose_in(page, "State", "needs fourth")
    panel.get_by_text("1 of 5 pairs.").wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    table = panel.locator('[data-testid="stDataFrame"]').first
    table.wait_for(timeout=30_000)
    box = table.bounding_box()
    assert box and box["height"] > 30 and box["width"] > 300
    # choosing the row (its checkbox, drawn on the table's canvas) shows that pair below the table
    table.click(position={"x": 17, "y": 52})
    panel.get_by_text("Paris lies on the Seine <i>river</i>.").wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    return panel


def _ranked_list_by_bm25(page):
    """The Ranked list tab of q1 in bm25's order; the tab's panel."""
    page.get_by_role("tab", name="Ranked list").click()
    panel = _panel(page)
    panel.get_by_text("Query q1 · how tall is the <b>Eiffel</b> tower").wait_for(timeout=60_000)
    choose_in(page, "Order", "rank in run bm25")
    panel.get_by_text("#1 · rank 1 · d2").wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    return panel


def _check_ranked_list(panel) -> None:
    """The whole pooled list in bm25's order, every final label and every annotator's label at once."""
    entries = [f"#{i} · rank {i} · {d}" for i, d in ((1, "d2"), (2, "d0"), (3, "d1"))]
    shown = (
        "final: 2 (majority)",
        "final: 3 (unanimous)",
        "final: needs fourth",
        "labels · review-ann1: 0, review-ann2: 1, review-ann3: 2",
        "Paris lies on the Seine <i>river</i>.",
        "3 pooled passages",
    )

    def missing() -> list[str]:
        """What the list lacks: an entry out of bm25's order, a text not shown."""
        text = panel.inner_text()
        if not all(e in text for e in entries):
            return [e for e in entries if e not in text]
        order = [text.index(e) for e in entries]
        return ([] if order == sorted(order) else ["bm25's order"]) + [t for t in shown if t not in text]

    wait_for_value(missing, [], what="the ranked list")
    # passage HTML is shown as text, never rendered
    expect(panel.locator("i", has_text="river")).to_have_count(0, timeout=30_000)


def _set_d1_to_0(page, panel) -> None:
    """Set the split d1's final label to 0 in the ranked list with the keys (handled in the browser), with a reason.

    J/K move the cursor, X excludes, U takes back, 0 sets; a key typed into the reason sets nothing; an apply
    without a reason is refused and stores nothing; then the reason, and the list shows the new final label."""
    pending = panel.get_by_text(re.compile(r"^Set and not applied yet: "))
    panel.get_by_text("(now #1)").wait_for(timeout=60_000)
    # a click on the first passage puts the cursor there and takes the focus from the Order box (keys typed
    # into a box are the box's)
    panel.locator(".pj-ranked-entry").first.click()
    page.keyboard.press("j")
    page.keyboard.press("x")  # #2 (d0) excluded ...
    expect(pending).to_have_text("Set and not applied yet: 1 label (#2: exclude).", timeout=30_000)
    page.keyboard.press("u")  # ... and taken back
    page.keyboard.press("j")
    page.keyboard.press("k")
    page.keyboard.press("j")
    panel.get_by_text("(now #3)").wait_for(timeout=30_000)
    page.keyboard.press("0")
    expect(pending).to_have_text("Set and not applied yet: 1 label (#3: 0).", timeout=30_000)
    expect(panel.locator(".pj-cursor")).to_contain_text("#3 · rank 3 · d1", timeout=30_000)
    panel.get_by_role("button", name="Apply the labels set").click()
    expect(panel.get_by_role("alert")).to_have_text("Nothing was stored: an override needs a reason.", timeout=60_000)
    reason = panel.get_by_label("Reason for the labels you set (required)")
    reason.press_sequentially("only the river j0x")  # typed, not keys of the list
    expect(pending).to_have_text("Set and not applied yet: 1 label (#3: 0).", timeout=30_000)
    panel.get_by_role("button", name="Apply the labels set").click()
    page.get_by_text("Set 1 final label of query q1.").wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    _panel(page).get_by_text("final: 0 (overridden)").wait_for(timeout=60_000)
    expect(pending).to_have_text("Set and not applied yet: 0 labels.", timeout=30_000)
    panel.get_by_role("button", name="Apply the labels set").click()  # nothing set: refused, and said once
    refusal = "Nothing was stored: no label was set: choose a final label for at least one passage."
    expect(panel.get_by_role("alert")).to_have_text(refusal, timeout=60_000)
    page.get_by_role("tab", name="Pairs").click()
    expect(page.locator(".pj-ranked-entry")).to_have_count(0, timeout=60_000)  # the list is gone with its tab
    page.get_by_role("tab", name="Ranked list").click()
    _panel(page).locator(".pj-ranked-entry").first.wait_for(timeout=60_000)
    wait_idle(page, 60_000)
    expect(_panel(page).get_by_role("alert")).to_be_hidden(timeout=30_000)  # not shown again on a new visit


def _stored_d1(store) -> tuple[tuple, tuple]:
    """(grade, reason) of the override on (q1, d1) and (grade, method) of its final label, from the store."""
    with store.read() as s:
        q1, d1 = _row_id(s, QueryRecord, "q1"), _row_id(s, PassageRecord, "d1")
        override = s.execute(
            select(LabelOverride.grade, LabelOverride.reason).where(
                LabelOverride.query_id == q1, LabelOverride.passage_id == d1
            )
        ).one()
        final = s.execute(
            select(FinalLabel.grade, FinalLabel.method).where(FinalLabel.query_id == q1, FinalLabel.passage_id == d1)
        ).one()
    return tuple(override), tuple(final)


def test_review_filters_and_the_ranked_list_view(server, page):
    sign_in(page, server["url"], server["store"], REVIEWER, path=f"/review?collection={COLLECTION}")
    page.get_by_role("heading", name="Review").first.wait_for(timeout=60_000)
    panel = _filter_to_the_split_pair(page)
    screenshot(page, "review_filters")
    for shown in (
        "1 of 5 pairs. Select a row to see the pair and override its final label.",
        "Bulk actions on the 1 pair shown",
        "how tall is the <b>Eiffel</b> tower",  # the chosen pair's query, shown as text
    ):
        expect(panel).to_contain_text(shown, timeout=30_000)
    expect(panel.locator('[data-testid="stException"]')).to_have_count(0, timeout=30_000)

    panel = _ranked_list_by_bm25(page)
    screenshot(page, "ranked_list")
    _check_ranked_list(panel)

    _set_d1_to_0(page, panel)  # adjust a label right there: the split d1 becomes 0
    assert _stored_d1(server["store"]) == ((0, "only the river j0x"), (0, "overridden"))
