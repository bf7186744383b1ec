"""Signed-in sessions that survive a reload, and login throttling.

A session is a random token held by the browser (a cookie); the store keeps
only its SHA-256, so a copy of the database does not let anyone sign in.
Every page run validates the token (:func:`account_for_token`): a revoked or
expired session, or a disabled account, signs the browser out.  Disabling an
account, changing its role or its password revokes all of its sessions
(:func:`db.users.revoke_all`).

Login throttling lives in :mod:`db.throttle`: :func:`login` claims the
attempt (checks the locks and counts it) in one short write *before* it
verifies the Argon2 hash, outside any transaction (~50 ms of CPU that must not
hold the write lock annotators' labels need); a success then clears the
account's keys and starts the session in a second short write.

Functions take a ``Session`` first and leave the transaction to the caller,
except :func:`login`, which takes the :class:`~db.engine.Store` because its
point is to place the transactions itself.  ``now`` is injectable for tests.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.passwords import hash_password, needs_rehash, verify_password
from db.models import AuthSession, User
from db.rowcount import rowcount
from db.throttle import claim_attempt, forgive, locked_for, throttle_keys
from db.users import Account, account_of, sign_in_candidate

SESSION_TTL = timedelta(days=14)
# verified for an unknown username, so that an unknown and a known account take the same time
_DUMMY_HASH = hash_password("timing-equaliser-not-a-password")
TOUCH_EVERY = timedelta(minutes=1)


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
        account=account_of(user),
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


def live_sessions(session: Session, user_id: int, *, now: datetime | None = None) -> int:
    """How many sessions of the account are neither revoked nor expired."""
    now = _now(now)
    rows = session.scalars(
        select(AuthSession.expires_at).where(AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))
    ).all()
    return sum(_aware(expires) > now for expires in rows)


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

    1. one short write: refuse if a throttle key is locked (no hash is
       touched), else count the attempt as a failure now
       (:func:`db.throttle.claim_attempt`), and read the account.  Claiming
       before verifying is what keeps 40 attempts at once from verifying 40
       passwords.  A read before it refuses a key already locked without
       queueing for the write lock that annotators' labels need.
    2. no transaction: verify the Argon2 hash (or a dummy one for an unknown
       user, so that both take the same time and the same statements).
    3. on success only, one short write: clear the account's keys, rehash if
       the parameters are outdated, and create the session.
    """
    now = _now(now)
    keys = throttle_keys(username, client)
    with store.read() as session:  # a locked-out flood is refused without queueing for the write lock
        wait = locked_for(session, keys, now=now)
    if wait > 0:
        return LoginResult(retry_after=wait)
    with store.write() as session:
        wait = claim_attempt(session, keys, now=now)
        if wait > 0:
            return LoginResult(retry_after=wait)
        user = sign_in_candidate(session, username.strip())
    ok = verify_password(user.password_hash if user is not None else _DUMMY_HASH, password)
    if not ok or user is None or not user.active:
        return LoginResult()  # already counted by the claim
    new_hash = hash_password(password) if needs_rehash(user.password_hash) else None  # also outside the write
    with store.write() as session:
        current = session.get(User, user.id)
        # the account may have been disabled or its password changed while we verified: a failure, counted
        if current is None or not current.active or current.password_hash != user.password_hash:
            return LoginResult()
        forgive(session, keys)
        if new_hash is not None:
            current.password_hash = new_hash
        token = create_session(session, current.id, client, ttl, now=now)
        return LoginResult(account=account_of(current), token=token)
