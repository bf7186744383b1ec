"""Blind judging in the store: the next items of an annotator, recording a label, undo.

Every write function runs in the caller's write transaction.  Blindness is structural:
:func:`next_item` returns the query and passage text and nothing else (no run, rank, score or other
annotator), and every function that acts on an assignment checks that it belongs to the acting user, so
editing a URL or a request cannot reach someone else's work.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import ColumnElement, Table, and_, bindparam, exists, insert, or_, select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.resolution import Resolution
from core.scale import SCALES
from core.validators import is_integer
from db.access import (
    LABEL_ROLES,
    OPEN_PACKAGE,
    Forbidden,
    SignedOut,
    StaleSubmission,
    labelling_account,
)
from db.archive_state import archived_clause, archived_reason
from db.models import (
    Assignment,
    Judgment,
    LabelOverride,
    Package,
    PassageRecord,
    Pool,
    PoolEntry,
    QcItem,
    QcRound,
    QueryRecord,
    User,
)
from db.own_judgments import own_log
from db.qc_rounds import annotator_note
from db.resolution import pair_scale, resolve_pair
from db.vocab import JudgmentAction, Purpose, QcRoundStatus

# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class Item:
    """What an annotator sees: the texts and their place in the package, nothing else."""

    assignment_id: int
    query: str
    query_language: str | None
    title: str
    passage: str
    passage_language: str | None
    package: str
    position: int
    total: int
    done: int
    purpose: str
    scale: str = "graded"
    note: str = ""
    """For a QC reviewer of a label the annotator kept after rework: that label and the annotator's note."""


def open_clause() -> ColumnElement[bool]:
    """SQL condition (Assignment outer-joined to Package): the assignment can still take a judgment.

    Its package is open or returned for revision; an adjudication (4th) assignment stays open until a
    reviewer's override settles the pair; a QC assignment while a round that sampled the pair is reviewing;
    a label assignment without a package (stores older than packages) is always open.
    :func:`next_item` serves and :func:`record_judgment` accepts exactly the same set.
    """
    overridden = exists().where(
        LabelOverride.query_id == Assignment.query_id, LabelOverride.passage_id == Assignment.passage_id
    )
    reviewing = exists().where(
        QcItem.query_id == Assignment.query_id,
        QcItem.passage_id == Assignment.passage_id,
        QcRound.id == QcItem.qc_round_id,
        QcRound.status == QcRoundStatus.REVIEWING,
    )
    # an archived collection or pool (db.archive) serves and takes nothing until restored; packages keep their state
    archived = archived_clause()
    return and_(
        ~archived,
        or_(
            and_(Assignment.package_id.is_not(None), Package.status.in_(OPEN_PACKAGE)),
            and_(
                Assignment.package_id.is_(None),
                or_(
                    Assignment.purpose == "label",
                    and_(Assignment.purpose == Purpose.FOURTH, ~overridden),
                    and_(Assignment.purpose == Purpose.QC, reviewing),
                ),
            ),
        ),
    )


# Statements a label runs, built once.  A statement object memoises its SQL cache key, so a label under
# the write lock pays neither for building the expression (the open condition alone is some thirty
# operator calls) nor for hashing it on each call; the ids travel as bind parameters.
_STATE = (
    select(open_clause(), Package.status, Pool.params)
    .select_from(Assignment)
    .outerjoin(Package, Package.id == Assignment.package_id)
    .outerjoin(PoolEntry, PoolEntry.id == Assignment.pool_entry_id)
    .outerjoin(Pool, Pool.id == PoolEntry.pool_id)
    .where(Assignment.id == bindparam("assignment_id"))
)
_OWN_SUBMISSIONS = (
    select(Judgment.action, Judgment.grade, Judgment.submission_token)
    .where(Judgment.assignment_id == bindparam("assignment_id"), Judgment.user_id == bindparam("user_id"))
    .order_by(Judgment.id)
)
# a Core insert on the table: the row is appended and never read back as an object, so the session's
# unit of work (an object, its state, a flush) is skipped; the columns' defaults (created_at) still apply
_INSERT_JUDGMENT = insert(cast(Table, Judgment.__table__))
# what Session.get(Assignment, id, with_for_update=True) runs, without rebuilding it per call
_OWN_ASSIGNMENT = select(Assignment).where(Assignment.id == bindparam("assignment_id")).with_for_update()


def _assignment_state(session: Session, a: Assignment) -> tuple[str | None, str]:
    """``(why assignment a takes no judgment now, or None while it is open; the scale of its pair)``.

    One query (the open condition, its package's status and its pool's parameters) inside the write.
    """
    is_open, status, params = session.execute(_STATE, {"assignment_id": a.id}).one()
    # QC assignments carry no pool entry: their scale is that of the pair's labelling assignments
    if a.pool_entry_id is None:
        scale = pair_scale(session, a.query_id, a.passage_id)
    else:
        scale = (params or {}).get("scale", "graded")
    if is_open:  # None (SQL NULL) counts as closed
        return None, scale
    archived = archived_reason(session, a)
    if archived is not None:
        return archived, scale
    if a.package_id is not None:
        return f"package {a.package} is {status} and takes no more labels", scale
    if a.purpose == Purpose.FOURTH:
        return "a reviewer has already decided this pair", scale
    return "the quality review of this item is closed", scale


def next_item(session: Session, user_id: int, *, skipped: Sequence[int] = ()) -> Item | None:
    """The user's next unlabelled open assignment: adjudication first, then their oldest open package in order.

    The user's own judgment log decides what is served, so it holds across sessions: an item they
    skipped (their latest word on it is a skip) comes back at the end of its package; an item they
    flagged is not served again (it waits in the reviewers' flagged queue, :func:`db.review_progress.flagged`,
    and the user can still open it from their own list), except a QC item, which comes back like a skip.  ``skipped`` assignment ids count as skipped
    too.  Returns None when nothing is left.  What is served is exactly what :func:`record_judgment`
    accepts (the same open condition).
    """
    items = next_items(session, user_id, 1, skipped=skipped)
    return items[0] if items else None


def next_items(session: Session, user_id: int, limit: int, *, skipped: Sequence[int] = ()) -> list[Item]:
    """The user's next ``limit`` unlabelled open items in serving order (:func:`next_item` is the first).

    Each package's skipped items come after the rest of it; a browser queue shows them in this order.
    """
    rows = session.execute(
        select(Assignment.id, Assignment.purpose, Assignment.package, Assignment.order_index, Assignment.package_id)
        .outerjoin(Package, Package.id == Assignment.package_id)
        .where(Assignment.user_id == user_id, open_clause())
        .order_by(Assignment.purpose != Purpose.FOURTH, Assignment.package_id, Assignment.order_index, Assignment.id)
    ).all()
    if not rows:
        return []
    labelled, marks = own_log(session, user_id, [r[0] for r in rows])
    # A reviewer's flag on a QC item is a note, not a hand-off: nobody else labels that sample, so it
    # comes back like a skip (else the round could never close).  Elsewhere a flag waits for reviewers.
    qc_ids = {r[0] for r in rows if r[1] == Purpose.QC}
    todo = [r for r in rows if r[0] not in labelled and (marks.get(r[0]) != "flag" or r[0] in qc_ids)]
    skip = set(skipped) | {aid for aid, mark in marks.items() if mark == "skip" or aid in qc_ids}
    groups: dict[tuple[bool, Any, Any], list[Any]] = {}  # packages in serving order (dicts keep insertion order)
    for r in todo:
        groups.setdefault((r[1] == Purpose.FOURTH, r[4], r[2]), []).append(r)
    # within a package its skipped items only after the rest of it
    chosen = [r for group in groups.values() for r in sorted(group, key=lambda r: r[0] in skip)][:limit]
    return [build_item(session, r[0], [p for p in rows if p[4] == r[4] and p[2] == r[2]], labelled) for r in chosen]


def build_item(
    session: Session, assignment_id: int, package_rows: Sequence[Sequence[Any]], labelled: dict[int, int]
) -> Item:
    """The :class:`Item` of ``assignment_id``: its texts, its place in ``package_rows`` and its label if any."""
    a = session.get_one(Assignment, assignment_id)
    q = session.get_one(QueryRecord, a.query_id)
    p = session.get_one(PassageRecord, a.passage_id)
    order = [r[0] for r in package_rows]
    return Item(
        assignment_id=a.id,
        query=q.text,
        query_language=q.language,
        title=p.title,
        passage=p.text,
        passage_language=p.language,
        package=a.package or ("adjudication" if a.purpose == Purpose.FOURTH else "review"),
        position=order.index(a.id) + 1 if a.id in order else 1,
        total=len(order),
        done=sum(1 for aid in order if aid in labelled),
        purpose=a.purpose,
        scale=_assignment_scale(session, a),
        note=annotator_note(session, a) if a.purpose == Purpose.QC else "",
    )


def _assignment_scale(session: Session, a: Assignment) -> str:
    """The scale of an assignment's pair through its own pool entry (two primary-key lookups, no scan)."""
    if a.pool_entry_id is None:  # QC assignments carry no pool entry
        return pair_scale(session, a.query_id, a.passage_id)
    params = session.scalar(
        select(Pool.params).join(PoolEntry, PoolEntry.pool_id == Pool.id).where(PoolEntry.id == a.pool_entry_id)
    )
    return (params or {}).get("scale", "graded")


def _own_assignment(session: Session, user_id: int, assignment_id: int) -> Assignment:
    # FOR UPDATE on PostgreSQL: two submissions on one assignment (two tabs) are checked one after the other
    a = session.scalar(_OWN_ASSIGNMENT, {"assignment_id": assignment_id})
    if a is None or a.user_id != user_id:
        raise Forbidden("this item is not assigned to you")
    return a


def _may_label(user: User, a: Assignment) -> None:
    if user.role not in LABEL_ROLES.get(a.purpose, ()):
        raise SignedOut(f"this {user.role} account may not label {a.purpose} items any more; nothing was stored")


def _checked_grade(action: str, grade: int | None) -> int | None:
    """The grade to store for ``action``: a label's grade as a plain int; refuses an unknown action or non-integer."""
    if action not in (JudgmentAction.LABEL, JudgmentAction.SKIP, JudgmentAction.FLAG):
        raise ValueError(f"unknown action {action!r}")
    if action != JudgmentAction.LABEL:
        return grade
    # True == 1 and 2.0 == 2 would pass the scale check and store a bool or a float as a grade
    if grade is None or not is_integer(grade):
        raise ValueError(f"grade must be an integer, got {grade!r}")
    return int(grade)  # a NumPy integer is stored as a plain int


def _own_submissions(session: Session, user_id: int, assignment_id: int) -> list[tuple[str, int | None, str | None]]:
    """The user's own log on one assignment: ``(action, grade, submission token)``, oldest first."""
    rows = session.execute(_OWN_SUBMISSIONS, {"assignment_id": assignment_id, "user_id": user_id})
    return [(action, grade, token) for action, grade, token in rows]


def _accepting_scale(
    session: Session,
    a: Assignment,
    action: str,
    grade: int | None,
    mine: Sequence[tuple[str, int | None]],
    *,
    relabel: bool,
) -> str:
    """The scale of ``a``'s pair once ``a`` may take this judgment now; raises what :func:`record_judgment` refuses.

    ``mine`` is the user's own ``(action, grade)`` log on ``a``, oldest first.  Checked in this order: a label's
    grade on the scale (``ValueError``), the assignment still open, no standing label unless ``relabel``
    (:class:`StaleSubmission`).
    """
    reason, scale = _assignment_state(session, a)
    levels = SCALES[scale]
    if action == JudgmentAction.LABEL and grade not in levels:
        raise ValueError(f"grade must be one of {list(levels)}, got {grade!r}")
    if reason is not None:
        raise StaleSubmission(f"Not stored: {reason}.")
    if not relabel and current_labels(Event(a.id, "me", act, g) for act, g in mine):
        raise StaleSubmission("Not stored: this item was already labelled (in another tab or window).")
    return scale


def record_judgment(
    session: Session,
    user_id: int,
    assignment_id: int,
    grade: int | None,
    *,
    action: str = "label",
    note: str = "",
    elapsed_ms: int | None = None,
    token: str | None = None,
    relabel: bool = False,
) -> Resolution | None:
    """Append a judgment (label, skip or flag) on the assignment that was shown; a label re-resolves the pair.

    Everything is checked inside the caller's write transaction, against the store as it is now:
    the account exists, is active and its role may label this kind of item (else :class:`SignedOut`);
    the assignment is the user's (else :class:`Forbidden`); it is still open and the user has no
    standing label on it (else :class:`StaleSubmission`).  A refused submission stores nothing.

    Parameters
    ----------
    token : str, optional
        The render token of the item on screen.  The same ``(assignment_id, token)`` submitted twice
        (a double key press, a resent request) stores one judgment: the repeat returns None and
        stores nothing.  None: no idempotency key, every other check still applies.
    relabel : bool
        Accept the judgment although the user already has a standing label on the item (a deliberate
        relabel or a note from a script).  The annotation page never sets it.

    Returns
    -------
    Resolution or None
        The pair's resolution after a label; None for skip, flag, QC labels and repeats.
    """
    grade = _checked_grade(action, grade)
    # a handful of indexed reads, then one insert: this runs under the write lock
    user = labelling_account(session, user_id)
    a = _own_assignment(session, user_id, assignment_id)
    _may_label(user, a)
    mine = _own_submissions(session, user_id, a.id)  # for the repeat and standing-label checks
    if token is not None and any(t == token for _a, _g, t in mine):
        return None  # this very submission is already stored
    scale = _accepting_scale(session, a, action, grade, [(act, g) for act, g, _t in mine], relabel=relabel)
    session.execute(
        _INSERT_JUDGMENT,
        {
            "assignment_id": a.id,
            "query_id": a.query_id,
            "passage_id": a.passage_id,
            "user_id": user_id,
            "action": action,
            "grade": grade if action == JudgmentAction.LABEL else None,
            "note": note,
            "elapsed_ms": elapsed_ms,
            "submission_token": token,
        },
    )
    if action != JudgmentAction.LABEL or a.purpose == Purpose.QC:
        return None
    return resolve_pair(session, a.query_id, a.passage_id, scale=scale)


def undo_last(session: Session, user_id: int) -> int | None:
    """Withdraw the user's most recent standing label; returns its assignment id (None if nothing to undo).

    The account is checked as for :func:`record_judgment`; a label whose package or QC round has
    closed since cannot be withdrawn (:class:`StaleSubmission`, nothing stored).
    """
    user = labelling_account(session, user_id)
    rows = session.execute(
        select(Judgment.assignment_id, Judgment.action)
        .where(
            Judgment.user_id == user_id,
            Judgment.assignment_id.is_not(None),
            Judgment.action.in_((JudgmentAction.LABEL, JudgmentAction.UNDO)),
        )
        .order_by(Judgment.id)
    ).all()
    stack: list[int] = []
    for aid, action in rows:
        if aid is None:  # left out by the query; narrows the type
            continue
        if action == JudgmentAction.LABEL:
            stack.append(aid)
        else:
            # an undo withdraws the latest standing label of that assignment
            for i in range(len(stack) - 1, -1, -1):
                if stack[i] == aid:
                    del stack[i]
                    break
    if not stack:
        return None
    aid = stack[-1]
    a = _own_assignment(session, user_id, aid)
    _may_label(user, a)
    reason, scale = _assignment_state(session, a)
    if reason is not None:
        raise StaleSubmission(f"Nothing undone: {reason}.")
    session.add(
        Judgment(
            assignment_id=aid, query_id=a.query_id, passage_id=a.passage_id, user_id=user_id, action=JudgmentAction.UNDO
        )
    )
    session.flush()
    if a.purpose != Purpose.QC:
        resolve_pair(session, a.query_id, a.passage_id, scale=scale)
    return aid
