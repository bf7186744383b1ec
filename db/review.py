"""Read functions behind the Review page's pairs: standing labels, queues, filters, one pair's review.

Every function takes a :class:`~sqlalchemy.orm.Session` first, only reads,
and returns plain data (dicts, lists, frozen dataclasses), never ORM
objects, so the pages can cache the results with ``st.cache_data``.  The ranked-list view is
:mod:`db.ranked_lists`; packages, QC history, throughput and final-label tables are :mod:`db.review_progress`.

Labels that decide final labels come from *labelling* assignments only
(purpose ``"label"`` or ``"fourth"``); QC reviews are a separate check of an
annotator's package and never enter agreement statistics or resolution.
Each annotator's standing label is found by replaying the append-only
judgment log with :func:`core.judgments.current_labels` (relabels and
undos applied).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import ColumnElement, Subquery, exists, func, select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.resolution import STATES, exclusion_reason, resolve
from core.validators import is_integer
from db.access import LABELLING
from db.models import (
    Assignment,
    FinalLabel,
    Judgment,
    LabelOverride,
    PassageRecord,
    QcRound,
    QueryRecord,
    User,
)
from db.queries import NotFound, collection_id
from db.resolution import pair_labels
from db.vocab import Purpose

PairKey = tuple[str, str]
"""``(query ext id, passage ext id)``."""


# --------------------------------------------------------------------------- standing labels


def label_log(session: Session, cid: int, purposes: Sequence[str], *conditions: ColumnElement[bool]):
    """``(qid, docid, username, action, grade)`` rows of a collection's log, oldest first.

    Parameters
    ----------
    session : Session
        An open session.
    cid : int
        The collection's id.
    purposes : sequence of str
        The assignment purposes whose judgments count (e.g. ``LABELLING``).
    *conditions : ColumnElement
        Further filters on the joined rows (e.g. only pairs without a final label).

    Returns
    -------
    Result
        The rows, in judgment order.
    """
    return session.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id, User.username, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(QueryRecord, QueryRecord.id == Judgment.query_id)
        .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
        .join(User, User.id == Judgment.user_id)
        .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(list(purposes)), *conditions)
        .order_by(Judgment.id)
    )


def standing_labels(
    session: Session, collection: str, *, unresolved_only: bool = False
) -> dict[PairKey, dict[str, int]]:
    """Each annotator's standing label on every pair of a collection (labelling assignments only).

    Parameters
    ----------
    session : Session
        An open session.
    collection : str
        The collection's name.
    unresolved_only : bool
        Only the pairs without a final label (only their judgments are read).

    Returns
    -------
    dict
        ``{(qid, docid): {annotator: grade}}``; pairs in the order of their
        first judgment and, within a pair, annotators in the order they first
        labelled it (what :func:`core.agreement.fleiss_kappa` relies on when
        it keeps the three independent labels of a pair with a 4th label).
        Pairs whose every label was undone are absent.
    """
    cid = collection_id(session, collection)
    return _labels_where(session, cid, ~_has_final(Judgment)) if unresolved_only else _labels_where(session, cid)


def _labels_where(session: Session, cid: int, *conditions: ColumnElement[bool]) -> dict[PairKey, dict[str, int]]:
    """:func:`standing_labels` of the pairs whose judgments meet ``conditions`` (each pair replays on its own)."""
    log = label_log(session, cid, LABELLING, *conditions)
    return current_labels(Event((q, d), user, action, grade) for q, d, user, action, grade in log)  # type: ignore[return-value]


def _has_final(pair: type[Assignment] | type[Judgment], *conditions: ColumnElement[bool]) -> ColumnElement[bool]:
    """SQL condition on ``pair`` (``Assignment`` or ``Judgment``): its pair has a final label meeting ``conditions``."""
    return exists().where(FinalLabel.query_id == pair.query_id, FinalLabel.passage_id == pair.passage_id, *conditions)


def activity_marker(session: Session, collection: str) -> tuple[int, int, int, int, int]:
    """A cheap value that changes whenever the collection's labels, overrides or QC rounds change.

    ``(last judgment id, last override id, QC rounds, decided QC rounds, collection id)``, the ids store-wide:
    the newest row of a table is one index step, while the newest row of one collection's would walk every
    judgment of it, on every run of a page that keys its cached tables on this value.  A label in another
    collection changes it too (its tables are recomputed once more than they need).
    """
    cid = collection_id(session, collection)
    last_judgment = session.scalar(select(func.max(Judgment.id)))
    last_override = session.scalar(select(func.max(LabelOverride.id)))
    rounds, decided = session.execute(select(func.count(QcRound.id), func.count(QcRound.decided_at))).one()
    return (last_judgment or 0, last_override or 0, rounds or 0, decided or 0, cid)


def anyone_labelled(session: Session, collection: str) -> bool:
    """Whether the collection has a judgment (pages then default to its live labels rather than a frozen version)."""
    cid = collection_id(session, collection)
    return bool(
        session.scalar(
            select(
                select(Judgment.id)
                .join(QueryRecord, QueryRecord.id == Judgment.query_id)
                .where(QueryRecord.collection_id == cid)
                .exists()
            )
        )
    )


# --------------------------------------------------------------------------- pairs for review


@dataclass(frozen=True)
class PairReview:
    """One pair as a reviewer sees it: texts, every annotator's label and where the pair stands.

    ``final_grade`` and ``method`` are None while no final label exists;
    ``final_grade`` is None with a method for excluded pairs (``"excluded"``,
    or ``"overridden"`` when a reviewer excluded it).
    """

    query_id: int
    passage_id: int
    qid: str
    docid: str
    query: str
    title: str
    passage: str
    labels: dict[str, int]
    state: str
    final_grade: int | None
    method: str | None
    reason: str
    fourth: str | None = None
    overrides: list[dict[str, Any]] = field(default_factory=list)


PairRow = tuple[int, int, str, str, str, str, str]
"""``(query row id, passage row id, qid, docid, query text, title, passage text)``."""
_PAIR_COLUMNS = (
    QueryRecord.id,
    PassageRecord.id,
    QueryRecord.ext_id,
    PassageRecord.ext_id,
    QueryRecord.text,
    PassageRecord.title,
    PassageRecord.text,
)


def _pairs(cid: int, on_pair: Sequence[ColumnElement[bool]] = ()) -> Subquery:
    """Subquery of the distinct ``(query_id, passage_id)`` with a labelling assignment meeting ``on_pair``.

    Distinct on ids, so that texts are joined to each pair once: a DISTINCT over the passage texts of
    every assignment costs several times more.
    """
    return (
        select(Assignment.query_id, Assignment.passage_id)
        .join(QueryRecord, QueryRecord.id == Assignment.query_id)
        .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(LABELLING), *on_pair)
        .distinct()
        .subquery()
    )


def _pair_rows(
    session: Session, cid: int, where: Sequence[ColumnElement[bool]], on_pair: Sequence[ColumnElement[bool]] = ()
) -> list[PairRow]:
    """The pairs with a labelling assignment (``on_pair``: further conditions on ``Assignment``), with their texts."""
    pairs = _pairs(cid, on_pair)
    rows = session.execute(
        select(*_PAIR_COLUMNS)
        .select_from(pairs)
        .join(QueryRecord, QueryRecord.id == pairs.c.query_id)
        .join(PassageRecord, PassageRecord.id == pairs.c.passage_id)
        .where(*where)
        .order_by(QueryRecord.ext_id, PassageRecord.ext_id)
    )
    return [(qi, pi, qid, docid, query, title, passage) for qi, pi, qid, docid, query, title, passage in rows]


def _one_pair_row(session: Session, cid: int, qid: str, docid: str) -> PairRow | None:
    """:func:`_pair_rows` for one pair by its ids: two unique-index lookups and an assignment probe, not a walk
    over every assignment of the collection (the override form reads one pair on every run of its tab)."""
    labelling = (
        select(Assignment.id)
        .where(
            Assignment.query_id == QueryRecord.id,
            Assignment.passage_id == PassageRecord.id,
            Assignment.purpose.in_(LABELLING),
        )
        .exists()
    )
    row = session.execute(
        select(*_PAIR_COLUMNS)
        .join(PassageRecord, PassageRecord.collection_id == QueryRecord.collection_id)
        .where(QueryRecord.collection_id == cid, QueryRecord.ext_id == qid, PassageRecord.ext_id == docid, labelling)
    ).first()
    return None if row is None else (row[0], row[1], row[2], row[3], row[4], row[5], row[6])


Final = tuple[int | None, str, str]
"""``(grade, method, reason)`` of a pair's final label (grade None: excluded)."""


def final_parts(final: Final | None, labels: dict[str, int]) -> tuple[int | None, str | None, str]:
    """``(final grade, method, reason)`` as :class:`PairReview` shows them; ``(None, None, "")`` without one.

    An exclusion stored with an empty reason gets its reason from the labels.
    """
    if final is None:
        return None, None, ""
    grade, method, reason = final
    return grade, method, reason or (exclusion_reason(Counter(labels.values())) if method == "excluded" else "")


def _finals(session: Session, cid: int, *conditions: ColumnElement[bool]) -> dict[tuple[int, int], Final]:
    return {
        (q, p): (g, m, r)
        for q, p, g, m, r in session.execute(
            select(
                FinalLabel.query_id, FinalLabel.passage_id, FinalLabel.grade, FinalLabel.method, FinalLabel.reason
            ).where(FinalLabel.collection_id == cid, *conditions)
        )
    }


def _fourths(session: Session, cid: int) -> dict[tuple[int, int], str]:
    return {
        (q, p): user
        for q, p, user in session.execute(
            select(Assignment.query_id, Assignment.passage_id, User.username)
            .join(User, User.id == Assignment.user_id)
            .join(QueryRecord, QueryRecord.id == Assignment.query_id)
            .where(QueryRecord.collection_id == cid, Assignment.purpose == Purpose.FOURTH)
        )
    }


def pair_state(labels: dict[str, int], final: Final | None) -> str:
    """A pair's :data:`core.resolution.STATES` value: from its stored final label, else from its labels."""
    if final is not None:
        return "excluded" if final[0] is None else "resolved"
    return resolve(list(labels.values())).state


def _review(row: PairRow, labels: dict[str, int], final: Final | None, fourth: str | None) -> PairReview:
    qi, pi, qid, docid, qtext, title, ptext = row
    grade, method, reason = final_parts(final, labels)
    return PairReview(
        query_id=qi,
        passage_id=pi,
        qid=qid,
        docid=docid,
        query=qtext,
        title=title or "",
        passage=ptext,
        labels=dict(labels),
        state=pair_state(labels, final),
        final_grade=grade,
        method=method,
        reason=reason,
        fourth=fourth,
    )


def adjudication_queue(session: Session, collection: str) -> list[PairReview]:
    """Pairs waiting for a 4th annotator: no final label yet and three labels that all differ.

    Sorted by (qid, docid); ``fourth`` names the annotator the 4th label was given to.  Only the labels and
    texts of labelled pairs without a final label are read.
    """
    cid = collection_id(session, collection)
    labels = standing_labels(session, collection, unresolved_only=True)
    fourths = _fourths(session, cid)
    labelled = exists().where(Judgment.query_id == Assignment.query_id, Judgment.passage_id == Assignment.passage_id)
    out = []
    for row in _pair_rows(session, cid, (), (~_has_final(Assignment), labelled)):
        given = labels.get((row[2], row[3]), {})
        if resolve(list(given.values())).state == "needs_fourth":
            out.append(_review(row, given, None, fourths.get((row[0], row[1]))))
    return out


def excluded_pairs(session: Session, collection: str) -> list[PairReview]:
    """Pairs left out of the qrels: no majority among four labels, or excluded by a reviewer."""
    cid = collection_id(session, collection)
    excluded = FinalLabel.grade.is_(None)
    labels = _labels_where(session, cid, _has_final(Judgment, excluded))
    finals = _finals(session, cid, excluded)
    fourths = _fourths(session, cid)
    return [
        _review(row, labels.get((row[2], row[3]), {}), finals[(row[0], row[1])], fourths.get((row[0], row[1])))
        for row in _pair_rows(session, cid, (), (_has_final(Assignment, excluded),))
    ]


def reviewable_pairs(session: Session, collection: str) -> dict[str, list[str]]:
    """Every pair with a labelling assignment, as ``{qid: [docid, ...]}`` sorted by id."""
    pairs = _pairs(collection_id(session, collection))
    out: dict[str, list[str]] = {}
    for qid, docid in session.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id)
        .select_from(pairs)
        .join(QueryRecord, QueryRecord.id == pairs.c.query_id)
        .join(PassageRecord, PassageRecord.id == pairs.c.passage_id)
        .order_by(QueryRecord.ext_id, PassageRecord.ext_id)
    ):
        out.setdefault(qid, []).append(docid)
    return out


def _final_of(session: Session, query_id: int, passage_id: int) -> Final | None:
    found = session.execute(
        select(FinalLabel.grade, FinalLabel.method, FinalLabel.reason).where(
            FinalLabel.query_id == query_id, FinalLabel.passage_id == passage_id
        )
    ).one_or_none()
    if found is None:
        return None
    grade, method, reason = found
    return grade, method, reason


def pair_review(session: Session, collection: str, qid: str, docid: str) -> PairReview:
    """One pair with its texts, labels, final label and the history of overrides (oldest first)."""
    cid = collection_id(session, collection)
    row = _one_pair_row(session, cid, qid, docid)
    if row is None:
        raise NotFound(f"no assigned pair ({qid!r}, {docid!r}) in collection {collection!r}")
    key = (row[0], row[1])
    labels = pair_labels(session, key[0], key[1])
    final = _final_of(session, key[0], key[1])
    fourth = session.scalar(
        select(User.username)
        .join(Assignment, Assignment.user_id == User.id)
        .where(Assignment.query_id == key[0], Assignment.passage_id == key[1], Assignment.purpose == Purpose.FOURTH)
    )
    overrides = [
        {"reviewer": user, "grade": None if grade < 0 else grade, "reason": reason, "at": at}
        for user, grade, reason, at in session.execute(
            select(User.username, LabelOverride.grade, LabelOverride.reason, LabelOverride.created_at)
            .outerjoin(User, User.id == LabelOverride.user_id)
            .where(LabelOverride.query_id == key[0], LabelOverride.passage_id == key[1])
            .order_by(LabelOverride.id)
        )
    ]
    return replace(_review(row, labels, final, fourth), overrides=overrides)


# --------------------------------------------------------------------------- review at scale: filters, ranked lists


def review_table(session: Session, collection: str) -> list[PairReview]:
    """Every pair with a labelling assignment: texts, each annotator's label, state, final label, 4th annotator.

    Sorted by (qid, docid); the rows that :func:`filter_pairs` narrows down on the Review page.
    A few queries for the whole collection (labels replayed once), not one per pair.
    """
    cid = collection_id(session, collection)
    labels = standing_labels(session, collection)
    finals = _finals(session, cid)
    fourths = _fourths(session, cid)
    return [
        _review(row, labels.get((row[2], row[3]), {}), finals.get((row[0], row[1])), fourths.get((row[0], row[1])))
        for row in _pair_rows(session, cid, ())
    ]


def _check_filters(search: object, state: object, final_grade: object, label: object) -> None:
    """Refuse (``ValueError`` naming the argument) a filter :func:`filter_pairs` does not understand."""
    if state is not None and state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}, got {state!r}")
    if final_grade is not None and final_grade != "excluded" and not is_integer(final_grade):
        raise ValueError(f"final_grade must be a grade or 'excluded', got {final_grade!r}")
    if label is not None and not is_integer(label):
        raise ValueError(f"label must be a grade, got {label!r}")
    if not isinstance(search, str):
        raise ValueError(f"search must be a str, got {type(search).__name__}")


def filter_pairs(
    pairs: Sequence[PairReview],
    *,
    search: str = "",
    annotator: str | None = None,
    state: str | None = None,
    final_grade: int | str | None = None,
    label: int | None = None,
) -> list[PairReview]:
    """The pairs that pass every filter given, in their order.

    Parameters
    ----------
    search : str
        Case-insensitive text found in the query id, the query text or the passage id
        (surrounding spaces ignored; empty: no filter).
    annotator : str, optional
        Pairs this account labelled or holds as the 4th annotator.
    state : {"pending", "needs_fourth", "resolved", "excluded"}, optional
        Where the pair stands (:data:`core.resolution.STATES`).
    final_grade : int or "excluded", optional
        The pair's final grade, or ``"excluded"`` for pairs left out of the qrels.
    label : int, optional
        A label some annotator gave (with ``annotator``: the label that annotator gave).

    Raises
    ------
    ValueError
        On an unknown ``state``, or a ``final_grade`` / ``label`` that is not an integer (a bool is refused);
        the message names the argument.
    """
    _check_filters(search, state, final_grade, label)
    needle = search.strip().casefold()
    out = []
    for p in pairs:
        if needle and not any(needle in text.casefold() for text in (p.qid, p.query, p.docid)):
            continue
        if annotator is not None and annotator not in p.labels and p.fourth != annotator:
            continue
        if state is not None and p.state != state:
            continue
        if final_grade == "excluded" and p.state != "excluded":
            continue
        if final_grade not in (None, "excluded") and (p.method is None or p.final_grade != int(final_grade)):
            continue
        if label is not None:
            given = (
                [p.labels[annotator]]
                if annotator is not None and annotator in p.labels
                else ([] if annotator is not None else list(p.labels.values()))
            )
            if int(label) not in given:
                continue
        out.append(p)
    return out


def pair_names(session: Session, pairs: Sequence[tuple[Any, Any]]) -> dict[tuple[str, str], PairKey]:
    """``{(str(query row id), str(passage row id)): (qid, docid)}`` for pairs named by row ids.

    :func:`db.package_qc.close_qc_round` reports disagreements by row ids (as strings); this turns
    them into the collection's own ids for display.
    """
    keys = {(int(q), int(p)) for q, p in pairs}
    if not keys:
        return {}
    queries = dict(
        session.execute(
            select(QueryRecord.id, QueryRecord.ext_id).where(QueryRecord.id.in_({q for q, _ in keys}))
        ).all()
    )
    passages = dict(
        session.execute(
            select(PassageRecord.id, PassageRecord.ext_id).where(PassageRecord.id.in_({p for _, p in keys}))
        ).all()
    )
    return {(str(q), str(p)): (queries[q], passages[p]) for q, p in keys if q in queries and p in passages}


# --------------------------------------------------------------------------- people


def active_users(session: Session, roles: Sequence[str]) -> list[str]:
    """Usernames of active accounts with one of ``roles``, sorted."""
    return list(
        session.scalars(select(User.username).where(User.active, User.role.in_(list(roles))).order_by(User.username))
    )


__all__ = [
    "PairReview",
    "active_users",
    "activity_marker",
    "anyone_labelled",
    "adjudication_queue",
    "excluded_pairs",
    "filter_pairs",
    "final_parts",
    "pair_names",
    "pair_review",
    "pair_state",
    "review_table",
    "reviewable_pairs",
    "standing_labels",
]
