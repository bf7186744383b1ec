"""The run and pool names a collection holds, and their state: what a job reads before it stores a run or a pool.

A run is ``ready`` (visible) or ``importing``: being written by an import or a pooling job, or left by
a crashed one until :func:`db.importer.drop_stale_imports` removes it.  Either way its name is taken.
The CLI, the Pooling and Models pages and the jobs refuse a taken name from what these functions return.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from db.models import Pool, RunRecord
from db.queries import READY, collection_id


@dataclass(frozen=True)
class RunName:
    """A run name taken in a collection, and the state of its run."""

    name: str
    status: str
    """``"ready"`` (visible) or ``"importing"`` (being written, or a crashed write's leftover)."""

    @property
    def ready(self) -> bool:
        """True when the run is visible: it can be pooled, evaluated or used as candidates."""
        return self.status == READY


@dataclass(frozen=True)
class PoolName:
    """A pool name taken in a collection."""

    name: str
    archived: bool
    """True when the pool is archived (hidden, :mod:`db.archive`): restoring it shows it again."""


def run_names(session: Session, collection: str) -> dict[str, RunName]:
    """Every run name taken in ``collection``, ready or not, by name.

    Parameters
    ----------
    session : Session
        An open session.
    collection : str
        A ready collection's name (``NotFound`` otherwise).

    Returns
    -------
    dict of str to RunName
    """
    cid = collection_id(session, collection)
    rows = session.execute(select(RunRecord.name, RunRecord.status).where(RunRecord.collection_id == cid))
    return {name: RunName(name, status) for name, status in rows}


def run_name(session: Session, collection: str, name: str) -> RunName | None:
    """The run named ``name`` in ``collection`` (ready or not); ``None`` when the name is free.

    Parameters
    ----------
    session : Session
        An open session.
    collection : str
        A ready collection's name (``NotFound`` otherwise).
    name : str
        The run name.

    Returns
    -------
    RunName or None
    """
    cid = collection_id(session, collection)
    status = session.scalar(select(RunRecord.status).where(RunRecord.collection_id == cid, RunRecord.name == name))
    return None if status is None else RunName(name, status)


def pool_name(session: Session, collection: str, name: str) -> PoolName | None:
    """The pool named ``name`` in ``collection``, archived or not; ``None`` when the name is free.

    Parameters
    ----------
    session : Session
        An open session.
    collection : str
        A ready collection's name (``NotFound`` otherwise).
    name : str
        The pool name.

    Returns
    -------
    PoolName or None
    """
    cid = collection_id(session, collection)
    found = session.execute(select(Pool.archived_at).where(Pool.collection_id == cid, Pool.name == name)).first()
    return None if found is None else PoolName(name, found.archived_at is not None)
