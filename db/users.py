"""Accounts: create, list, disable, change role and password (signing in is db.sessions.login).  Passwords are stored only as Argon2id hashes.

Usernames follow :func:`core.names.check_name` (printable, no surrounding
whitespace, at most 100 characters), are stored NFKC-normalised (full-width
``ａｄｍｉｎ`` is stored, and signs in, as ``admin``) and are unique regardless
of case: ``ADMIN0`` cannot be added beside ``admin0``.  A new name that looks
like an existing one (the same Unicode TR39 confusable skeleton, e.g. Cyrillic
``аdmin`` beside ``admin``) is refused, naming the name it resembles
(:mod:`core.usernames`).  Signing in and every other lookup by username stay
exact after NFKC (``ADMIN0`` does not sign in as ``admin0``): with names
unique regardless of case an exact match is never ambiguous, and the name
typed is the name shown everywhere.

Names stored before normalisation existed are kept as they are: they still
sign in as stored or by their NFKC form, and new names that look like them
are refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Row, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from core.names import USERNAME_MAX_CHARS, check_name
from core.passwords import hash_password
from core.usernames import looks_like, normalize_username
from db.models import ROLES, AuthSession, User
from db.rowcount import rowcount


@dataclass(frozen=True)
class Account:
    id: int
    username: str
    role: str
    active: bool


def account_of(user: User) -> Account:
    """The account as the app sees it, from its row."""
    return Account(id=user.id, username=user.username, role=user.role, active=user.active)


def add_user(session: Session, username: str, password: str, role: str) -> Account:
    """Create an account under the NFKC form of ``username``.

    Refuses a username that :func:`core.names.check_name` refuses (surrounding
    whitespace included: it is not stripped), one that exists in any case, one
    that looks like an existing name (:func:`core.usernames.looks_like`), an
    unknown role or a short password, with a ``ValueError`` saying which.
    Nothing is written when it refuses.
    """
    check_name(username, "username", limit=USERNAME_MAX_CHARS)
    name = normalize_username(username)
    check_name(name, "username", limit=USERNAME_MAX_CHARS)  # NFKC may lengthen a name
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    _refuse_clash(session, username, name)
    user = User(username=name, password_hash=hash_password(password), role=role, active=True)
    try:
        # the unique index on lower(username) is the backstop should the check above ever miss one
        with session.begin_nested():
            session.add(user)
            session.flush()
    except IntegrityError:
        raise _exists(username, _taken(session, name) or name) from None
    return account_of(user)


def _refuse_clash(session: Session, typed: str, name: str) -> None:
    """Refuse ``name`` (typed as ``typed``) when a stored name equals it regardless of case, or looks like it."""
    stored = list(session.scalars(select(User.username)))
    taken = _taken(session, typed, stored)
    if taken is not None:
        raise _exists(typed, taken)
    resembled = looks_like(name, stored)
    if resembled is not None:
        shown = repr(typed) if typed.isascii() else f"{typed!r} ({ascii(typed)})"  # the look-alike, spelt out
        raise ValueError(f"username {shown} looks like the existing user {resembled!r}")


def _taken(session: Session, username: str, stored: list[str] | None = None) -> str | None:
    """The stored username equal to ``username`` regardless of case, or None.

    Compared in Python (``casefold``) over all accounts: SQLite's ``lower()``
    folds ASCII only, and accounts are few.
    """
    folded = username.casefold()
    names = stored if stored is not None else session.scalars(select(User.username))
    return next((u for u in names if u.casefold() == folded), None)


def sign_in_candidate(session: Session, typed: str) -> Row[int, str, str, bool] | None:
    """The account row (``id, username, password_hash, active``) a sign-in as ``typed`` is for, or None.

    The name stored exactly as typed, else the one stored as its NFKC form, else
    the only stored name whose NFKC form it is (a name stored before
    normalisation).  All accounts are read whether or not the name exists, so
    that an unknown name costs the same statements as a known one.

    Parameters
    ----------
    session : Session
        Any transaction (:func:`db.sessions.login` uses its claim's write).
    typed : str
        The username as typed, stripped.

    Returns
    -------
    Row or None
        ``(id, username, password_hash, active)``; None when no account, or more than one legacy one, matches.
    """
    name = normalize_username(typed)
    rows = session.execute(select(User.id, User.username, User.password_hash, User.active)).all()
    for wanted in (typed, name):
        row = next((r for r in rows if r.username == wanted), None)
        if row is not None:
            return row
    legacy = [r for r in rows if normalize_username(r.username) == name]
    return legacy[0] if len(legacy) == 1 else None


def _exists(username: str, taken: str) -> ValueError:
    if taken == username:
        return ValueError(f"user {username!r} already exists")
    return ValueError(f"user {username!r} already exists as {taken!r} (usernames are compared regardless of case)")


def list_users(session: Session) -> list[Account]:
    return [account_of(u) for u in session.scalars(select(User).order_by(User.username))]


def _user(session: Session, username: str) -> User:
    # the name as given, else its NFKC form (``pooljudge user disable ｂｏｂ`` finds bob)
    user = session.scalar(select(User).where(User.username == username)) or session.scalar(
        select(User).where(User.username == normalize_username(username))
    )
    if user is None:
        raise LookupError(f"no user named {username!r}")
    return user


def set_active(session: Session, username: str, active: bool) -> Account:
    """Enable or disable an account; disabling also revokes every session it has (open pages sign out)."""
    user = _user(session, username)
    user.active = active
    if not active:
        revoke_all(session, user.id)
    session.flush()
    return account_of(user)


def set_role(session: Session, username: str, role: str) -> Account:
    """Change an account's role; its sessions are revoked so that every browser signs in again under the new role."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    user = _user(session, username)
    if user.role != role:
        user.role = role
        revoke_all(session, user.id)
    session.flush()
    return account_of(user)


def set_password(session: Session, username: str, password: str) -> None:
    """Replace the password (hashed by the caller's process) and revoke the account's sessions."""
    new_hash = hash_password(password)
    user_id = _user(session, username).id
    session.execute(update(User).where(User.id == user_id).values(password_hash=new_hash))
    revoke_all(session, user_id)


def revoke_all(session: Session, user_id: int, *, now: datetime | None = None) -> int:
    """End every session of an account (disabled, role or password changed); returns how many were live.

    Here rather than in :mod:`db.sessions`, which builds on this module: every account change above
    revokes, and signing in (:func:`db.sessions.login`) only reads accounts.
    """
    revoked_at = now if now is not None else datetime.now(UTC)
    return rowcount(
        session,
        update(AuthSession)
        .where(AuthSession.user_id == user_id, AuthSession.revoked_at.is_(None))
        .values(revoked_at=revoked_at if revoked_at.tzinfo is not None else revoked_at.replace(tzinfo=UTC)),
    )


def has_users(session: Session) -> bool:
    """Whether the store holds any account, disabled ones included (a store without one asks for the first admin)."""
    return bool(session.scalar(select(func.count()).select_from(User)))


def get_account(session: Session, user_id: int) -> Account | None:
    """The account by id, or None when it no longer exists or is disabled (sessions re-check every run)."""
    user = session.get(User, user_id)
    return account_of(user) if user is not None and user.active else None
