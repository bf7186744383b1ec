"""Resolution in the store: a pair's labels, its final label, the fourth annotator, overrides, and qrels.

Live final labels (:func:`live_qrels`) and frozen qrels versions (:func:`freeze_qrels`) are read and
written here, in one place.  Every write function runs in the caller's write transaction; the rules are
:mod:`core.resolution`.
"""

from __future__ import annotations

from sqlalchemy import BindParameter, bindparam, insert, select
from sqlalchemy.orm import Session

from core.assignment import annotator_seed, plan_fourth
from core.judgments import Event, current_labels
from core.names import check_name
from core.resolution import Resolution, apply_override, resolve
from core.scale import SCALES
from core.types import Qrels
from db.access import (
    ADMIN_ROLES,
    LABELLING,
    REVIEW_ROLES,
    require_account,
)
from db.adjudicators import eligible_adjudicators
from db.assignments import annotator_loads
from db.models import (
    Assignment,
    FinalLabel,
    Judgment,
    LabelOverride,
    PassageRecord,
    Pool,
    PoolEntry,
    QrelsEntry,
    QrelsVersion,
    QueryRecord,
    User,
    utcnow,
)
from db.queries import collection_id
from db.vocab import Purpose

# The statements a label runs, built once: a statement object memoises its SQL cache key, so the
# labelling write (under the store's write lock) pays neither for building nor for hashing them.
_QUERY: BindParameter[int] = bindparam("query_id")
_PASSAGE: BindParameter[int] = bindparam("passage_id")
_PAIR_SCALE = (
    select(Pool.params)
    .join(PoolEntry, PoolEntry.pool_id == Pool.id)
    .join(Assignment, Assignment.pool_entry_id == PoolEntry.id)
    .where(Assignment.query_id == _QUERY, Assignment.passage_id == _PASSAGE)
    .limit(1)
)
_PAIR_LABELS = (
    select(User.username, Judgment.action, Judgment.grade)
    .select_from(Judgment)
    .join(User, User.id == Judgment.user_id)
    .join(Assignment, Assignment.id == Judgment.assignment_id)
    .where(Judgment.query_id == _QUERY, Judgment.passage_id == _PASSAGE, Assignment.purpose.in_(LABELLING))
    .order_by(Judgment.id)
)
_OVERRIDE = (
    select(LabelOverride)
    .where(LabelOverride.query_id == _QUERY, LabelOverride.passage_id == _PASSAGE)
    .order_by(LabelOverride.id.desc())
    .limit(1)
)
_FINAL = select(FinalLabel).where(FinalLabel.query_id == _QUERY, FinalLabel.passage_id == _PASSAGE)
_COLLECTION_OF_QUERY = select(QueryRecord.collection_id).where(QueryRecord.id == _QUERY)


def pair_scale(session: Session, query_id: int, passage_id: int) -> str:
    """The scale a pair is annotated on: that of the pool it was assigned from (graded by default)."""
    params = session.scalar(_PAIR_SCALE, {"query_id": query_id, "passage_id": passage_id})
    return (params or {}).get("scale", "graded")


def pair_labels(session: Session, query_id: int, passage_id: int) -> dict[str, int]:
    """Standing labels of one pair by annotator (labelling assignments only, not QC reviews)."""
    rows = session.execute(_PAIR_LABELS, {"query_id": query_id, "passage_id": passage_id})
    labels = current_labels(Event("pair", user, action, grade) for user, action, grade in rows)
    return labels.get("pair", {})


def resolve_pair(
    session: Session, query_id: int, passage_id: int, *, seed: int = 0, scale: str | None = None
) -> Resolution:
    """Apply the T2Ranking rules to a pair's standing labels and store the outcome.

    A three-way split gets a 4th annotator automatically: not one of the three, from the pair's
    own pool or the pool's adjudicator list (:func:`db.adjudicators.eligible_adjudicators`),
    least loaded; with nobody eligible the pair waits for a reviewer.  A reviewer's override
    always wins over the labels.  It runs inside the labelling write, so it stays a handful of
    indexed lookups (judgments, overrides and final labels by pair); pass ``scale`` when the
    caller knows it to skip looking it up.
    """
    labels = pair_labels(session, query_id, passage_id)
    levels = SCALES[scale or pair_scale(session, query_id, passage_id)]
    resolution = resolve(list(labels.values()), levels=levels)
    pair = {"query_id": query_id, "passage_id": passage_id}
    override = session.scalar(_OVERRIDE, pair)
    if override is not None:
        # an exclusion is stored as grade -1 (the column is NOT NULL)
        resolution = apply_override(
            resolution, None if override.grade < 0 else override.grade, override.reason, levels=levels
        )
    elif resolution.state == "needs_fourth":
        _assign_fourth(session, query_id, passage_id, set(labels), seed)
    final = session.scalar(_FINAL, pair)
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
            cid = session.scalar(_COLLECTION_OF_QUERY, {"query_id": query_id})
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
    chosen = plan_fourth(
        (str(query_id), str(passage_id)), holders, candidates, annotator_loads(session, candidates), seed
    )
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
            purpose=Purpose.FOURTH,
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
        select(QueryRecord.ext_id, PassageRecord.ext_id, FinalLabel.grade)
        .join(QueryRecord, QueryRecord.id == FinalLabel.query_id)
        .join(PassageRecord, PassageRecord.id == FinalLabel.passage_id)
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
