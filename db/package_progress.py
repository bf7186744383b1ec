"""Packages' progress counted in SQL: labelled items per package, and the flagged items a package waits on.

A package's item is labelled when its annotator's own log leaves a standing label on it
(:mod:`db.own_judgments`: relabels and undos replayed).  Replaying every label of a large store in Python
takes seconds, so the store counts: per assignment, its annotator's ``label`` and ``undo`` events.  An
assignment with labels and no undo has a standing label; one with an undo is replayed from its log (undos
are rare).  Flagged items are found the same way: only assignments with a ``flag`` event are replayed.
The result is the replay's, row for row (``tests/db/test_qc_tables_sql.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy import Subquery, case, func, select
from sqlalchemy.orm import Session

from db.models import Assignment, Judgment, Package, PassageRecord, QueryRecord, User
from db.own_judgments import own_log, standing_labels
from db.vocab import JudgmentAction


def _counted(action: str):  # type: ignore[no-untyped-def]  # a SQL expression
    return func.sum(case((Judgment.action == action, 1), else_=0))


def _owner_counts(package_ids: Sequence[int], *, flags_only: bool = False) -> Subquery:
    """Per package assignment: its package and its annotator's ``label``, ``undo`` and ``flag`` events.

    Judgments are grouped on their own first (one pass over the table, no join per row; ``flags_only``: the
    flags alone), then joined to their assignment and package by primary key.
    """
    per_assignment = select(
        Judgment.assignment_id.label("aid"),
        Judgment.user_id.label("uid"),
        _counted(JudgmentAction.LABEL).label("labels"),
        _counted(JudgmentAction.UNDO).label("undos"),
        _counted(JudgmentAction.FLAG).label("flags"),
    ).group_by(Judgment.assignment_id, Judgment.user_id)
    if flags_only:
        per_assignment = per_assignment.where(Judgment.action == JudgmentAction.FLAG)
    grouped = per_assignment.subquery()  # a judgment on no assignment finds no row to join: no filter needed
    return (
        select(Assignment.package_id.label("package_id"), grouped)
        .join(Assignment, Assignment.id == grouped.c.aid)
        .join(Package, Package.id == Assignment.package_id)
        .where(Package.user_id == grouped.c.uid, Assignment.package_id.in_(list(package_ids)))
        .subquery()
    )


def _replayed(session: Session, counts: Subquery, column: str) -> dict[int, list[int]]:
    """``{package id: [assignment id, ...]}`` of the package assignments whose annotator's ``column`` count is > 0."""
    out: dict[int, list[int]] = {}
    for package_id, aid in session.execute(
        select(counts.c.package_id, counts.c.aid).where(counts.c[column] > 0).order_by(counts.c.aid)
    ):
        out.setdefault(package_id, []).append(aid)
    return out


def _owners(session: Session, package_ids: Sequence[int]) -> dict[int, int]:
    return dict(session.execute(select(Package.id, Package.user_id).where(Package.id.in_(list(package_ids)))).all())


def assignment_totals(session: Session, package_ids: Sequence[int]) -> dict[int, int]:
    """``{package id: assignments}`` of the packages ``package_ids``, in one grouped count."""
    return dict(
        session.execute(  # type: ignore[arg-type]
            select(Assignment.package_id, func.count())
            .where(Assignment.package_id.in_(package_ids))
            .group_by(Assignment.package_id)
        ).all()
    )


def labelled_counts(session: Session, package_ids: Sequence[int]) -> Counter[int]:
    """Per package id: its assignments with a standing label of the package's annotator.

    Parameters
    ----------
    session : Session
        An open session.
    package_ids : sequence of int
        The packages to count.

    Returns
    -------
    Counter of int to int
        ``{package id: labelled assignments}``; packages with none are absent.
    """
    counts = _owner_counts(package_ids)
    labelled: Counter[int] = Counter()
    replay = False
    for package_id, simple, undone in session.execute(
        select(
            counts.c.package_id,
            func.sum(case(((counts.c.undos == 0) & (counts.c.labels > 0), 1), else_=0)),
            func.sum(case((counts.c.undos > 0, 1), else_=0)),
        ).group_by(counts.c.package_id)
    ):
        labelled[package_id] += simple
        replay = replay or bool(undone)
    if replay:  # the assignments with an undo, replayed from their logs
        undone_ids = _replayed(session, counts, "undos")
        owners = _owners(session, list(undone_ids))
        for package_id, ids in undone_ids.items():
            labelled[package_id] += len(standing_labels(session, owners[package_id], ids))
    return +labelled


Held = tuple[int, str, str, int, int, list[tuple[str, str]]]
"""``(package id, name, annotator, labelled, total, flagged (query id, passage id) pairs)``."""


def flag_held(session: Session, user_id: int | None = None) -> list[Held]:
    """Packages finished but for flagged items, by package name (:data:`Held` rows).

    A flagged item is one whose annotator's latest skip, flag or label is a flag and that has no standing
    label (:func:`db.own_judgments.own_log`); only the assignments with a flag are replayed.

    Parameters
    ----------
    session : Session
        An open session.
    user_id : int, optional
        Only this annotator's packages; every package when None.
    """
    packages = select(Package.id) if user_id is None else select(Package.id).where(Package.user_id == user_id)
    candidates = _replayed(session, _owner_counts(list(session.scalars(packages)), flags_only=True), "flags")
    owners = _owners(session, list(candidates))
    flagged: dict[int, set[int]] = {}
    for package_id, ids in candidates.items():
        marks = own_log(session, owners[package_id], ids)[1]
        if held := {aid for aid, mark in marks.items() if mark == JudgmentAction.FLAG}:
            flagged[package_id] = held
    if not flagged:
        return []
    labelled = labelled_counts(session, list(flagged))
    totals = dict(
        session.execute(
            select(Assignment.package_id, func.count())
            .where(Assignment.package_id.in_(list(flagged)))
            .group_by(Assignment.package_id)
        ).all()
    )
    return [
        (pid, name, annotator, labelled[pid], totals[pid], _pair_names(session, flagged[pid]))
        for pid, name, annotator in session.execute(
            select(Package.id, Package.name, User.username)
            .join(User, User.id == Package.user_id)
            .where(Package.id.in_(list(flagged)))
            .order_by(Package.name)
        )
        if labelled[pid] + len(flagged[pid]) == totals[pid]
    ]


def _pair_names(session: Session, assignment_ids: set[int]) -> list[tuple[str, str]]:
    """``(query id, passage id)`` of each assignment, sorted."""
    return sorted(
        (q, d)
        for q, d in session.execute(
            select(QueryRecord.ext_id, PassageRecord.ext_id)
            .select_from(Assignment)
            .join(QueryRecord, QueryRecord.id == Assignment.query_id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(Assignment.id.in_(sorted(assignment_ids)))
        )
    )
