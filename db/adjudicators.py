"""Who may take a split pair's 4th label: the pair's pools' adjudicator lists, else their package owners.

:mod:`db.resolution` asks when a label splits a pair three ways (inside the labelling write that split it);
:mod:`db.adjudication` asks when a reviewer hands the 4th label to someone else.  The pure rule is
:func:`core.assignment.adjudicator_candidates`; this module reads what it needs.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.assignment import adjudicator_candidates
from db.access import LABEL_ROLES, LABELLING
from db.models import Assignment, Package, PoolAdjudicator, PoolEntry, User
from db.vocab import Purpose


def _pair_pools(session: Session, query_id: int, passage_id: int) -> list[int]:
    """The pools the pair's labelling assignments came from."""
    return list(
        session.scalars(
            select(PoolEntry.pool_id)
            .join(Assignment, Assignment.pool_entry_id == PoolEntry.id)
            .where(
                Assignment.query_id == query_id, Assignment.passage_id == passage_id, Assignment.purpose.in_(LABELLING)
            )
            .distinct()
        )
    )


def eligible_adjudicators(session: Session, query_id: int, passage_id: int) -> list[str]:
    """Accounts that may take this pair's 4th label now, sorted (empty: the pair waits for a reviewer).

    The pair's pools' adjudicator lists when any is set, else the owners of those pools' packages;
    only active accounts whose role may label adjudication items; never anyone who already holds an
    assignment on the pair (its labellers, the current 4th, a QC reviewer of it).  A handful of
    indexed reads: this runs inside the labelling write that splits the pair.

    Parameters
    ----------
    session : Session
    query_id, passage_id : int
        The pair's row ids.

    Returns
    -------
    list of str
        Usernames.
    """
    pools = _pair_pools(session, query_id, passage_id)
    if not pools:
        return []
    listed = set(
        session.scalars(
            select(User.username)
            .join(PoolAdjudicator, PoolAdjudicator.user_id == User.id)
            .where(PoolAdjudicator.pool_id.in_(pools))
        )
    )
    members = set(
        session.scalars(
            select(User.username).join(Package, Package.user_id == User.id).where(Package.pool_id.in_(pools)).distinct()
        )
    )
    taken = set(
        session.scalars(
            select(User.username)
            .join(Assignment, Assignment.user_id == User.id)
            .where(Assignment.query_id == query_id, Assignment.passage_id == passage_id)
        )
    )
    wanted = sorted(listed | members)
    active = (
        set(
            session.scalars(
                select(User.username).where(
                    User.username.in_(wanted), User.active, User.role.in_(LABEL_ROLES[Purpose.FOURTH])
                )
            )
        )
        if wanted
        else set()
    )
    return adjudicator_candidates(members, listed, taken=taken, active=active)
