"""Who may act: the account check every write makes, the roles each action needs, and the refusals.

A leaf of ``db``: it imports only :mod:`db.models`, so every module that writes (annotation, adjudication,
rework, QC rounds, archive, guidelines, the run tables) checks the acting account here without importing
the annotation workflow.  The check runs inside the caller's write transaction, so an account disabled a
moment earlier is seen and the write is refused whole.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

from db.models import User
from db.vocab import PackageStatus, Purpose, Role

# who may store a judgment on an assignment of each purpose (checked against the store in the write itself)
LABEL_ROLES: dict[str, tuple[Role, ...]] = {
    Purpose.LABEL: (Role.ANNOTATOR, Role.REVIEWER, Role.ADMIN),
    Purpose.FOURTH: (Role.ANNOTATOR, Role.REVIEWER, Role.ADMIN),
    Purpose.QC: (Role.REVIEWER, Role.ADMIN),
}
ANY_LABEL_ROLE = tuple(sorted({role for roles in LABEL_ROLES.values() for role in roles}))
REVIEW_ROLES = (Role.REVIEWER, Role.ADMIN)
ADMIN_ROLES = (Role.ADMIN,)
LABELLING = (Purpose.LABEL, Purpose.FOURTH)  # assignment purposes whose labels decide final labels (QC labels do not)
OPEN_PACKAGE = (PackageStatus.OPEN, PackageStatus.REVISE)  # package statuses whose items are still labelled


class Forbidden(PermissionError):
    """The acting user may not touch this item."""


class SignedOut(Forbidden):
    """The acting account no longer exists, is disabled, or its role no longer allows the action."""


class StaleSubmission(Forbidden):
    """The item shown is no longer open to this user: labelled elsewhere, package closed, pair decided.

    Nothing was stored; the message says why in words an annotator understands.
    """


# Built once (a statement memoises its SQL cache key): every write runs it.  Like ``Session.get`` with
# ``with_for_update``, it always reads the row, in the same transaction.
_ACCOUNT = select(User).where(User.id == bindparam("user_id")).with_for_update(read=True)


def require_account(session: Session, user_id: int | None, roles: Sequence[str], *, action: str = "do this") -> User:
    """The acting account, re-read inside the caller's transaction; refuses a missing, disabled or wrong-role one.

    The row is read ``FOR SHARE`` (PostgreSQL; SQLite's ``BEGIN IMMEDIATE`` already serialises writers),
    so a concurrent ``user disable`` waits for this write or is seen by it, never half-way.

    Parameters
    ----------
    session : Session
        The caller's write transaction.
    user_id : int or None
        The acting account's id (``None``: nobody signed in).
    roles : sequence of str
        The roles allowed to act.
    action : str
        What the account tries to do, in words for the refusal.

    Returns
    -------
    User
        The account's row.

    Raises
    ------
    SignedOut
        The account is missing, disabled, or its role is not in ``roles``.
    """
    user = session.scalar(_ACCOUNT, {"user_id": user_id}) if user_id is not None else None
    if user is None or not user.active:
        raise SignedOut("this account was signed out (disabled or removed); nothing was stored")
    if user.role not in roles:
        raise SignedOut(f"this {user.role} account may not {action}; nothing was stored")
    return user


def labelling_account(session: Session, user_id: int) -> User:
    """The acting account if its role may label items of some purpose (:func:`require_account`).

    Parameters
    ----------
    session : Session
        The caller's write transaction.
    user_id : int
        The acting account's id.

    Returns
    -------
    User
        The account's row.

    Raises
    ------
    SignedOut
        The account is missing, disabled, or may label nothing.
    """
    return require_account(session, user_id, ANY_LABEL_ROLE, action="label")
