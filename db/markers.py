"""Cheap values that change when what a dashboard shows changes: the keys of tables computed in the background."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db.models import FinalLabel, Judgment, LabelOverride, Package, QcRound
from db.queries import collection_id


def qc_marker(session: Session) -> tuple:
    """A value that changes with every judgment, override, QC round, QC decision and package status, store-wide.

    The Admin page's quality-control tables (packages, rounds, disagreements of every collection) are
    recomputed when it changes.  A handful of indexed aggregates: it runs on every page run.
    """
    last_judgment = session.scalar(select(func.max(Judgment.id)))
    last_override = session.scalar(select(func.max(LabelOverride.id)))
    rounds, decided = session.execute(select(func.count(QcRound.id), func.count(QcRound.decided_at))).one()
    statuses = tuple(
        session.execute(select(Package.status, func.count()).group_by(Package.status).order_by(Package.status))
    )
    return (last_judgment or 0, last_override or 0, rounds or 0, decided or 0, tuple(map(tuple, statuses)))


def qrels_marker(session: Session, collection: str) -> tuple:
    """A value that changes when the collection's final labels, or the labels that decide them, change.

    The Admin page's final-label count and the judged pairs a freeze leaves out are recomputed when it
    changes: the last judgment and override store-wide, and the collection's final labels (how many, the
    newest, the latest decision: a label decided again gets a new ``decided_at``).
    """
    cid = collection_id(session, collection)
    last_judgment = session.scalar(select(func.max(Judgment.id)))
    last_override = session.scalar(select(func.max(LabelOverride.id)))
    finals = session.execute(
        select(func.count(FinalLabel.id), func.max(FinalLabel.id), func.max(FinalLabel.decided_at)).where(
            FinalLabel.collection_id == cid
        )
    ).one()
    return (cid, last_judgment or 0, last_override or 0, *tuple(finals))
