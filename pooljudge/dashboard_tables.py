"""The Review and Admin pages' slow tables as plain functions of (store URL, collection, table name).

They run in the background worker of :mod:`pooljudge.ui.background` (a separate process by default, so
their pure-Python work never holds the server's GIL while a page is drawn); each opens the store from
its URL once per worker process.  Everything returned is plain data (dataclasses, dicts), pickled back.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module
from typing import Any

from db.engine import Store

REVIEW_TABLES = {
    "queue": ("db.review", "adjudication_queue"),
    "excluded": ("db.review", "excluded_pairs"),
    "pairs": ("db.review", "reviewable_pairs"),
    "throughput": ("db.review_progress", "throughput"),
    "flagged": ("db.review_progress", "flagged"),
    "distribution": ("db.review_progress", "final_label_distribution"),
    "table": ("db.review", "review_table"),
    "packages": ("db.review_progress", "package_overview"),
}
"""Review page table name -> the module and function (``session, collection``) that computes it."""


@cache
def _store(url: str) -> Store:
    return Store(url, upgrade=False)  # the app upgraded the schema when it opened the store


def review_table(url: str, collection: str, name: str) -> Any:
    """The Review page's table ``name`` of ``collection``: a :data:`REVIEW_TABLES` name, ``"rounds"`` (its QC
    rounds) or ``"agreement"`` (:func:`core.agreement.agreement_report` of the standing labels, None without any)."""
    from db import review, review_progress

    store = _store(url)
    if name == "agreement":
        from core.agreement import agreement_report, from_label_map
        from core.scale import GRADES

        with store.read() as session:
            labels = dict(review.standing_labels(session, collection).items())
        judgments = from_label_map(labels)  # type: ignore[arg-type]  # pair keys are hashable tuples
        return agreement_report(judgments, categories=GRADES) if judgments else None
    with store.read() as session:
        if name == "rounds":
            return review_progress.qc_history(session, collection=collection)
        module, function = REVIEW_TABLES[name]
        return getattr(import_module(module), function)(session, collection)


def admin_packages(url: str) -> list:
    """Every package with its progress, store-wide (the Admin page's QC tab; keyed by :func:`db.markers.package_marker`)."""
    from db.review_progress import package_overview

    with _store(url).read() as session:
        return package_overview(session)


def admin_qc_tables(url: str) -> tuple[list, list]:
    """Every QC round and decided round's disagreements, store-wide (keyed by :func:`db.markers.qc_marker`)."""
    from db.review_progress import qc_history
    from db.rework import qc_round_tables

    with _store(url).read() as session:
        return qc_history(session), qc_round_tables(session)


def admin_qrels_state(url: str, collection: str) -> tuple[int, list]:
    """``(final labels now, judged pairs without one)`` of ``collection`` (the Admin page's Qrels tab; keyed by
    :func:`db.markers.qrels_marker`): both read every judgment of the collection."""
    from db import unresolved
    from db.resolution import live_qrels

    with _store(url).read() as session:
        kept = sum(len(docs) for docs in live_qrels(session, collection).values())
        return kept, unresolved.unresolved_pairs(session, collection)
