"""Cheap values that change when what a dashboard shows changes: the keys of tables computed in the background."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db.models import Assignment, FinalLabel, Judgment, LabelOverride, Package, QcRound
from db.queries import collection_id
from db.vocab import Purpose


def qc_marker(session: Session) -> tuple:
    """A value that changes with every QC round, QC decision, QC review and package status, store-wide.

    The Admin and Review pages' QC rounds and their disagreement tables are recomputed when it changes.  A
    label outside QC leaves it as it is: a decided round's table is rebuilt from the judgments up to its
    decision, and a round's reviewed counts read only QC judgments.  A handful of indexed aggregates: it runs
    on every page run.
    """
    qc_assignments = select(Assignment.id).where(Assignment.purpose == Purpose.QC)
    last_review = session.scalar(select(func.max(Judgment.id)).where(Judgment.assignment_id.in_(qc_assignments)))
    return (last_review or 0, *_rounds_and_statuses(session))


def package_marker(session: Session) -> tuple:
    """A value that changes with every judgment, package status and QC round, store-wide.

    The packages table (each package's labelled items, status, rounds and last accuracy) is recomputed when
    it changes: a label in a package changes its progress.
    """
    last_judgment = session.scalar(select(func.max(Judgment.id)))
    return (last_judgment or 0, *_rounds_and_statuses(session))


def _rounds_and_statuses(session: Session) -> tuple:
    """``(rounds, decided rounds, ((status, packages), ...))``: what both markers follow besides judgments."""
    rounds, decided = session.execute(select(func.count(QcRound.id), func.count(QcRound.decided_at))).one()
    statuses = session.execute(select(Package.status, func.count()).group_by(Package.status).order_by(Package.status))
    return (rounds or 0, decided or 0, tuple(map(tuple, statuses)))


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
