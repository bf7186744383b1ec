"""The login screen and the session check of every run, under AppTest (app.py with st.navigation)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

import db.sessions as sessions
from db.models import AuthSession, LoginThrottle
from db.sessions import account_for_token, create_session
from db.users import add_user, set_active, set_role
from pooljudge.ui.auth import SIGNED_OUT

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

APP = str(Path(__file__).resolve().parents[2] / "app.py")
PASSWORD = "correct horse"


@pytest.fixture
def ann(db):
    with db.write() as s:
        return add_user(s, "ann", PASSWORD, "annotator")


def _login(at: AppTest, username: str, password: str) -> AppTest:
    at.text_input[0].input(username)
    at.text_input[1].input(password)
    return next(b for b in at.button if b.label == "Log in").click().run()


def test_login_starts_a_server_session_and_every_run_checks_it(db, ann):
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert at.title[0].value == "pooljudge" and not at.warning  # no "signed out" notice on a first visit
    _login(at, "ann", PASSWORD)
    assert not at.exception
    token = at.session_state["pooljudge_session_token"]
    assert at.session_state["pooljudge_user_id"] == ann.id
    with db.read() as s:
        assert account_for_token(s, token) == ann
        assert s.scalar(select(AuthSession.token_hash)) == sessions.token_hash(token)
    assert "Logged in as **ann** (annotator)" in [c.value for c in at.sidebar.caption]
    at.run()
    assert "Logged in as **ann** (annotator)" in [c.value for c in at.sidebar.caption]

    with db.write() as s:
        set_active(s, "ann", False)
    at.run()  # the next run (any interaction) finds the session revoked
    assert not at.exception
    assert at.title[0].value == "pooljudge" and SIGNED_OUT in [w.value for w in at.warning]
    assert "pooljudge_user_id" not in at.session_state
    at.run()  # and stays signed out
    assert SIGNED_OUT in [w.value for w in at.warning]


def test_a_role_change_signs_the_session_out(db, ann):
    with db.write() as s:
        token = create_session(s, ann.id)
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["pooljudge_user_id"] = ann.id
    at.session_state["pooljudge_session_token"] = token
    at.run()
    assert "Logged in as **ann** (annotator)" in [c.value for c in at.sidebar.caption]
    with db.write() as s:
        set_role(s, "ann", "reviewer")
    at.run()
    assert SIGNED_OUT in [w.value for w in at.warning]


def test_a_locked_out_login_is_refused_with_the_wait_without_touching_the_hash(db, ann, monkeypatch):
    locked_until = datetime.now(UTC) + timedelta(seconds=60)
    with db.write() as s:
        s.add(LoginThrottle(key="user:ann", failures=7, locked_until=locked_until))
    monkeypatch.setattr(sessions, "verify_password", lambda *a: pytest.fail("the hash was checked"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    _login(at, "ann", PASSWORD)
    assert not at.exception
    (error,) = at.error
    assert error.value.startswith("Too many failed logins: wait ") and error.value.endswith(
        " s before the next attempt."
    )
    # the wait shown is what was left of the lock when the page ran: between what is left now and the full 60 s
    left_now = math.floor((locked_until - datetime.now(UTC)).total_seconds())
    assert left_now <= int(error.value.split("wait ")[1].split(" s")[0]) <= 60
    assert "pooljudge_user_id" not in at.session_state


def test_a_wrong_password_is_counted_and_refused(db, ann):
    at = AppTest.from_file(APP, default_timeout=60).run()
    _login(at, "ANN", "wrong password")
    assert [e.value for e in at.error] == ["Unknown user, wrong password, or a disabled account."]
    with db.read() as s:
        assert s.scalar(select(LoginThrottle.failures).where(LoginThrottle.key == "user:ann")) == 1


def test_logout_revokes_the_session(db, ann):
    at = AppTest.from_file(APP, default_timeout=60).run()
    _login(at, "ann", PASSWORD)
    token = at.session_state["pooljudge_session_token"]
    at.sidebar.button(key="logout").click().run()
    assert not at.exception
    assert at.title[0].value == "pooljudge"
    with db.read() as s:
        assert account_for_token(s, token) is None


def test_a_page_test_session_without_token_still_rereads_the_account(db, ann):
    """Page tests put only the account id into the session: it works, and a disabled account still stops."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.session_state["pooljudge_user_id"] = ann.id
    at.run()
    assert "Logged in as **ann** (annotator)" in [c.value for c in at.sidebar.caption]
    with db.write() as s:
        set_active(s, "ann", False)
    at.run()
    assert at.title[0].value == "pooljudge" and SIGNED_OUT in [w.value for w in at.warning]


def test_a_page_stops_when_the_account_is_demoted_or_disabled(db):
    with db.write() as s:
        rev = add_user(s, "rev", PASSWORD, "reviewer")
    page = str(Path(APP).parent / "views" / "review.py")
    at = AppTest.from_file(page, default_timeout=60)
    at.session_state["pooljudge_user_id"] = rev.id
    at.run()
    assert not at.exception and not at.error
    with db.write() as s:
        set_role(s, "rev", "annotator")
    at.run()
    assert [e.value for e in at.error] == ["You do not have access to this page."] and not at.dataframe
    with db.write() as s:
        set_active(s, "rev", False)
    at.run()
    assert [w.value for w in at.warning] == [SIGNED_OUT] and not at.error and not at.dataframe
