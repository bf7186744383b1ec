"""Acceptance 4 of issue 11, in Chromium: the collection choice and the requested page survive navigation and login.

A server of its own on a fresh store with two collections, so that a
non-default collection (the second) can be picked.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from tests.app.conftest import PASSWORD, REPO, _wait_idle, login, open_page, screenshot, serve_app

pytestmark = pytest.mark.browser

FIRST, SECOND = "alpha-set", "beta-set"  # listed by name: FIRST is every page's default


def _cli(db, *args):
    env = {**os.environ, "POOLJUDGE_PASSWORD": PASSWORD}
    env.pop("POOLJUDGE_DB_URL", None)
    out = subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "--db", str(db), "-q", *args],
        env=env,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """``streamlit run app.py`` on a store with an admin and two small BEIR collections, each with a run."""
    folder = tmp_path_factory.mktemp("state")
    db = folder / "pooljudge.db"
    _cli(db, "user", "add", "admin", "--role", "admin")
    for name in (FIRST, SECOND):
        data = folder / name
        (data / "runs").mkdir(parents=True)
        (data / "qrels").mkdir()
        (data / "corpus.jsonl").write_text(
            "".join(json.dumps({"_id": f"d{i}", "title": "", "text": f"{name} passage {i}"}) + "\n" for i in range(3)),
            encoding="utf-8",
        )
        (data / "queries.jsonl").write_text(json.dumps({"_id": "q1", "text": f"about {name}"}) + "\n", encoding="utf-8")
        (data / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t2\n", encoding="utf-8")
        (data / "runs" / "r.trec").write_text("q1 Q0 d0 1 3.0 r\nq1 Q0 d1 2 2.0 r\n", encoding="utf-8")
        _cli(db, "import", "-f", "beir", str(data), "-c", name)
    env = {**os.environ, "POOLJUDGE_DB": str(db)}
    env.pop("POOLJUDGE_DB_URL", None)
    with serve_app(env, folder / "streamlit.log") as url:
        yield {"url": url, "db": db}


def _collection_box(page):
    return page.locator('[data-testid="stMain"] [data-testid="stSelectbox"]').filter(has_text="Collection").first


def _shows(page, name: str, timeout: int = 60_000) -> None:
    """Until the page's Collection box shows ``name`` (and not the other collection)."""
    other = FIRST if name == SECOND else SECOND
    # the shown choice is the value of the box's combobox input
    page.wait_for_function(
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
    login(page, server["url"], "admin")
    open_page(page, "Metrics")
    _shows(page, FIRST)  # nothing picked yet: the first collection
    _collection_box(page).get_by_role("combobox").click()
    page.get_by_role("option", name=SECOND).click()
    _shows(page, SECOND)
    page.wait_for_url(re.compile(rf"[?&]collection={SECOND}"), timeout=60_000)  # a reload or a link keeps it
    _wait_idle(page)
    for title in ("Runs and export", "Error analysis", "Dataset statistics"):
        open_page(page, title)
        _shows(page, SECOND)
        page.wait_for_url(re.compile(rf"[?&]collection={SECOND}"), timeout=60_000)
        _wait_idle(page)
        if title == "Error analysis":
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
    _wait_idle(page)
    assert page.get_by_role("heading", name="pooljudge", exact=True).count() == 0  # not Home, not the login screen
    # the page has finished drawing: the level input shows the collection's level, the leaderboard its run
    page.wait_for_function(
        """() => [...document.querySelectorAll('[data-testid="stNumberInput"] input')]
                                  .some((i) => i.value === '2')""",
        timeout=60_000,
    )
    page.get_by_text("1 judged queries (imported)").wait_for(timeout=60_000)
    screenshot(page, "state-deep-link-after-login")
