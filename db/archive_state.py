"""What archiving does to work in progress, and the notice an archived item read by name carries.

Archiving a collection or a pool (:mod:`db.archive`) stops its work: its
assignments are neither served nor take labels until it is restored (the
annotate queue and :func:`db.labelling.record_judgment` share
:func:`archived_clause`, so they refuse the same set, with
:func:`archived_reason`).  Reading by name keeps working (``pooljudge eval
-c``, ``export qrels -c``, the pages' deep links) but says the item is
archived (:func:`archived_note`).
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ColumnElement, exists, or_, select
from sqlalchemy.orm import Session, aliased

from db.models import Assignment, Collection, Pool, PoolEntry, QrelsVersion, QueryRecord, RunRecord


def archived_clause() -> ColumnElement[bool]:
    """SQL condition on ``Assignment``: its collection or its pool is archived."""
    collection = exists().where(
        QueryRecord.id == Assignment.query_id,
        Collection.id == QueryRecord.collection_id,
        Collection.archived_at.is_not(None),
    )
    # aliases: the callers' own queries join PoolEntry and Pool, which would swallow this subquery's FROM
    entry, pool_row = aliased(PoolEntry), aliased(Pool)
    pool = exists().where(
        entry.id == Assignment.pool_entry_id,
        pool_row.id == entry.pool_id,
        pool_row.archived_at.is_not(None),
    )
    return or_(collection, pool)


def archived_reason(session: Session, assignment: Assignment) -> str | None:
    """Why an assignment takes nothing because of an archive (its collection's, else its pool's), or None."""
    collection = session.scalar(
        select(Collection.archived_at)
        .join(QueryRecord, QueryRecord.collection_id == Collection.id)
        .where(QueryRecord.id == assignment.query_id)
    )
    if collection is not None:
        return "its collection is archived (restore it to go on)"
    if assignment.pool_entry_id is None:
        return None
    name, archived = session.execute(
        select(Pool.name, Pool.archived_at)
        .join(PoolEntry, PoolEntry.pool_id == Pool.id)
        .where(PoolEntry.id == assignment.pool_entry_id)
    ).one()
    if archived is not None:
        return f"its pool {name!r} is archived (restore it to go on)"
    return None


def archived_note(session: Session, collection: str, *, run: str | None = None, qrels: str | None = None) -> str:
    """``""``, or a sentence saying the collection (or the named run or qrels version of it) is archived.

    The item is still read: an archived name stays valid for commands and links, and this says so.
    """
    row = session.execute(
        select(Collection.id, Collection.archived_at, Collection.archived_by).where(Collection.name == collection)
    ).first()
    if row is None:
        return ""
    notes = []
    if row.archived_at is not None:
        notes.append(_sentence("collection", collection, row.archived_by, row.archived_at, collection=None))
    for kind, model, name in (("run", RunRecord, run), ("qrels", QrelsVersion, qrels)):
        if name is None:
            continue
        child = session.execute(
            select(model.archived_at, model.archived_by).where(model.collection_id == row.id, model.name == name)
        ).first()
        if child is not None and child.archived_at is not None:
            notes.append(_sentence(kind, name, child.archived_by, child.archived_at, collection=collection))
    return " ".join(notes)


def _sentence(kind: str, name: str, by: str | None, at: object, *, collection: str | None) -> str:
    label = "qrels version" if kind == "qrels" else kind
    restore = f"pooljudge restore {kind} {name!r}" + (f" -c {collection!r}" if collection else "")
    return (
        f"{label} {name!r} is archived (by {by or 'unknown'} at {at:%Y-%m-%d %H:%M} UTC); it is read all the same "
        f"(`{restore}` shows it again)."
    )


def archived_collection(session: Session, collection: str) -> tuple[str | None, datetime] | None:
    """``(archived by, archived at)`` of an archived collection; None when it is not archived or not there."""
    row = session.execute(
        select(Collection.archived_by, Collection.archived_at).where(
            Collection.name == collection, Collection.archived_at.is_not(None)
        )
    ).first()
    return None if row is None or row.archived_at is None else (row.archived_by, row.archived_at)
