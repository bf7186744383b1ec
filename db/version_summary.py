"""What each qrels version of a collection is: where it came from and how many judgments it holds.

The pages name the version every number comes from (a freeze must never
silently stand in for an imported version), so they need more than the names that
:class:`db.queries.CollectionInfo` carries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from db.models import QrelsEntry, QrelsVersion
from db.queries import READY, collection_id


@dataclass(frozen=True)
class VersionSummary:
    name: str
    source: str
    """``"import"`` (read from a qrels file) or ``"frozen"`` (a snapshot of the final labels)."""
    judgments: int
    created_at: datetime


def version_summaries(session: Session, collection: str) -> dict[str, VersionSummary]:
    """The collection's ready qrels versions by name, oldest first (as ``CollectionInfo.qrels_versions``)."""
    cid = collection_id(session, collection)
    counts = (
        select(QrelsEntry.version_id, func.count().label("n"))
        .where(QrelsEntry.version_id.in_(select(QrelsVersion.id).where(QrelsVersion.collection_id == cid)))
        .group_by(QrelsEntry.version_id)
        .subquery()
    )
    rows = session.execute(
        select(QrelsVersion.name, QrelsVersion.source, func.coalesce(counts.c.n, 0), QrelsVersion.created_at)
        .outerjoin(counts, counts.c.version_id == QrelsVersion.id)
        .where(QrelsVersion.collection_id == cid, QrelsVersion.status == READY)
        .order_by(QrelsVersion.created_at, QrelsVersion.id)
    ).all()
    return {name: VersionSummary(name, source, int(n), created) for name, source, n, created in rows}
