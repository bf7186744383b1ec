"""Assignments in the store: deal the pairs of a pool to annotators in packages, by their current loads.

Every write function runs in the caller's write transaction; the plan itself is
:func:`core.assignment.plan_assignments`, this module only reads what it needs and stores what it decides.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from core.assignment import Task, plan_assignments
from core.scale import SCALES
from db.access import (
    ADMIN_ROLES,
    LABELLING,
    require_account,
)
from db.models import (
    Assignment,
    Package,
    PassageRecord,
    Pool,
    PoolEntry,
    QueryRecord,
    User,
)
from db.queries import NotFound, collection_id
from db.vocab import Purpose, Role

# --------------------------------------------------------------------------- assignment


@dataclass(frozen=True)
class AssignmentSummary:
    pairs: int
    tasks: int
    packages: list[str]
    per_annotator: dict[str, int]


def _annotators(session: Session, names: Sequence[str] | None) -> dict[str, int]:
    query = select(User.username, User.id).where(User.active, User.role == Role.ANNOTATOR)
    if names is not None:
        query = query.where(User.username.in_(list(names)))
    found = dict(session.execute(query).all())
    if names is not None:
        missing = sorted(set(names) - found.keys())
        if missing:
            raise NotFound(f"not active annotators: {', '.join(missing)}")
    return found


def annotator_loads(session: Session, usernames: Sequence[str] | None = None) -> dict[str, int]:
    """Labelling assignments held per username (the load the plans balance).

    ``usernames``: count only these accounts' (a 4th annotator is chosen among a few candidates, inside the
    labelling write: their assignments are counted through the per-user index, not every assignment).
    """
    query = (
        select(User.username, func.count(Assignment.id))
        .select_from(User)
        .join(Assignment, Assignment.user_id == User.id)
        .where(Assignment.purpose.in_(LABELLING))
        .group_by(User.username)
    )
    if usernames is not None:
        query = query.where(User.username.in_(usernames))
    return dict(session.execute(query).all())


PairIds = tuple[int, int, int]
"""``(pool entry id, query row id, passage row id)`` of a pool's selected pair."""


def _pool_on_scale(session: Session, cid: int, collection: str, pool: str, scale: str) -> Pool:
    """The pool, its scale fixed to ``scale`` (refused when its pairs were assigned on another scale)."""
    pool_row = session.scalar(select(Pool).where(Pool.collection_id == cid, Pool.name == pool))
    if pool_row is None:
        raise NotFound(f"no pool named {pool!r} in collection {collection!r}")
    current = (pool_row.params or {}).get("scale")
    if current is not None and current != scale:
        raise ValueError(f"pool {pool!r} is annotated on the {current} scale, not {scale}")
    pool_row.params = {**(pool_row.params or {}), "scale": scale}
    return pool_row


def _selected_pairs(session: Session, pool_id: int) -> dict[tuple[str, str], PairIds]:
    """``{(qid, docid): (entry id, query row id, passage row id)}`` of the pool's selected entries, in entry order."""
    entries = session.execute(
        select(PoolEntry.id, QueryRecord.ext_id, PassageRecord.ext_id, PoolEntry.query_id, PoolEntry.passage_id)
        .join(QueryRecord, QueryRecord.id == PoolEntry.query_id)
        .join(PassageRecord, PassageRecord.id == PoolEntry.passage_id)
        .where(PoolEntry.pool_id == pool_id, PoolEntry.selected)
        .order_by(PoolEntry.id)
    ).all()
    return {(q, d): (eid, qi, pi) for eid, q, d, qi, pi in entries}


def _pair_holders(session: Session, cid: int) -> dict[tuple[str, str], set[str]]:
    """Who already holds a labelling assignment on each pair of the collection (from any pool)."""
    existing: dict[tuple[str, str], set[str]] = {}
    for q, d, user in session.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id, User.username)
        .select_from(Assignment)
        .join(QueryRecord, QueryRecord.id == Assignment.query_id)
        .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
        .join(User, User.id == Assignment.user_id)
        .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(LABELLING))
    ):
        existing.setdefault((q, d), set()).add(user)
    return existing


def _package_counts(session: Session) -> dict[str, int]:
    """How many packages each user has (new package names continue their numbering)."""
    return dict(
        session.execute(
            select(User.username, func.count(Package.id))
            .select_from(User)
            .join(Package, Package.user_id == User.id)
            .group_by(User.username)
        ).all()
    )


def _store_tasks(
    session: Session, tasks: Sequence[Task], ids: dict[tuple[str, str], PairIds], users: dict[str, int], pool_id: int
) -> dict[str, int]:
    """Create the planned packages (open) and insert their assignments; returns ``{package name: id}``."""
    package_ids: dict[str, int] = {}
    for task in tasks:
        if task.package not in package_ids:
            row = Package(name=task.package, user_id=users[task.annotator], pool_id=pool_id, status="open")
            session.add(row)
            session.flush()
            package_ids[task.package] = row.id
    if tasks:
        session.execute(
            insert(Assignment),
            [
                {
                    "pool_entry_id": ids[t.pair][0],
                    "query_id": ids[t.pair][1],
                    "passage_id": ids[t.pair][2],
                    "user_id": users[t.annotator],
                    "package": t.package,
                    "package_id": package_ids[t.package],
                    "order_index": t.order,
                    "seed": t.seed,
                    "purpose": Purpose.LABEL,
                }
                for t in tasks
            ],
        )
    return package_ids


def create_assignments(
    session: Session,
    collection: str,
    pool: str,
    *,
    annotators: Sequence[str] | None = None,
    per_pair: int = 3,
    seed: int = 0,
    package_size: int = 1000,
    group_by_query: bool = False,
    scale: str = "graded",
    by: int | None = None,
) -> AssignmentSummary:
    """Give every selected pair of a pool to ``per_pair`` distinct annotators, in shuffled packages.

    Pairs that already have annotators (from this or another pool) keep them and only get the
    missing ones, so new pools and new annotators can be added at any time without touching
    finished work.  ``scale`` is ``"graded"`` (0-3) or ``"binary"`` (0/1, its own keys on the
    annotation page); it is fixed for a pool once its pairs are assigned.  ``by``: the acting
    account when an app user asks (checked active admin in this transaction); None from the CLI.
    """
    if by is not None:
        require_account(session, by, ADMIN_ROLES, action="assign work")
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    cid = collection_id(session, collection)
    pool_row = _pool_on_scale(session, cid, collection, pool, scale)
    users = _annotators(session, annotators)
    ids = _selected_pairs(session, pool_row.id)
    existing = _pair_holders(session, cid)
    packages = _package_counts(session)
    tasks = plan_assignments(
        list(ids),
        sorted(users),
        per_pair=per_pair,
        existing={k: v for k, v in existing.items() if k in ids},
        load=annotator_loads(session),
        existing_packages=packages,
        seed=seed,
        package_size=package_size,
        group_by_query=group_by_query,
    )
    package_ids = _store_tasks(session, tasks, ids, users, pool_row.id)
    per_annotator = Counter(t.annotator for t in tasks)
    return AssignmentSummary(
        pairs=len(ids), tasks=len(tasks), packages=sorted(package_ids), per_annotator=dict(per_annotator)
    )
