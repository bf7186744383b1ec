"""Issue 20: the collection chosen (or linked with ``?collection=``) survives the pages without a picker
(``/?collection=beta`` -> Manage -> Metrics used to show the first collection).  AppTest drives ``app.py``; the
browser drops the URL's parameters when the sidebar switches pages, which the tests do by hand."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from pooljudge.ui.common import COLLECTION_STATE
from tests.app.apptest import VIEWS
from tests.app.test_state_pages import APP, two  # noqa: F401 (fixture)

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def _switch(at: AppTest, view: str) -> AppTest:
    """A click in the sidebar: the next page's URL has no parameters."""
    at.query_params.clear()
    at.switch_page(str(VIEWS / view)).run()
    assert not at.exception, at.exception
    return at


def test_a_linked_collection_survives_pages_without_a_picker(two):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["pooljudge_user_id"] = two.admin_id
    at.query_params["collection"] = "beta"
    at.run()  # the overview: no picker
    assert not at.exception, at.exception
    assert at.session_state[COLLECTION_STATE] == "beta"
    _switch(at, "manage.py")
    assert at.query_params["collection"] == "beta"  # mirrored in the URL there too: a reload keeps it
    _switch(at, "metrics.py")
    assert at.selectbox(key="metrics_collection").value == "beta"
    at.selectbox(key="metrics_collection").select("alpha").run()
    for view in ("import_collections.py", "home.py", "runs.py"):
        _switch(at, view)
    assert at.selectbox(key="runs_collection").value == "alpha"


def test_an_unknown_linked_collection_changes_nothing(two):
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["pooljudge_user_id"] = two.admin_id
    at.session_state[COLLECTION_STATE] = "beta"
    at.query_params["collection"] = "gone"
    at.run()
    assert not at.exception, at.exception
    _switch(at, "runs.py")
    assert at.selectbox(key="runs_collection").value == "beta"
