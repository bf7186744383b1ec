"""Acceptance: blind keyboard annotation by three annotators, a 4th for a three-way split, role walls, inert HTML."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from db.adjudication import set_pool_adjudicators
from db.models import Assignment, FinalLabel, Judgment, PassageRecord, User
from db.queries import collection_id
from tests.app.browser_helpers import (
    cli,
    login,
    ready_for_keys,
    screenshot,
    sign_in,
    wait_for_js,
    wait_idle,
    write_beir,
)

pytestmark = pytest.mark.browser

XSS = 'Dangerous <script>window.__xss = 1</script> and <img src="x" onerror="window.__xss = 2"> inline.'
PASSAGES = {"d1": XSS, "d2": "The Eiffel Tower is 330 metres tall.", "d3": "Paris lies on the Seine river."}
# what each annotator answers for each passage: d1 is a three-way split, d2 unanimous, d3 a 2-1 majority
PLAN = {"ann1": {"d1": 0, "d2": 3, "d3": 2}, "ann2": {"d1": 1, "d2": 3, "d3": 2}, "ann3": {"d1": 2, "d2": 3, "d3": 1}}


@pytest.fixture(scope="module")
def annotation_pool(app_server, tmp_path_factory):
    queries = {"q1": "how tall is the eiffel tower"}
    folder = write_beir(tmp_path_factory.mktemp("xss"), PASSAGES, queries, {"r": [("q1", d) for d in PASSAGES]})
    db = app_server["db"]
    cli(db, "import", "-f", "beir", str(folder), "-c", "xss")
    cli(db, "pool", "-c", "xss", "--name", "p", "--run", "r", "--depth", "3")
    cli(db, "assign", "-c", "xss", "--pool", "p", "--annotators", "ann1,ann2,ann3", "--seed", "1")
    with app_server["store"].write() as s:  # ann4 labels none of p: listed as its adjudicator (issue 11)
        set_pool_adjudicators(s, "xss", "p", ["ann4"])
    return db


MARKERS = {"d1": "Dangerous", "d2": "330 metres", "d3": "Seine river"}
PROGRESS = '[data-testid="annotate-progress"]'  # the progress line of the queue's item view
# a passage is shown and the run that drew it is complete (no element of the previous item left over, so
# the buttons, and their keyboard shortcuts, belong to this item)
ANY_PASSAGE_SHOWN = """(markers) => {
    const main = document.querySelector('[data-testid="stMain"]');
    return markers.some((m) => main.innerText.includes(m)) && !document.querySelector('[data-stale="true"]');
}"""
# the next item is on screen when the progress line changed and the old passage is gone
NEXT_ITEM_SHOWN = """([prev, marker]) => {
    const main = document.querySelector('[data-testid="stMain"]');
    const p = document.querySelector('[data-testid="annotate-progress"]');
    return !main.innerText.includes(marker) && (!p || p.innerText !== prev);
}"""


def _label_everything(page, answers: dict[str, int]) -> list[str]:
    """Label every item shown, by keyboard only; returns the passages in the order they came."""
    seen = []
    ready_for_keys(page)
    for _ in range(len(answers)):
        page.locator(PROGRESS).wait_for(timeout=30_000)
        wait_for_js(page, ANY_PASSAGE_SHOWN, arg=list(MARKERS.values()), timeout=30_000)
        body = page.locator('[data-testid="stMain"]').inner_text()  # not the sidebar's level examples
        doc = next((d for d, marker in MARKERS.items() if marker in body), None)
        assert doc is not None, body
        seen.append(doc)
        if doc == "d1":
            assert page.evaluate("window.__xss") is None  # no script ran, no onerror fired
            expect(page.locator('img[src="x"]')).to_have_count(0, timeout=30_000)
            assert "<script>window.__xss = 1</script>" in body  # shown as text
            screenshot(page, "annotate-xss")
        progress = page.locator(PROGRESS).inner_text()
        page.keyboard.press(str(answers[doc]))
        wait_for_js(page, NEXT_ITEM_SHOWN, arg=[progress, MARKERS[doc]], timeout=30_000)
    page.get_by_text("Nothing left to label").wait_for(timeout=30_000)
    return seen


def test_three_annotators_then_a_fourth(app_server, browser_contexts, annotation_pool):
    for name, answers in PLAN.items():
        context = browser_contexts.take()  # a browser session of its own, reset when given back
        try:
            page = context.new_page()
            sign_in(page, app_server["url"], app_server["store"], name)
            page.get_by_text("Passage", exact=True).wait_for(timeout=30_000)
            # an annotator has a single page, so Streamlit shows no page navigation at all
            expect(page.locator('[data-testid="stSidebarNav"]')).to_have_count(0, timeout=30_000)
            for title in ("Review", "Admin", "Pooling", "Import"):
                expect(page.locator("a").filter(has_text=re.compile(rf"^{title}$"))).to_have_count(0, timeout=30_000)
            assert sorted(_label_everything(page, answers)) == ["d1", "d2", "d3"]
        finally:
            browser_contexts.give_back(context)

    store = app_server["store"]
    with store.read() as s:  # this module's collection only: other modules label in the shared store too
        ours = select(PassageRecord.id).where(PassageRecord.collection_id == collection_id(s, "xss"))
        ids = dict(s.execute(select(PassageRecord.ext_id, PassageRecord.id).where(PassageRecord.id.in_(ours))).all())
        users = dict(s.execute(select(User.id, User.username)).all())
        labels = {
            (users[u], d): g
            for u, d, g in s.execute(
                select(Judgment.user_id, Judgment.passage_id, Judgment.grade).where(Judgment.passage_id.in_(ours))
            )
        }
        finals = {
            d: (g, m)
            for d, g, m in s.execute(
                select(FinalLabel.passage_id, FinalLabel.grade, FinalLabel.method).where(
                    FinalLabel.passage_id.in_(ours)
                )
            )
        }
        fourth = s.execute(
            select(Assignment.user_id, Assignment.passage_id).where(
                Assignment.purpose == "fourth", Assignment.passage_id.in_(ours)
            )
        ).all()
    assert labels == {(u, ids[d]): g for u, answers in PLAN.items() for d, g in answers.items()}
    assert finals[ids["d2"]] == (3, "unanimous") and finals[ids["d3"]] == (2, "majority") and ids["d1"] not in finals
    assert [(users[u], p) for u, p in fourth] == [("ann4", ids["d1"])]

    context = browser_contexts.take()
    try:
        page = context.new_page()
        sign_in(page, app_server["url"], app_server["store"], "ann4")
        page.get_by_text("Adjudication").first.wait_for()
        expect(page.locator("body")).to_contain_text("Dangerous", timeout=30_000)
        ready_for_keys(page)
        page.keyboard.press("1")
        page.get_by_text("Nothing left to label").wait_for(timeout=30_000)
    finally:
        browser_contexts.give_back(context)
    with store.read() as s:
        final = s.execute(
            select(FinalLabel.grade, FinalLabel.method, FinalLabel.n_labels).where(FinalLabel.passage_id == ids["d1"])
        ).one()
    assert tuple(final) == (1, "adjudicated", 4)


def test_annotators_cannot_reach_review_admin_or_other_items(app_server, page, annotation_pool):
    for path in ("/review", "/admin", "/pooling", "/annotate?assignment=1&user=ann2&item=1"):
        login(page, app_server["url"], "ann1", path=path)  # the URL asks for a page or item: log in there
        wait_idle(page, 60_000, fresh=True)  # the page the URL asked for is drawn (or refused)
        body = page.inner_text("body")
        assert "Agreement" not in body and "Users" not in body and "Start pooling" not in body
        assert "ann2" not in body
    screenshot(page, "annotator-walls")
