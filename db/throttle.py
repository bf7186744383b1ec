"""Sign-in throttling: atomic (an attempt is counted before its password is checked) and fair (keyed by account).

Every attempt is charged to two keys:

* ``user:<name>``, the account (the typed name, NFKC-normalised and case
  folded, whether or not such an account exists): :data:`ACCOUNT_FREE_FAILURES`
  free failures, then locked;
* ``user+client:<address>:<name>``, the account from this client address:
  :data:`FREE_FAILURES` free failures, then locked.  An unknown address
  (``""``) is one client.

Never by address alone: typos on other names from an address that many
people share (a proxy, a NAT, every local browser) never lock an account
that was not their target.  A locked key stays locked for 1 s, 2 s, 4 s ...
(at most :data:`MAX_DELAY`) after each further failure, and a key whose last
failure is :data:`FORGET_AFTER` old starts again from zero.

:func:`claim_attempt` checks the locks and counts the attempt as a failure in
one write transaction, *before* the password is verified: the store's write
lock (SQLite ``BEGIN IMMEDIATE`` behind a file lock, PostgreSQL's advisory
write lock) serialises claims across threads and server processes, so N
attempts at once verify at most the allowance.  A success then takes the
charge back (:func:`forgive`).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from core.usernames import normalize_username
from db.models import LoginThrottle

FREE_FAILURES = 5
"""Free failures of an (account, client) key: a sixth attempt from one address needs the first lock to pass."""
ACCOUNT_FREE_FAILURES = 20
"""Free failures of an account key, from all addresses together (an attack from many addresses)."""
FIRST_DELAY = timedelta(seconds=1)
MAX_DELAY = timedelta(minutes=15)
FORGET_AFTER = timedelta(hours=1)
"""A key whose last failure is this old starts again from zero (a typo last week costs nothing today)."""
_KEY_CHARS = 200  # LoginThrottle.key is String(200)


def _aware(value: datetime) -> datetime:
    # SQLite hands timezone-aware columns back naive (they were written in UTC)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def throttle_keys(username: str, client: str = "") -> list[str]:
    """The keys an attempt is charged to: ``[account key, (account, client) key]``.

    Parameters
    ----------
    username : str
        The name as typed (stripped, NFKC-normalised and case folded here).
    client : str
        The client's address, ``""`` when unknown.

    Returns
    -------
    list of str
        The account's key first.
    """
    name = normalize_username(username.strip()).casefold()
    # the address (at most 64 characters) goes before the name, so a cut only ever shortens the name
    return [f"user:{name}"[:_KEY_CHARS], f"user+client:{client[:64]}:{name}"[:_KEY_CHARS]]


def free_failures(key: str) -> int:
    """How many failures ``key`` allows before it locks.

    Parameters
    ----------
    key : str
        A key of :func:`throttle_keys`.

    Returns
    -------
    int
        :data:`ACCOUNT_FREE_FAILURES` for an account key, :data:`FREE_FAILURES` for an (account, client) key.
    """
    return ACCOUNT_FREE_FAILURES if key.startswith("user:") else FREE_FAILURES


def delay_after(failures: int, free: int = FREE_FAILURES) -> timedelta:
    """How long a key stays locked after its ``failures``-th failure: 0 for the ``free`` ones, then 1 s, 2 s ... 15 min.

    Parameters
    ----------
    failures : int
        The key's failures so far, this one included.
    free : int
        The key's free failures.

    Returns
    -------
    timedelta
        0 while ``failures < free``, then doubling from :data:`FIRST_DELAY` up to :data:`MAX_DELAY`.
    """
    if failures < free:
        return timedelta(0)
    exponent = failures - free
    if exponent >= 20:  # 2**20 s is far beyond the cap; avoid huge numbers
        return MAX_DELAY
    return min(FIRST_DELAY * (2**exponent), MAX_DELAY)


def locked_for(session: Session, keys: list[str], *, now: datetime) -> float:
    """Seconds until every key in ``keys`` accepts an attempt again (read only).

    Parameters
    ----------
    session : Session
        Any transaction.
    keys : list of str
        :func:`throttle_keys` of an attempt.
    now : datetime
        The attempt's time (timezone-aware).

    Returns
    -------
    float
        0.0 when no key is locked.
    """
    wait = 0.0
    for locked_until in session.scalars(select(LoginThrottle.locked_until).where(LoginThrottle.key.in_(keys))):
        if locked_until is not None:
            wait = max(wait, (_aware(locked_until) - now).total_seconds())
    return wait


def claim_attempt(session: Session, keys: list[str], *, now: datetime) -> float:
    """Refuse the attempt while a key is locked, else count it as a failure of every key now.

    Call it inside a :meth:`~db.engine.Store.write` transaction, before the
    password is verified: the write lock makes check and count one step for
    all threads and processes, so the allowance is never exceeded.

    Parameters
    ----------
    session : Session
        A session in a write transaction.
    keys : list of str
        :func:`throttle_keys` of the attempt.
    now : datetime
        The attempt's time (timezone-aware).

    Returns
    -------
    float
        0.0 when the attempt was claimed (go on and verify), else the seconds to wait (nothing counted).
    """
    rows = {row.key: row for row in session.scalars(select(LoginThrottle).where(LoginThrottle.key.in_(keys)))}
    wait = max(
        ((_aware(r.locked_until) - now).total_seconds() for r in rows.values() if r.locked_until is not None),
        default=0.0,
    )
    if wait > 0:
        return wait
    for key in keys:
        row = rows.get(key)
        if row is None:
            row = LoginThrottle(key=key, failures=0)
            session.add(row)
        elif row.last_failure_at is not None and now - _aware(row.last_failure_at) >= FORGET_AFTER:
            row.failures = 0
        row.failures = (row.failures or 0) + 1
        row.last_failure_at = now
        delay = delay_after(row.failures, free_failures(key))
        row.locked_until = now + delay if delay else None
    session.flush()
    return 0.0


def forgive(session: Session, keys: list[str]) -> None:
    """Clear the keys of a successful sign-in: the account's, and this client's for the account.

    Other clients' keys for the account stay: a success does not reset an
    address that is guessing this account's password.

    Parameters
    ----------
    session : Session
        A session in a write transaction.
    keys : list of str
        :func:`throttle_keys` of the successful attempt.
    """
    session.execute(delete(LoginThrottle).where(LoginThrottle.key.in_(keys)))
