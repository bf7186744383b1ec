"""The QC rework loop in the store (DuReader-retrieval, Appendix A.3): disputed items, relabels, round tables.

A package whose QC round ends below the threshold goes back to its annotator
(status ``"revise"``).  This module says *what* goes back: the round's
disagreements, each with the pair's texts, the annotator's label, every
reviewer's label and the reviewers' notes, all computed from the store as it
was when the round was decided (judgments are append-only, so a round's table
can be rebuilt at any time and never changes afterwards).

The annotator answers each disputed item with a new label judgment (a relabel,
or the same grade again to confirm it deliberately: both append, nothing is
overwritten); :func:`db.package_qc.resubmit_package` refuses while any disputed
item of the latest round is unanswered.  The next round samples items no
earlier round of the package sampled, plus the labels the annotator kept
against the reviewers, for reviewers who have not seen them
(:mod:`db.qc_rounds`).

Every write runs in the caller's write transaction, like :mod:`db.labelling`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.access import Forbidden, StaleSubmission, labelling_account
from db.labelling import record_judgment
from db.models import Assignment, Package, QcRound, User
from db.own_judgments import standing_labels
from db.qc_rounds import DisputedItem, decision_time, round_items, with_answers
from db.queries import NotFound
from db.vocab import PackageStatus, QcRoundStatus

CONFIRM_NOTE = "kept after QC round {round_no}"
"""The note stored with a label that confirms the annotator's earlier grade unchanged."""


@dataclass(frozen=True)
class RoundTable:
    """A decided QC round of one package and its disagreements (the Admin page's per-round table)."""

    round_id: int
    package_id: int
    package: str
    annotator: str
    round_no: int
    status: str
    accuracy: float | None
    n_checked: int | None
    threshold: float
    decided_at: datetime | None
    items: list[DisputedItem]


def _decided_round(session: Session, round_id: int) -> QcRound:
    qc_round = session.get(QcRound, round_id)
    if qc_round is None:
        raise NotFound(f"no QC round {round_id}")
    decision_time(qc_round)
    return qc_round


def round_disagreements(session: Session, round_id: int) -> list[DisputedItem]:
    """The disagreements of a decided QC round (pairs where the annotator differed from the reviewers' majority).

    Rebuilt from the judgments stored up to the round's decision, so the same table comes back for
    every past round, whatever was relabelled since.  Sorted by query id, then passage id.

    Raises
    ------
    NotFound
        No such round.
    ValueError
        The round is still under review.
    """
    return round_items(session, _decided_round(session, round_id))


def qc_round_tables(session: Session, package_id: int | None = None) -> list[RoundTable]:
    """Every decided QC round (of one package, or all) with its disagreement table, by package then round."""
    query = (
        select(QcRound, Package.name, User.username)
        .join(Package, Package.id == QcRound.package_id)
        .join(User, User.id == Package.user_id)
        .where(QcRound.status != QcRoundStatus.REVIEWING)
        .order_by(Package.name, QcRound.round_no)
    )
    if package_id is not None:
        query = query.where(QcRound.package_id == package_id)
    return [
        RoundTable(
            round_id=r.id,
            package_id=r.package_id,
            package=name,
            annotator=annotator,
            round_no=r.round_no,
            status=r.status,
            accuracy=r.accuracy,
            n_checked=r.n_checked,
            threshold=r.threshold,
            decided_at=r.decided_at,
            items=round_items(session, r),
        )
        for r, name, annotator in session.execute(query)
    ]


def _returning_round(session: Session, package: Package) -> QcRound | None:
    """The round that sent a package back: its latest round, when that round said "revise"."""
    last = session.scalar(
        select(QcRound).where(QcRound.package_id == package.id).order_by(QcRound.round_no.desc()).limit(1)
    )
    return last if last is not None and last.status == QcRoundStatus.REVISE else None


def _own_package(session: Session, user_id: int, package_id: int) -> Package:
    package = session.get(Package, package_id)
    if package is None or package.user_id != user_id:
        raise Forbidden("this package is not yours")
    return package


def disputed_items(session: Session, user_id: int, package_id: int) -> list[DisputedItem]:
    """What a package returned for revision asks its annotator to look at again.

    The disagreements of the round that returned it, each with ``current_label`` and ``answered``
    (relabelled or confirmed since the decision).  Empty when the package is not in ``"revise"``.

    Raises
    ------
    Forbidden
        The package is not the user's.
    """
    package = _own_package(session, user_id, package_id)
    if package.status != PackageStatus.REVISE:
        return []
    qc_round = _returning_round(session, package)
    if qc_round is None:
        return []
    return with_answers(session, user_id, qc_round, round_items(session, qc_round))


def unanswered(session: Session, package_id: int) -> list[DisputedItem]:
    """Disputed items of a returned package its annotator has neither relabelled nor confirmed yet."""
    package = session.get(Package, package_id)
    if package is None:
        raise NotFound(f"no package {package_id}")
    qc_round = _returning_round(session, package)
    if qc_round is None:
        return []
    items = with_answers(session, package.user_id, qc_round, round_items(session, qc_round))
    return [i for i in items if not i.answered]


@dataclass(frozen=True)
class ReworkPackage:
    """A package of the user's returned for revision, with the round that returned it."""

    id: int
    name: str
    round_id: int
    round_no: int
    accuracy: float | None
    threshold: float
    items: list[DisputedItem]

    @property
    def answered(self) -> int:
        return sum(1 for i in self.items if i.answered)


def rework_packages(session: Session, user_id: int) -> list[ReworkPackage]:
    """The user's packages in ``"revise"``, each with its disputed items (oldest package first)."""
    result = []
    for package in session.scalars(
        select(Package).where(Package.user_id == user_id, Package.status == PackageStatus.REVISE).order_by(Package.id)
    ):
        qc_round = _returning_round(session, package)
        if qc_round is None:
            continue
        result.append(
            ReworkPackage(
                id=package.id,
                name=package.name,
                round_id=qc_round.id,
                round_no=qc_round.round_no,
                accuracy=qc_round.accuracy,
                threshold=qc_round.threshold,
                items=with_answers(session, user_id, qc_round, round_items(session, qc_round)),
            )
        )
    return result


def relabel_disputed(
    session: Session,
    user_id: int,
    assignment_id: int,
    grade: int,
    *,
    token: str | None = None,
    elapsed_ms: int | None = None,
    note: str = "",
) -> bool:
    """Answer a disputed item: a new label judgment on the annotator's own assignment (append-only).

    Giving the grade the annotator already had confirms it deliberately (stored with the note
    :data:`CONFIRM_NOTE` unless one is given).  The checks of :func:`db.labelling.record_judgment`
    apply (account, owner, open package, grade on the pair's scale, ``token`` idempotency); besides,
    the item must be disputed in the round that returned its package.

    Returns
    -------
    bool
        True when stored; False for a repeat of the same ``(assignment_id, token)``.

    Raises
    ------
    StaleSubmission
        The item is not (or no longer) a disputed item of a package returned for revision.
    """
    labelling_account(session, user_id)
    a = session.get(Assignment, assignment_id)
    if a is None or a.user_id != user_id:
        raise Forbidden("this item is not assigned to you")
    package = session.get(Package, a.package_id) if a.package_id is not None else None
    qc_round = (
        _returning_round(session, package) if package is not None and package.status == PackageStatus.REVISE else None
    )
    if qc_round is None:
        raise StaleSubmission("Not stored: this item's package is not returned for revision (any more).")
    if assignment_id not in {i.assignment_id for i in round_items(session, qc_round)}:
        raise StaleSubmission("Not stored: the reviewers did not dispute this item.")
    if not note and standing_labels(session, user_id, [assignment_id]).get(assignment_id) == grade:
        note = CONFIRM_NOTE.format(round_no=qc_round.round_no)
    stored = record_judgment(
        session, user_id, assignment_id, grade, token=token, elapsed_ms=elapsed_ms, note=note, relabel=True
    )
    if stored is None:  # a label on a labelling assignment always resolves; None is the token's repeat
        return False
    return True
