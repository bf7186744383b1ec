"""The real app: an import runs as a background job whose progress survives a reload, then the collection appears."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.app.browser_helpers import JOB_WAIT_MS, choose, login, screenshot

pytestmark = pytest.mark.browser

# passages in the file: the job outlasts the page's first report of it, which shows the bar already while the job
# is queued; its CPU time grows with N, so N stays small
N = 30_000


def test_an_import_shows_progress_survives_a_reload_and_finishes(app_server, page, tmp_path):
    tsv = tmp_path / "collection.tsv"
    with open(tsv, "w", encoding="utf-8") as out:
        for i in range(N):
            out.write(f"{i}\tgenerated passage number {i} about retrieval\n")
    login(page, app_server["url"], "admin", path="/import_collections")  # the Home page never runs
    page.get_by_role("heading", name="Import", exact=True).wait_for(timeout=60_000)
    page.get_by_label("Path (file or folder, plain or .gz)").fill(str(tsv))
    # "zz-": listed after the demo collections, so later tests on this shared server keep their default one
    page.get_by_label("Collection name").fill("zz-browser-import")
    choose(page, page.get_by_role("combobox").first, "msmarco:", exact=False)
    page.get_by_role("button", name="Import").click()
    bar = page.locator('[data-testid="stProgress"]').filter(has_text="zz-browser-import")
    bar.first.wait_for(timeout=60_000)
    screenshot(page, "import-progress")
    page.reload()  # the job lives in the store: a new session finds it again, running or finished
    page.get_by_text("Logged in as admin").wait_for(timeout=60_000)  # the session cookie signs the reload in
    page.get_by_role("heading", name="Import", exact=True).wait_for(timeout=60_000)  # the URL's page
    done = page.get_by_text(f"{N:,} passages").first
    done.wait_for(timeout=JOB_WAIT_MS)
    expect(done).to_contain_text("zz-browser-import", timeout=30_000)
    screenshot(page, "import-done")
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Collections overview", exact=True).click()
    page.get_by_role("heading", name="zz-browser-import").wait_for(timeout=60_000)  # complete, so now listed
