"""A click that arrives while a run is about to stop early is not lost (``pooljudge.ui.script_control.stop_run``).

Found with the page-budget benchmark: the first switch from the Review page's Agreement tab to Pairs took 7-11 s in
4 of 10 first visits under load, the click's rerun sent at once and never run.  The Agreement tab's run was
waiting 0.2 s for its table before it showed the notice and called ``st.stop()``, and ``st.stop()`` replaces the
rerun the click had queued with a stop request.  The page showed the new tab only when the table's refresher
reran the app seconds later.

A tiny page (a fragment with two lazy tabs, the first waits then stops early, as ``shown_value`` does) is served
by Streamlit itself; the browser clicks the second tab while the first tab's run waits.
"""

from __future__ import annotations

import contextlib
import os
import time

import pytest

from tests.app.browser_helpers import REPO, serve_app, wait_for_js

pytestmark = pytest.mark.browser

WAIT_S = 2.0  # how long the first tab's run waits before it stops: the click lands inside it
SCRIPT = f"""
import sys
import time

import streamlit as st

sys.path.insert(0, {str(REPO)!r})
from pooljudge.ui.script_control import stop_run

stop = st.stop if st.query_params.get("stop") == "st.stop" else stop_run


@st.fragment
def tabs():
    for tab, name in zip(st.tabs(["Slow", "Quick"], key="tab", on_change="rerun"), ["Slow", "Quick"]):
        if tab.open:
            with tab:
                if name == "Slow":
                    st.caption("The slow tab waits.")
                    time.sleep({WAIT_S})
                    st.info("The slow tab stops here.")
                    stop()
                    st.error("drawn after the stop")
                else:
                    st.success("The quick tab's content.")


tabs()
"""
QUICK_SHOWN = """() => [...document.querySelectorAll('[data-testid="stAlert"]')]
    .some((a) => a.innerText.includes("The quick tab's content."))"""


@pytest.fixture(scope="module")
def tiny_app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("queued-click")
    script = folder / "tabs.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**os.environ}
    env.pop("POOLJUDGE_DB_URL", None)
    with serve_app(env, folder / "streamlit.log", script=script, plain=True) as url:
        yield url


def _click_quick_while_slow_waits(page, url: str) -> float:
    """Open ``url``, click the Quick tab while the Slow tab's run waits; the seconds the click took to show."""
    page.goto(url)
    page.get_by_text("The slow tab waits.").wait_for(timeout=60_000)
    clicked = time.monotonic()
    page.get_by_role("tab", name="Quick", exact=True).click()
    assert not page.get_by_text("The slow tab stops here.").is_visible()  # the click landed inside the wait
    try:
        wait_for_js(page, QUICK_SHOWN, timeout=(WAIT_S + 20) * 1000)
    except Exception:  # noqa: BLE001 - a Playwright timeout: the click was dropped
        return float("inf")
    return time.monotonic() - clicked


def test_a_tab_clicked_while_the_run_waits_to_stop_is_shown_after_it(tiny_app, browser_contexts):
    context = browser_contexts.take()
    try:
        page = context.new_page()
        took = _click_quick_while_slow_waits(page, tiny_app)
        assert took < WAIT_S + 20, "the click on Quick was dropped by the Slow tab's stop"
        assert page.get_by_role("tab", name="Quick", exact=True).get_attribute("aria-selected") == "true"
        assert page.get_by_text("drawn after the stop").count() == 0  # stop_run stops as st.stop() does
    finally:
        browser_contexts.give_back(context)


@pytest.mark.canary  # Streamlit's own behaviour, not pooljudge's: runs only with `pytest -m canary`
def test_st_stop_still_drops_a_click_queued_during_the_run(tiny_app, browser_contexts):
    """Why ``stop_run`` exists: once this fails, ``st.stop()`` keeps a queued rerun and ``stop_run`` can go."""
    context = browser_contexts.take()
    with contextlib.ExitStack() as stack:
        stack.callback(browser_contexts.give_back, context)
        page = context.new_page()
        assert _click_quick_while_slow_waits(page, f"{tiny_app}/?stop=st.stop") == float("inf")
