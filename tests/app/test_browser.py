"""The real app in headless Chromium: first start shows the demo; imports report errors clearly.

The tests share one admin session (``admin_page``: one sign-in for the module), each going to its page
through the sidebar; the pooling test signs in anew to see its job found by a new session.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.app.browser_helpers import (
    JOB_WAIT_MS,
    open_page,
    screenshot,
    sign_in,
    signed_in_page,
    wait_for_value,
    wait_idle,
)

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def admin_page(app_server, browser_contexts):
    """The admin's page, signed in once for this module's tests."""
    with signed_in_page(browser_contexts, app_server["url"], app_server["store"], "admin") as page:
        yield page


def test_first_start_shows_the_demo_collection_with_statistics(app_server, admin_page):
    page = admin_page
    # the overview is the page a sign-in lands on; the sidebar goes back to it from whichever page is open
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Collections overview", exact=True).click()
    wait_idle(page, 60_000, fresh=True)
    page.get_by_text("demo-bilingual").first.wait_for(timeout=60_000)
    page.get_by_text("Avg passage chars").first.wait_for()
    # the demo's own box: other browser tests share this server and may have imported collections before
    box = (
        page.locator('[data-testid="stVerticalBlock"]')
        .filter(has=page.get_by_role("heading", name="demo-bilingual", exact=True))
        .last
    )
    grid = box.locator('[data-testid="stDataFrame"]').first
    grid.wait_for()
    screenshot(page, "home")
    for label, value in {"Passages": "311", "Documents": "65", "Queries": "54", "Language": "mixed"}.items():
        label_shown = page.locator('[data-testid="stMetricLabel"]', has_text=re.compile(rf"^\s*{label}\s*$"))
        metric = box.locator('[data-testid="stMetric"]').filter(has=label_shown)
        expect(metric.locator('[data-testid="stMetricValue"]')).to_have_text(value, timeout=30_000)
    # the per-split table (a canvas grid, also drawn as an accessible table whose cells hold the values): the demo's
    # three splits with their queries, judged queries, judged pairs and relevant passages (grade >= 2, its level)
    cells = grid.locator('td[role="gridcell"]')

    def rows() -> dict[str, list[str]]:
        values = cells.all_text_contents()
        return {values[i]: values[i + 1 : i + 5] for i in range(0, len(values), 8)}

    # the grid fills its cells in stages: read until the table is complete
    expected = {"train": ["7", "7", "50", "12"], "dev": ["10", "10", "73", "13"], "test": ["37", "37", "276", "51"]}
    wait_for_value(rows, expected, what="the demo's split table")


def test_import_page_names_file_and_line_and_imports_nothing(admin_page, tmp_path):
    page = admin_page
    bad = tmp_path / "bad.qrels"
    bad.write_text("q1 0 d1 1\nq1 0 d2 high\n", encoding="utf-8")
    open_page(page, "Import")
    page.get_by_label("Path (file or folder, plain or .gz)").fill(str(bad))
    page.get_by_label("Collection name").fill("broken")
    page.get_by_role("combobox").first.click()
    page.get_by_role("option", name="trec-qrels").click()
    page.get_by_role("button", name="Import").click()
    error = page.get_by_text("Nothing was imported")
    error.wait_for(timeout=30_000)
    screenshot(page, "import-error")
    expect(error).to_contain_text(f"{bad}:2", timeout=30_000)


def test_pooling_runs_in_the_background_and_shows_statistics(app_server, admin_page):
    page = admin_page
    open_page(page, "Pooling")
    page.get_by_label("Pool name").fill("browser-pool")
    page.get_by_label("Other retriever specs (separated by ';')", exact=True).fill(
        "bm25:chinese=bigram,name=bigram-browser"
    )
    page.get_by_label("Depth k / pool size per query").fill("10")
    page.get_by_role("button", name="Start pooling").click()
    page.get_by_text("pool browser-pool").first.wait_for(timeout=30_000)
    # the job lives in the store, not in the page: a new session (a new sign-in, which loads the app again) finds it
    sign_in(page, app_server["url"], app_server["store"], "admin", path="/pooling")
    page.get_by_role("heading", name="Pooling").first.wait_for(timeout=60_000)
    done = page.get_by_text("selected,").first
    done.wait_for(timeout=JOB_WAIT_MS)
    expect(done).to_contain_text("browser-pool", timeout=30_000)
    page.get_by_text("Overlap between runs").first.wait_for(timeout=30_000)
    page.locator(".js-plotly-plot").nth(2).scroll_into_view_if_needed()
    screenshot(page, "pooling")
    expect(page.locator(".js-plotly-plot")).to_have_count(3, timeout=60_000)


def test_runs_page_downloads_a_run_in_trec_format(admin_page, tmp_path):
    page = admin_page
    open_page(page, "Runs and export")
    page.get_by_text("Full configuration").wait_for(timeout=60_000)
    with page.expect_download() as download:
        page.get_by_role("button", name="Download run (TREC)").click()
    path = tmp_path / "run.trec"
    download.value.save_as(path)
    first = path.read_text(encoding="utf-8").splitlines()[0].split()
    assert len(first) == 6 and first[1] == "Q0" and first[3] == "1"
    screenshot(page, "runs")
