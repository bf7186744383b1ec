"""The browser tests' ``cli`` helper: the ``pooljudge`` command line run in the test's own process.

A subprocess per call cost an interpreter start and the imports of sqlalchemy, alembic and numpy (about two
CPU-seconds) for work that takes milliseconds; the helper keeps the subprocess's contract: the stdout as text,
a failure with the stderr's text, ``POOLJUDGE_PASSWORD`` set and ``POOLJUDGE_DB_URL`` unset for the call only.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from core.passwords import verify_password
from db.engine import Store, sqlite_url
from db.users import list_users, sign_in_candidate
from tests.app.browser_helpers import PASSWORD, add_users, cli
from tests.sqlite_template import copy_store

ELSEWHERE = "postgresql+psycopg://nobody@127.0.0.1:9/nowhere"  # a store the calls must not reach


@pytest.fixture
def path(sqlite_template, tmp_path, monkeypatch):
    """A migrated SQLite store's file, with a ``POOLJUDGE_DB_URL`` that would win over ``--db`` if kept, no
    ``POOLJUDGE_PASSWORD``, and no way to start a process."""
    monkeypatch.setenv("POOLJUDGE_DB_URL", ELSEWHERE)
    monkeypatch.delenv("POOLJUDGE_PASSWORD", raising=False)

    def no_process(*args, **kwargs):
        raise AssertionError(f"a process was started: {args[0] if args else kwargs}")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    return copy_store(sqlite_template, tmp_path / "store.db")


def _accounts(path) -> dict[str, tuple[str, bool]]:
    store = Store(sqlite_url(path), upgrade=False)
    try:
        with store.read() as s:
            return {a.username: (a.role, a.active) for a in list_users(s)}
    finally:
        store.dispose()


def test_cli_runs_in_this_process_and_returns_the_stdout(path):
    assert cli(path, "user", "add", "sam", "--role", "reviewer") == "added reviewer 'sam'\n"
    assert cli(path, "user", "disable", "sam") == "disabled 'sam'; its sessions are signed out\n"
    assert _accounts(path) == {"sam": ("reviewer", False)}
    store = Store(sqlite_url(path), upgrade=False)
    with store.read() as s:
        row = sign_in_candidate(s, "sam")
    store.dispose()
    assert row is not None and verify_password(row.password_hash, PASSWORD)
    # the call's own variables are gone, the test's are back
    assert os.environ["POOLJUDGE_DB_URL"] == ELSEWHERE and "POOLJUDGE_PASSWORD" not in os.environ


def test_add_users_adds_each_account_with_its_role(path):
    add_users(path, {"ann": "annotator", "boss": "admin"})
    assert _accounts(path) == {"ann": ("annotator", True), "boss": ("admin", True)}


def test_a_failing_call_fails_the_caller_with_the_stderr_text(path):
    with pytest.raises(AssertionError, match="^error: .*'ghost'"):
        cli(path, "user", "disable", "ghost")
    assert cli(path, "user", "disable", "ghost", check=False) == ""
    assert _accounts(path) == {}


def test_a_usage_error_is_an_exit_status_not_a_system_exit(path):
    with pytest.raises(AssertionError, match="invalid choice: 'frobnicate'"):
        cli(path, "frobnicate")
    assert cli(path, "frobnicate", check=False) == ""
    assert os.environ["POOLJUDGE_DB_URL"] == ELSEWHERE and "POOLJUDGE_PASSWORD" not in os.environ
