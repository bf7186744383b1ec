"""A collection's labels as training data (:class:`core.training.data.LabelledData`).

The trainers in :mod:`core.training` know nothing of the store: this module
reads the queries, the passage texts (with the same document context the
retrievers index, :func:`core.context.contextualise`) and the graded labels
of one collection.  The candidate lists (hard negatives) come from a run and
are added by the ``train`` job (:mod:`pooljudge.training`).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.context import check_context_mode, contextualise
from core.training.data import LabelledData
from core.types import Qrels
from db.models import QrelsVersion
from db.queries import (
    READY,
    NotFound,
    check_relevance_level,
    collection_id,
    iter_passages,
    iter_queries,
    relevance_level,
    stored_qrels,
)
from db.resolution import live_qrels

FINAL = "final"
"""``labels`` value meaning the live final labels of the annotation (:func:`db.resolution.live_qrels`)."""

__all__ = ["FINAL", "labelled_data", "resolve_labels"]


def resolve_labels(session: Session, collection: str, labels: str | None = None) -> tuple[str, Qrels]:
    """The labels to train on and what they are: ``(FINAL or a qrels version name, qrels)``.

    Parameters
    ----------
    labels : str, optional
        ``"final"``: the live final labels of the annotation (excluded pairs left
        out); a qrels version name: that version (archived ones too, by name);
        None: the final labels when there are any, else the newest shown qrels
        version.  (A version literally named ``final`` is reached as the
        default's fallback only.)

    Raises
    ------
    NotFound
        ``labels`` names no qrels version of the collection (the message names the argument and the versions).
    ValueError
        The chosen labels are empty.
    """
    cid = collection_id(session, collection)
    if labels == FINAL or labels is None:
        qrels = live_qrels(session, collection)
        if qrels or labels == FINAL:
            if not qrels:
                raise ValueError(
                    f"labels: collection {collection!r} has no final labels yet (annotate and resolve "
                    "some pairs, or train on a qrels version)"
                )
            return FINAL, qrels
    versions = list(
        session.execute(
            select(QrelsVersion.name, QrelsVersion.archived_at)
            .where(QrelsVersion.collection_id == cid, QrelsVersion.status == READY)
            .order_by(QrelsVersion.created_at.desc(), QrelsVersion.id.desc())
        )
    )
    if labels is None:
        shown = [name for name, archived in versions if archived is None]
        if not shown:
            raise ValueError(f"labels: collection {collection!r} has neither final labels nor a qrels version")
        labels = shown[0]
    elif labels not in {name for name, _ in versions}:
        known = ", ".join(repr(name) for name, _ in reversed(versions)) or "none"
        raise NotFound(
            f"labels: no qrels version named {labels!r} in collection {collection!r} "
            f"(use 'final' for the final labels; versions: {known})"
        )
    qrels = stored_qrels(session, collection, labels)
    if not qrels:
        raise ValueError(f"labels: qrels version {labels!r} of collection {collection!r} is empty")
    return labels, qrels


def labelled_data(
    session: Session,
    collection: str,
    *,
    labels: str | None = None,
    context: str = "title",
    level: int | None = None,
) -> tuple[LabelledData, dict[str, str]]:
    """Every query, passage text and graded label of ``collection``, and each query's split.

    Parameters
    ----------
    labels : str, optional
        Which labels (:func:`resolve_labels`): ``"final"``, a qrels version name, or None
        (the final labels if any, else the newest version).
    context : {"title", "keyphrases", "title+keyphrases", "none"}
        The document context prepended to passage texts, as the retrievers' ``context``
        option (:func:`core.context.contextualise`; default ``"title"``).
    level : int, optional
        A passage is relevant when its grade is ``>= level``; default the collection's
        relevance level (:func:`db.queries.relevance_level`).

    Returns
    -------
    (LabelledData, dict)
        The data without candidates (the job adds them from a run) and ``{query_id: split}``.
        Labels of queries or passages the store lacks are kept in ``qrels``;
        :meth:`LabelledData.positives` skips passages without a text.
    """
    check_context_mode(context)
    level = relevance_level(session, collection) if level is None else check_relevance_level(level, "level")
    _name, qrels = resolve_labels(session, collection, labels)
    queries: dict[str, str] = {}
    splits: dict[str, str] = {}
    for q in iter_queries(session, collection):
        queries[q.id] = q.text
        splits[q.id] = q.split
    passages = list(iter_passages(session, collection))
    texts = contextualise(passages, context)
    data = LabelledData(queries=queries, passages={p.id: t for p, t in zip(passages, texts)}, qrels=qrels, level=level)
    return data, splits
