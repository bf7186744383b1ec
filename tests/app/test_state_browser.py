"""Acceptance 4 of issue 11, in Chromium: the collection choice and the requested page survive navigation and login.

What only a browser shows is checked here: the address bar carrying ``?collection=`` after a pick, through the
sidebar's links and a reload, and a deep link typed while logged out.  That the choice holds on every page,
the Admin page's boxes included, is ``tests/app/test_state_pages.py`` (AppTest through ``app.py``).

Two small collections of their own in the shared server's store; the pages are opened on them by URL.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.app.browser_helpers import cli, login, open_page, screenshot, sign_in, wait_for_js, wait_idle, write_beir

pytestmark = pytest.mark.browser

FIRST, SECOND = "state-alpha", "state-beta"


@pytest.fixture(scope="module")
def server(app_server, tmp_path_factory):
    """The shared server, its store holding two small BEIR collections of this module, each with a run."""
    folder = tmp_path_factory.mktemp("state")
    db = app_server["db"]
    for name in (FIRST, SECOND):
        passages = {f"d{i}": f"{name} passage {i}" for i in range(3)}
        qrels = "query-id\tcorpus-id\tscore\nq1\td0\t2\n"
        data = write_beir(
            folder / name, passages, {"q1": f"about {name}"}, {"r": [("q1", "d0"), ("q1", "d1")]}, qrels=qrels
        )
        cli(db, "import", "-f", "beir", str(data), "-c", name)
    return app_server


def _collection_box(page):
    return page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text="Collection").first


def _shows(page, name: str, timeout: int = 60_000) -> None:
    """Until the page's Collection box shows ``name`` (and not the other collection)."""
    other = FIRST if name == SECOND else SECOND
    # the shown choice is the value of the box's combobox input
    wait_for_js(
        page,
        """([name, other]) => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stSelectbox"]')]
               .some((box) => {
                   const shown = box.innerText + ' ' + [...box.querySelectorAll('input')].map((i) => i.value).join(' ');
                   return box.innerText.includes('Collection') && shown.includes(name) && !shown.includes(other);
               })""",
        arg=[name, other],
        timeout=timeout,
    )


def test_a_picked_collection_holds_on_the_other_pages(server, new_page):
    page = new_page()
    sign_in(page, server["url"], server["store"], "admin", path=f"/metrics?collection={FIRST}")
    page.get_by_role("heading", name="Metrics").first.wait_for(timeout=60_000)
    _shows(page, FIRST)
    _collection_box(page).get_by_role("combobox").click()
    page.get_by_role("option", name=SECOND).click()
    _shows(page, SECOND)
    page.wait_for_url(re.compile(rf"[?&]collection={SECOND}"), timeout=60_000)  # a reload or a link keeps it
    wait_idle(page)
    # the sidebar's links drop the query: app.py writes the choice back (one mechanism for every page)
    for title in ("Runs and export", "Error analysis"):
        open_page(page, title)
        _shows(page, SECOND)
        page.wait_for_url(re.compile(rf"[?&]collection={SECOND}"), timeout=60_000)
        wait_idle(page)
    screenshot(page, "state-collection-follows")
    page.reload()  # a new Streamlit session: the URL brings the collection back
    page.get_by_text("Logged in as admin").wait_for(timeout=60_000)
    _shows(page, SECOND)


def test_a_deep_link_opened_logged_out_lands_on_its_page_after_login(server, new_page):
    page = new_page()
    # logged out (login() clears the cookies first), the URL asks for the Metrics page on the second collection
    login(page, server["url"], "admin", path=f"/metrics?collection={SECOND}")
    page.get_by_role("heading", name="Metrics").first.wait_for(timeout=60_000)
    _shows(page, SECOND)
    page.wait_for_url(re.compile(rf"/metrics\?collection={SECOND}"), timeout=60_000)
    wait_idle(page)
    # not Home, not the login screen
    expect(page.get_by_role("heading", name="pooljudge", exact=True)).to_have_count(0, timeout=30_000)
    # the page has finished drawing: the level input shows the collection's level, the leaderboard its run
    wait_for_js(
        page,
        """() => [...document.querySelectorAll('[data-testid="stNumberInput"] input')]
                                  .some((i) => i.value === '2')""",
        timeout=60_000,
    )
    page.get_by_text("1 judged queries (imported)").wait_for(timeout=60_000)
    screenshot(page, "state-deep-link-after-login")
