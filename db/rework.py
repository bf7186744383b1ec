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

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.qc import Disagreement, package_accuracy
from db.access import Forbidden, StaleSubmission, labelling_account
from db.labelling import record_judgment, standing_by_assignment, standing_labels
from db.models import Assignment, Judgment, Package, Passage, QcItem, QcRound, QueryRecord, User
from db.queries import NotFound
from db.resolution import pair_scale
from db.vocab import PackageStatus, QcRoundStatus

CONFIRM_NOTE = "kept after QC round {round_no}"
"""The note stored with a label that confirms the annotator's earlier grade unchanged."""


@dataclass(frozen=True)
class DisputedItem:
    """One pair of a decided QC round on which the annotator was counted wrong.

    Attributes
    ----------
    round_id, round_no : int
        The QC round (store id and 1-based number within the package).
    assignment_id : int
        The annotator's labelling assignment of the pair (what a relabel is stored on).
    query_id, passage_id : str
        External ids.
    query, title, passage : str
        The texts, as stored (render them escaped).
    query_language, passage_language : str or None
        Languages, for highlighting.
    annotator_label : int
        The annotator's label when the round was decided.
    reviewer_labels : dict of str to int
        Each reviewer's label when the round was decided.
    consensus : int or None
        The reviewers' majority label (None when they had none).
    notes : dict of str to str
        Each reviewer's notes on the pair (reviewers without a note are left out).
    current_label : int or None
        The annotator's standing label now.
    answered : bool
        The annotator relabelled (or deliberately confirmed) the pair after the round was decided.
    scale : str
        ``"graded"`` or ``"binary"``.
    """

    round_id: int
    round_no: int
    assignment_id: int
    query_id: str
    passage_id: str
    query: str
    query_language: str | None
    title: str
    passage: str
    passage_language: str | None
    annotator_label: int
    reviewer_labels: dict[str, int]
    consensus: int | None
    notes: dict[str, str] = field(default_factory=dict)
    current_label: int | None = None
    answered: bool = False
    scale: str = "graded"


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


def _decision_time(qc_round: QcRound) -> datetime:
    """When a decided round was decided; ``ValueError`` for a round still under review."""
    if qc_round.status == QcRoundStatus.REVIEWING or qc_round.decided_at is None:
        raise ValueError(f"QC round {qc_round.id} is still under review")
    return qc_round.decided_at


def _decided_round(session: Session, round_id: int) -> QcRound:
    qc_round = session.get(QcRound, round_id)
    if qc_round is None:
        raise NotFound(f"no QC round {round_id}")
    _decision_time(qc_round)
    return qc_round


def _labels_then(session: Session, user_id: int, assignment_ids: Sequence[int], cutoff: datetime) -> dict[int, int]:
    """The user's standing label per assignment as it was at ``cutoff`` (their own log up to then)."""
    rows = session.execute(
        select(Judgment.assignment_id, Judgment.action, Judgment.grade)
        .where(
            Judgment.user_id == user_id,
            Judgment.assignment_id.in_(sorted(assignment_ids)),
            Judgment.created_at <= cutoff,
        )
        .order_by(Judgment.id)
    ).all()
    return standing_by_assignment([(aid, act, g) for aid, act, g in rows if aid is not None])


Pair = tuple[int, int]
"""``(query row id, passage row id)``."""


def _reviews_then(
    session: Session, qc_round: QcRound, cutoff: datetime
) -> tuple[dict[Hashable, dict[str, int]], dict[Pair, dict[str, list[str]]]]:
    """``(each counting reviewer's standing label per sampled pair, their notes per pair)`` as they were at ``cutoff``.

    The reviews that count are those of :func:`db.qc_rounds.round_reviews` (a kept item: only its new reviews).
    """
    from db.qc_rounds import round_reviews  # db.qc_rounds builds on this module

    reviews = round_reviews(session, qc_round, cutoff)
    reviewer_labels = current_labels(Event((q, p), user, act, g) for q, p, user, act, g, _n in reviews)
    notes: dict[Pair, dict[str, list[str]]] = {}
    for q, p, user, _act, _g, note in reviews:
        if note and note.strip():
            notes.setdefault((q, p), {}).setdefault(user, []).append(note.strip())
    return reviewer_labels, notes


def _disputed_item(
    session: Session,
    qc_round: QcRound,
    d: Disagreement,
    assignment_of: dict[Pair, int],
    notes: dict[Pair, dict[str, list[str]]],
) -> DisputedItem:
    """One disagreement of the round with the pair's texts, the annotator's assignment and the reviewers' notes."""
    q, p = int(d.pair[0]), int(d.pair[1])
    query = session.get_one(QueryRecord, q)
    passage = session.get_one(Passage, p)
    return DisputedItem(
        round_id=qc_round.id,
        round_no=qc_round.round_no,
        assignment_id=assignment_of[(q, p)],
        query_id=query.ext_id,
        passage_id=passage.ext_id,
        query=query.text,
        query_language=query.language,
        title=passage.title or "",
        passage=passage.text,
        passage_language=passage.language,
        annotator_label=d.annotator_label,
        reviewer_labels=dict(sorted(d.reviewer_labels.items())),
        consensus=d.consensus,
        notes={user: "; ".join(texts) for user, texts in sorted(notes.get((q, p), {}).items())},
        scale=pair_scale(session, q, p),
    )


def _round_items(session: Session, qc_round: QcRound) -> list[DisputedItem]:
    """The disagreements of a decided round, rebuilt from the judgments stored up to its decision."""
    package = session.get_one(Package, qc_round.package_id)
    cutoff = _decision_time(qc_round)
    sample = session.execute(select(QcItem.query_id, QcItem.passage_id).where(QcItem.qc_round_id == qc_round.id)).all()
    pair_of = {
        aid: (q, p)
        for aid, q, p in session.execute(
            select(Assignment.id, Assignment.query_id, Assignment.passage_id).where(Assignment.package_id == package.id)
        )
    }
    assignment_of = {pair: aid for aid, pair in pair_of.items()}
    # the annotator's label at the decision: their own log on the package, up to the decision
    then = _labels_then(session, package.user_id, list(pair_of), cutoff)
    reviewer_labels, notes = _reviews_then(session, qc_round, cutoff)
    annotator = {(str(q), str(p)): then[assignment_of[(q, p)]] for q, p in sample if assignment_of.get((q, p)) in then}
    reviewed = {(str(q), str(p)): dict(reviewer_labels.get((q, p), {})) for q, p in sample}
    # min_reviewers=1: a decided round had enough reviews on every pair, so this reproduces its verdict
    result = package_accuracy(annotator, reviewed, min_reviewers=1)
    items = [_disputed_item(session, qc_round, d, assignment_of, notes) for d in result.disagreements]
    items.sort(key=lambda i: (i.query_id, i.passage_id))
    return items


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
    return _round_items(session, _decided_round(session, round_id))


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
            items=_round_items(session, r),
        )
        for r, name, annotator in session.execute(query)
    ]


def _returning_round(session: Session, package: Package) -> QcRound | None:
    """The round that sent a package back: its latest round, when that round said "revise"."""
    last = session.scalar(
        select(QcRound).where(QcRound.package_id == package.id).order_by(QcRound.round_no.desc()).limit(1)
    )
    return last if last is not None and last.status == QcRoundStatus.REVISE else None


def _answers(
    session: Session, user_id: int, assignment_ids: Sequence[int], after: datetime
) -> dict[int, tuple[int | None, bool]]:
    """Per assignment: (standing label, whether that standing label was given after ``after``)."""
    stacks: dict[int, list[tuple[int | None, datetime]]] = {}
    if not assignment_ids:
        return {}
    for aid, action, grade, created in session.execute(
        select(Judgment.assignment_id, Judgment.action, Judgment.grade, Judgment.created_at)
        .where(Judgment.user_id == user_id, Judgment.assignment_id.in_(list(assignment_ids)))
        .order_by(Judgment.id)
    ):
        if aid is None:  # left out by the query; narrows the type
            continue
        stack = stacks.setdefault(aid, [])
        if action == "label":
            stack.append((grade, created))
        elif action == "undo" and stack:
            stack.pop()
    return {aid: (stack[-1][0], stack[-1][1] > after) for aid, stack in stacks.items() if stack}


def _with_answers(session: Session, user_id: int, qc_round: QcRound, items: list[DisputedItem]) -> list[DisputedItem]:
    answers = _answers(session, user_id, [i.assignment_id for i in items], _decision_time(qc_round))
    return [
        DisputedItem(
            **{
                **i.__dict__,
                "current_label": answers.get(i.assignment_id, (None, False))[0],
                "answered": answers.get(i.assignment_id, (None, False))[1],
            }
        )
        for i in items
    ]


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
    return _with_answers(session, user_id, qc_round, _round_items(session, qc_round))


def unanswered(session: Session, package_id: int) -> list[DisputedItem]:
    """Disputed items of a returned package its annotator has neither relabelled nor confirmed yet."""
    package = session.get(Package, package_id)
    if package is None:
        raise NotFound(f"no package {package_id}")
    qc_round = _returning_round(session, package)
    if qc_round is None:
        return []
    items = _with_answers(session, package.user_id, qc_round, _round_items(session, qc_round))
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
                items=_with_answers(session, user_id, qc_round, _round_items(session, qc_round)),
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
    if assignment_id not in {i.assignment_id for i in _round_items(session, qc_round)}:
        raise StaleSubmission("Not stored: the reviewers did not dispute this item.")
    if not note and standing_labels(session, user_id, [assignment_id]).get(assignment_id) == grade:
        note = CONFIRM_NOTE.format(round_no=qc_round.round_no)
    stored = record_judgment(
        session, user_id, assignment_id, grade, token=token, elapsed_ms=elapsed_ms, note=note, relabel=True
    )
    if stored is None:  # a label on a labelling assignment always resolves; None is the token's repeat
        return False
    return True
