"""Read functions behind the Review and Admin pages: standing labels, queues, QC history, throughput.

Every function takes a :class:`~sqlalchemy.orm.Session` first, only reads,
and returns plain data (dicts, lists, frozen dataclasses), never ORM
objects, so the pages can cache the results with ``st.cache_data``.

Labels that decide final labels come from *labelling* assignments only
(purpose ``"label"`` or ``"fourth"``); QC reviews are a separate check of an
annotator's package and never enter agreement statistics or resolution.
Each annotator's standing label is found by replaying the append-only
judgment log with :func:`core.judgments.current_labels` (relabels and
undos applied).
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.ranking import rank_positions
from core.resolution import METHODS, STATES, exclusion_reason, resolve
from core.scale import GRADES  # re-exported as db.review.GRADES
from core.validators import is_integer
from db.access import LABELLING
from db.labelling import standing_by_assignment
from db.models import (
    Assignment,
    Collection,
    FinalLabel,
    Judgment,
    LabelOverride,
    Package,
    Passage,
    Pool,
    PoolEntry,
    PoolProvenance,
    QcRound,
    QueryRecord,
    RunEntryRecord,
    RunRecord,
    User,
)
from db.queries import NotFound, collection_id
from db.resolution import pair_labels

PairKey = tuple[str, str]
"""``(query ext id, passage ext id)``."""


# --------------------------------------------------------------------------- standing labels


def _label_log(session: Session, cid: int, purposes: Sequence[str]):
    """``(qid, docid, username, action, grade)`` rows of a collection's log, oldest first."""
    return session.execute(
        select(QueryRecord.ext_id, Passage.ext_id, User.username, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(QueryRecord, QueryRecord.id == Judgment.query_id)
        .join(Passage, Passage.id == Judgment.passage_id)
        .join(User, User.id == Judgment.user_id)
        .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(list(purposes)))
        .order_by(Judgment.id)
    )


def standing_labels(session: Session, collection: str) -> dict[PairKey, dict[str, int]]:
    """Each annotator's standing label on every pair of a collection (labelling assignments only).

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
    events = (Event((q, d), user, action, grade) for q, d, user, action, grade in _label_log(session, cid, LABELLING))
    return current_labels(events)  # type: ignore[return-value]


def activity_marker(session: Session, collection: str) -> tuple[int, int, int, int]:
    """A cheap value that changes whenever the collection's labels, overrides or QC rounds change.

    ``(last judgment id, last override id, QC rounds, decided QC rounds)``; pages pass it to
    ``st.cache_data`` functions so that cached dashboards refresh as soon as someone labels.
    """
    cid = collection_id(session, collection)
    last_judgment = session.scalar(
        select(func.max(Judgment.id))
        .join(QueryRecord, QueryRecord.id == Judgment.query_id)
        .where(QueryRecord.collection_id == cid)
    )
    last_override = session.scalar(
        select(func.max(LabelOverride.id))
        .join(QueryRecord, QueryRecord.id == LabelOverride.query_id)
        .where(QueryRecord.collection_id == cid)
    )
    rounds, decided = session.execute(select(func.count(QcRound.id), func.count(QcRound.decided_at))).one()
    return (last_judgment or 0, last_override or 0, rounds or 0, decided or 0)


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


def _pair_rows(session: Session, cid: int, where: Sequence[ColumnElement[bool]]) -> list[PairRow]:
    rows = session.execute(
        select(
            QueryRecord.id,
            Passage.id,
            QueryRecord.ext_id,
            Passage.ext_id,
            QueryRecord.text,
            Passage.title,
            Passage.text,
        )
        .select_from(Assignment)
        .join(QueryRecord, QueryRecord.id == Assignment.query_id)
        .join(Passage, Passage.id == Assignment.passage_id)
        .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(LABELLING), *where)
        .distinct()
        .order_by(QueryRecord.ext_id, Passage.ext_id)
    )
    return [(qi, pi, qid, docid, query, title, passage) for qi, pi, qid, docid, query, title, passage in rows]


Final = tuple[int | None, str, str]
"""``(grade, method, reason)`` of a pair's final label (grade None: excluded)."""


def _final_parts(final: Final | None, labels: dict[str, int]) -> tuple[int | None, str | None, str]:
    """``(final grade, method, reason)`` as :class:`PairReview` shows them; ``(None, None, "")`` without one.

    An exclusion stored before exclusions said why (issue 20) gets its reason from the labels.
    """
    if final is None:
        return None, None, ""
    grade, method, reason = final
    return grade, method, reason or (exclusion_reason(Counter(labels.values())) if method == "excluded" else "")


def _finals(session: Session, cid: int) -> dict[tuple[int, int], Final]:
    return {
        (q, p): (g, m, r)
        for q, p, g, m, r in session.execute(
            select(
                FinalLabel.query_id, FinalLabel.passage_id, FinalLabel.grade, FinalLabel.method, FinalLabel.reason
            ).where(FinalLabel.collection_id == cid)
        )
    }


def _fourths(session: Session, cid: int) -> dict[tuple[int, int], str]:
    return {
        (q, p): user
        for q, p, user in session.execute(
            select(Assignment.query_id, Assignment.passage_id, User.username)
            .join(User, User.id == Assignment.user_id)
            .join(QueryRecord, QueryRecord.id == Assignment.query_id)
            .where(QueryRecord.collection_id == cid, Assignment.purpose == "fourth")
        )
    }


def _state(labels: dict[str, int], final: Final | None) -> str:
    if final is not None:
        return "excluded" if final[0] is None else "resolved"
    return resolve(list(labels.values())).state


def _review(row: PairRow, labels: dict[str, int], final: Final | None, fourth: str | None) -> PairReview:
    qi, pi, qid, docid, qtext, title, ptext = row
    grade, method, reason = _final_parts(final, labels)
    return PairReview(
        query_id=qi,
        passage_id=pi,
        qid=qid,
        docid=docid,
        query=qtext,
        title=title or "",
        passage=ptext,
        labels=dict(labels),
        state=_state(labels, final),
        final_grade=grade,
        method=method,
        reason=reason,
        fourth=fourth,
    )


def adjudication_queue(session: Session, collection: str) -> list[PairReview]:
    """Pairs waiting for a 4th annotator: no final label yet and three labels that all differ.

    Sorted by (qid, docid); ``fourth`` names the annotator the 4th label was given to.
    """
    cid = collection_id(session, collection)
    labels = standing_labels(session, collection)
    finals = _finals(session, cid)
    fourths = _fourths(session, cid)
    out = []
    for row in _pair_rows(session, cid, ()):
        key = (row[0], row[1])
        given = labels.get((row[2], row[3]), {})
        if key in finals or resolve(list(given.values())).state != "needs_fourth":
            continue
        out.append(_review(row, given, None, fourths.get(key)))
    return out


def excluded_pairs(session: Session, collection: str) -> list[PairReview]:
    """Pairs left out of the qrels: no majority among four labels, or excluded by a reviewer."""
    cid = collection_id(session, collection)
    labels = standing_labels(session, collection)
    finals = _finals(session, cid)
    fourths = _fourths(session, cid)
    excluded = {key for key, (grade, _m, _r) in finals.items() if grade is None}
    return [
        _review(row, labels.get((row[2], row[3]), {}), finals[(row[0], row[1])], fourths.get((row[0], row[1])))
        for row in _pair_rows(session, cid, ())
        if (row[0], row[1]) in excluded
    ]


def reviewable_pairs(session: Session, collection: str) -> dict[str, list[str]]:
    """Every pair with a labelling assignment, as ``{qid: [docid, ...]}`` sorted by id."""
    cid = collection_id(session, collection)
    out: dict[str, list[str]] = {}
    for row in _pair_rows(session, cid, ()):
        out.setdefault(row[2], []).append(row[3])
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
    rows = _pair_rows(session, cid, (QueryRecord.ext_id == qid, Passage.ext_id == docid))
    if not rows:
        raise NotFound(f"no assigned pair ({qid!r}, {docid!r}) in collection {collection!r}")
    row = rows[0]
    key = (row[0], row[1])
    labels = pair_labels(session, key[0], key[1])
    final = _final_of(session, key[0], key[1])
    fourth = session.scalar(
        select(User.username)
        .join(Assignment, Assignment.user_id == User.id)
        .where(Assignment.query_id == key[0], Assignment.passage_id == key[1], Assignment.purpose == "fourth")
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


@dataclass(frozen=True)
class RankedEntry:
    """One pooled passage of a query as the ranked-list view shows it.

    ``position`` is its place in the list shown (1-based); ``run_rank`` its rank in the chosen run
    (trec_eval order; None when the run did not retrieve it, or no run was chosen).
    ``state`` is ``"unlabelled"`` while nobody labelled it.
    """

    position: int
    run_rank: int | None
    query_id: int
    passage_id: int
    docid: str
    title: str
    passage: str
    labels: dict[str, int]
    state: str
    final_grade: int | None
    method: str | None
    reason: str
    fourth: str | None


@dataclass(frozen=True)
class RankedList:
    """A query's whole pooled list (selected entries) with every label, in pool or run order."""

    qid: str
    query: str
    query_language: str | None
    pool: str
    run: str | None
    entries: list[RankedEntry]


def _pool_id(session: Session, cid: int, collection: str, pool: str) -> int:
    pool_id = session.scalar(select(Pool.id).where(Pool.collection_id == cid, Pool.name == pool))
    if pool_id is None:
        raise NotFound(f"no pool named {pool!r} in collection {collection!r}")
    return pool_id


def pool_queries(session: Session, collection: str, pool: str) -> list[tuple[str, str, int]]:
    """``(qid, query text, selected passages)`` of every query of a pool, by qid."""
    cid = collection_id(session, collection)
    pool_id = _pool_id(session, cid, collection, pool)
    return [
        (qid, text, n)
        for qid, text, n in session.execute(
            select(QueryRecord.ext_id, QueryRecord.text, func.count())
            .join(PoolEntry, PoolEntry.query_id == QueryRecord.id)
            .where(PoolEntry.pool_id == pool_id, PoolEntry.selected)
            .group_by(QueryRecord.ext_id, QueryRecord.text)
            .order_by(QueryRecord.ext_id)
        )
    ]


def _query(session: Session, cid: int, collection: str, qid: str) -> tuple[int, str, str | None]:
    """``(row id, text, language)`` of a query of the collection."""
    query = session.execute(
        select(QueryRecord.id, QueryRecord.text, QueryRecord.language).where(
            QueryRecord.collection_id == cid, QueryRecord.ext_id == qid
        )
    ).one_or_none()
    if query is None:
        raise NotFound(f"no query {qid!r} in collection {collection!r}")
    row_id, text, language = query
    return row_id, text, language


ListRow = tuple[int, str, str | None, str, int | None, int | None]
"""``(passage row id, docid, title, text, selection rank, best run rank)`` of a pooled passage."""


def _pool_order(session: Session, pool_id: int, query_row: int) -> list[ListRow]:
    """The query's selected entries in pool order: selection rank, else best contributing rank, then docid."""
    best = (
        select(PoolProvenance.pool_entry_id, func.min(PoolProvenance.rank).label("best"))
        .group_by(PoolProvenance.pool_entry_id)
        .subquery()
    )
    rows = [
        (pid, docid, title, text, selection_rank, best_rank)
        for pid, docid, title, text, selection_rank, best_rank in session.execute(
            select(Passage.id, Passage.ext_id, Passage.title, Passage.text, PoolEntry.selection_rank, best.c.best)
            .select_from(PoolEntry)
            .join(Passage, Passage.id == PoolEntry.passage_id)
            .outerjoin(best, best.c.pool_entry_id == PoolEntry.id)
            .where(PoolEntry.pool_id == pool_id, PoolEntry.query_id == query_row, PoolEntry.selected)
        )
    ]
    inf = float("inf")
    rows.sort(key=lambda r: (r[4] if r[4] is not None else inf, r[5] if r[5] is not None else inf, r[1]))
    return rows


def _run_ranks(session: Session, cid: int, collection: str, run: str, qid: str) -> dict[str, int]:
    """``{docid: rank}`` of the query in a ready run (trec_eval order)."""
    run_id = session.scalar(
        select(RunRecord.id).where(RunRecord.collection_id == cid, RunRecord.name == run, RunRecord.status == "ready")
    )
    if run_id is None:
        raise NotFound(f"no run named {run!r} in collection {collection!r}")
    scores = dict(
        session.execute(
            select(RunEntryRecord.doc_id, RunEntryRecord.score).where(
                RunEntryRecord.run_id == run_id, RunEntryRecord.query_id == qid
            )
        ).all()
    )
    return rank_positions(scores)


@dataclass(frozen=True)
class _QueryLabels:
    """Every passage's labels, final label and 4th annotator for one query, by passage row id."""

    labels: dict[int, dict[str, int]]
    finals: dict[int, Final]
    fourths: dict[int, str]


def _query_labels(session: Session, query_row: int) -> _QueryLabels:
    events = session.execute(
        select(Judgment.passage_id, User.username, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(User, User.id == Judgment.user_id)
        .where(Judgment.query_id == query_row, Assignment.purpose.in_(LABELLING))
        .order_by(Judgment.id)
    ).all()
    replayed = current_labels(Event(pid, user, action, grade) for pid, user, action, grade in events)
    finals = {
        p: (g, m, r)
        for p, g, m, r in session.execute(
            select(FinalLabel.passage_id, FinalLabel.grade, FinalLabel.method, FinalLabel.reason).where(
                FinalLabel.query_id == query_row
            )
        )
    }
    fourths = {
        pid: user
        for pid, user in session.execute(
            select(Assignment.passage_id, User.username)
            .join(User, User.id == Assignment.user_id)
            .where(Assignment.query_id == query_row, Assignment.purpose == "fourth")
        )
    }
    labels = {pid: dict(replayed[pid]) for pid, *_ in events if pid in replayed}
    return _QueryLabels(labels=labels, finals=finals, fourths=fourths)


def ranked_list(session: Session, collection: str, pool: str, qid: str, *, run: str | None = None) -> RankedList:
    """One query's pooled passages with each annotator's label and the final label, as one list (Quepid's view).

    Parameters
    ----------
    pool : str
        The pool whose selected entries make the list.
    qid : str
        The query's id.
    run : str, optional
        Order by this run's ranking (trec_eval order: score descending, ties by docid descending);
        passages the run did not retrieve follow in pool order.  None: pool order, i.e. the
        selection order when the pool was selected, else the best rank any contributing run gave
        it, then docid.

    Raises
    ------
    NotFound
        If the collection, pool, query (in that pool) or run does not exist.
    """
    cid = collection_id(session, collection)
    pool_id = _pool_id(session, cid, collection, pool)
    query_row, query_text, query_language = _query(session, cid, collection, qid)
    rows = _pool_order(session, pool_id, query_row)
    if not rows:
        raise NotFound(f"query {qid!r} has no selected passages in pool {pool!r}")
    ranks: dict[str, int] = {}
    if run is not None:
        ranks = _run_ranks(session, cid, collection, run, qid)
        order = {r[1]: i for i, r in enumerate(rows)}
        rows.sort(key=lambda r: (ranks.get(r[1], float("inf")), order[r[1]]))
    known = _query_labels(session, query_row)
    entries = []
    for position, (pid, docid, title, text, _sel, _best) in enumerate(rows, start=1):
        given = known.labels.get(pid, {})
        final = known.finals.get(pid)
        grade, method, reason = _final_parts(final, given)
        entries.append(
            RankedEntry(
                position=position,
                run_rank=ranks.get(docid),
                query_id=query_row,
                passage_id=pid,
                docid=docid,
                title=title or "",
                passage=text,
                labels=given,
                state=_state(given, final) if given or final else "unlabelled",
                final_grade=grade,
                method=method,
                reason=reason,
                fourth=known.fourths.get(pid),
            )
        )
    return RankedList(qid=qid, query=query_text, query_language=query_language, pool=pool, run=run, entries=entries)


# --------------------------------------------------------------------------- packages and QC


@dataclass(frozen=True)
class PackageRow:
    id: int
    name: str
    annotator: str
    collection: str | None
    pool: str | None
    status: str
    labelled: int
    total: int
    rounds: int
    last_accuracy: float | None

    @property
    def finished(self) -> bool:
        return self.total > 0 and self.labelled == self.total


def _labelled_per_package(session: Session, ids: Sequence[int]) -> Counter[int]:
    """Per package id: its assignments with a standing label of the package's annotator."""
    owner_events = session.execute(
        select(Assignment.package_id, Assignment.id, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(Package, Package.id == Assignment.package_id)
        .where(Assignment.package_id.in_(ids), Judgment.user_id == Package.user_id)
        .order_by(Judgment.id)
    ).all()
    # assignment ids are unique across packages: the owner's log per assignment is one user's own log
    package_of = {aid: pkg for pkg, aid, _action, _grade in owner_events if pkg is not None}
    standing = standing_by_assignment([(aid, action, grade) for _pkg, aid, action, grade in owner_events])
    return Counter(package_of[aid] for aid in standing)


def _round_accuracies(session: Session, ids: Sequence[int]) -> dict[int, list[tuple[int, float | None]]]:
    """Per package id: ``(round number, accuracy)`` of each of its QC rounds, by round number."""
    rounds: dict[int, list[tuple[int, float | None]]] = {}
    for pkg, number, accuracy in session.execute(
        select(QcRound.package_id, QcRound.round_no, QcRound.accuracy)
        .where(QcRound.package_id.in_(ids))
        .order_by(QcRound.round_no)
    ):
        rounds.setdefault(pkg, []).append((number, accuracy))
    return rounds


def package_overview(session: Session, collection: str | None = None) -> list[PackageRow]:
    """Every package (of one collection, or all) with its annotator, status and progress, by name.

    ``labelled`` counts the package's assignments with a standing label of their annotator
    (as :func:`db.package_qc.package_progress`), computed for all packages in one pass.
    """
    query = (
        select(Package.id, Package.name, User.username, Collection.name, Pool.name, Package.status)
        .join(User, User.id == Package.user_id)
        .outerjoin(Pool, Pool.id == Package.pool_id)
        .outerjoin(Collection, Collection.id == Pool.collection_id)
        .order_by(Package.name)
    )
    if collection is not None:
        query = query.where(Pool.collection_id == collection_id(session, collection))
    packages = session.execute(query).all()
    ids = [p[0] for p in packages]
    if not ids:
        return []
    totals = dict(
        session.execute(
            select(Assignment.package_id, func.count())
            .where(Assignment.package_id.in_(ids))
            .group_by(Assignment.package_id)
        ).all()
    )
    labelled = _labelled_per_package(session, ids)
    rounds = _round_accuracies(session, ids)
    out = []
    for pid, name, user, coll, pool, status in packages:
        decided = [acc for _n, acc in rounds.get(pid, []) if acc is not None]
        out.append(
            PackageRow(
                id=pid,
                name=name,
                annotator=user,
                collection=coll,
                pool=pool,
                status=status,
                labelled=labelled.get(pid, 0),
                total=totals.get(pid, 0),
                rounds=len(rounds.get(pid, [])),
                last_accuracy=decided[-1] if decided else None,
            )
        )
    return out


@dataclass(frozen=True)
class QcRoundRow:
    """One QC round; ``reviewed`` maps each reviewer to how many of the round's sampled pairs they labelled."""

    id: int
    package_id: int
    package: str
    annotator: str
    round_no: int
    status: str
    sample_size: int
    threshold: float
    accuracy: float | None
    n_checked: int | None
    created_at: datetime
    decided_at: datetime | None
    reviewed: dict[str, int]


def qc_history(session: Session, package_id: int | None = None, *, collection: str | None = None) -> list[QcRoundRow]:
    """Every QC round (all kept, none overwritten), by package name then round number.

    Restrict to one package with ``package_id`` or to a collection's packages with ``collection``.
    """
    query = (
        select(QcRound, Package.name, User.username)
        .join(Package, Package.id == QcRound.package_id)
        .join(User, User.id == Package.user_id)
        .order_by(Package.name, QcRound.round_no)
    )
    if package_id is not None:
        query = query.where(QcRound.package_id == package_id)
    if collection is not None:
        query = query.join(Pool, Pool.id == Package.pool_id).where(
            Pool.collection_id == collection_id(session, collection)
        )
    from db.qc_rounds import reviewed_counts  # builds on db.labelling, as this module does

    rows = session.execute(query).all()
    reviewed = {r.id: reviewed_counts(session, r) for r, _package, _annotator in rows}
    out = []
    for r, package, annotator in rows:
        out.append(
            QcRoundRow(
                id=r.id,
                package_id=r.package_id,
                package=package,
                annotator=annotator,
                round_no=r.round_no,
                status=r.status,
                sample_size=r.sample_size,
                threshold=r.threshold,
                accuracy=r.accuracy,
                n_checked=r.n_checked,
                created_at=r.created_at,
                decided_at=r.decided_at,
                reviewed=reviewed[r.id],
            )
        )
    return out


# --------------------------------------------------------------------------- throughput and flags


def _day(value: datetime) -> date:
    return value.date()


@dataclass(frozen=True)
class DailyLabels:
    """An annotator's ``label`` events on one (UTC) day (:func:`throughput`)."""

    annotator: str
    day: date
    labels: int


@dataclass(frozen=True)
class AnnotatorWork:
    """One annotator's work in a collection (:func:`throughput`)."""

    labels: int
    """``label`` events, relabels and QC labels included."""
    pairs: int
    """Pairs with a standing label on a labelling assignment."""
    qc_labels: int
    """``label`` events on QC assignments."""
    skips: int
    flags: int
    undos: int
    median_seconds: float | None
    """Median of ``elapsed_ms / 1000`` over the label events that recorded a time; None when none did."""


@dataclass(frozen=True)
class Throughput:
    """Label events per annotator per day and per-annotator summaries (:func:`throughput`)."""

    daily: list[DailyLabels]
    """Sorted by (day, annotator), one row per annotator and day with at least one ``label`` event."""
    annotators: dict[str, AnnotatorWork]
    """By annotator, sorted by name."""


def throughput(session: Session, collection: str) -> Throughput:
    """Label events per annotator per (UTC) day and per-annotator summaries, QC reviews included.

    Relabels count in ``daily`` and ``labels``: they are work done.
    """
    cid = collection_id(session, collection)
    rows = session.execute(
        select(User.username, Assignment.purpose, Judgment.action, Judgment.elapsed_ms, Judgment.created_at)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(QueryRecord, QueryRecord.id == Judgment.query_id)
        .join(User, User.id == Judgment.user_id)
        .where(QueryRecord.collection_id == cid)
        .order_by(Judgment.id)
    ).all()
    daily: Counter[tuple[date, str]] = Counter()
    summary: dict[str, dict[str, int]] = {}
    elapsed: dict[str, list[float]] = {}
    for user, purpose, action, ms, created in rows:
        entry = summary.setdefault(user, {"labels": 0, "pairs": 0, "qc_labels": 0, "skips": 0, "flags": 0, "undos": 0})
        if action == "label":
            entry["labels"] += 1
            if purpose == "qc":
                entry["qc_labels"] += 1
            daily[(_day(created), user)] += 1
            if ms is not None:
                elapsed.setdefault(user, []).append(ms / 1000)
        else:
            entry[{"skip": "skips", "flag": "flags", "undo": "undos"}[action]] += 1
    for labels in standing_labels(session, collection).values():
        for user in labels:
            summary[user]["pairs"] += 1
    return Throughput(
        daily=[DailyLabels(annotator=user, day=day, labels=n) for (day, user), n in sorted(daily.items())],
        annotators={
            user: AnnotatorWork(**entry, median_seconds=statistics.median(elapsed[user]) if user in elapsed else None)
            for user, entry in sorted(summary.items())
        },
    )


@dataclass(frozen=True)
class FlaggedItem:
    """A ``flag`` event with the annotator's note and the pair's texts (:func:`flagged`)."""

    annotator: str
    qid: str
    docid: str
    query: str
    passage: str
    note: str
    """The annotator's note; empty when none was given."""
    purpose: str | None
    """The purpose of the assignment it was flagged on; None for a flag on no assignment."""
    at: datetime


def flagged(session: Session, collection: str) -> list[FlaggedItem]:
    """Every ``flag`` event of a collection, oldest first, with the annotator's note and the pair's texts."""
    cid = collection_id(session, collection)
    return [
        FlaggedItem(
            annotator=user, qid=qid, docid=docid, query=qtext, passage=ptext, note=note or "", purpose=purpose, at=at
        )
        for user, qid, docid, qtext, ptext, note, purpose, at in session.execute(
            select(
                User.username,
                QueryRecord.ext_id,
                Passage.ext_id,
                QueryRecord.text,
                Passage.text,
                Judgment.note,
                Assignment.purpose,
                Judgment.created_at,
            )
            .select_from(Judgment)
            .join(User, User.id == Judgment.user_id)
            .join(QueryRecord, QueryRecord.id == Judgment.query_id)
            .join(Passage, Passage.id == Judgment.passage_id)
            .outerjoin(Assignment, Assignment.id == Judgment.assignment_id)
            .where(QueryRecord.collection_id == cid, Judgment.action == "flag")
            .order_by(Judgment.id)
        )
    ]


# --------------------------------------------------------------------------- final labels


@dataclass(frozen=True)
class LabelDistribution:
    """Final labels of a collection counted by grade and by how they were reached.

    ``by_grade`` counts the pairs with a final grade (every grade of the scale present, zeros
    included); ``excluded`` the pairs without one (method ``"excluded"`` or an excluding
    override); ``by_method`` every resolution method (zeros included, ``"imported"`` only when
    present); ``cells`` one ``{"method", "grade", "pairs"}`` row per non-empty combination
    (``grade`` None for excluded pairs); ``pending`` the labelled pairs without a final label.
    """

    by_grade: dict[int, int]
    excluded: int
    by_method: dict[str, int]
    cells: list[dict[str, Any]]
    pending: int

    @property
    def total(self) -> int:
        return sum(self.by_grade.values()) + self.excluded


def final_label_distribution(session: Session, collection: str, *, grades: Sequence[int] = GRADES) -> LabelDistribution:
    """How the final labels of a collection are distributed over grades and resolution methods."""
    cid = collection_id(session, collection)
    cells = Counter(
        (method, grade)
        for method, grade in session.execute(
            select(FinalLabel.method, FinalLabel.grade).where(FinalLabel.collection_id == cid)
        )
    )
    by_grade = {g: 0 for g in grades}
    by_method = {m: 0 for m in METHODS}
    excluded = 0
    for (method, grade), n in cells.items():
        by_method[method] = by_method.get(method, 0) + n
        if grade is None:
            excluded += n
        else:
            by_grade[grade] = by_grade.get(grade, 0) + n
    method_order = {m: i for i, m in enumerate((*METHODS, "imported"))}
    finals = set(
        session.execute(
            select(QueryRecord.ext_id, Passage.ext_id)
            .select_from(FinalLabel)
            .join(QueryRecord, QueryRecord.id == FinalLabel.query_id)
            .join(Passage, Passage.id == FinalLabel.passage_id)
            .where(FinalLabel.collection_id == cid)
        ).all()
    )
    return LabelDistribution(
        by_grade=dict(sorted(by_grade.items())),
        excluded=excluded,
        by_method=by_method,
        cells=[
            {"method": m, "grade": g, "pairs": n}
            for (m, g), n in sorted(
                cells.items(), key=lambda kv: (method_order.get(kv[0][0], 99), -1 if kv[0][1] is None else kv[0][1])
            )
        ],
        pending=len(set(standing_labels(session, collection)) - finals),
    )


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
        session.execute(select(Passage.id, Passage.ext_id).where(Passage.id.in_({p for _, p in keys}))).all()
    )
    return {(str(q), str(p)): (queries[q], passages[p]) for q, p in keys if q in queries and p in passages}


# --------------------------------------------------------------------------- people


def active_users(session: Session, roles: Sequence[str]) -> list[str]:
    """Usernames of active accounts with one of ``roles``, sorted."""
    return list(
        session.scalars(select(User.username).where(User.active, User.role.in_(list(roles))).order_by(User.username))
    )


__all__ = [
    "LabelDistribution",
    "PackageRow",
    "PairReview",
    "QcRoundRow",
    "RankedEntry",
    "RankedList",
    "activity_marker",
    "active_users",
    "adjudication_queue",
    "excluded_pairs",
    "filter_pairs",
    "final_label_distribution",
    "flagged",
    "package_overview",
    "pair_names",
    "pair_review",
    "pool_queries",
    "qc_history",
    "ranked_list",
    "review_table",
    "reviewable_pairs",
    "standing_labels",
    "throughput",
]
