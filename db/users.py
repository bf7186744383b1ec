"""Accounts: create, list, disable, change role and password (signing in is db.sessions.login).  Passwords are stored only as Argon2id hashes."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.passwords import hash_password
from db.models import ROLES, User


@dataclass(frozen=True)
class Account:
    id: int
    username: str
    role: str
    active: bool


def _account(user: User) -> Account:
    return Account(id=user.id, username=user.username, role=user.role, active=user.active)


def add_user(session: Session, username: str, password: str, role: str) -> Account:
    """Create an account; refuses an existing username, an unknown role or a short password."""
    username = username.strip()
    if not username:
        raise ValueError("a username must not be empty")
    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    if session.scalar(select(User.id).where(User.username == username)) is not None:
        raise ValueError(f"user {username!r} already exists")
    user = User(username=username, password_hash=hash_password(password), role=role, active=True)
    session.add(user)
    session.flush()
    return _account(user)


def list_users(session: Session) -> list[Account]:
    return [_account(u) for u in session.scalars(select(User).order_by(User.username))]


def _user(session: Session, username: str) -> User:
    user = session.scalar(select(User).where(User.username == username))
    if user is None:
        raise LookupError(f"no user named {username!r}")
    return user


def set_active(session: Session, username: str, active: bool) -> Account:
    """Enable or disable an account; disabling also revokes every session it has (open pages sign out)."""
    from db.sessions import revoke_all  # db.sessions imports this module

    user = _user(session, username)
    user.active = active
    if not active:
        revoke_all(session, user.id)
    session.flush()
    return _account(user)


def set_role(session: Session, username: str, role: str) -> Account:
    """Change an account's role; its sessions are revoked so that every browser signs in again under the new role."""
    from db.sessions import revoke_all

    if role not in ROLES:
        raise ValueError(f"role must be one of {', '.join(ROLES)}, got {role!r}")
    user = _user(session, username)
    if user.role != role:
        user.role = role
        revoke_all(session, user.id)
    session.flush()
    return _account(user)


def set_password(session: Session, username: str, password: str) -> None:
    """Replace the password (hashed by the caller's process) and revoke the account's sessions."""
    from db.sessions import revoke_all

    new_hash = hash_password(password)
    user_id = session.scalar(select(User.id).where(User.username == username))
    if user_id is None:
        raise LookupError(f"no user named {username!r}")
    session.execute(update(User).where(User.id == user_id).values(password_hash=new_hash))
    revoke_all(session, user_id)


def get_account(session: Session, user_id: int) -> Account | None:
    """The account by id, or None when it no longer exists or is disabled (sessions re-check every run)."""
    user = session.get(User, user_id)
    return _account(user) if user is not None and user.active else None

