"""Background jobs: a row per long operation, updated by the worker, read by the pages.

A job's state lives in the store, so a page that starts one stays
responsive and finds it again after a reload; the worker is a separate
process (``pooljudge job run ID``) that reports progress here in short write
transactions and beats a heartbeat, so a crashed worker is visible as stale.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from db.json_codec import from_json, to_json
from db.models import ImportRecord, Job, utcnow
from db.rowcount import rowcount
from db.vocab import JobStatus

STALE_AFTER = timedelta(seconds=120)
T = TypeVar("T")


@dataclass(frozen=True)
class JobInfo:
    id: int
    kind: str
    status: str
    params: dict[str, Any]
    done: int
    total: int | None
    message: str
    result: dict[str, Any] | None
    error: str | None
    created_at: datetime
    finished_at: datetime | None
    heartbeat_at: datetime | None

    @property
    def fraction(self) -> float | None:
        """Share done in [0, 1], or None while the total is unknown."""
        if not self.total:
            return None
        return min(1.0, self.done / self.total)

    @property
    def stale(self) -> bool:
        """A running job whose worker has not reported for a while (it probably died)."""
        if self.status != JobStatus.RUNNING or self.heartbeat_at is None:
            return False
        beat = self.heartbeat_at if self.heartbeat_at.tzinfo else self.heartbeat_at.replace(tzinfo=UTC)
        return utcnow() - beat > STALE_AFTER

    def params_as(self, cls: type[T]) -> T:
        """The job's parameters as ``cls`` (e.g. :class:`pooljudge.pool_params.PoolJobParams`), from the stored JSON."""
        return from_json(cls, self.params)

    def result_as(self, cls: type[T]) -> T | None:
        """The job's result as ``cls`` (e.g. :class:`pooljudge.pool_job.PoolResult`); None until it is done."""
        return None if self.result is None else from_json(cls, self.result)


def _info(job: Job) -> JobInfo:
    return JobInfo(
        id=job.id,
        kind=job.kind,
        status=job.status,
        params=job.params,
        done=job.done,
        total=job.total,
        message=job.message,
        result=job.result,
        error=job.error,
        created_at=job.created_at,
        finished_at=job.finished_at,
        heartbeat_at=job.heartbeat_at,
    )


def create_job(session: Session, kind: str, params: Any, *, collection_id: int | None = None) -> int:
    """Queue a job with ``params`` (a dataclass or a JSON object, stored as JSON: :func:`db.json_codec.to_json`)."""
    job = Job(kind=kind, params=to_json(params), collection_id=collection_id, status=JobStatus.QUEUED)
    session.add(job)
    session.flush()
    return job.id


def start_job(session: Session, job_id: int) -> JobInfo:
    """Mark a queued job as running (refuses a job that is not queued, so it runs once)."""
    now = utcnow()
    changed = rowcount(
        session,
        update(Job)
        .where(Job.id == job_id, Job.status == JobStatus.QUEUED)
        .values(status=JobStatus.RUNNING, started_at=now, heartbeat_at=now),
    )
    job = session.get(Job, job_id)
    if job is None:
        raise LookupError(f"no job {job_id}")
    if not changed:
        raise ValueError(f"job {job_id} is {job.status}, not queued")
    return _info(job)


def report_progress(
    session: Session,
    job_id: int,
    done: int,
    total: int | None = None,
    message: str | None = None,
    *,
    new_stage: bool = False,
) -> None:
    """Record a job's progress; ``total=None`` keeps the stored total, except at a ``new_stage``.

    A new stage whose total is not known yet must not show the previous stage's
    total (``step 0/32`` for a stage of 240 steps).
    """
    values: dict[str, Any] = {"done": done, "heartbeat_at": utcnow()}
    if total is not None or new_stage:
        values["total"] = total
    if message is not None:
        values["message"] = message
    session.execute(update(Job).where(Job.id == job_id).values(**values))


def finish_job(session: Session, job_id: int, result: Any) -> None:
    """Mark a job done with ``result`` (a dataclass or a JSON object, stored as JSON: :func:`db.json_codec.to_json`)."""
    session.execute(
        update(Job)
        .where(Job.id == job_id)
        .values(
            status=JobStatus.DONE,
            result=to_json(result),
            message="finished",
            finished_at=utcnow(),
            heartbeat_at=utcnow(),
        )
    )


def fail_job(session: Session, job_id: int, error: str) -> None:
    session.execute(
        update(Job).where(Job.id == job_id).values(status=JobStatus.FAILED, error=error, finished_at=utcnow())
    )


def get_job(session: Session, job_id: int) -> JobInfo:
    job = session.get(Job, job_id)
    if job is None:
        raise LookupError(f"no job {job_id}")
    return _info(job)


def list_jobs(
    session: Session, *, kind: str | None = None, collection_id: int | None = None, limit: int = 20
) -> list[JobInfo]:
    """Newest first."""
    query = select(Job).order_by(Job.created_at.desc(), Job.id.desc()).limit(limit)
    if kind is not None:
        query = query.where(Job.kind == kind)
    if collection_id is not None:
        query = query.where(Job.collection_id == collection_id)
    return [_info(j) for j in session.scalars(query)]


def relabel_import_source(session: Session, old: str, new: str) -> int:
    """Rename the source of import records read from ``old`` (an upload's removed temp path) to ``new``."""
    return rowcount(session, update(ImportRecord).where(ImportRecord.source == old).values(source=new))
