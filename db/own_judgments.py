"""One user's own judgment log replayed: standing labels, skips and flags, now or as they were at a moment.

Judgments are append-only; a user's label on an assignment is what their log says after relabels and
undos (:func:`core.judgments.current_labels`).  Labelling (:mod:`db.labelling`), QC rounds
(:mod:`db.qc_rounds`), rework (:mod:`db.rework`) and the packages' progress read it here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from db.models import Judgment
from db.vocab import JudgmentAction

OwnEvent = tuple[int, str, int | None]
"""``(assignment id, action, grade)``: one judgment of a user's own log."""


def own_events(session: Session, user_id: int, wanted: set[int] | None) -> list[OwnEvent]:
    """The user's judgments on assignments, oldest first; those on ``wanted`` at least (None: all)."""
    query = select(Judgment.assignment_id, Judgment.action, Judgment.grade).where(
        Judgment.user_id == user_id, Judgment.assignment_id.is_not(None)
    )
    if wanted is not None and len(wanted) <= 500:  # a long IN list costs more than reading the user's log
        query = query.where(Judgment.assignment_id.in_(sorted(wanted)))
    return [
        (aid, action, grade) for aid, action, grade in session.execute(query.order_by(Judgment.id)) if aid is not None
    ]


def standing_by_assignment(events: Sequence[OwnEvent]) -> dict[int, int]:
    """One user's standing label per assignment id from their own log (relabels and undos replayed).

    In the order of each assignment's first event; assignments whose every label was undone are absent.
    """
    labels = current_labels(Event(aid, "me", action, grade) for aid, action, grade in events)
    return {aid: labels[aid]["me"] for aid in dict.fromkeys(aid for aid, _a, _g in events) if aid in labels}


def standing_labels(session: Session, user_id: int, assignment_ids: Sequence[int] | None = None) -> dict[int, int]:
    """The user's standing label per assignment id (after relabels and undos)."""
    wanted = None if assignment_ids is None else set(assignment_ids)
    standing = standing_by_assignment(own_events(session, user_id, wanted))
    return {aid: grade for aid, grade in standing.items() if wanted is None or aid in wanted}


def own_log(session: Session, user_id: int, assignment_ids: Sequence[int]) -> tuple[dict[int, int], dict[int, str]]:
    """``(standing label per assignment, "skip" or "flag" where that is the user's latest word and no label stands)``.

    One read of the user's log (as :func:`standing_labels`); a label clears an earlier skip or flag, an undo
    of that label leaves the item plainly unlabelled.
    """
    wanted = set(assignment_ids)
    events = own_events(session, user_id, wanted)
    standing = {aid: grade for aid, grade in standing_by_assignment(events).items() if aid in wanted}
    marks: dict[int, str] = {}
    for aid, action, _grade in events:
        if action in (JudgmentAction.SKIP, JudgmentAction.FLAG):
            marks[aid] = action
        elif action == JudgmentAction.LABEL:
            marks.pop(aid, None)
    return standing, {aid: mark for aid, mark in marks.items() if aid in wanted and aid not in standing}


def labels_then(session: Session, user_id: int, assignment_ids: Sequence[int], cutoff: datetime) -> dict[int, int]:
    """The user's standing label per assignment as it was at ``cutoff`` (their own log up to then)."""
    rows = session.execute(
        select(Judgment.assignment_id, Judgment.action, Judgment.grade)
        .where(
            Judgment.user_id == user_id,
            Judgment.assignment_id.in_(sorted(assignment_ids)),
            Judgment.created_at <= cutoff,
        )
        .order_by(Judgment.id)
    ).all()
    return standing_by_assignment([(aid, act, g) for aid, act, g in rows if aid is not None])
