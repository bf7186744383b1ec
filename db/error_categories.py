"""A project's own error categories, stored per collection (table ``error_categories``, migration 0009).

The built-in taxonomy (:data:`core.detectors.TAXONOMY`) is code; the
categories an analyst adds on the Error analysis page are rows, so that they
are there for everyone, in every session, before any tag uses them.  A
category's ``key`` is what :class:`db.models.ErrorTag` ``.category`` holds:
it never changes (renaming changes the name and description only), and a
category cannot be deleted while a tag uses it.  Names and descriptions are
untrusted text: whoever shows them escapes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.detectors import category_ids
from core.names import NAME_MAX_CHARS, check_name
from db.models import ErrorCategory, ErrorTag
from db.queries import NotFound, collection_id

KEY_PATTERN = re.compile(r"[a-z][a-z0-9_]{1,63}")
"""A category key: 2-64 characters, lowercase letters, digits and ``_``, starting with a letter."""
DESCRIPTION_MAX_CHARS = 2000


@dataclass(frozen=True)
class UserCategory:
    """A stored error category of a collection."""

    key: str
    name: str
    description: str
    created_by: str | None
    created_at: datetime


def _as_category(row: ErrorCategory) -> UserCategory:
    return UserCategory(row.key, row.name, row.description, row.created_by, row.created_at)


def _row(session: Session, collection: str, key: str) -> ErrorCategory:
    row = session.scalar(
        select(ErrorCategory).where(
            ErrorCategory.collection_id == collection_id(session, collection), ErrorCategory.key == key
        )
    )
    if row is None:
        raise NotFound(f"no error category {key!r} in collection {collection!r}")
    return row


def _checked(name: str, description: str) -> tuple[str, str]:
    check_name(name, "category name", limit=NAME_MAX_CHARS)
    if not isinstance(description, str):
        raise ValueError(f"description must be a string, got {type(description).__name__}")
    description = description.strip()
    if len(description) > DESCRIPTION_MAX_CHARS:
        raise ValueError(
            f"the description is {len(description):,} characters long; the limit is {DESCRIPTION_MAX_CHARS}"
        )
    return name, description


def list_error_categories(session: Session, collection: str) -> list[UserCategory]:
    """The collection's own error categories, oldest first."""
    rows = session.scalars(
        select(ErrorCategory)
        .where(ErrorCategory.collection_id == collection_id(session, collection))
        .order_by(ErrorCategory.created_at, ErrorCategory.id)
    )
    return [_as_category(row) for row in rows]


def create_error_category(
    session: Session, collection: str, key: str, name: str, description: str = "", *, created_by: str | None = None
) -> UserCategory:
    """Store a new error category of ``collection``.

    Parameters
    ----------
    key : str
        Its id, :data:`KEY_PATTERN`; neither a built-in category's nor another stored one's.  A key that tags
        already carry (a category defined before they were stored) is accepted: the tags gain its row.
    name : str
        What the page shows; a valid name (:func:`core.names.check_name`).
    description : str, optional
        When to use it (at most :data:`DESCRIPTION_MAX_CHARS` characters, stripped).
    created_by : str, optional
        The username, kept as text.

    Raises
    ------
    ValueError
        A malformed key, a taken key, an invalid name or description.
    NotFound
        An unknown collection.
    """
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise ValueError("The id must be 2-64 characters: lowercase letters, digits and _, starting with a letter.")
    name, description = _checked(name, description)
    cid = collection_id(session, collection)
    taken = (
        key in category_ids()
        or session.scalar(select(ErrorCategory.id).where(ErrorCategory.collection_id == cid, ErrorCategory.key == key))
        is not None
    )
    if taken:
        raise ValueError(f"There already is a category {key}.")
    row = ErrorCategory(collection_id=cid, key=key, name=name, description=description, created_by=created_by)
    session.add(row)
    session.flush()
    return _as_category(row)


def rename_error_category(
    session: Session, collection: str, key: str, name: str, description: str | None = None
) -> UserCategory:
    """Give a stored category a new name (and description, unless None); its key and tags stay.

    Raises
    ------
    ValueError
        An invalid name or description.
    NotFound
        An unknown collection or category.
    """
    name, checked = _checked(name, "" if description is None else description)
    row = _row(session, collection, key)
    row.name = name
    if description is not None:
        row.description = checked
    session.flush()
    return _as_category(row)


def delete_error_category(session: Session, collection: str, key: str) -> None:
    """Delete a stored category that no tag uses.

    Raises
    ------
    ValueError
        Tags use it (any status: a rejected tag still names it); delete those tags first.
    NotFound
        An unknown collection or category.
    """
    row = _row(session, collection, key)
    used = session.scalar(
        select(func.count())
        .select_from(ErrorTag)
        .where(ErrorTag.collection_id == row.collection_id, ErrorTag.category == key)
    )
    if used:
        raise ValueError(f"The category {key} is used by {used} tag{'s' * (used != 1)}: it stays.")
    session.delete(row)
    session.flush()
