"""Server-side sessions (revocable, expiring, stored hashed) and login throttling (issue 9, acceptance 4)."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

import db.sessions as sessions
from db.models import AuthSession, LoginThrottle, User
from db.sessions import (
    account_for_token,
    check_session,
    create_session,
    live_sessions,
    login,
    revoke_session,
    touch_session,
)
from db.throttle import delay_after, locked_for, throttle_keys
from db.users import add_user, revoke_all, set_active, set_password, set_role

T0 = datetime(2026, 11, 26, 8, 0, 0, tzinfo=UTC)
PASSWORD = "correct horse"


class Clock:
    """An injectable clock: tests move time instead of sleeping."""

    def __init__(self, start: datetime = T0) -> None:
        self.now = start

    def advance(self, seconds: float) -> datetime:
        self.now += timedelta(seconds=seconds)
        return self.now


@pytest.fixture
def ann(store):
    with store.write() as s:
        return add_user(s, "ann", PASSWORD, "annotator")


# --------------------------------------------------------------------------- sessions


def test_a_session_token_is_random_and_stored_only_as_its_sha256(store, ann):
    with store.write() as s:
        t1 = create_session(s, ann.id, "10.0.0.1", now=T0)
        t2 = create_session(s, ann.id, "10.0.0.1", now=T0)
    assert t1 != t2 and len(t1) >= 43  # 32 random bytes, url-safe base64
    with store.read() as s:
        rows = s.execute(select(AuthSession.token_hash, AuthSession.client, AuthSession.expires_at)).all()
    assert sorted(r.token_hash for r in rows) == sorted(hashlib.sha256(t.encode()).hexdigest() for t in (t1, t2))
    assert all(t1 not in r.token_hash and r.client == "10.0.0.1" for r in rows)
    assert sessions._aware(rows[0].expires_at) == T0 + timedelta(days=14)
    with store.read() as s:
        assert account_for_token(s, t1, now=T0) == ann
        assert account_for_token(s, "not-a-token", now=T0) is None
        assert account_for_token(s, "", now=T0) is None
        assert account_for_token(s, None, now=T0) is None


def test_a_session_expires(store, ann):
    with store.write() as s:
        token = create_session(s, ann.id, ttl=timedelta(hours=1), now=T0)
    with store.read() as s:
        assert account_for_token(s, token, now=T0 + timedelta(minutes=59)) == ann
        assert account_for_token(s, token, now=T0 + timedelta(hours=1)) is None
        assert live_sessions(s, ann.id, now=T0 + timedelta(hours=1)) == 0


def test_logout_revokes_one_session_and_disable_revokes_all(store, ann):
    with store.write() as s:
        a, b, c = (create_session(s, ann.id, now=T0) for _ in range(3))
    with store.write() as s:
        assert revoke_session(s, a, now=T0) is True
        assert revoke_session(s, a, now=T0) is False  # already revoked
    with store.read() as s:
        assert account_for_token(s, a, now=T0) is None
        assert account_for_token(s, b, now=T0) == ann
        assert live_sessions(s, ann.id, now=T0) == 2
    with store.write() as s:
        set_active(s, "ann", False)
    with store.read() as s:
        assert [account_for_token(s, t, now=T0) for t in (b, c)] == [None, None]
        assert live_sessions(s, ann.id, now=T0) == 0
    with store.write() as s:  # enabling again does not bring the old sessions back
        set_active(s, "ann", True)
    with store.read() as s:
        assert account_for_token(s, b, now=T0) is None


def test_a_disabled_account_is_refused_even_with_a_live_session(store, ann):
    with store.write() as s:
        token = create_session(s, ann.id, now=T0)
        # disable behind db.users' back: the token check itself must read `active`
        s.get(User, ann.id).active = False
    with store.read() as s:
        assert account_for_token(s, token, now=T0) is None


def test_role_and_password_changes_revoke_sessions(store, ann):
    with store.write() as s:
        t1 = create_session(s, ann.id, now=T0)
    with store.write() as s:
        assert set_role(s, "ann", "reviewer").role == "reviewer"
    with store.read() as s:
        assert account_for_token(s, t1, now=T0) is None
    with store.write() as s:
        t2 = create_session(s, ann.id, now=T0)
    with store.read() as s:
        assert account_for_token(s, t2, now=T0).role == "reviewer"
    with store.write() as s:
        set_role(s, "ann", "reviewer")  # unchanged role: nobody is signed out
    with store.read() as s:
        assert account_for_token(s, t2, now=T0) is not None
    with store.write() as s:
        set_password(s, "ann", "battery staple")
    with store.read() as s:
        assert account_for_token(s, t2, now=T0) is None
    with store.write() as s:
        with pytest.raises(ValueError, match="role must be one of"):
            set_role(s, "ann", "root")
        with pytest.raises(LookupError):
            set_role(s, "nobody", "admin")


def test_last_seen_is_written_at_most_once_a_minute(store, ann):
    with store.write() as s:
        token = create_session(s, ann.id, now=T0)
    with store.read() as s:
        assert check_session(s, token, now=T0 + timedelta(seconds=59)).touch_due is False
        assert check_session(s, token, now=T0 + timedelta(seconds=60)).touch_due is True
    with store.write() as s:
        assert touch_session(s, token, now=T0 + timedelta(seconds=30)) is False
        assert touch_session(s, token, now=T0 + timedelta(seconds=61)) is True
        assert touch_session(s, token, now=T0 + timedelta(seconds=62)) is False
    with store.read() as s:
        seen = s.scalar(select(AuthSession.last_seen_at))
        assert sessions._aware(seen) == T0 + timedelta(seconds=61)
        assert check_session(s, token, now=T0 + timedelta(seconds=90)).touch_due is False


def test_revoke_all_counts_live_sessions(store, ann):
    with store.write() as s:
        for _ in range(2):
            create_session(s, ann.id, now=T0)
    with store.write() as s:
        assert revoke_all(s, ann.id, now=T0) == 2
        assert revoke_all(s, ann.id, now=T0) == 0


# --------------------------------------------------------------------------- throttling


def test_delays_double_after_five_free_failures_up_to_15_minutes():
    assert [delay_after(n).total_seconds() for n in range(1, 11)] == [0, 0, 0, 0, 1, 2, 4, 8, 16, 32]
    assert delay_after(15).total_seconds() == 900 and delay_after(10_000).total_seconds() == 900


def test_sixth_wrong_password_is_delayed_and_a_locked_attempt_never_touches_the_hash(store, ann, monkeypatch):
    clock = Clock()
    for _ in range(5):  # five free failures, back to back
        result = login(store, "ann", "wrong password", "10.0.0.1", now=clock.now)
        assert not result.ok and result.retry_after == 0
    calls = []
    real_verify = sessions.verify_password
    monkeypatch.setattr(sessions, "verify_password", lambda *a: calls.append(a) or real_verify(*a))
    sixth = login(store, "ann", "wrong password", "10.0.0.1", now=clock.now)
    assert sixth.account is None and sixth.retry_after == pytest.approx(1.0)
    assert calls == []  # refused before the password hash was looked at
    # even the right password is refused while locked, without a verify
    assert login(store, "ann", PASSWORD, "10.0.0.1", now=clock.advance(0.5)).retry_after == pytest.approx(0.5)
    assert calls == []
    # after the delay the 6th wrong password is checked and doubles the delay
    assert login(store, "ann", "wrong password", "10.0.0.1", now=clock.advance(0.5)).retry_after == 0
    assert len(calls) == 1
    assert login(store, "ann", PASSWORD, "10.0.0.1", now=clock.advance(1.9)).retry_after == pytest.approx(0.1)
    assert len(calls) == 1
    # a correct password after the delay works and clears the username's counter
    ok = login(store, "ann", PASSWORD, "10.0.0.1", now=clock.advance(0.1))
    assert ok.account == ann and ok.token and len(calls) == 2
    with store.read() as s:
        assert account_for_token(s, ok.token, now=clock.now) == ann
        keys = dict(s.execute(select(LoginThrottle.key, LoginThrottle.failures)).all())
    assert keys == {}  # the success forgives the account and the account from this address


def test_delays_keep_doubling_and_are_capped(store, ann):
    clock = Clock()
    waits = []
    for _ in range(20):
        result = login(store, "ANN", "wrong password", now=clock.now)  # usernames are throttled case-blind
        assert result.retry_after == 0
        with store.read() as s:
            waits.append(locked_for(s, throttle_keys("ann"), now=clock.now))
        clock.advance(waits[-1])
    assert waits[:9] == [0, 0, 0, 0, 1, 2, 4, 8, 16]
    assert max(waits) == 900 and waits[-1] == 900


def test_a_client_trying_many_usernames_locks_none_of_them_for_the_others(store, ann):
    """Failures are keyed by account and (account, client), never by address alone (issue 21)."""
    clock = Clock()
    for i in range(5):
        assert login(store, f"guess{i}", "password1", "10.0.0.9", now=clock.now).retry_after == 0
    assert login(store, "ann", PASSWORD, "10.0.0.9", now=clock.now).account == ann
    with store.read() as s:
        keys = dict(s.execute(select(LoginThrottle.key, LoginThrottle.failures)).all())
    assert keys == {
        f"{kind}{name}": 1
        for name in ("guess0", "guess1", "guess2", "guess3", "guess4")
        for kind in ("user:", "user+client:10.0.0.9:")
    }


def test_failures_are_forgotten_after_an_hour_without_one(store, ann):
    clock = Clock()
    for _ in range(5):
        login(store, "ann", "wrong password", now=clock.now)
    clock.advance(3600)
    assert login(store, "ann", "wrong password", now=clock.now).retry_after == 0
    with store.read() as s:
        assert s.scalar(select(LoginThrottle.failures).where(LoginThrottle.key == "user:ann")) == 1


def test_disabled_and_unknown_accounts_fail_like_a_wrong_password(store, ann):
    clock = Clock()
    with store.write() as s:
        set_active(s, "ann", False)
    assert login(store, "ann", PASSWORD, now=clock.now).account is None
    assert login(store, "nobody", PASSWORD, now=clock.now).account is None
    with store.read() as s:
        failures = dict(s.execute(select(LoginThrottle.key, LoginThrottle.failures)).all())
        assert s.scalar(select(AuthSession.id)) is None
    assert failures == {"user:ann": 1, "user+client::ann": 1, "user:nobody": 1, "user+client::nobody": 1}


def test_the_hash_is_verified_outside_any_transaction(store, ann, monkeypatch):
    """Argon2 takes tens of ms: no transaction (least of all the write lock) may be open meanwhile."""
    open_transactions = []
    real_verify = sessions.verify_password

    def verify(*args):
        open_transactions.append(store.engine.pool.checkedout())
        return real_verify(*args)

    monkeypatch.setattr(sessions, "verify_password", verify)
    assert login(store, "ann", PASSWORD, now=T0).ok
    assert not login(store, "ann", "wrong password", now=T0).ok
    assert open_transactions == [0, 0]


def test_concurrent_failures_all_count(store, ann, monkeypatch):
    """Eight wrong passwords at once, each verifying while the others claim: every claim is counted.

    PostgreSQL: the eight race to insert the same new throttle key, then to increment it.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    barrier = threading.Barrier(8, timeout=30)
    monkeypatch.setattr(sessions, "verify_password", lambda *a: barrier.wait() is None)  # all claimed, then all verify
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: login(store, "ann", f"wrong password {i}", f"10.0.0.{i}", now=T0), range(8)))
    assert all(not r.ok and r.retry_after == 0 for r in results)
    with store.read() as s:
        failures = dict(s.execute(select(LoginThrottle.key, LoginThrottle.failures)).all())
    assert failures == {"user:ann": 8} | {f"user+client:10.0.0.{i}:ann": 1 for i in range(8)}
