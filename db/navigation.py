"""An annotator's own way around their work: overall progress, time left, and their earlier items.

Everything here reads only the acting user's own assignments and judgments, so it keeps the
blindness of :mod:`db.labelling`: no run, rank, score or other annotator's label.  Relabelling an
earlier item goes through :func:`db.labelling.record_judgment` with ``relabel=True`` (a new row,
never an update).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.access import Forbidden
from db.labelling import Item, build_item, open_clause
from db.models import Assignment, Judgment, Package, PassageRecord, QueryRecord
from db.own_judgments import own_events, standing_by_assignment, standing_labels
from db.vocab import JudgmentAction, Purpose

__all__ = ["BREAK_S", "HistoryEntry", "Overview", "history", "median_seconds", "open_own_item", "overview"]

BREAK_S = 600
"""A gap of more than this many seconds between two of a user's judgments is a break, not labelling time."""


@dataclass(frozen=True)
class Overview:
    """The user's work across all packages, adjudication and QC items.

    ``done``: items with a standing label; ``flagged``: unlabelled items the user flagged (with the
    reviewers); ``left``: open items still to label; ``median_s``: the user's median seconds per
    judgment (None before two judgments); ``eta_s``: ``left × median_s`` (None without a median).
    """

    done: int
    total: int
    flagged: int
    left: int
    packages: int
    median_s: float | None
    eta_s: float | None


def median_seconds(times: Sequence[datetime], *, break_s: float = BREAK_S) -> float | None:
    """The median gap in seconds between consecutive timestamps, leaving out breaks (gaps over ``break_s``).

    Examples
    --------
    >>> from datetime import datetime, timedelta
    >>> t0 = datetime(2026, 1, 1)
    >>> median_seconds([t0, t0 + timedelta(seconds=8), t0 + timedelta(seconds=20), t0 + timedelta(hours=2)])
    10.0
    """
    ordered = sorted(times)
    gaps = [(b - a).total_seconds() for a, b in zip(ordered, ordered[1:], strict=False)]
    gaps = [g for g in gaps if 0 < g <= break_s]
    return float(statistics.median(gaps)) if gaps else None


def overview(session: Session, user_id: int) -> Overview:
    """Progress and an estimate of the time left over everything assigned to the user (two reads)."""
    rows = session.execute(
        select(Assignment.id, Assignment.package_id, open_clause())
        .outerjoin(Package, Package.id == Assignment.package_id)
        .where(Assignment.user_id == user_id)
    ).all()
    events = [
        (aid, action, grade, at)
        for aid, action, grade, at in session.execute(
            select(Judgment.assignment_id, Judgment.action, Judgment.grade, Judgment.created_at)
            .where(Judgment.user_id == user_id, Judgment.assignment_id.is_not(None))
            .order_by(Judgment.id)
        )
        if aid is not None  # left out by the query; narrows the type
    ]
    labelled = standing_by_assignment([(aid, action, grade) for aid, action, grade, _at in events])
    flags: dict[int, bool] = {}
    for aid, action, _grade, _at in events:
        if action in (JudgmentAction.SKIP, JudgmentAction.FLAG, JudgmentAction.LABEL):
            flags[aid] = action == JudgmentAction.FLAG
    done = sum(1 for aid, _p, _o in rows if aid in labelled)
    flagged = sum(1 for aid, _p, _o in rows if aid not in labelled and flags.get(aid))
    left = sum(1 for aid, _p, is_open in rows if is_open and aid not in labelled and not flags.get(aid))
    median = median_seconds([at for _a, action, _g, at in events if action != JudgmentAction.UNDO and at is not None])
    return Overview(
        done=done,
        total=len(rows),
        flagged=flagged,
        left=left,
        packages=len({p for _a, p, _o in rows if p is not None}),
        median_s=median,
        eta_s=None if median is None else left * median,
    )


@dataclass(frozen=True)
class HistoryEntry:
    """One of the user's earlier items: what they said last and whether it can still be relabelled."""

    assignment_id: int
    package: str
    query: str
    passage: str
    grade: int | None  # the standing label, None when withdrawn or never given
    mark: str | None  # "skip" or "flag" when that is the latest word and no label stands
    open: bool


def history(session: Session, user_id: int, *, limit: int | None = None) -> list[HistoryEntry]:
    """The user's items they have labelled, skipped or flagged, in the order they first handled them (oldest first).

    ``limit`` keeps the most recent ones.  Texts are the query's and the passage's (cut to 200
    characters), never anything that came from a run or another annotator.
    """
    events = own_events(session, user_id, None)
    first: dict[int, int] = {}
    marks: dict[int, str | None] = {}
    for i, (aid, action, _grade) in enumerate(events):
        if action != JudgmentAction.UNDO:
            first.setdefault(aid, i)
        if action in (JudgmentAction.SKIP, JudgmentAction.FLAG):
            marks[aid] = action
        elif action == JudgmentAction.LABEL:
            marks[aid] = None
    if not first:
        return []
    labels = standing_by_assignment(events)
    order = sorted(first, key=first.__getitem__)
    if limit is not None:
        order = order[-limit:] if limit > 0 else []
    rows = {
        aid: (package, purpose, query, passage, bool(is_open))
        for aid, package, purpose, query, passage, is_open in session.execute(
            select(
                Assignment.id,
                Assignment.package,
                Assignment.purpose,
                QueryRecord.text,
                PassageRecord.text,
                open_clause(),
            )
            .join(QueryRecord, QueryRecord.id == Assignment.query_id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .outerjoin(Package, Package.id == Assignment.package_id)
            .where(Assignment.user_id == user_id, Assignment.id.in_(order))
        )
    }
    result = []
    for aid in order:
        if aid not in rows:
            continue
        package, purpose, query, passage, is_open = rows[aid]
        grade = labels.get(aid)
        result.append(
            HistoryEntry(
                assignment_id=aid,
                package=package or ("adjudication" if purpose == Purpose.FOURTH else "review"),
                query=query[:200],
                passage=passage[:200],
                grade=grade,
                mark=None if grade is not None else marks.get(aid),
                open=is_open,
            )
        )
    return result


def open_own_item(session: Session, user_id: int, assignment_id: int) -> tuple[Item, int | None]:
    """One of the user's own items, to look at again or relabel: ``(item, the user's standing label or None)``.

    Raises
    ------
    Forbidden
        When the assignment is not the user's (the same wall as :func:`db.labelling.record_judgment`).
    """
    a = session.get(Assignment, assignment_id)
    if a is None or a.user_id != user_id:
        raise Forbidden("this item is not assigned to you")
    package_rows = session.execute(
        select(Assignment.id, Assignment.purpose, Assignment.package, Assignment.order_index, Assignment.package_id)
        .where(
            Assignment.user_id == user_id,
            Assignment.package == a.package,
            Assignment.package_id.is_(None) if a.package_id is None else Assignment.package_id == a.package_id,
        )
        .order_by(Assignment.order_index, Assignment.id)
    ).all()
    labelled = standing_labels(session, user_id, [r[0] for r in package_rows])
    return build_item(session, assignment_id, package_rows, labelled), labelled.get(assignment_id)
