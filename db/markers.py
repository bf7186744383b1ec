"""Cheap values that change when what a dashboard shows changes: the keys of tables computed in the background."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db.models import Judgment, LabelOverride, Package, QcRound


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
