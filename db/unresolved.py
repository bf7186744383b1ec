"""Judged pairs without a final label: what freezing and exporting qrels leave out, and why.

A pair that annotators judged but that has no final label is not in the
qrels (T2Ranking's rules, :mod:`core.resolution`).  Freezing and exporting
say how many such pairs there are, by reason, instead of leaving them out
silently:

``waiting for a 4th label``
    three labels, all different: a fourth annotator must label it;
``excluded after a 4th differing label``
    four labels without a majority (the stored reason lists them);
``flagged``
    an annotator flagged it and it has no final label yet;
``waiting for more labels``
    fewer labels than required so far;
``resolved after this version``
    (a frozen version only) it has a final label now, given after the freeze.

:func:`median_labels` is the explicit fallback of ``pooljudge export qrels
--unresolved-median``: the lower median of the labels given so far, written
to a separate qrels file so that nobody mistakes it for a final label.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import ColumnElement, exists, select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.resolution import exclusion_reason
from core.types import Qrels
from db.access import LABELLING
from db.models import FinalLabel, Judgment, PassageRecord, QueryRecord
from db.queries import collection_id
from db.review import label_log
from db.vocab import FinalLabelMethod, JudgmentAction

WAITING_FOURTH = "waiting for a 4th label"
EXCLUDED = "excluded after a 4th differing label"
FLAGGED = "flagged"
WAITING_LABELS = "waiting for more labels"
RESOLVED_LATER = "resolved after this version"
REASONS = (WAITING_FOURTH, EXCLUDED, FLAGGED, WAITING_LABELS, RESOLVED_LATER)
"""Every reason, in the order reports list them."""


@dataclass(frozen=True)
class UnresolvedPair:
    """A judged pair left out of the qrels.

    Attributes
    ----------
    query_id, doc_id : str
        External ids.
    reason : str
        One of :data:`REASONS`.
    labels : dict of str to int
        Each annotator's standing label.
    detail : str
        The stored reason of an exclusion (generated from the labels when it was stored empty).
    """

    query_id: str
    doc_id: str
    reason: str
    labels: dict[str, int] = field(default_factory=dict)
    detail: str = ""


def _resolved() -> ColumnElement[bool]:
    """SQL condition on ``Judgment``: its pair has a final grade (only the other pairs' logs are read)."""
    return exists().where(
        FinalLabel.query_id == Judgment.query_id,
        FinalLabel.passage_id == Judgment.passage_id,
        FinalLabel.grade.is_not(None),
        FinalLabel.method != FinalLabelMethod.EXCLUDED,
    )


def _log(session: Session, cid: int) -> tuple[dict[tuple[str, str], dict[str, int]], set[tuple[str, str]]]:
    """``(standing labels per judged pair without a final grade, pairs some annotator flagged and left unlabelled)``."""
    rows = label_log(session, cid, LABELLING, ~_resolved()).all()
    labels = current_labels(Event((q, d), user, action, grade) for q, d, user, action, grade in rows)
    latest: dict[tuple[tuple[str, str], str], str] = {}
    for q, d, user, action, _grade in rows:
        if action in (JudgmentAction.LABEL, JudgmentAction.FLAG):
            latest[((q, d), user)] = action
    judged: dict[tuple[str, str], dict[str, int]] = {(q, d): {} for q, d, _u, _a, _g in rows}
    for pair, by_user in labels.items():
        judged[pair] = dict(sorted(by_user.items()))  # type: ignore[index]  # pairs are (str, str) here
    flagged = {
        pair for (pair, user), action in latest.items() if action == JudgmentAction.FLAG and user not in judged[pair]
    }
    return judged, flagged


def _finals(session: Session, cid: int, *, excluded_only: bool) -> dict[tuple[str, str], tuple[str, int | None, str]]:
    """``(method, grade, reason)`` of the collection's final labels (only its exclusions: ``excluded_only``), by pair."""
    query = (
        select(QueryRecord.ext_id, PassageRecord.ext_id, FinalLabel.method, FinalLabel.grade, FinalLabel.reason)
        .join(QueryRecord, QueryRecord.id == FinalLabel.query_id)
        .join(PassageRecord, PassageRecord.id == FinalLabel.passage_id)
        .where(FinalLabel.collection_id == cid)
    )
    if excluded_only:
        query = query.where(FinalLabel.method == FinalLabelMethod.EXCLUDED)
    return {(q, d): (method, grade, reason or "") for q, d, method, grade, reason in session.execute(query)}


def _reason(
    labels: dict[str, int], final: tuple[str, int | None, str] | None, flagged: bool, required: int
) -> tuple[str, str]:
    """``(reason, detail)`` of one judged pair missing from the qrels."""
    if final is not None and final[0] == "excluded":
        return EXCLUDED, final[2] or exclusion_reason(Counter(labels.values()))
    if flagged:
        return FLAGGED, ""
    if len(labels) >= required:
        return WAITING_FOURTH, ""
    return WAITING_LABELS, ""


def unresolved_pairs(
    session: Session, collection: str, qrels: Qrels | None = None, *, required: int = 3
) -> list[UnresolvedPair]:
    """The collection's judged pairs missing from ``qrels`` (default: its live final labels), by query then doc.

    Parameters
    ----------
    session : Session
        An open session.
    collection : str
        The collection's name.
    qrels : Qrels, optional
        What is frozen or exported (a frozen version); ``None``: the live final labels.
    required : int, default 3
        Independent labels a pair needs (T2Ranking: 3).

    Returns
    -------
    list of UnresolvedPair
    """
    cid = collection_id(session, collection)
    judged, flagged = _log(session, cid)
    finals = _finals(session, cid, excluded_only=qrels is None)  # a version also needs the pairs decided since
    out = []
    for (q, d), labels in judged.items():
        if qrels is None or d not in qrels.get(q, {}):
            reason, detail = _reason(labels, finals.get((q, d)), (q, d) in flagged, required)
            out.append(UnresolvedPair(q, d, reason, labels, detail))
    if qrels is not None:  # pairs decided since the version was frozen (imported final labels were never judged)
        out += [
            UnresolvedPair(q, d, RESOLVED_LATER)
            for (q, d), (method, grade, _r) in finals.items()
            if grade is not None and method not in ("excluded", "imported") and d not in qrels.get(q, {})
        ]
    return sorted(out, key=lambda p: (p.query_id, p.doc_id))


def counts_by_reason(pairs: list[UnresolvedPair]) -> dict[str, int]:
    """How many pairs have each reason, in :data:`REASONS` order (reasons with none left out)."""
    counts = Counter(p.reason for p in pairs)
    return {reason: counts[reason] for reason in REASONS if counts[reason]}


def summary(pairs: list[UnresolvedPair], kept: int) -> str:
    """One sentence for the CLI and the pages: how many pairs were kept and which were left out, by reason."""
    if not pairs:
        return f"{kept} pairs with a final label; every judged pair has one"
    reasons = ", ".join(f"{n} {reason}" for reason, n in counts_by_reason(pairs).items())
    return (
        f"{kept} pairs with a final label (only resolved pairs are exported: the default); "
        f"{len(pairs)} judged pair{'s' * (len(pairs) != 1)} without one left out: {reasons}"
    )


def median_labels(pairs: list[UnresolvedPair]) -> Qrels:
    """The lower median of each left-out pair's standing labels (pairs without a label are skipped).

    The lower median is a label someone gave; for a majority it is the majority label.
    """
    qrels: Qrels = {}
    for pair in pairs:
        if pair.labels:
            qrels.setdefault(pair.query_id, {})[pair.doc_id] = int(statistics.median_low(pair.labels.values()))
    return qrels


def as_rows(pairs: list[UnresolvedPair]) -> list[Mapping[str, str]]:
    """The pairs as table rows (query id, doc id, reason, labels, detail) for a page or a TSV listing."""
    return [
        {
            "query id": p.query_id,
            "doc id": p.doc_id,
            "reason": p.reason,
            "labels": ", ".join(f"{who}: {g}" for who, g in p.labels.items()),
            "detail": p.detail,
        }
        for p in pairs
    ]
