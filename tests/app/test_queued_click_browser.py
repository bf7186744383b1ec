"""A click that arrives while a run is about to stop early is not lost (``pooljudge.ui.script_control.stop_run``).

Found with the page-budget benchmark: the first switch from the Review page's Agreement tab to Pairs took 7-11 s in
4 of 10 first visits under load, the click's rerun sent at once and never run.  The Agreement tab's run was
waiting 0.2 s for its table before it showed the notice and called ``st.stop()``, and ``st.stop()`` replaces the
rerun the click had queued with a stop request.  The page showed the new tab only when the table's refresher
reran the app seconds later.

A tiny page (a fragment with two lazy tabs, the first waits then stops early, as ``shown_value`` does) is served
by Streamlit itself; the browser clicks the second tab while the first tab's run waits, and the run goes on (to its
stop) only once the click's request has left the browser, so the click always lands inside the run.
"""

from __future__ import annotations

import contextlib
import os
import time

import pytest

from tests.app.browser_helpers import REPO, serve_app, wait_for_js

pytestmark = pytest.mark.browser

SCRIPT = f"""
import os
import sys
import time

import streamlit as st

sys.path.insert(0, {str(REPO)!r})
from pooljudge.ui.script_control import stop_run

stop = st.stop if st.query_params.get("stop") == "st.stop" else stop_run
# the slow tab's run waits until the test has clicked the quick tab and the click's request has left the browser
release = os.path.join(os.environ["QUEUED_CLICK_DIR"], st.query_params.get("release", "none"))


@st.fragment
def tabs():
    for tab, name in zip(st.tabs(["Slow", "Quick"], key="tab", on_change="rerun"), ["Slow", "Quick"]):
        if tab.open:
            with tab:
                if name == "Slow":
                    st.caption("The slow tab waits.")
                    deadline = time.monotonic() + 120
                    while not os.path.exists(release) and time.monotonic() < deadline:
                        time.sleep(0.05)
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
    """``(url, folder)``: the tiny page served by Streamlit; a file ``folder/<release>`` lets its slow tab go on."""
    folder = tmp_path_factory.mktemp("queued-click")
    script = folder / "tabs.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**os.environ, "QUEUED_CLICK_DIR": str(folder)}
    env.pop("POOLJUDGE_DB_URL", None)
    with serve_app(env, folder / "streamlit.log", script=script, plain=True) as url:
        yield url, folder


def _click_quick_while_slow_waits(page, app, release: str, query: str = "", wait_s: float = 30) -> bool:
    """Open the page, click the Quick tab while the Slow tab's run waits, let that run go on once the click's
    request has left the browser; whether the Quick tab's content showed within ``wait_s``."""
    url, folder = app
    sent: list[float] = []
    page.on("websocket", lambda socket: socket.on("framesent", lambda _payload: sent.append(time.monotonic())))
    page.goto(f"{url}/?release={release}{query}")
    page.get_by_text("The slow tab waits.").wait_for(timeout=60_000)
    before = len(sent)
    page.get_by_role("tab", name="Quick", exact=True).click()
    deadline = time.monotonic() + 30
    while len(sent) == before:  # the click's rerun request is on its way to the server
        assert time.monotonic() < deadline, "the click sent nothing"
        page.wait_for_timeout(20)
    assert not page.get_by_text("The slow tab stops here.").is_visible()  # the slow run is still waiting
    page.wait_for_timeout(300)  # and is queued by the server (a loopback hop)
    (folder / release).touch()  # the slow run goes on to its stop (drawn in the Slow tab, hidden by now)
    try:
        wait_for_js(page, QUICK_SHOWN, timeout=wait_s * 1000)
    except Exception:  # noqa: BLE001 - a Playwright timeout: the click was dropped
        return False
    return True


def test_a_tab_clicked_while_the_run_waits_to_stop_is_shown_after_it(tiny_app, browser_contexts):
    context = browser_contexts.take()
    try:
        page = context.new_page()
        assert _click_quick_while_slow_waits(page, tiny_app, "stop-run"), "the Slow tab's stop dropped the click"
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
        assert not _click_quick_while_slow_waits(page, tiny_app, "st-stop", "&stop=st.stop", wait_s=5)
