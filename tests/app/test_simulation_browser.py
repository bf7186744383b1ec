"""The Labelling simulation page in headless Chromium: a toy collection with three stored runs and qrels,
imported into the shared server's store (``app_server``) under a name of this module's own.

The admin runs the simulation (pool depth 2, batches of 3, nDCG@10); the page must draw the tau chart, the
recall chart (relevant pairs found per labelled pair) and the per-run band chart, show the "pairs to reach tau 0.9" table with the values core.simulation computes, offer
the CSV, and draw a stored run name with HTML in it literally.  A reviewer is offered the page too.
Screenshot: test-artifacts/labelling-simulation.png.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from core.simulation import simulate_labelling
from tests.app.browser_helpers import (
    cli,
    screenshot,
    sign_in,
    wait_drawn,
    wait_for_value,
    wait_idle,
)
from tests.test_simulation_cli import ORACLE, RUNS, write_toy

pytestmark = pytest.mark.browser
ODD = "C&<b>x"  # a stored run name with HTML in it: charts must draw it as written
TOY_RUNS = {"A": RUNS["A"], "B": RUNS["B"], ODD: RUNS["C"]}
COLLECTION = "simulation-toy"


@pytest.fixture(scope="module")
def server(app_server, tmp_path_factory):
    """The shared server (``app_server``), its store holding the toy collection (a simulation's result is kept in
    the browser session only, so a session of this module computes it afresh)."""
    root = tmp_path_factory.mktemp("simulation")
    toy = write_toy(root / "toy", TOY_RUNS)
    cli(app_server["db"], "import", "-f", "beir", str(toy), "-c", COLLECTION, "--level", "1")
    return app_server


@pytest.fixture
def page(new_page):
    return new_page(height=2400)


def _number(page, label: str, value: int) -> None:
    box = page.locator('[data-testid="stNumberInput"]').filter(has_text=label).locator("input")
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def test_simulation_page_runs_and_plots(server, page):
    expected = simulate_labelling(ORACLE, TOY_RUNS, depth=2, batch_size=3, measure="nDCG@10")
    assert expected.pairs_to_reach() == {"depth": 6, "top-n": 3, "random": 3}  # the values the table must show

    # signed in on the page
    sign_in(page, server["url"], server["store"], "admin", path=f"/labelling_simulation?collection={COLLECTION}")
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Pool depth").wait_for(timeout=60_000)
    _number(page, "Pool depth", 2)
    _number(page, "Batch size (pairs)", 3)
    page.get_by_role("button", name="Run simulation").click()
    plots = main.locator(".js-plotly-plot")
    plots.nth(2).wait_for(state="visible", timeout=120_000)
    wait_idle(page)
    expect(main.locator('[data-testid="stException"]')).to_have_count(0, timeout=30_000)
    for i in range(3):
        wait_drawn(plots.nth(i), f"chart {i}", legend=True)

    # the tau and recall charts: one line per strategy; the band chart: each run, the stored name drawn as written
    for i in range(2):
        expect(plots.nth(i).locator(".legendtext")).to_have_text(["depth", "top-n", "random"], timeout=30_000)
    expect(plots.nth(2).locator(".legendtext")).to_have_text(["A", "B", ODD], timeout=30_000)

    table = main.locator('[data-testid="stTable"]')

    def cells() -> list[list[str]]:
        return [
            [c.strip() for c in row.locator("th, td").all_text_contents()] for row in table.locator("tbody tr").all()
        ]

    rows = [
        ["depth", "6", "75.0%", "1.0000", "8", "0", "0"],
        ["top-n", "3", "37.5%", "1.0000", "8", "0", "0"],
        ["random", "3", "37.5%", "1.0000", "8", "0", "0"],
    ]
    wait_for_value(cells, rows, what="the pairs-to-reach table")
    metrics = main.locator('[data-testid="stMetricValue"]')
    wait_for_value(lambda: metrics.all_text_contents()[:3], ["2", "8", "3"], what="the first three metrics")
    full = ", ".join(f"{run} {value:.4f}" for run, value in expected.full.items())
    caption = main.get_by_text("under all labels:")
    wait_for_value(  # md_escape's word joiners are invisible
        lambda: caption.inner_text().replace("\u2060", ""), f"nDCG@10 under all labels: {full}", what="the caption"
    )
    assert page.get_by_role("button", name="Download CSV").is_visible()
    path = screenshot(page, "labelling-simulation")
    assert path.stat().st_size > 20_000


def test_reviewer_is_offered_the_page(server, page):
    sign_in(page, server["url"], server["store"], "rev1", path=f"/labelling_simulation?collection={COLLECTION}")
    nav = page.locator('[data-testid="stSidebarNav"]')
    nav.get_by_text("Labelling simulation", exact=True).wait_for(timeout=30_000)
    expect(nav.get_by_text("Pooling", exact=True)).to_have_count(0, timeout=30_000)  # no admin pages for reviewers
