"""Signed-in sessions that survive a reload, and login throttling.

A session is a random token held by the browser (a cookie); the store keeps
only its SHA-256, so a copy of the database does not let anyone sign in.
Every page run validates the token (:func:`account_for_token`): a revoked or
expired session, or a disabled account, signs the browser out.  Disabling an
account, changing its role or its password revokes all of its sessions
(:mod:`db.users` calls :func:`revoke_all`).

Login throttling: failed attempts are counted per username
(``user:<name lowercased>``) and per client address (``client:<ip>``).  The
first :data:`FREE_FAILURES` failures of a key are free; from then on the key
is locked for 1 s, 2 s, 4 s ... (at most :data:`MAX_DELAY`) after each further
failure.  An attempt while a key is locked is refused before the password
hash is even looked at.  :func:`login` verifies the Argon2 hash outside any
transaction (it takes ~50 ms of CPU and must not hold the write lock that
annotators' labels need), then records the outcome in one short write.

Functions take a ``Session`` first and leave the transaction to the caller,
except :func:`login`, which takes the :class:`~db.engine.Store` because its
point is to place the transactions itself.  ``now`` is injectable for tests.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from core.passwords import hash_password, needs_rehash, verify_password
from db.models import AuthSession, LoginThrottle, User
from db.rowcount import rowcount
from db.users import Account, _account

SESSION_TTL = timedelta(days=14)
# verified for an unknown username, so that an unknown and a known account take the same time
_DUMMY_HASH = hash_password("timing-equaliser-not-a-password")
TOUCH_EVERY = timedelta(minutes=1)
FREE_FAILURES = 5
FIRST_DELAY = timedelta(seconds=1)
MAX_DELAY = timedelta(minutes=15)
FORGET_AFTER = timedelta(hours=1)
"""A key whose last failure is this old starts again from zero (a typo last week costs nothing today)."""


def _now(now: datetime | None) -> datetime:
    return _aware(now) if now is not None else datetime.now(UTC)


def _aware(value: datetime) -> datetime:
    # SQLite hands timezone-aware columns back naive (they were written in UTC)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def token_hash(token: str) -> str:
    """The SHA-256 (hex) under which a session token is stored."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- sessions


def create_session(
    session: Session, user_id: int, client: str = "", ttl: timedelta = SESSION_TTL, *, now: datetime | None = None
) -> str:
    """Start a session for ``user_id``; returns the raw token (shown to the browser once, never stored)."""
    now = _now(now)
    token = secrets.token_urlsafe(32)
    session.add(
        AuthSession(
            token_hash=token_hash(token),
            user_id=user_id,
            client=(client or "")[:64],
            created_at=now,
            last_seen_at=now,
            expires_at=now + ttl,
        )
    )
    session.flush()
    return token


@dataclass(frozen=True)
class SessionCheck:
    """What a token is worth now: the account, and whether ``last_seen_at`` is due for a touch."""

    account: Account
    expires_at: datetime
    touch_due: bool


def check_session(session: Session, token: str | None, *, now: datetime | None = None) -> SessionCheck | None:
    """The live session of ``token``; None when unknown, revoked, expired, or the account is disabled.

    Read only, so that it fits the read transaction of every page run; the caller
    writes :func:`touch_session` only when ``touch_due`` (at most once a minute).
    """
    if not token:
        return None
    now = _now(now)
    row = session.execute(
        select(AuthSession, User)
        .join(User, User.id == AuthSession.user_id)
        .where(AuthSession.token_hash == token_hash(token))
    ).first()
    if row is None:
        return None
    auth, user = row
    if auth.revoked_at is not None or _aware(auth.expires_at) <= now or not user.active:
        return None
    return SessionCheck(
        account=_account(user),
        expires_at=_aware(auth.expires_at),
        touch_due=now - _aware(auth.last_seen_at) >= TOUCH_EVERY,
    )


def account_for_token(session: Session, token: str | None, *, now: datetime | None = None) -> Account | None:
    """The active account signed in with ``token``, or None (unknown, revoked, expired, disabled)."""
    check = check_session(session, token, now=now)
    return check.account if check is not None else None


def touch_session(session: Session, token: str, *, now: datetime | None = None) -> bool:
    """Record that the session was seen now, unless it was within the last minute (one write a minute at most)."""
    now = _now(now)
    return bool(
        rowcount(
            session,
            update(AuthSession)
            .where(AuthSession.token_hash == token_hash(token), AuthSession.last_seen_at <= now - TOUCH_EVERY)
            .values(last_seen_at=now),
        )
    )


def revoke_session(session: Session, token: str | None, *, now: datetime | None = None) -> bool:
    """End one session (logout); True when a live session was revoked."""
    if not token:
        return False
    return bool(
        rowcount(
            session,
            update(AuthSession)
            .where(AuthSession.token_hash == token_hash(token), AuthSession.revoked_at.is_(None))
            .values(revoked_at=_now(now)),
        )
    )


def revoke_all(session: Session, user_id: int, *, now: datetime | None = None) -> int:
    """End every session of an account (disabled, role or password changed); returns how many were live."""
    return rowcount(
        session,
        update(AuthSession)
        .where(AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))
        .values(revoked_at=_now(now)),
    )


def live_sessions(session: Session, user_id: int, *, now: datetime | None = None) -> int:
    """How many sessions of the account are neither revoked nor expired."""
    now = _now(now)
    rows = session.scalars(
        select(AuthSession.expires_at).where(AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))
    ).all()
    return sum(_aware(expires) > now for expires in rows)


# --------------------------------------------------------------------------- throttling


def throttle_keys(username: str, client: str = "") -> list[str]:
    """The throttle keys of an attempt: the username's, and the client's when its address is known.

    Without an address (Streamlit reports none for localhost) there is no
    client key: one shared bucket would let one person's typos lock out everyone.
    """
    keys = [f"user:{username.strip().lower()}"[:200]]
    if client:
        keys.append(f"client:{client}"[:200])
    return keys


def delay_after(failures: int) -> timedelta:
    """How long a key stays locked after its ``failures``-th failure: 0 for the free ones, then 1 s, 2 s, 4 s ... 15 min."""
    if failures < FREE_FAILURES:
        return timedelta(0)
    exponent = failures - FREE_FAILURES
    if exponent >= 20:  # 2**20 s is far beyond the cap; avoid huge numbers
        return MAX_DELAY
    return min(FIRST_DELAY * (2**exponent), MAX_DELAY)


def locked_for(session: Session, keys: list[str], *, now: datetime | None = None) -> float:
    """Seconds until every key in ``keys`` accepts an attempt again (0.0: none is locked)."""
    now = _now(now)
    wait = 0.0
    for locked_until in session.scalars(select(LoginThrottle.locked_until).where(LoginThrottle.key.in_(keys))):
        if locked_until is not None:
            wait = max(wait, (_aware(locked_until) - now).total_seconds())
    return wait


def record_failure(session: Session, keys: list[str], *, now: datetime | None = None) -> None:
    """Count a failed attempt against each key and lock those past their free failures.

    A read-modify-write: call it inside a :meth:`~db.engine.Store.write` transaction, which holds the store's write lock.
    """
    now = _now(now)
    for key in keys:
        row = session.get(LoginThrottle, key)
        if row is None:
            row = LoginThrottle(key=key, failures=0)
            session.add(row)
        elif row.last_failure_at is not None and now - _aware(row.last_failure_at) >= FORGET_AFTER:
            row.failures = 0
        row.failures = (row.failures or 0) + 1
        row.last_failure_at = now
        delay = delay_after(row.failures)
        row.locked_until = now + delay if delay else None
    session.flush()


def clear_failures(session: Session, key: str) -> None:
    session.execute(delete(LoginThrottle).where(LoginThrottle.key == key))


@dataclass(frozen=True)
class LoginResult:
    """The outcome of :func:`login`.

    ``account`` and ``token`` are set on success.  ``retry_after`` (seconds) is
    set when the attempt was refused because a key is locked out; the password
    was then not checked at all.
    """

    account: Account | None = None
    token: str | None = None
    retry_after: float = 0.0

    @property
    def ok(self) -> bool:
        return self.account is not None


def login(
    store, username: str, password: str, client: str = "", *, ttl: timedelta = SESSION_TTL, now: datetime | None = None
) -> LoginResult:
    """Check a login attempt with throttling and start a session on success.

    1. read transaction: are the keys locked?  If so, refuse (no hash is touched).
       Else read the user's hash.
    2. no transaction: verify the Argon2 hash (or a dummy one for an unknown
       user, so that both take the same time).
    3. one short write: count the failure, or clear the username key, rehash if
       the parameters are outdated, and create the session.
    """
    now = _now(now)
    username = username.strip()
    keys = throttle_keys(username, client)
    with store.read() as session:
        wait = locked_for(session, keys, now=now)
        if wait > 0:
            return LoginResult(retry_after=wait)
        user = session.execute(
            select(User.id, User.password_hash, User.active).where(User.username == username)
        ).first()
    ok = verify_password(user.password_hash if user is not None else _DUMMY_HASH, password)
    ok = ok and user is not None and user.active
    new_hash = None
    if ok and needs_rehash(user.password_hash):
        new_hash = hash_password(password)  # hashing is as slow as verifying: also outside the write
    # store.write() serialises writers (SQLite BEGIN IMMEDIATE, PostgreSQL's advisory write lock), so
    # the read-modify-write of the throttle rows cannot lose a concurrent failure
    with store.write() as session:
        if not ok:
            record_failure(session, keys, now=now)
            return LoginResult()
        current = session.get(User, user.id)
        # the account may have been disabled or its password changed while we verified
        if current is None or not current.active or current.password_hash != user.password_hash:
            record_failure(session, keys, now=now)
            return LoginResult()
        # a success forgives the username, not the client: one valid account must not
        # reset the counter of an address that is guessing other accounts' passwords
        clear_failures(session, keys[0])
        if new_hash is not None:
            current.password_hash = new_hash
        token = create_session(session, current.id, client, ttl, now=now)
        return LoginResult(account=_account(current), token=token)
