"""What a QC round after the first reviews: fresh items, plus the labels the annotator kept.

DuReader-retrieval (Appendix A.3) repeats the check on a revised package
until it passes.  A repeated check only means something when it looks at
new evidence, so a round of a package samples:

* **fresh items**: pairs of the package no earlier round of it sampled
  (seeded by :func:`core.qc.round_seed` of the round number, default seed
  too), and
* **kept items**: the disputed pairs of the round that returned the package
  whose label still differs from the reviewers' consensus after rework (the
  annotator kept their label, or changed it to another grade the reviewers
  did not give).  Each goes to every chosen reviewer who has not reviewed it
  before, with the annotator's note, and that new review alone decides it:
  the earlier reviewers' labels do not count again.

Pairs relabelled to the consensus are settled and not reviewed again.  QC
assignments carry the round's tag (:func:`round_tag`) in
``Assignment.package``, which is how a kept pair's new reviews are told
apart from the old ones; a pair sampled by an earlier round of the same
package and again by this one is a kept item (fresh samples never repeat).

A decided round's disagreements (:class:`DisputedItem`, :func:`round_items`) are rebuilt here from the
judgments stored up to its decision: the next round's kept items and the rework loop (:mod:`db.rework`)
both read them.
"""

from __future__ import annotations

import random
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.orm import Session

from core.assignment import annotator_seed
from core.judgments import Event, current_labels
from core.qc import Disagreement, QcResult, package_accuracy, sample_for_qc
from db.models import Assignment, Judgment, Package, PassageRecord, QcItem, QcRound, QueryRecord, User, utcnow
from db.own_judgments import labels_then, standing_labels
from db.package_progress import flag_held
from db.resolution import pair_scale
from db.vocab import JudgmentAction, Purpose, QcRoundStatus

Pair = tuple[int, int]
"""``(query row id, passage row id)``."""


def round_tag(package: str, round_no: int) -> str:
    """The ``Assignment.package`` value of a QC round's review assignments."""
    return f"qc-{package}-r{round_no}"


@dataclass(frozen=True)
class KeptItem:
    """A disputed pair whose label still differs from the reviewers' after rework.

    Attributes
    ----------
    pair : (int, int)
        Query and passage row ids.
    label : int
        The annotator's standing label.
    note : str
        The note stored with it (``"kept after QC round N"`` unless the annotator wrote one).
    """

    pair: Pair
    label: int
    note: str


def sampled_before(session: Session, package_id: int, before_round: int) -> set[Pair]:
    """Pairs sampled by the package's rounds numbered below ``before_round``."""
    return {
        (q, p)
        for q, p in session.execute(
            select(QcItem.query_id, QcItem.passage_id)
            .join(QcRound, QcRound.id == QcItem.qc_round_id)
            .where(QcRound.package_id == package_id, QcRound.round_no < before_round)
        )
    }


def kept_items(session: Session, package: Package) -> list[KeptItem]:
    """The disputed pairs of the round that returned ``package`` whose label still differs from the consensus."""
    last = session.scalar(
        select(QcRound).where(QcRound.package_id == package.id).order_by(QcRound.round_no.desc()).limit(1)
    )
    if last is None or last.status != QcRoundStatus.REVISE:
        return []
    items = with_answers(session, package.user_id, last, round_items(session, last))
    kept = [i for i in items if i.current_label is not None and i.current_label != i.consensus]
    notes = _latest_notes(session, package.user_id, [i.assignment_id for i in kept])
    pairs = _pair_ids(session, [i.assignment_id for i in kept])
    return [KeptItem(pairs[i.assignment_id], int(i.current_label or 0), notes.get(i.assignment_id, "")) for i in kept]


def _pair_ids(session: Session, assignment_ids: Sequence[int]) -> dict[int, Pair]:
    return {
        aid: (q, p)
        for aid, q, p in session.execute(
            select(Assignment.id, Assignment.query_id, Assignment.passage_id).where(
                Assignment.id.in_(list(assignment_ids))
            )
        )
    }


def _latest_notes(session: Session, user_id: int, assignment_ids: Sequence[int]) -> dict[int, str]:
    """The note of the user's latest label judgment on each assignment (where it has one)."""
    notes: dict[int, str] = {}
    for aid, note in session.execute(
        select(Judgment.assignment_id, Judgment.note)
        .where(
            Judgment.user_id == user_id,
            Judgment.assignment_id.in_(list(assignment_ids)),
            Judgment.action == JudgmentAction.LABEL,
        )
        .order_by(Judgment.id)
    ):
        if aid is not None:
            notes[aid] = (note or "").strip()
    return notes


def plan_sample(
    session: Session, package: Package, round_no: int, size: int, seed: int
) -> tuple[list[Pair], list[KeptItem]]:
    """``(fresh pairs, kept items)`` of the package's next round: ``size`` pairs no earlier round sampled."""
    pairs = session.execute(
        select(Assignment.query_id, Assignment.passage_id)
        .where(Assignment.package_id == package.id)
        .order_by(Assignment.id)
    ).all()
    seen = sampled_before(session, package.id, round_no)
    keys = {(str(q), str(p)): (q, p) for q, p in pairs if (q, p) not in seen}
    fresh = [keys[k] for k in sample_for_qc(list(keys), size=size, seed=seed)] if keys else []
    return fresh, kept_items(session, package)


def _holders(session: Session, pair: Pair) -> dict[str, int]:
    """``{username: id}`` of everyone with an assignment on the pair (one per user and pair in the store)."""
    return dict(
        session.execute(
            select(User.username, User.id)
            .join(Assignment, Assignment.user_id == User.id)
            .where(Assignment.query_id == pair[0], Assignment.passage_id == pair[1])
        ).all()
    )


def _pair_name(session: Session, pair: Pair) -> str:
    query = session.get_one(QueryRecord, pair[0])
    passage = session.get_one(PassageRecord, pair[1])
    return f"{query.ext_id} / {passage.ext_id}"


def assign_kept(session: Session, kept: Sequence[KeptItem], users: dict[str, int], tag: str, seed: int) -> None:
    """Give each kept item to every chosen reviewer who has not reviewed (or labelled) the pair before.

    Raises
    ------
    ValueError
        A kept item has no such reviewer among ``users`` (nothing is stored: the caller's transaction
        is rolled back); the message names the pair and who already saw it.
    """
    rows = []
    for item in kept:
        seen = _holders(session, item.pair)
        fresh = sorted(name for name in users if name not in seen)
        if not fresh:
            raise ValueError(
                f"the annotator kept their label on {_pair_name(session, item.pair)}: it needs a reviewer who has "
                f"not reviewed it ({', '.join(sorted(n for n in users if n in seen))} did); add one to this round"
            )
        rows += [
            {
                "query_id": item.pair[0],
                "passage_id": item.pair[1],
                "user_id": users[name],
                "package": tag,
                "order_index": 0,
                "seed": annotator_seed(seed, name),
                "purpose": Purpose.QC,
            }
            for name in fresh
        ]
    if rows:
        session.execute(insert(Assignment), rows)


def assign_fresh(session: Session, sample: Sequence[Pair], users: dict[str, int], tag: str, seed: int) -> None:
    """Give each reviewer the fresh pairs they hold no assignment on yet, in their own shuffled order."""
    for name, uid in sorted(users.items()):
        have = set(
            session.execute(
                select(Assignment.query_id, Assignment.passage_id).where(
                    Assignment.user_id == uid, Assignment.purpose == Purpose.QC
                )
            ).all()
        )
        order = [pair for pair in sample if pair not in have]
        random.Random(annotator_seed(seed, name)).shuffle(order)
        if order:
            session.execute(
                insert(Assignment),
                [
                    {
                        "query_id": q,
                        "passage_id": p,
                        "user_id": uid,
                        "package": tag,
                        "order_index": i + 1,  # after the kept items (order 0), which wait on a decision
                        "seed": annotator_seed(seed, name),
                        "purpose": Purpose.QC,
                    }
                    for i, (q, p) in enumerate(order)
                ],
            )


def kept_in_round(session: Session, qc_round: QcRound) -> set[Pair]:
    """The round's kept items: its pairs an earlier round of the same package sampled too."""
    mine = {
        (q, p)
        for q, p in session.execute(select(QcItem.query_id, QcItem.passage_id).where(QcItem.qc_round_id == qc_round.id))
    }
    return mine & sampled_before(session, qc_round.package_id, qc_round.round_no)


def round_reviews(
    session: Session, qc_round: QcRound, cutoff: datetime | None = None
) -> list[tuple[int, int, str, str, int | None, str]]:
    """The QC judgments that count for the round: ``(query, passage, reviewer, action, grade, note)``, oldest first.

    Every QC judgment on a fresh pair counts (a reviewer reviews a pair once); on a kept pair only
    those given through this round's assignments.  ``cutoff``: only judgments stored up to then.
    """
    sample = {
        (q, p)
        for q, p in session.execute(select(QcItem.query_id, QcItem.passage_id).where(QcItem.qc_round_id == qc_round.id))
    }
    kept = kept_in_round(session, qc_round)
    tag = round_tag(session.get_one(Package, qc_round.package_id).name, qc_round.round_no)
    query = (
        select(
            Judgment.query_id,
            Judgment.passage_id,
            User.username,
            Judgment.action,
            Judgment.grade,
            Judgment.note,
            Assignment.package,
        )
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(User, User.id == Judgment.user_id)
        .where(Assignment.purpose == Purpose.QC, Judgment.query_id.in_(sorted({q for q, _p in sample})))
        .order_by(Judgment.id)
    )
    if cutoff is not None:
        query = query.where(Judgment.created_at <= cutoff)
    return [
        (q, p, user, action, grade, note or "")
        for q, p, user, action, grade, note, assigned in session.execute(query)
        if (q, p) in sample and ((q, p) not in kept or assigned == tag)
    ]


def round_review_labels(session: Session, qc_round: QcRound) -> dict[Hashable, dict[str, int]]:
    """Each counting reviewer's standing label per pair of the round (:func:`round_reviews`)."""
    return current_labels(Event((q, p), user, act, g) for q, p, user, act, g, _n in round_reviews(session, qc_round))


def score_round(
    session: Session, qc_round: QcRound, annotator: dict[tuple[str, str], int], min_reviewers: int
) -> QcResult:
    """The annotator against the counting reviews: fresh pairs need ``min_reviewers``, a kept pair one new review."""
    labels = round_review_labels(session, qc_round)
    kept = kept_in_round(session, qc_round)
    sample = session.execute(select(QcItem.query_id, QcItem.passage_id).where(QcItem.qc_round_id == qc_round.id)).all()
    parts = []
    for pairs, needed in (
        ([s for s in sample if tuple(s) not in kept], min_reviewers),
        ([s for s in sample if tuple(s) in kept], 1),
    ):
        reviewed = {(str(q), str(p)): dict(labels.get((q, p), {})) for q, p in pairs}
        parts.append(package_accuracy(annotator, reviewed, min_reviewers=needed))
    return merge_results(*parts)


def merge_results(a: QcResult, b: QcResult) -> QcResult:
    """Two partial results of one round as one (counts added, lists joined)."""
    checked, correct = a.n_checked + b.n_checked, a.n_correct + b.n_correct
    return QcResult(
        correct / checked if checked else None,
        checked,
        correct,
        a.disagreements + b.disagreements,
        a.reviewer_conflicts + b.reviewer_conflicts,
        a.incomplete + b.incomplete,
        a.rule,
        a.relevance_level,
    )


def annotator_note(session: Session, assignment: Assignment) -> str:
    """What the reviewer of a kept item is shown: the annotator's label and note (``""`` for any other item)."""
    if assignment.purpose != Purpose.QC:
        return ""
    qc_round = session.scalar(
        select(QcRound)
        .join(QcItem, QcItem.qc_round_id == QcRound.id)
        .where(
            QcItem.query_id == assignment.query_id,
            QcItem.passage_id == assignment.passage_id,
            QcRound.status == QcRoundStatus.REVIEWING,
        )
        .order_by(QcRound.id.desc())
        .limit(1)
    )
    pair = (assignment.query_id, assignment.passage_id)
    if qc_round is None or pair not in kept_in_round(session, qc_round):
        return ""
    package = session.get_one(Package, qc_round.package_id)
    own = session.scalar(
        select(Assignment.id).where(
            Assignment.package_id == package.id,
            Assignment.query_id == pair[0],
            Assignment.passage_id == pair[1],
        )
    )
    if own is None:
        return ""
    label = standing_labels(session, package.user_id, [own]).get(own)
    note = _latest_notes(session, package.user_id, [own]).get(own, "")
    said = f" Their note: {note.rstrip('.')}." if note else ""
    before = _label_at_last_decision(session, package, qc_round.round_no, own)
    if before is not None and before != label:
        return f"The annotator changed their label from {before} to {label} after the last review.{said}"
    return f"The annotator kept label {label} after the last review.{said}"


def _label_at_last_decision(session: Session, package: Package, round_no: int, assignment_id: int) -> int | None:
    """The annotator's label on the assignment when the package's previous round was decided."""
    previous = session.scalar(
        select(QcRound.decided_at).where(QcRound.package_id == package.id, QcRound.round_no == round_no - 1)
    )
    if previous is None:
        return None
    return labels_then(session, package.user_id, [assignment_id], previous).get(assignment_id)


def pass_fully_reviewed(session: Session, package: Package, round_no: int, seed: int, threshold: float) -> int:
    """Record a round with nothing left to review as passed at once; returns its id.

    Every item of the package was sampled by an earlier round and every disputed label was changed
    to the reviewers' consensus: no review is pending and nothing contradicts them any more.
    """
    now = utcnow()
    qc_round = QcRound(
        package_id=package.id,
        round_no=round_no,
        seed=seed,
        sample_size=0,
        threshold=threshold,
        status="passed",
        n_checked=0,
        decided_at=now,
    )
    session.add(qc_round)
    package.status = "passed"
    package.updated_at = now
    session.flush()
    return qc_round.id


NOTHING_LEFT = (
    "every item was reviewed in an earlier round and every disputed label now follows the reviewers: "
    "nothing was left to review, so the package passed"
)
"""What a round recorded by :func:`pass_fully_reviewed` says (the Admin page shows it)."""


@dataclass(frozen=True)
class WaitingPackage:
    """A package whose only unlabelled items are flagged: it waits for the flags to be answered before QC."""

    id: int
    name: str
    annotator: str
    labelled: int
    total: int
    flagged: list[tuple[str, str]]
    """``(query id, passage id)`` of each flagged item."""


def waiting_on_flags(session: Session, user_id: int | None = None) -> list[WaitingPackage]:
    """Packages that would be finished but for flagged items (a reviewer answers, the annotator labels them).

    Parameters
    ----------
    session : Session
        An open session.
    user_id : int, optional
        Only this annotator's packages (their own list); every package when None (the Admin page).
    """
    return [WaitingPackage(*row) for row in flag_held(session, user_id)]


def round_outcome(session: Session, round_id: int) -> tuple[str, int, int]:
    """``(status, sample size, round number)`` of a QC round, for what the page says after starting it."""
    qc_round = session.get_one(QcRound, round_id)
    return qc_round.status, qc_round.sample_size, qc_round.round_no


def reviewed_counts(session: Session, qc_round: QcRound) -> dict[str, int]:
    """Each reviewer of the round and how many of its pairs they labelled, counting only reviews that count.

    A kept pair counts only for the reviewers this round gave it (:func:`round_reviews`), so a reviewer of an
    earlier round is not shown as having reviewed it again.
    """
    package = session.get_one(Package, qc_round.package_id)
    return reviewed_by_round(session, [qc_round], {package.id: package.name})[qc_round.id]


def reviewed_by_round(
    session: Session, rounds: Sequence[QcRound], package_names: Mapping[int, str]
) -> dict[int, dict[str, int]]:
    """:func:`reviewed_counts` of every round in ``rounds``, from two reads whatever their number.

    Parameters
    ----------
    session : Session
        An open session.
    rounds : sequence of QcRound
        The rounds to count.
    package_names : mapping of int to str
        The name of each round's package (by package id): a round's assignments carry it in their tag.

    Returns
    -------
    dict of int to dict of str to int
        ``{round id: {reviewer: pairs of the round they labelled}}``, reviewers in name order.
    """
    if not rounds:
        return {}
    samples: dict[int, list[tuple[int, Pair]]] = {}  # package -> (round number, pair) of each of its rounds
    for package_id, round_no, q, p in session.execute(
        select(QcRound.package_id, QcRound.round_no, QcItem.query_id, QcItem.passage_id)
        .join(QcItem, QcItem.qc_round_id == QcRound.id)
        .where(QcRound.package_id.in_(sorted({r.package_id for r in rounds})))
    ):
        samples.setdefault(package_id, []).append((round_no, (q, p)))
    queries = sorted({pair[0] for sampled in samples.values() for _n, pair in sampled})
    # every QC assignment on those queries, with its judgments (none: a holder who has not answered yet)
    rows = session.execute(
        select(Assignment.query_id, Assignment.passage_id, User.username, Assignment.package)
        .add_columns(Judgment.id, Judgment.action, Judgment.grade)
        .join(User, User.id == Assignment.user_id)
        .outerjoin(Judgment, Judgment.assignment_id == Assignment.id)
        .where(Assignment.purpose == Purpose.QC, Assignment.query_id.in_(queries))
    ).all()
    judged = sorted((row for row in rows if row.id is not None), key=lambda row: row.id)
    out = {}
    for r in rounds:
        sampled = samples.get(r.package_id, [])
        sample = {pair for n, pair in sampled if n == r.round_no}
        kept = sample & {pair for n, pair in sampled if n < r.round_no}
        out[r.id] = _reviewed(sample, kept, round_tag(package_names[r.package_id], r.round_no), rows, judged)
    return out


def _reviewed(
    sample: set[Pair], kept: set[Pair], tag: str, rows: Sequence[Any], judged: Sequence[Any]
) -> dict[str, int]:
    """One round's reviewers and their labelled pairs, from the QC assignments' ``rows`` (``judged``: oldest first)."""

    def counts(q: int, p: int, assigned: str | None) -> bool:
        # as round_reviews: a fresh pair counts every QC review, a kept pair only this round's
        return (q, p) in sample and ((q, p) not in kept or assigned == tag)

    labels = current_labels(
        Event((q, p), user, act, g) for q, p, user, assigned, _id, act, g in judged if counts(q, p, assigned)
    )
    holders = {user for q, p, user, assigned, *_rest in rows if counts(q, p, assigned)}
    return {user: sum(1 for pair in sample if user in labels.get(pair, {})) for user in sorted(holders)}


# --------------------------------------------------------------------------- a decided round's disagreements


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


def decision_time(qc_round: QcRound) -> datetime:
    """When a decided round was decided; ``ValueError`` for a round still under review."""
    if qc_round.status == QcRoundStatus.REVIEWING or qc_round.decided_at is None:
        raise ValueError(f"QC round {qc_round.id} is still under review")
    return qc_round.decided_at


def _reviews_then(
    session: Session, qc_round: QcRound, cutoff: datetime
) -> tuple[dict[Hashable, dict[str, int]], dict[Pair, dict[str, list[str]]]]:
    """``(each counting reviewer's standing label per sampled pair, their notes per pair)`` as they were at ``cutoff``.

    The reviews that count are those of :func:`round_reviews` (a kept item: only its new reviews).
    """
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
    passage = session.get_one(PassageRecord, p)
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


def _load_texts(session: Session, pairs: Sequence[Pair]) -> list[Any]:
    """The pairs' queries and passages, read in two queries: while the caller holds them, ``session.get`` finds
    them in the session (which keeps only weak references) without a query each."""
    if not pairs:
        return []
    queries = session.scalars(select(QueryRecord).where(QueryRecord.id.in_(sorted({q for q, _p in pairs})))).all()
    passages = session.scalars(select(PassageRecord).where(PassageRecord.id.in_(sorted({p for _q, p in pairs}))))
    return [*queries, *passages]


def round_items(session: Session, qc_round: QcRound) -> list[DisputedItem]:
    """The disagreements of a decided round, rebuilt from the judgments stored up to its decision."""
    package = session.get_one(Package, qc_round.package_id)
    cutoff = decision_time(qc_round)
    sample = session.execute(select(QcItem.query_id, QcItem.passage_id).where(QcItem.qc_round_id == qc_round.id)).all()
    pair_of = {
        aid: (q, p)
        for aid, q, p in session.execute(
            select(Assignment.id, Assignment.query_id, Assignment.passage_id).where(Assignment.package_id == package.id)
        )
    }
    assignment_of = {pair: aid for aid, pair in pair_of.items()}
    # the annotator's label at the decision: their own log on the package, up to the decision
    then = labels_then(session, package.user_id, list(pair_of), cutoff)
    reviewer_labels, notes = _reviews_then(session, qc_round, cutoff)
    annotator = {(str(q), str(p)): then[assignment_of[(q, p)]] for q, p in sample if assignment_of.get((q, p)) in then}
    reviewed = {(str(q), str(p)): dict(reviewer_labels.get((q, p), {})) for q, p in sample}
    # min_reviewers=1: a decided round had enough reviews on every pair, so this reproduces its verdict
    result = package_accuracy(annotator, reviewed, min_reviewers=1)
    loaded = _load_texts(session, [(int(d.pair[0]), int(d.pair[1])) for d in result.disagreements])
    items = [_disputed_item(session, qc_round, d, assignment_of, notes) for d in result.disagreements]
    del loaded
    items.sort(key=lambda i: (i.query_id, i.passage_id))
    return items


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
        if action == JudgmentAction.LABEL:
            stack.append((grade, created))
        elif action == JudgmentAction.UNDO and stack:
            stack.pop()
    return {aid: (stack[-1][0], stack[-1][1] > after) for aid, stack in stacks.items() if stack}


def with_answers(session: Session, user_id: int, qc_round: QcRound, items: list[DisputedItem]) -> list[DisputedItem]:
    """``items`` with the annotator's answers since the round was decided (``current_label``, ``answered``).

    Parameters
    ----------
    session : Session
    user_id : int
        The annotator.
    qc_round : QcRound
        The decided round the items are from.
    items : list of DisputedItem
        From :func:`round_items`.

    Returns
    -------
    list of DisputedItem
        New items, in the same order.
    """
    answers = _answers(session, user_id, [i.assignment_id for i in items], decision_time(qc_round))
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
