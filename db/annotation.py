"""The annotation workflow in the store: assignments, blind judging, resolution, overrides, QC, qrels versions.

Every write function runs in the caller's write transaction.  The pure rules
live in ``core`` (:mod:`core.assignment`, :mod:`core.judgments`,
:mod:`core.resolution`, :mod:`core.qc`); this module only reads what they
need and stores what they decide.

Blindness is structural: :func:`next_item` returns the query and passage
text and nothing else (no run, rank, score or other annotator), and every
function that acts on an assignment checks that it belongs to the acting
user, so editing a URL or a request cannot reach someone else's work.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from sqlalchemy import ColumnElement, and_, exists, func, insert, or_, select
from sqlalchemy.orm import Session

from core.assignment import Task, annotator_seed, plan_assignments, plan_fourth
from core.judgments import Event, current_labels
from core.names import check_name
from core.qc import qc_decision, round_seed
from core.resolution import Resolution, apply_override, resolve
from core.scale import SCALES  # re-exported as db.annotation.SCALES
from core.types import Qrels
from core.validators import is_integer
from db.access import (
    ADMIN_ROLES,
    LABEL_ROLES,
    REVIEW_ROLES,
    Forbidden,
    SignedOut,
    StaleSubmission,
    labelling_account,
    require_account,
)
from db.archive_state import archived_clause, archived_reason
from db.models import (
    Assignment,
    FinalLabel,
    Judgment,
    LabelOverride,
    Package,
    Passage,
    Pool,
    PoolEntry,
    QcItem,
    QcRound,
    QrelsEntry,
    QrelsVersion,
    QueryRecord,
    User,
    utcnow,
)
from db.queries import NotFound, collection_id

LABELLING = ("label", "fourth")  # assignment purposes whose labels decide final labels (QC labels do not)
OPEN_PACKAGE = ("open", "revise")


# --------------------------------------------------------------------------- assignment


@dataclass(frozen=True)
class AssignmentSummary:
    pairs: int
    tasks: int
    packages: list[str]
    per_annotator: dict[str, int]


def _annotators(session: Session, names: Sequence[str] | None) -> dict[str, int]:
    query = select(User.username, User.id).where(User.active, User.role == "annotator")
    if names is not None:
        query = query.where(User.username.in_(list(names)))
    found = dict(session.execute(query).all())
    if names is not None:
        missing = sorted(set(names) - found.keys())
        if missing:
            raise NotFound(f"not active annotators: {', '.join(missing)}")
    return found


def _loads(session: Session) -> dict[str, int]:
    return dict(
        session.execute(
            select(User.username, func.count(Assignment.id))
            .select_from(User)
            .join(Assignment, Assignment.user_id == User.id)
            .where(Assignment.purpose.in_(LABELLING))
            .group_by(User.username)
        ).all()
    )


PairIds = tuple[int, int, int]
"""``(pool entry id, query row id, passage row id)`` of a pool's selected pair."""


def _pool_on_scale(session: Session, cid: int, collection: str, pool: str, scale: str) -> Pool:
    """The pool, its scale fixed to ``scale`` (refused when its pairs were assigned on another scale)."""
    pool_row = session.scalar(select(Pool).where(Pool.collection_id == cid, Pool.name == pool))
    if pool_row is None:
        raise NotFound(f"no pool named {pool!r} in collection {collection!r}")
    current = (pool_row.params or {}).get("scale")
    if current is not None and current != scale:
        raise ValueError(f"pool {pool!r} is annotated on the {current} scale, not {scale}")
    pool_row.params = {**(pool_row.params or {}), "scale": scale}
    return pool_row


def _selected_pairs(session: Session, pool_id: int) -> dict[tuple[str, str], PairIds]:
    """``{(qid, docid): (entry id, query row id, passage row id)}`` of the pool's selected entries, in entry order."""
    entries = session.execute(
        select(PoolEntry.id, QueryRecord.ext_id, Passage.ext_id, PoolEntry.query_id, PoolEntry.passage_id)
        .join(QueryRecord, QueryRecord.id == PoolEntry.query_id)
        .join(Passage, Passage.id == PoolEntry.passage_id)
        .where(PoolEntry.pool_id == pool_id, PoolEntry.selected)
        .order_by(PoolEntry.id)
    ).all()
    return {(q, d): (eid, qi, pi) for eid, q, d, qi, pi in entries}


def _pair_holders(session: Session, cid: int) -> dict[tuple[str, str], set[str]]:
    """Who already holds a labelling assignment on each pair of the collection (from any pool)."""
    existing: dict[tuple[str, str], set[str]] = {}
    for q, d, user in session.execute(
        select(QueryRecord.ext_id, Passage.ext_id, User.username)
        .select_from(Assignment)
        .join(QueryRecord, QueryRecord.id == Assignment.query_id)
        .join(Passage, Passage.id == Assignment.passage_id)
        .join(User, User.id == Assignment.user_id)
        .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(LABELLING))
    ):
        existing.setdefault((q, d), set()).add(user)
    return existing


def _package_counts(session: Session) -> dict[str, int]:
    """How many packages each user has (new package names continue their numbering)."""
    return dict(
        session.execute(
            select(User.username, func.count(Package.id))
            .select_from(User)
            .join(Package, Package.user_id == User.id)
            .group_by(User.username)
        ).all()
    )


def _store_tasks(
    session: Session, tasks: Sequence[Task], ids: dict[tuple[str, str], PairIds], users: dict[str, int], pool_id: int
) -> dict[str, int]:
    """Create the planned packages (open) and insert their assignments; returns ``{package name: id}``."""
    package_ids: dict[str, int] = {}
    for task in tasks:
        if task.package not in package_ids:
            row = Package(name=task.package, user_id=users[task.annotator], pool_id=pool_id, status="open")
            session.add(row)
            session.flush()
            package_ids[task.package] = row.id
    if tasks:
        session.execute(
            insert(Assignment),
            [
                {
                    "pool_entry_id": ids[t.pair][0],
                    "query_id": ids[t.pair][1],
                    "passage_id": ids[t.pair][2],
                    "user_id": users[t.annotator],
                    "package": t.package,
                    "package_id": package_ids[t.package],
                    "order_index": t.order,
                    "seed": t.seed,
                    "purpose": "label",
                }
                for t in tasks
            ],
        )
    return package_ids


def create_assignments(
    session: Session,
    collection: str,
    pool: str,
    *,
    annotators: Sequence[str] | None = None,
    per_pair: int = 3,
    seed: int = 0,
    package_size: int = 1000,
    group_by_query: bool = False,
    scale: str = "graded",
    by: int | None = None,
) -> AssignmentSummary:
    """Give every selected pair of a pool to ``per_pair`` distinct annotators, in shuffled packages.

    Pairs that already have annotators (from this or another pool) keep them and only get the
    missing ones, so new pools and new annotators can be added at any time without touching
    finished work.  ``scale`` is ``"graded"`` (0-3) or ``"binary"`` (0/1, its own keys on the
    annotation page); it is fixed for a pool once its pairs are assigned.  ``by``: the acting
    account when an app user asks (checked active admin in this transaction); None from the CLI.
    """
    if by is not None:
        require_account(session, by, ADMIN_ROLES, action="assign work")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    cid = collection_id(session, collection)
    pool_row = _pool_on_scale(session, cid, collection, pool, scale)
    users = _annotators(session, annotators)
    ids = _selected_pairs(session, pool_row.id)
    existing = _pair_holders(session, cid)
    packages = _package_counts(session)
    tasks = plan_assignments(
        list(ids),
        sorted(users),
        per_pair=per_pair,
        existing={k: v for k, v in existing.items() if k in ids},
        load=_loads(session),
        existing_packages=packages,
        seed=seed,
        package_size=package_size,
        group_by_query=group_by_query,
    )
    package_ids = _store_tasks(session, tasks, ids, users, pool_row.id)
    per_annotator = Counter(t.annotator for t in tasks)
    return AssignmentSummary(
        pairs=len(ids), tasks=len(tasks), packages=sorted(package_ids), per_annotator=dict(per_annotator)
    )


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


OwnEvent = tuple[int, str, int | None]
"""``(assignment id, action, grade)``: one judgment of a user's own log."""


def _own_events(session: Session, user_id: int, wanted: set[int] | None) -> list[OwnEvent]:
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
    standing = standing_by_assignment(_own_events(session, user_id, wanted))
    return {aid: grade for aid, grade in standing.items() if wanted is None or aid in wanted}


def _open_clause() -> ColumnElement[bool]:
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
        QcRound.status == "reviewing",
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
                    and_(Assignment.purpose == "fourth", ~overridden),
                    and_(Assignment.purpose == "qc", reviewing),
                ),
            ),
        ),
    )


def _assignment_state(session: Session, a: Assignment) -> tuple[str | None, str]:
    """``(why assignment a takes no judgment now, or None while it is open; the scale of its pair)``.

    One query (the open condition, its package's status and its pool's parameters) inside the write.
    """
    is_open, status, params = session.execute(
        select(_open_clause(), Package.status, Pool.params)
        .select_from(Assignment)
        .outerjoin(Package, Package.id == Assignment.package_id)
        .outerjoin(PoolEntry, PoolEntry.id == Assignment.pool_entry_id)
        .outerjoin(Pool, Pool.id == PoolEntry.pool_id)
        .where(Assignment.id == a.id)
    ).one()
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
    if a.purpose == "fourth":
        return "a reviewer has already decided this pair", scale
    return "the quality review of this item is closed", scale


def next_item(session: Session, user_id: int, *, skipped: Sequence[int] = ()) -> Item | None:
    """The user's next unlabelled open assignment: adjudication first, then their oldest open package in order.

    The user's own judgment log decides what is served, so it holds across sessions: an item they
    skipped (their latest word on it is a skip) comes back at the end of its package; an item they
    flagged is not served again (it waits in the reviewers' flagged queue, :func:`db.review.flagged`,
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
        .where(Assignment.user_id == user_id, _open_clause())
        .order_by(Assignment.purpose != "fourth", Assignment.package_id, Assignment.order_index, Assignment.id)
    ).all()
    if not rows:
        return []
    labelled, marks = own_log(session, user_id, [r[0] for r in rows])
    # A reviewer's flag on a QC item is a note, not a hand-off: nobody else labels that sample, so it
    # comes back like a skip (else the round could never close).  Elsewhere a flag waits for reviewers.
    qc_ids = {r[0] for r in rows if r[1] == "qc"}
    todo = [r for r in rows if r[0] not in labelled and (marks.get(r[0]) != "flag" or r[0] in qc_ids)]
    skip = set(skipped) | {aid for aid, mark in marks.items() if mark == "skip" or aid in qc_ids}
    groups: dict[tuple[bool, Any, Any], list[Any]] = {}  # packages in serving order (dicts keep insertion order)
    for r in todo:
        groups.setdefault((r[1] == "fourth", r[4], r[2]), []).append(r)
    # within a package its skipped items only after the rest of it
    chosen = [r for group in groups.values() for r in sorted(group, key=lambda r: r[0] in skip)][:limit]
    return [_item(session, r[0], [p for p in rows if p[4] == r[4] and p[2] == r[2]], labelled) for r in chosen]


def own_log(session: Session, user_id: int, assignment_ids: Sequence[int]) -> tuple[dict[int, int], dict[int, str]]:
    """``(standing label per assignment, "skip" or "flag" where that is the user's latest word and no label stands)``.

    One read of the user's log (as :func:`standing_labels`); a label clears an earlier skip or flag, an undo
    of that label leaves the item plainly unlabelled.
    """
    wanted = set(assignment_ids)
    events = _own_events(session, user_id, wanted)
    standing = {aid: grade for aid, grade in standing_by_assignment(events).items() if aid in wanted}
    marks: dict[int, str] = {}
    for aid, action, _grade in events:
        if action in ("skip", "flag"):
            marks[aid] = action
        elif action == "label":
            marks.pop(aid, None)
    return standing, {aid: mark for aid, mark in marks.items() if aid in wanted and aid not in standing}


def _item(
    session: Session, assignment_id: int, package_rows: Sequence[Sequence[Any]], labelled: dict[int, int]
) -> Item:
    a = session.get_one(Assignment, assignment_id)
    q = session.get_one(QueryRecord, a.query_id)
    p = session.get_one(Passage, a.passage_id)
    order = [r[0] for r in package_rows]
    return Item(
        assignment_id=a.id,
        query=q.text,
        query_language=q.language,
        title=p.title,
        passage=p.text,
        passage_language=p.language,
        package=a.package or ("adjudication" if a.purpose == "fourth" else "review"),
        position=order.index(a.id) + 1 if a.id in order else 1,
        total=len(order),
        done=sum(1 for aid in order if aid in labelled),
        purpose=a.purpose,
        scale=_assignment_scale(session, a),
        note=_kept_note(session, a) if a.purpose == "qc" else "",
    )


def _kept_note(session: Session, a: Assignment) -> str:
    from db.qc_rounds import annotator_note  # builds on this module

    return annotator_note(session, a)


def pair_scale(session: Session, query_id: int, passage_id: int) -> str:
    """The scale a pair is annotated on: that of the pool it was assigned from (graded by default)."""
    params = session.scalar(
        select(Pool.params)
        .join(PoolEntry, PoolEntry.pool_id == Pool.id)
        .join(Assignment, Assignment.pool_entry_id == PoolEntry.id)
        .where(Assignment.query_id == query_id, Assignment.passage_id == passage_id)
        .limit(1)
    )
    return (params or {}).get("scale", "graded")


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
    a = session.get(Assignment, assignment_id, with_for_update=True)
    if a is None or a.user_id != user_id:
        raise Forbidden("this item is not assigned to you")
    return a


def _may_label(user: User, a: Assignment) -> None:
    if user.role not in LABEL_ROLES.get(a.purpose, ()):
        raise SignedOut(f"this {user.role} account may not label {a.purpose} items any more; nothing was stored")


def _checked_grade(action: str, grade: int | None) -> int | None:
    """The grade to store for ``action``: a label's grade as a plain int; refuses an unknown action or non-integer."""
    if action not in ("label", "skip", "flag"):
        raise ValueError(f"unknown action {action!r}")
    if action != "label":
        return grade
    # True == 1 and 2.0 == 2 would pass the scale check and store a bool or a float as a grade
    if grade is None or not is_integer(grade):
        raise ValueError(f"grade must be an integer, got {grade!r}")
    return int(grade)  # a NumPy integer is stored as a plain int


def _own_submissions(session: Session, user_id: int, assignment_id: int) -> list[tuple[str, int | None, str | None]]:
    """The user's own log on one assignment: ``(action, grade, submission token)``, oldest first."""
    return [
        (action, grade, token)
        for action, grade, token in session.execute(
            select(Judgment.action, Judgment.grade, Judgment.submission_token)
            .where(Judgment.assignment_id == assignment_id, Judgment.user_id == user_id)
            .order_by(Judgment.id)
        )
    ]


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
    if action == "label" and grade not in levels:
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
    session.add(
        Judgment(
            assignment_id=a.id,
            query_id=a.query_id,
            passage_id=a.passage_id,
            user_id=user_id,
            action=action,
            grade=grade if action == "label" else None,
            note=note,
            elapsed_ms=elapsed_ms,
            submission_token=token,
        )
    )
    session.flush()
    if action != "label" or a.purpose == "qc":
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
        .where(Judgment.user_id == user_id, Judgment.assignment_id.is_not(None), Judgment.action.in_(("label", "undo")))
        .order_by(Judgment.id)
    ).all()
    stack: list[int] = []
    for aid, action in rows:
        if aid is None:  # left out by the query; narrows the type
            continue
        if action == "label":
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
        Judgment(assignment_id=aid, query_id=a.query_id, passage_id=a.passage_id, user_id=user_id, action="undo")
    )
    session.flush()
    if a.purpose != "qc":
        resolve_pair(session, a.query_id, a.passage_id, scale=scale)
    return aid


def pair_labels(session: Session, query_id: int, passage_id: int) -> dict[str, int]:
    """Standing labels of one pair by annotator (labelling assignments only, not QC reviews)."""
    rows = session.execute(
        select(User.username, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(User, User.id == Judgment.user_id)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .where(Judgment.query_id == query_id, Judgment.passage_id == passage_id, Assignment.purpose.in_(LABELLING))
        .order_by(Judgment.id)
    )
    labels = current_labels(Event("pair", user, action, grade) for user, action, grade in rows)
    return labels.get("pair", {})


def resolve_pair(
    session: Session, query_id: int, passage_id: int, *, seed: int = 0, scale: str | None = None
) -> Resolution:
    """Apply the T2Ranking rules to a pair's standing labels and store the outcome.

    A three-way split gets a 4th annotator automatically: not one of the three, from the pair's
    own pool or the pool's adjudicator list (:func:`db.adjudication.eligible_adjudicators`),
    least loaded; with nobody eligible the pair waits for a reviewer.  A reviewer's override
    always wins over the labels.  It runs inside the labelling write, so it stays a handful of
    indexed lookups (judgments, overrides and final labels by pair); pass ``scale`` when the
    caller knows it to skip looking it up.
    """
    labels = pair_labels(session, query_id, passage_id)
    levels = SCALES[scale or pair_scale(session, query_id, passage_id)]
    resolution = resolve(list(labels.values()), levels=levels)
    override = session.scalar(
        select(LabelOverride)
        .where(LabelOverride.query_id == query_id, LabelOverride.passage_id == passage_id)
        .order_by(LabelOverride.id.desc())
        .limit(1)
    )
    if override is not None:
        # an exclusion is stored as grade -1 (the column is NOT NULL)
        resolution = apply_override(
            resolution, None if override.grade < 0 else override.grade, override.reason, levels=levels
        )
    elif resolution.state == "needs_fourth":
        _assign_fourth(session, query_id, passage_id, set(labels), seed)
    final = session.scalar(
        select(FinalLabel).where(FinalLabel.query_id == query_id, FinalLabel.passage_id == passage_id)
    )
    if resolution.is_final:
        values = {
            "grade": resolution.grade,
            "method": resolution.method,
            "n_labels": resolution.n_labels,
            "reason": override.reason if override is not None else resolution.reason,  # an exclusion says why
            "decided_at": utcnow(),
            "decided_by": override.user_id if override is not None else None,
        }
        if final is None:
            cid = session.scalar(select(QueryRecord.collection_id).where(QueryRecord.id == query_id))
            session.add(FinalLabel(collection_id=cid, query_id=query_id, passage_id=passage_id, **values))
        elif any(getattr(final, key) != value for key, value in values.items() if key != "decided_at"):
            for key, value in values.items():
                setattr(final, key, value)
    elif final is not None:  # an undo took the pair back below a decision
        session.delete(final)
    session.flush()
    return resolution


def _assign_fourth(session: Session, query_id: int, passage_id: int, labelled_by: set[str], seed: int) -> None:
    """Give a split pair to a 4th annotator from its own pool (or the pool's adjudicator list), least loaded."""
    from db.adjudication import eligible_adjudicators  # db.adjudication builds on this module

    holders = set(
        session.scalars(
            select(User.username)
            .join(Assignment, Assignment.user_id == User.id)
            .where(
                Assignment.query_id == query_id, Assignment.passage_id == passage_id, Assignment.purpose.in_(LABELLING)
            )
        )
    )
    if holders - labelled_by:
        return  # someone already holds this pair and has not labelled it yet: that label will decide
    candidates = eligible_adjudicators(session, query_id, passage_id)
    if not candidates:
        # Nobody of the pair's pool (or its adjudicator list) is left: the label that split the pair
        # is still kept, and the pair waits in the Review page's adjudication queue for a reviewer's
        # decision or an admin's assignment.
        return
    chosen = plan_fourth((str(query_id), str(passage_id)), holders, candidates, _loads(session), seed)
    chosen_id = session.execute(select(User.id).where(User.username == chosen)).scalar_one()
    add_fourth(session, query_id, passage_id, chosen_id, chosen, seed)


def add_fourth(session: Session, query_id: int, passage_id: int, user_id: int, username: str, seed: int) -> None:
    """Give the pair's adjudication (the fourth label) to ``username``, in their adjudication package."""
    entry = session.scalar(
        select(Assignment.pool_entry_id)
        .where(
            Assignment.query_id == query_id, Assignment.passage_id == passage_id, Assignment.pool_entry_id.is_not(None)
        )
        .limit(1)
    )
    session.add(
        Assignment(
            pool_entry_id=entry,
            query_id=query_id,
            passage_id=passage_id,
            user_id=user_id,
            package=f"{username}-adjudication",
            package_id=None,
            order_index=0,
            seed=annotator_seed(seed, username),
            purpose="fourth",
        )
    )
    session.flush()


def override_label(
    session: Session, reviewer_id: int, query_id: int, passage_id: int, grade: int | None, reason: str
) -> Resolution:
    """A reviewer sets a pair's final label (or excludes it with ``grade=None``), with a reason.

    The reviewer's account (active, reviewer or admin) is checked in this same transaction.
    """
    require_account(session, reviewer_id, REVIEW_ROLES, action="override a final label")
    if not reason or not reason.strip():
        raise ValueError("an override needs a reason")
    session.add(
        LabelOverride(
            query_id=query_id,
            passage_id=passage_id,
            user_id=reviewer_id,
            grade=grade if grade is not None else -1,
            reason=reason.strip(),
        )
    )
    session.flush()
    return resolve_pair(session, query_id, passage_id)


# --------------------------------------------------------------------------- qrels


def live_qrels(session: Session, collection: str) -> Qrels:
    """The current final labels of a collection as qrels (excluded pairs left out)."""
    cid = collection_id(session, collection)
    qrels: Qrels = {}
    for qid, did, grade in session.execute(
        select(QueryRecord.ext_id, Passage.ext_id, FinalLabel.grade)
        .join(QueryRecord, QueryRecord.id == FinalLabel.query_id)
        .join(Passage, Passage.id == FinalLabel.passage_id)
        .where(FinalLabel.collection_id == cid, FinalLabel.method != "excluded", FinalLabel.grade.is_not(None))
    ):
        if grade is not None:  # excluded pairs carry no grade (left out by the query already)
            qrels.setdefault(qid, {})[did] = grade
    return qrels


def freeze_qrels(session: Session, collection: str, name: str, *, note: str = "", user_id: int | None = None) -> int:
    """Snapshot the current final labels as a named qrels version; returns the number of entries.

    ``user_id``: the acting account when an app user asks (checked active admin in this transaction).
    """
    if user_id is not None:
        require_account(session, user_id, ADMIN_ROLES, action="freeze qrels versions")
    check_name(name, "qrels version name")
    cid = collection_id(session, collection)
    if session.scalar(select(QrelsVersion.id).where(QrelsVersion.collection_id == cid, QrelsVersion.name == name)):
        raise ValueError(f"a qrels version named {name!r} already exists")
    qrels = live_qrels(session, collection)
    version = QrelsVersion(collection_id=cid, name=name, source="frozen", note=note, created_by=user_id)
    session.add(version)
    session.flush()
    rows = [
        {"version_id": version.id, "query_id": q, "doc_id": d, "grade": g}
        for q, docs in qrels.items()
        for d, g in docs.items()
    ]
    if rows:
        session.execute(insert(QrelsEntry), rows)
    return len(rows)


# --------------------------------------------------------------------------- quality control


def package_progress(session: Session, package_id: int) -> tuple[int, int]:
    """(labelled, total) assignments of a package."""
    package = session.get_one(Package, package_id)
    ids = list(session.scalars(select(Assignment.id).where(Assignment.package_id == package_id)))
    return len(standing_labels(session, package.user_id, ids)), len(ids)


def _package_for_qc(session: Session, package_id: int) -> Package:
    """The package, refused (``ValueError``) unless it is finished and neither under review nor returned."""
    package = session.get(Package, package_id)
    if package is None:
        raise NotFound(f"no package {package_id}")
    if package.status == "in_qc":
        raise ValueError(f"package {package.name} is under review: close its open round first")
    if package.status == "revise":
        # the annotator answers the disputed items and resubmits first (db.rework); a round now would
        # judge the very labels the last one sent back
        raise ValueError(f"package {package.name} is returned for revision: its annotator resubmits it first")
    done, total = package_progress(session, package_id)
    if done < total:
        ids = list(session.scalars(select(Assignment.id).where(Assignment.package_id == package_id)))
        flags = sum(mark == "flag" for mark in own_log(session, package.user_id, ids)[1].values())
        waiting = (
            (
                f"; {flags} flagged item(s) wait for the annotator to label them from 'My earlier items' "
                "once a reviewer has answered the flag"
            )
            if flags
            else ""
        )
        raise ValueError(f"package {package.name} is not finished ({done}/{total} labelled{waiting})")
    return package


def _qc_reviewers(session: Session, reviewers: Sequence[str]) -> dict[str, int]:
    """``{username: id}`` of the named accounts that are active reviewers or admins (at least two)."""
    users = dict(
        session.execute(
            select(User.username, User.id).where(
                User.username.in_(list(reviewers)), User.active, User.role.in_(("reviewer", "admin"))
            )
        ).all()
    )
    if len(users) < 2:
        raise ValueError("quality control needs at least two active reviewers")
    return users


def start_qc_round(
    session: Session,
    package_id: int,
    *,
    reviewers: Sequence[str],
    sample_size: int = 100,
    seed: int = 0,
    threshold: float = 0.93,
    by: int | None = None,
) -> int:
    """Sample a finished package for review by at least two reviewers; returns the round id.

    ``by``: the acting account when an app user asks (checked active admin in this transaction).
    """
    if by is not None:
        require_account(session, by, ADMIN_ROLES, action="start quality control")
    from db import qc_rounds  # builds on this module

    package = _package_for_qc(session, package_id)
    users = _qc_reviewers(session, reviewers)
    number = (session.scalar(select(func.max(QcRound.round_no)).where(QcRound.package_id == package_id)) or 0) + 1
    rseed = round_seed(seed, package.name, number)
    fresh, kept = qc_rounds.plan_sample(session, package, number, sample_size, rseed)
    if not fresh and not kept:  # every item reviewed, every disputed label changed to the reviewers': passed
        return qc_rounds.pass_fully_reviewed(session, package, number, rseed, threshold)
    sample = [k.pair for k in kept] + fresh
    qc_round = QcRound(
        package_id=package_id,
        round_no=number,
        seed=rseed,
        sample_size=len(sample),
        threshold=threshold,
        status="reviewing",
    )
    session.add(qc_round)
    session.flush()
    session.execute(insert(QcItem), [{"qc_round_id": qc_round.id, "query_id": q, "passage_id": p} for q, p in sample])
    qc_rounds.assign_kept(session, kept, users, qc_rounds.round_tag(package.name, number), rseed)
    qc_rounds.assign_fresh(session, fresh, users, qc_rounds.round_tag(package.name, number), rseed)
    package.status = "in_qc"
    package.updated_at = utcnow()
    session.flush()
    return qc_round.id


def qc_review_labels(
    session: Session, pairs: AbstractSet[tuple[int, int]] | None = None
) -> dict[Hashable, dict[str, int]]:
    """Each reviewer's standing QC label by ``(query row id, passage row id)``; only ``pairs`` when given."""
    rows = session.execute(
        select(Judgment.query_id, Judgment.passage_id, User.username, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(User, User.id == Judgment.user_id)
        .where(Assignment.purpose == "qc")
        .order_by(Judgment.id)
    )
    return current_labels(
        Event((q, p), user, action, grade) for q, p, user, action, grade in rows if pairs is None or (q, p) in pairs
    )


def close_qc_round(session: Session, round_id: int, *, min_reviewers: int = 2, by: int | None = None) -> dict[str, Any]:
    """Score the annotator against the reviewers on the round's sample and pass or return the package.

    ``by``: the acting account when an app user asks (checked active admin in this transaction).
    """
    if by is not None:
        require_account(session, by, ADMIN_ROLES, action="close quality control rounds")
    qc_round = session.get(QcRound, round_id)
    if qc_round is None:
        raise NotFound(f"no QC round {round_id}")
    if qc_round.status != "reviewing":
        raise ValueError(f"QC round {round_id} is already decided ({qc_round.status})")
    from db.qc_rounds import score_round  # builds on this module

    package = session.get_one(Package, qc_round.package_id)
    sample = session.execute(select(QcItem.query_id, QcItem.passage_id).where(QcItem.qc_round_id == round_id)).all()
    own = {
        (a.query_id, a.passage_id): a.id
        for a in session.scalars(select(Assignment).where(Assignment.package_id == package.id))
    }
    standing = standing_labels(session, package.user_id, list(own.values()))
    annotator_labels = {(str(q), str(p)): standing[own[(q, p)]] for q, p in sample if own.get((q, p)) in standing}
    # a kept item counts only its new reviews, a fresh item those of min_reviewers reviewers (db.qc_rounds)
    result = score_round(session, qc_round, annotator_labels, min_reviewers)
    decision = qc_decision(result, threshold=qc_round.threshold)
    qc_round.status = "passed" if decision == "pass" else "revise"
    qc_round.accuracy = result.accuracy
    qc_round.n_checked = result.n_checked
    qc_round.decided_at = utcnow()
    package.status = "passed" if decision == "pass" else "revise"
    package.updated_at = utcnow()
    session.flush()
    return {
        "accuracy": result.accuracy,
        "n_checked": result.n_checked,
        "decision": decision,
        "disagreements": [(d.pair, d.annotator_label, d.consensus) for d in result.disagreements],
        "reviewer_labels": {d.pair: dict(d.reviewer_labels) for d in result.disagreements},
    }


def resubmit_package(session: Session, user_id: int, package_id: int) -> None:
    """The annotator says a returned package is revised; it goes back to review as ``submitted``.

    Refused (``ValueError``, nothing changed) while a disputed item of the round that returned it is
    neither relabelled nor confirmed (:func:`db.rework.relabel_disputed`).
    """
    labelling_account(session, user_id)
    package = session.get(Package, package_id)
    if package is None or package.user_id != user_id:
        raise Forbidden("this package is not yours")
    if package.status != "revise":
        raise ValueError(f"package {package.name} is {package.status}, not returned for revision")
    from db.rework import unanswered  # db.rework builds on this module: imported here, not at the top

    left = unanswered(session, package_id)
    if left:
        pairs = ", ".join(f"{i.query_id} / {i.passage_id}" for i in left[:5]) + (" ..." if len(left) > 5 else "")
        raise ValueError(
            f"package {package.name} was not resubmitted: {len(left)} disputed item(s) not yet relabelled or "
            f"confirmed ({pairs})"
        )
    package.status = "submitted"
    package.updated_at = utcnow()
    session.flush()


@dataclass(frozen=True)
class MyPackage:
    """One line of a user's own progress (:func:`my_packages`)."""

    id: int | None
    """The package's id; None for the adjudication and QC review entries, which belong to no package."""
    name: str
    status: str
    done: int
    total: int
    purpose: str
    """``"label"`` for a package, ``"fourth"`` (adjudication) or ``"qc"`` (quality review)."""


def my_packages(session: Session, user_id: int) -> list[MyPackage]:
    """The user's packages with their progress and status (their own progress page).

    ``purpose`` is ``"label"`` for a package.  The user's adjudication (4th annotator) items and QC
    review items, which belong to no package, follow as one entry each (``id`` None, ``purpose``
    ``"fourth"`` or ``"qc"``), counting only items still open and those already labelled; ``status``
    ``"open"`` while one is left.
    """
    result: list[MyPackage] = []
    for package in session.scalars(select(Package).where(Package.user_id == user_id).order_by(Package.id)):
        done, total = package_progress(session, package.id)
        result.append(
            MyPackage(id=package.id, name=package.name, status=package.status, done=done, total=total, purpose="label")
        )
    loose = session.execute(
        select(Assignment.id, Assignment.purpose, _open_clause())
        .outerjoin(Package, Package.id == Assignment.package_id)
        .where(Assignment.user_id == user_id, Assignment.package_id.is_(None), Assignment.purpose.in_(("fourth", "qc")))
        .order_by(Assignment.id)
    ).all()
    labelled = standing_labels(session, user_id, [r[0] for r in loose]) if loose else {}
    for purpose, name in (("fourth", "adjudication"), ("qc", "quality review")):
        mine = [(aid, bool(is_open)) for aid, p, is_open in loose if p == purpose]
        shown = [aid for aid, is_open in mine if is_open or aid in labelled]
        if shown:
            done = sum(1 for aid in shown if aid in labelled)
            left = any(is_open and aid not in labelled for aid, is_open in mine)
            result.append(
                MyPackage(
                    id=None, name=name, status="open" if left else "done", done=done, total=len(shown), purpose=purpose
                )
            )
    return result
