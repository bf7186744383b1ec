"""Sign-in throttling that is atomic and fair (issue 21, finding 2, acceptance 2).

Atomic: the attempt is claimed (counted) in the same write transaction that
checks the lock, before the password is verified, so that N sign-ins at once
verify at most the allowance.  Fair: failures count against the account and
against (account, client), never against an address alone, so that typos on
other names from a shared address never lock an account out.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

import db.sessions as sessions
from db.models import AuthSession, LoginThrottle
from db.sessions import login
from db.throttle import ACCOUNT_FREE_FAILURES, FREE_FAILURES, throttle_keys
from db.users import add_user
from tests.db.forked import run_forked
from tests.db.processes import PRELOAD

T0 = datetime(2026, 11, 27, 8, 0, 0, tzinfo=UTC)
PASSWORD = "correct horse"
ARGON2_COST_S = 0.05  # what one production Argon2 verification takes: the window a check-then-record race needs


@pytest.fixture
def ann(store):
    with store.write() as s:
        return add_user(s, "ann", PASSWORD, "annotator")


class CountingVerifier:
    """Wraps ``verify_password``: counts the real hash verifications and takes production Argon2 time."""

    def __init__(self, real) -> None:
        self.real = real
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, password_hash: str, password: str) -> bool:
        with self._lock:
            self.calls.append(password)
        time.sleep(ARGON2_COST_S)
        return self.real(password_hash, password)


def _parallel_logins(store, attempts: list[tuple[str, str, str]]):
    """Start every ``(username, password, client)`` sign-in at the same moment, one thread each (as Streamlit does)."""
    barrier = threading.Barrier(len(attempts), timeout=60)

    def attempt(args):
        barrier.wait()
        return login(store, *args, now=T0)

    with ThreadPoolExecutor(len(attempts)) as pool:
        return list(pool.map(attempt, attempts))


def _failures(store) -> dict[str, int]:
    with store.read() as s:
        return dict(s.execute(select(LoginThrottle.key, LoginThrottle.failures)).all())


def test_the_keys_are_the_account_and_the_account_from_this_client():
    assert throttle_keys("Ann", "10.0.0.7") == ["user:ann", "user+client:10.0.0.7:ann"]
    # full-width letters are the same account (NFKC), so they are the same keys
    assert throttle_keys("ＡＮＮ", "10.0.0.7") == ["user:ann", "user+client:10.0.0.7:ann"]
    assert throttle_keys("ann") == ["user:ann", "user+client::ann"]  # an unknown address is one client


def test_40_parallel_wrong_passwords_from_one_client_verify_at_most_the_allowance(store, ann, monkeypatch):
    verifier = CountingVerifier(sessions.verify_password)
    monkeypatch.setattr(sessions, "verify_password", verifier)
    results = _parallel_logins(store, [("ann", f"wrong password {i}", "10.0.0.7") for i in range(40)])
    assert len(verifier.calls) == FREE_FAILURES == 5
    assert sum(r.retry_after > 0 for r in results) == 35  # refused without a verification
    assert not any(r.ok for r in results)
    assert _failures(store) == {"user:ann": 5, "user+client:10.0.0.7:ann": 5}


def test_40_parallel_wrong_passwords_from_40_clients_verify_at_most_the_account_allowance(store, ann, monkeypatch):
    verifier = CountingVerifier(sessions.verify_password)
    monkeypatch.setattr(sessions, "verify_password", verifier)
    results = _parallel_logins(store, [("ann", f"wrong password {i}", f"10.0.1.{i}") for i in range(40)])
    assert len(verifier.calls) == ACCOUNT_FREE_FAILURES == 20
    assert sum(r.retry_after > 0 for r in results) == 20
    assert _failures(store)["user:ann"] == 20


def test_a_right_password_among_parallel_wrong_ones_is_checked_once_and_forgives_the_account(store, ann, monkeypatch):
    """The right password is claimed like any attempt; on success the account and this client's keys are cleared."""
    verifier = CountingVerifier(sessions.verify_password)
    monkeypatch.setattr(sessions, "verify_password", verifier)
    results = _parallel_logins(store, [("ann", PASSWORD, "10.0.0.8")] + [("ann", "wrong", "10.0.0.9")] * 3)
    assert len(verifier.calls) == 4 and results[0].ok and results[0].account == ann
    failures = _failures(store)
    assert "user+client:10.0.0.8:ann" not in failures
    assert failures["user+client:10.0.0.9:ann"] == 3


@pytest.mark.slow
def test_four_server_processes_on_one_store_verify_at_most_the_allowance_together(store, ann):
    if store.engine.dialect.name != "sqlite":
        pytest.skip("one multi-process run is enough; PostgreSQL's write lock is covered by the thread tests")
    # Four processes of their own: each opens the store, then all four fire together.
    servers = run_forked(
        "tests.db.processes:wrong_sign_ins",
        [(store.url, "10.0.0.7", 10)] * 4,
        preload=PRELOAD["wrong_sign_ins"],
        timeout=120,
    )
    assert [(s.exitcode, s.error) for s in servers] == [(0, "")] * 4
    assert len({s.pid for s in servers}) == 4
    assert sum(s.result for s in servers) == FREE_FAILURES
    assert _failures(store) == {"user:ann": 5, "user+client:10.0.0.7:ann": 5}


def test_20_failures_on_unknown_usernames_then_the_admin_signs_in_from_that_address_at_once(store):
    with store.write() as s:
        admin = add_user(s, "admin", PASSWORD, "admin")
    shared = "::ffff:127.0.0.1"  # what Streamlit reported for every local browser
    for i in range(20):
        result = login(store, f"guess{i}", "password1", shared, now=T0)
        assert not result.ok and result.retry_after == 0
    for _ in range(9):  # and nine typos on one name that does not exist
        login(store, "admni", PASSWORD, shared, now=T0)
    ok = login(store, "admin", PASSWORD, shared, now=T0)
    assert ok.ok and ok.account == admin and ok.retry_after == 0
    with store.read() as s:
        assert s.scalar(select(AuthSession.user_id)) == admin.id
    failures = _failures(store)
    assert not any(key.endswith(":admin") for key in failures)
    assert failures["user:admni"] == FREE_FAILURES and failures["user:guess0"] == 1


def test_an_attacker_on_one_address_does_not_lock_the_account_for_other_addresses(store, ann):
    for _ in range(FREE_FAILURES):
        login(store, "ann", "wrong", "10.6.6.6", now=T0)
    assert login(store, "ann", PASSWORD, "10.6.6.6", now=T0).retry_after == pytest.approx(1.0)
    assert login(store, "ann", PASSWORD, "10.0.0.2", now=T0).account == ann


def test_an_unknown_username_costs_one_verification_like_a_known_one(store, ann, monkeypatch):
    """No user enumeration by timing: both verify one Argon2 hash of the same parameters, in the same steps."""
    seen: list[str] = []
    real = sessions.verify_password
    monkeypatch.setattr(sessions, "verify_password", lambda h, p: seen.append(h) or real(h, p))
    statements: list[str] = []

    from sqlalchemy import event

    def count(conn, cursor, statement, *args):
        statements.append(statement.split()[0].upper())

    event.listen(store.engine, "before_cursor_execute", count)
    try:
        assert not login(store, "ann", "wrong password", "10.0.0.3", now=T0).ok
        known = list(statements)
        statements.clear()
        assert not login(store, "nobody", "wrong password", "10.0.0.3", now=T0).ok
        unknown = list(statements)
    finally:
        event.remove(store.engine, "before_cursor_execute", count)
    assert len(seen) == 2
    params = [h.rsplit("$", 2)[0] for h in seen]  # $argon2id$v=19$m=...,t=...,p=...
    assert params[0] == params[1] and params[0].startswith("$argon2id$")
    assert [s for s in known if s != "SELECT"] == [s for s in unknown if s != "SELECT"]
    assert known.count("SELECT") == unknown.count("SELECT")


def test_an_attempt_on_a_locked_key_is_refused_without_queueing_for_the_write_lock(store, ann, monkeypatch):
    for _ in range(FREE_FAILURES):
        login(store, "ann", "wrong", "10.0.0.7", now=T0)
    monkeypatch.setattr(store, "write", lambda: pytest.fail("a refused attempt took the write lock"))
    assert login(store, "ann", PASSWORD, "10.0.0.7", now=T0).retry_after == pytest.approx(1.0)
