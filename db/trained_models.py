"""The registry of trained models: which re-rankers and dense encoders were trained on a collection, and where they are.

A model's weights are a Hugging Face folder on disk (``path``); its row here
(migration 0008) gives it a name unique within its collection, and keeps how
it was trained (``params``: the :class:`core.training.data.TrainConfig` and
the job's parameters), its training curve (``history``) and its best held-out
evaluation (``best``).  The ``train`` job (:mod:`pooljudge.training`) writes
rows; the CLI (``pooljudge models``), the Models page and
``rerank:model=NAME`` (:func:`pooljudge.training.resolve_model`) read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.names import check_name
from db.models import MODEL_KINDS, Collection, TrainedModel
from db.queries import READY, NotFound, collection_id, known_names

__all__ = [
    "MODEL_KINDS",
    "TrainedModelInfo",
    "check_model_kind",
    "check_new_model_name",
    "get_model",
    "list_models",
    "register_model",
]


@dataclass(frozen=True)
class TrainedModelInfo:
    """One registered model (a row of ``trained_models``) with its collection's name."""

    id: int
    collection: str
    name: str
    kind: str
    path: str
    base_model: str | None
    params: dict[str, Any]
    history: list[dict[str, Any]]
    best: dict[str, Any]
    created_at: datetime
    created_by: str | None
    job_id: int | None
    archived_at: datetime | None = None

    @property
    def best_eval(self) -> dict[str, float]:
        """The best held-out measures (``{"nDCG@10": ..., "MRR@10": ...}``), empty when there were none."""
        return dict((self.best or {}).get("eval") or {})


def check_model_kind(kind: object) -> str:
    """``kind`` if it is one of :data:`db.models.MODEL_KINDS`, else a ``ValueError`` naming them."""
    if kind not in MODEL_KINDS:
        raise ValueError(f"model kind must be one of {', '.join(MODEL_KINDS)}, got {kind!r}")
    return kind  # type: ignore[return-value]


def check_new_model_name(session: Session, collection: str, name: object) -> str:
    """``name`` when it is a valid model name not yet taken in ``collection`` (archived models keep theirs)."""
    check_name(name, "model name")
    cid = collection_id(session, collection)
    taken = session.execute(
        select(TrainedModel.id, TrainedModel.archived_at).where(
            TrainedModel.collection_id == cid, TrainedModel.name == name
        )
    ).first()
    if taken is not None:
        hidden = " (archived)" if taken.archived_at is not None else ""
        raise ValueError(
            f"a model named {name!r} already exists in collection {collection!r}{hidden}; choose another name"
        )
    return name  # type: ignore[return-value]


def register_model(
    session: Session,
    collection: str,
    *,
    name: str,
    kind: str,
    path: str,
    base_model: str | None,
    params: dict[str, Any],
    history: list[dict[str, Any]],
    best: dict[str, Any],
    created_by: str | None = None,
    job_id: int | None = None,
) -> int:
    """Record a trained model of ``collection``; returns its id.

    Parameters
    ----------
    name : str
        Unique within the collection (:func:`core.names.check_name`); a taken name is refused
        with a ``ValueError`` naming the collection.
    kind : {"cross-encoder", "dual-encoder", "rocketqav2"}
    path : str
        The saved Hugging Face folder.
    base_model : str or None
        What training started from (a folder; None = the packaged all-MiniLM-L6-v2).
    params, history, best : JSON-ready
        How it was trained, the evaluations along the way, the best one
        (:class:`core.training.data.TrainResult`).
    created_by : str, optional
        Who asked (a username, or ``"<system user> (cli)"``).
    job_id : int, optional
        The ``train`` job that produced it.
    """
    check_model_kind(kind)
    check_new_model_name(session, collection, name)
    row = TrainedModel(
        collection_id=collection_id(session, collection),
        name=name,
        kind=kind,
        path=str(path),
        base_model=None if base_model is None else str(base_model),
        params=params,
        history=history,
        best=best,
        created_by=created_by,
        job_id=job_id,
    )
    session.add(row)
    session.flush()
    return row.id


def _info(row: TrainedModel, collection: str) -> TrainedModelInfo:
    return TrainedModelInfo(
        id=row.id,
        collection=collection,
        name=row.name,
        kind=row.kind,
        path=row.path,
        base_model=row.base_model,
        params=row.params or {},
        history=row.history or [],
        best=row.best or {},
        created_at=row.created_at,
        created_by=row.created_by,
        job_id=row.job_id,
        archived_at=row.archived_at,
    )


def list_models(
    session: Session, collection: str | None = None, *, include_archived: bool = False
) -> list[TrainedModelInfo]:
    """The registered models of ``collection`` (None: of every shown collection), by collection then name.

    Archived models are left out unless ``include_archived``.
    """
    query = (
        select(TrainedModel, Collection.name)
        .join(Collection, Collection.id == TrainedModel.collection_id)
        .where(Collection.status == READY)
        .order_by(Collection.name, TrainedModel.name)
    )
    if collection is not None:
        query = query.where(TrainedModel.collection_id == collection_id(session, collection))
    else:
        query = query.where(Collection.archived_at.is_(None))
    if not include_archived:
        query = query.where(TrainedModel.archived_at.is_(None))
    return [_info(row, name) for row, name in session.execute(query)]


def get_model(session: Session, collection: str, name: str) -> TrainedModelInfo:
    """The model called ``name`` in ``collection`` (archived or not); ``NotFound`` names the known ones."""
    cid = collection_id(session, collection)
    row = session.scalar(select(TrainedModel).where(TrainedModel.collection_id == cid, TrainedModel.name == name))
    if row is None:
        known = known_names(
            session, select(TrainedModel.name).where(TrainedModel.collection_id == cid).order_by(TrainedModel.name)
        )
        raise NotFound(f"no model named {name!r} in collection {collection!r} (models: {known})")
    return _info(row, collection)
