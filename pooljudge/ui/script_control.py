"""Ending a run of a page script early without losing the click that arrived meanwhile.

``st.stop()`` ends the run by asking the script runner to stop (``ScriptRequests.request_stop``), and that
request replaces whatever the runner had queued: a rerun the browser asked for while this run was going, a tab
switch or a button click, is dropped, and the page sits on the old tab until something else reruns it.  A run
that waits (a table the background computes is awaited for up to 0.2 s before its notice and the stop) made the
window wide enough to lose the first Review tab switch in 4 of 10 visits under load (the table came 7-9 s later
and its refresher's rerun drew the tab at last).

Raising ``StopException`` ends the run the same way (the script runner's own handler for a run stopped early: the
elements drawn so far stay, the run counts as finished), while the queued rerun stays queued and runs next.
"""

from __future__ import annotations

from typing import NoReturn

from streamlit.runtime.scriptrunner import StopException


def stop_run() -> NoReturn:
    """Stop this run of the page (or fragment) here, as ``st.stop()`` does, keeping any rerun queued meanwhile."""
    raise StopException()
