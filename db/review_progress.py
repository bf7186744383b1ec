"""Read functions behind the Review and Admin pages' progress tables: packages, QC history, throughput, flags, final labels.

Every function takes a :class:`~sqlalchemy.orm.Session` first, only reads, and returns plain data
(frozen dataclasses), never ORM objects, so the pages can cache the results.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.resolution import METHODS
from core.scale import GRADES
from db.models import (
    Assignment,
    Collection,
    FinalLabel,
    Judgment,
    Package,
    PassageRecord,
    Pool,
    QcRound,
    QueryRecord,
    User,
)
from db.package_progress import assignment_totals, labelled_counts
from db.qc_rounds import reviewed_by_round
from db.queries import collection_id
from db.review import standing_labels
from db.vocab import JudgmentAction, Purpose

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
    (as :func:`db.package_qc.package_progress`), counted in SQL for all packages at once
    (:func:`db.package_progress.labelled_counts`).
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
    totals = assignment_totals(session, ids)
    labelled = labelled_counts(session, ids)
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
    rows = session.execute(query).all()
    reviewed = reviewed_by_round(session, [r for r, _p, _a in rows], {r.package_id: name for r, name, _a in rows})
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
        if action == JudgmentAction.LABEL:
            entry["labels"] += 1
            if purpose == Purpose.QC:
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
                PassageRecord.ext_id,
                QueryRecord.text,
                PassageRecord.text,
                Judgment.note,
                Assignment.purpose,
                Judgment.created_at,
            )
            .select_from(Judgment)
            .join(User, User.id == Judgment.user_id)
            .join(QueryRecord, QueryRecord.id == Judgment.query_id)
            .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
            .outerjoin(Assignment, Assignment.id == Judgment.assignment_id)
            .where(QueryRecord.collection_id == cid, Judgment.action == JudgmentAction.FLAG)
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
        {
            (method, grade): n
            for method, grade, n in session.execute(
                select(FinalLabel.method, FinalLabel.grade, func.count())
                .where(FinalLabel.collection_id == cid)
                .group_by(FinalLabel.method, FinalLabel.grade)
            )
        }
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
        pending=len(standing_labels(session, collection, unresolved_only=True)),
    )


__all__ = [
    "LabelDistribution",
    "PackageRow",
    "QcRoundRow",
    "final_label_distribution",
    "flagged",
    "package_overview",
    "qc_history",
    "throughput",
]
