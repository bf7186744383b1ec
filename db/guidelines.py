"""Annotation guides per collection: read with the built-in fallback, set and reset by an admin.

A collection's ``guidelines`` column holds a guide in the shape :func:`core.scale.check_guide`
accepts (``{"graded": [...], "binary": [...]}``, one entry per grade with its name, definition and
examples); NULL means the built-in guide (T2Ranking's texts, :func:`core.scale.default_guide`).
What is stored is always complete and validated, so a reader never meets a half guide.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.scale import SCALES, Guide, check_guide, default_guide
from db.access import ADMIN_ROLES, require_account
from db.models import Assignment, Collection, QueryRecord
from db.queries import collection_id

__all__ = ["assignment_collection", "get_guidelines", "is_custom", "reset_guidelines", "scale_guide", "set_guidelines"]


def get_guidelines(session: Session, collection: str) -> Guide:
    """The collection's guide for both scales: its own, or the built-in one where it has none.

    A stored guide that no longer validates (edited by hand in the database) falls back to the built-in
    guide rather than showing annotators a broken one.
    """
    stored = session.scalar(select(Collection.guidelines).where(Collection.id == collection_id(session, collection)))
    if stored is None:
        return default_guide()
    try:
        return check_guide(stored)
    except ValueError:
        return default_guide()


def scale_guide(session: Session, collection: str, scale: str) -> list[dict[str, Any]]:
    """The guide entries of one scale (``"graded"`` or ``"binary"``) of a collection, in grade order."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    return get_guidelines(session, collection)[scale]


def is_custom(session: Session, collection: str) -> bool:
    """Whether the collection has a guide of its own (else it shows the built-in one)."""
    cid = collection_id(session, collection)
    return session.scalar(select(Collection.guidelines).where(Collection.id == cid)) is not None


def set_guidelines(session: Session, user_id: int, collection: str, guide: Any) -> Guide:
    """Store a guide for the collection (validated and completed); returns what was stored.

    The acting account is checked (active admin) in this same write transaction; an invalid guide
    raises ValueError naming the field and stores nothing.
    """
    require_account(session, user_id, ADMIN_ROLES, action="edit annotation guidelines")
    checked = check_guide(guide)
    row = session.get_one(Collection, collection_id(session, collection))
    row.guidelines = checked
    session.flush()
    return checked


def reset_guidelines(session: Session, user_id: int, collection: str) -> None:
    """Go back to the built-in guide (the column is set to NULL); the account is checked as for setting."""
    require_account(session, user_id, ADMIN_ROLES, action="edit annotation guidelines")
    row = session.get_one(Collection, collection_id(session, collection))
    row.guidelines = None
    session.flush()


def assignment_collection(session: Session, assignment_id: int) -> str | None:
    """The name of the collection an assignment's pair belongs to (None for an unknown assignment)."""
    return session.scalar(
        select(Collection.name)
        .join(QueryRecord, QueryRecord.collection_id == Collection.id)
        .join(Assignment, Assignment.query_id == QueryRecord.id)
        .where(Assignment.id == assignment_id)
    )
