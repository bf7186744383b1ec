"""Every analysis dashboard in headless Chromium on the demo collection: charts and tables must render.

The demo gets a second qrels version first ("relabelled": BM25's best unjudged passage of every test
query marked relevant, DuReader-retrieval's false-negative relabelling) so that the qrels-version
comparison has two versions to compare.  Screenshots go to test-artifacts/dashboard-*.png.
The tests share one admin session (``admin_page``: one sign-in for the module), each going to its
dashboard through the sidebar.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.app.browser_helpers import (
    LIVE_REFRESH_SECONDS,
    choose_in,
    cli,
    open_page,
    screenshot,
    signed_in_page,
    wait_drawn,
    wait_idle,
)

pytestmark = pytest.mark.browser
DEMO = "demo-bilingual"


@pytest.fixture(scope="module")
def relabelled(app_server, tmp_path_factory):
    from core.fusion import trec_ranking
    from db.queries import iter_queries, stored_qrels, stored_run

    with app_server["store"].read() as s:
        qrels = stored_qrels(s, DEMO, "imported")
        run = stored_run(s, DEMO, "bm25")
        tests = [q.id for q in iter_queries(s, DEMO) if q.split == "test"]
    added = {}
    for qid in tests:
        unjudged = [d for d in trec_ranking(run.get(qid, {})) if d not in qrels.get(qid, {})]
        if unjudged:
            added[qid] = unjudged[0]
    path = tmp_path_factory.mktemp("qrels") / "relabelled.qrels"
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    lines += [f"{q} 0 {d} 2" for q, d in added.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    cli(
        app_server["db"],
        "import",
        str(path),
        "--format",
        "trec-qrels",
        "-c",
        DEMO,
        "--merge",
        "--qrels-name",
        "relabelled",
    )
    yield added
    # archived at the end, so that the modules after this one on the shared server find the demo's imported
    # version the newest again (Home counts the judgments of the newest imported version)
    cli(app_server["db"], "archive", "qrels", "relabelled", "-c", DEMO)


@pytest.fixture(scope="module")
def admin_page(app_server, browser_contexts, relabelled):
    """The admin's page, signed in once for this module's tests (after the relabelling, which they all see).

    Tall enough that a full-page screenshot holds a whole dashboard (Streamlit scrolls inside its own container).
    """
    with signed_in_page(browser_contexts, app_server["url"], app_server["store"], "admin", height=3600) as page:
        yield page


def _visible_panel(page):
    return page.locator('[data-baseweb="tab-panel"]:visible, [role="tabpanel"]:visible').first


def _assert_rendered(scope, *, charts: int, tables: int, name: str, page) -> None:
    """At least ``charts`` plotly charts with drawn marks and ``tables`` data grids, all visible, in ``scope``."""
    if charts:
        scope.locator(".js-plotly-plot").nth(charts - 1).wait_for(state="visible", timeout=60_000)
    if tables:
        scope.locator('[data-testid="stDataFrame"]').nth(tables - 1).wait_for(state="visible", timeout=60_000)
    plots = scope.locator(".js-plotly-plot:visible")
    assert plots.count() >= charts, name
    for i in range(plots.count()):
        wait_drawn(plots.nth(i), f"{name}: chart {i}")
    grids = scope.locator('[data-testid="stDataFrame"]:visible')
    assert grids.count() >= tables, name
    for i in range(grids.count()):
        box = grids.nth(i).bounding_box()
        assert box and box["height"] > 30 and box["width"] > 100, f"{name}: table {i} is not drawn"
    expect(scope.locator('[data-testid="stException"]'), f"{name}: an exception is shown").to_have_count(
        0, timeout=30_000
    )


def test_metrics_dashboards(admin_page):
    page = admin_page
    open_page(page, "Metrics")
    page.get_by_role("tab", name="Leaderboard").wait_for(timeout=60_000)
    expected = {  # tab: (charts, tables)
        "Leaderboard": (0, 1),
        "Per query": (0, 2),
        "Compare runs": (1, 2),
        "Qrels versions": (1, 1),
        "Groups": (1, 1),
    }
    for tab, (charts, tables) in expected.items():
        page.get_by_role("tab", name=tab).click()
        _assert_rendered(_visible_panel(page), charts=charts, tables=tables, name=tab, page=page)
        screenshot(page, f"dashboard-metrics-{tab.lower().replace(' ', '-')}")
        if tab == "Qrels versions":  # the two versions compared by default: the oldest and the newest
            expect(_visible_panel(page)).to_contain_text("imported", timeout=30_000)
            expect(_visible_panel(page)).to_contain_text("relabelled", timeout=30_000)


def test_dataset_statistics_dashboards(admin_page):
    page = admin_page
    open_page(page, "Dataset statistics")
    page.get_by_text("Leakage threshold (cosine)").wait_for(timeout=180_000)  # the first visit loads the encoder
    main = page.locator('[data-testid="stMain"]')
    _assert_rendered(main, charts=3, tables=4, name="statistics", page=page)
    expect(page.locator('[data-testid="stMetricValue"]').first).to_have_text(re.compile(r"of 7$"), timeout=30_000)
    screenshot(page, "dashboard-statistics")


def _step_to_a_suggestion(page):
    """Press Next until the pair shown has a suggested tag; its Confirm button."""
    # While a rerun draws, the previous run's chooser can stay on the page beside the new one (marked stale):
    # read and click only once the page holds the finished run's elements alone.
    fresh = page.locator('[data-testid="stElementContainer"]:not([data-stale="true"])')
    pair = fresh.get_by_role("combobox", name="Pair", exact=True)
    after = page.get_by_role("button", name="Next")
    confirm = page.get_by_role("button", name="Confirm")
    wait_idle(page, 120_000, fresh=True)
    while not confirm.count() and after.is_enabled():
        expect(pair).to_have_count(1, timeout=60_000)
        shown = pair.input_value()
        after.click()
        expect(pair).not_to_have_value(shown, timeout=60_000)  # the next pair is chosen ...
        wait_idle(page, 120_000, fresh=True)  # ... and drawn
    expect(confirm.first, "no sampled pair got a suggestion").to_be_visible(timeout=30_000)
    return confirm


def test_error_analysis_sampling_tagging_and_dashboards(admin_page):
    page = admin_page
    open_page(page, "Error analysis")
    page.get_by_role("button", name="Sample").wait_for(timeout=60_000)
    choose_in(page, "Run", "minilm")  # the English model fails many Chinese queries: a rich sample
    page.get_by_role("button", name="Sample").click()
    page.get_by_text("Failing queries").wait_for(timeout=60_000)
    failing = page.locator('[data-testid="stMetricValue"]').first
    expect(failing).to_have_text(re.compile(r"^[1-9][\d,]*$"), timeout=30_000)  # a positive count
    page.get_by_role("button", name="Suggest tags").click()
    page.get_by_text("suggestion").first.wait_for(timeout=120_000)
    confirm = _step_to_a_suggestion(page)
    confirm.first.click()
    page.get_by_text("confirmed").first.wait_for(timeout=30_000)
    screenshot(page, "dashboard-errors-tagging")

    page.get_by_role("tab", name="Dashboards").click()
    panel = _visible_panel(page)
    panel.get_by_text("Metric per error category").wait_for(timeout=60_000)
    _assert_rendered(panel, charts=2, tables=3, name="error dashboards", page=page)
    screenshot(page, "dashboard-errors")


def test_live_leaderboard_follows_new_labels_without_interaction(app_server, admin_page):
    """Three annotators label a new pair while the Metrics page stays open: the leaderboard refreshes by itself."""
    import re

    from sqlalchemy import select

    from db.assignments import create_assignments
    from db.labelling import record_judgment
    from db.models import Assignment, QueryRecord, User
    from db.pools import save_pool
    from db.queries import iter_queries
    from db.resolution import live_qrels

    store = app_server["store"]
    with store.read() as s:
        labelled = set(live_qrels(s, DEMO))
        qid = next(q.id for q in iter_queries(s, DEMO) if q.id not in labelled)
    page = admin_page
    open_page(page, "Metrics")
    # the session keeps the tab it had open last (a new session opens the first)
    page.get_by_role("tab", name="Leaderboard").click()
    choose_in(page, "Qrels", "live final labels")
    page.get_by_text(f"Refresh every {LIVE_REFRESH_SECONDS} s").wait_for(timeout=30_000)
    before = len(labelled)

    with store.write() as s:
        save_pool(s, DEMO, "live-refresh", {qid: {"en-eiffel-1": []}}, method="depth")
        create_assignments(s, DEMO, "live-refresh", annotators=["ann1", "ann2", "ann3"], per_pair=3)
    with store.write() as s:
        for username in ("ann1", "ann2", "ann3"):
            uid = s.scalar(select(User.id).where(User.username == username))
            aid = s.scalar(
                select(Assignment.id)
                .join(QueryRecord, QueryRecord.id == Assignment.query_id)
                .where(Assignment.user_id == uid, QueryRecord.ext_id == qid)
            )
            record_judgment(s, uid, aid, 2)
    # no click, no reload: the fragment reruns every LIVE_REFRESH_SECONDS
    page.get_by_text(re.compile(rf"^{before + 1} judged queries \(live final labels\)")).wait_for(timeout=40_000)
    screenshot(page, "dashboard-metrics-live")
