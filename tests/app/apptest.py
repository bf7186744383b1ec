"""Helpers for AppTest page tests (the ``db`` fixture lives in conftest.py)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

VIEWS = Path(__file__).resolve().parents[2] / "views"


def open_as_admin(store, script, default_timeout=30):
    """Open a page as the logged-in admin (the app keeps only the account id in the session)."""
    at = AppTest.from_file(str(script), default_timeout=default_timeout)
    at.session_state["pooljudge_user_id"] = store.admin_id
    return at.run()
