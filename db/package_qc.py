"""Packages in the store: an annotator's packages, QC rounds on them (start, reviewers' labels, close), resubmission.

Every write function runs in the caller's write transaction; the rules are :mod:`core.qc`, and the
round's reads and scores live in :mod:`db.qc_rounds`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.qc import qc_decision, round_seed
from db import qc_rounds
from db.access import (
    ADMIN_ROLES,
    Forbidden,
    labelling_account,
    require_account,
)
from db.labelling import open_clause
from db.models import (
    Assignment,
    Judgment,
    Package,
    QcItem,
    QcRound,
    User,
    utcnow,
)
from db.own_judgments import own_log, standing_labels
from db.package_progress import assignment_totals, labelled_counts
from db.qc_rounds import score_round
from db.queries import NotFound
from db.rework import unanswered
from db.vocab import PackageStatus, Purpose, QcRoundStatus, Role

# --------------------------------------------------------------------------- quality control


def package_progress(session: Session, package_id: int) -> tuple[int, int]:
    """(labelled, total) assignments of a package (labelled: :func:`db.package_progress.labelled_counts`)."""
    session.get_one(Package, package_id)  # NoResultFound for an unknown id, as callers expect
    total = session.scalar(select(func.count()).select_from(Assignment).where(Assignment.package_id == package_id))
    return labelled_counts(session, [package_id])[package_id], total or 0


def _package_for_qc(session: Session, package_id: int) -> Package:
    """The package, refused (``ValueError``) unless it is finished and neither under review nor returned."""
    package = session.get(Package, package_id)
    if package is None:
        raise NotFound(f"no package {package_id}")
    if package.status == PackageStatus.IN_QC:
        raise ValueError(f"package {package.name} is under review: close its open round first")
    if package.status == PackageStatus.REVISE:
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
                User.username.in_(list(reviewers)), User.active, User.role.in_((Role.REVIEWER, Role.ADMIN))
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
        status=QcRoundStatus.REVIEWING,
    )
    session.add(qc_round)
    session.flush()
    session.execute(insert(QcItem), [{"qc_round_id": qc_round.id, "query_id": q, "passage_id": p} for q, p in sample])
    qc_rounds.assign_kept(session, kept, users, qc_rounds.round_tag(package.name, number), rseed)
    qc_rounds.assign_fresh(session, fresh, users, qc_rounds.round_tag(package.name, number), rseed)
    package.status = PackageStatus.IN_QC
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
        .where(Assignment.purpose == Purpose.QC)
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
    if qc_round.status != QcRoundStatus.REVIEWING:
        raise ValueError(f"QC round {round_id} is already decided ({qc_round.status})")
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
    qc_round.status = QcRoundStatus.PASSED if decision == "pass" else QcRoundStatus.REVISE
    qc_round.accuracy = result.accuracy
    qc_round.n_checked = result.n_checked
    qc_round.decided_at = utcnow()
    package.status = PackageStatus.PASSED if decision == "pass" else PackageStatus.REVISE
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
    if package.status != PackageStatus.REVISE:
        raise ValueError(f"package {package.name} is {package.status}, not returned for revision")
    left = unanswered(session, package_id)
    if left:
        pairs = ", ".join(f"{i.query_id} / {i.passage_id}" for i in left[:5]) + (" ..." if len(left) > 5 else "")
        raise ValueError(
            f"package {package.name} was not resubmitted: {len(left)} disputed item(s) not yet relabelled or "
            f"confirmed ({pairs})"
        )
    package.status = PackageStatus.SUBMITTED
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
    packages = list(session.scalars(select(Package).where(Package.user_id == user_id).order_by(Package.id)))
    ids = [p.id for p in packages]
    # counted in SQL for all packages at once: replaying every label of the user's packages takes seconds
    labelled = labelled_counts(session, ids) if ids else {}
    totals = assignment_totals(session, ids)
    result = [
        MyPackage(
            id=p.id,
            name=p.name,
            status=p.status,
            done=labelled.get(p.id, 0),
            total=totals.get(p.id, 0),
            purpose=Purpose.LABEL,
        )
        for p in packages
    ]
    loose = session.execute(
        select(Assignment.id, Assignment.purpose, open_clause())
        .outerjoin(Package, Package.id == Assignment.package_id)
        .where(
            Assignment.user_id == user_id,
            Assignment.package_id.is_(None),
            Assignment.purpose.in_((Purpose.FOURTH, Purpose.QC)),
        )
        .order_by(Assignment.id)
    ).all()
    standing = standing_labels(session, user_id, [r[0] for r in loose]) if loose else {}
    for purpose, name in ((Purpose.FOURTH, "adjudication"), (Purpose.QC, "quality review")):
        mine = [(aid, bool(is_open)) for aid, p, is_open in loose if p == purpose]
        shown = [aid for aid, is_open in mine if is_open or aid in standing]
        if shown:
            done = sum(1 for aid in shown if aid in standing)
            left = any(is_open and aid not in standing for aid, is_open in mine)
            result.append(
                MyPackage(
                    id=None, name=name, status="open" if left else "done", done=done, total=len(shown), purpose=purpose
                )
            )
    return result
