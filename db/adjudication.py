"""Adjudication you control: who may take a split pair's 4th label, per-pool adjudicator lists, reassigning, bulk actions.

A three-way split is adjudicated by someone from the pair's own pool (the
owners of the pool's packages), or by the accounts an admin listed for the
pool (table ``pool_adjudicators``; the list wins when set), never by an
annotator who only ever worked on another pool.  The pure rule is
:func:`core.assignment.adjudicator_candidates`; this module reads what it
needs and stores what an admin decides.

Every write function runs in the caller's write transaction and re-checks the
acting account there (active admin, or active reviewer/admin for overrides),
as :func:`db.access.require_account` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, insert, select
from sqlalchemy.orm import Session

from core.assignment import annotator_seed
from core.resolution import Resolution, resolve
from core.scale import SCALES
from db.access import ADMIN_ROLES, LABEL_ROLES, REVIEW_ROLES, require_account
from db.adjudicators import eligible_adjudicators
from db.models import Assignment, LabelOverride, PassageRecord, Pool, PoolAdjudicator, QueryRecord, User
from db.queries import NotFound, collection_id
from db.resolution import add_fourth, override_label, pair_labels, pair_scale
from db.vocab import Purpose

__all__ = [
    "assign_adjudication",
    "assign_adjudications",
    "eligible_adjudicators",
    "override_labels",
    "pool_adjudicators",
    "set_pool_adjudicators",
]

MAX_BULK = 5_000  # pairs per bulk action: one write transaction must stay short


def _pool_row(session: Session, collection: str, pool: str) -> Pool:
    cid = collection_id(session, collection)
    row = session.scalar(select(Pool).where(Pool.collection_id == cid, Pool.name == pool))
    if row is None:
        raise NotFound(f"no pool named {pool!r} in collection {collection!r}")
    return row


def pool_adjudicators(session: Session, collection: str, pool: str) -> list[str]:
    """The adjudicator list an admin set for a pool (sorted usernames; empty: the pool's annotators adjudicate)."""
    row = _pool_row(session, collection, pool)
    return list(
        session.scalars(
            select(User.username)
            .join(PoolAdjudicator, PoolAdjudicator.user_id == User.id)
            .where(PoolAdjudicator.pool_id == row.id)
            .order_by(User.username)
        )
    )


def set_pool_adjudicators(
    session: Session, collection: str, pool: str, usernames: Sequence[str], *, by: int | None = None
) -> list[str]:
    """Replace a pool's adjudicator list; an empty list clears it (the pool's annotators adjudicate again).

    Parameters
    ----------
    usernames : sequence of str
        Active accounts whose role may label adjudication items (annotator, reviewer or admin).
    by : int, optional
        The acting account when an app user asks (checked active admin in this transaction); None from the CLI.

    Returns
    -------
    list of str
        The new list, sorted.  Adjudications already given out keep their holder.

    Raises
    ------
    NotFound
        If the collection, the pool or an account does not exist.
    ValueError
        If ``usernames`` is a bare str or names an inactive account.
    """
    if by is not None:
        require_account(session, by, ADMIN_ROLES, action="choose adjudicators")
    if isinstance(usernames, str):
        raise ValueError("usernames must be a list of account names, not a str")
    row = _pool_row(session, collection, pool)
    names = sorted(set(usernames))
    users = (
        {
            name: (uid, active, role)
            for name, uid, active, role in session.execute(
                select(User.username, User.id, User.active, User.role).where(User.username.in_(names))
            )
        }
        if names
        else {}
    )
    missing = [n for n in names if n not in users]
    if missing:
        raise NotFound(f"no accounts named {', '.join(missing)}")
    unfit = [n for n in names if not users[n][1] or users[n][2] not in LABEL_ROLES[Purpose.FOURTH]]
    if unfit:
        raise ValueError(f"not active accounts that may adjudicate: {', '.join(unfit)}")
    session.execute(delete(PoolAdjudicator).where(PoolAdjudicator.pool_id == row.id))
    if names:
        session.execute(insert(PoolAdjudicator), [{"pool_id": row.id, "user_id": users[n][0]} for n in names])
    session.flush()
    return names


def _pair_name(session: Session, query_id: int, passage_id: int) -> str:
    qid = session.scalar(select(QueryRecord.ext_id).where(QueryRecord.id == query_id))
    docid = session.scalar(select(PassageRecord.ext_id).where(PassageRecord.id == passage_id))
    if qid is None or docid is None:
        raise NotFound(f"no pair with query row {query_id} and passage row {passage_id}")
    return f"{qid} / {docid}"


def _assign_one(session: Session, query_id: int, passage_id: int, username: str, *, seed: int = 0) -> str | None:
    """Give the pair's open adjudication to ``username``; returns the previous holder (None: newly created)."""
    name = _pair_name(session, query_id, passage_id)
    # FOR UPDATE: the holder's own label write locks the same row (db.labelling._own_assignment),
    # so a label and a reassignment never cross: one waits for the other and sees it
    fourth = session.scalar(
        select(Assignment)
        .where(
            Assignment.query_id == query_id, Assignment.passage_id == passage_id, Assignment.purpose == Purpose.FOURTH
        )
        .with_for_update()
    )
    if (
        session.scalar(
            select(LabelOverride.id)
            .where(LabelOverride.query_id == query_id, LabelOverride.passage_id == passage_id)
            .limit(1)
        )
        is not None
    ):
        raise ValueError(f"{name}: a reviewer has already decided this pair")
    labels = pair_labels(session, query_id, passage_id)
    state = resolve(list(labels.values()), levels=SCALES[pair_scale(session, query_id, passage_id)]).state
    if state != "needs_fourth":
        previous = None if fourth is None else session.get_one(User, fourth.user_id).username
        if previous is not None and previous in labels:
            raise ValueError(f"{name}: its adjudication is already labelled (by {previous})")
        raise ValueError(f"{name}: not waiting for adjudication (it is {state})")
    target = session.scalar(select(User).where(User.username == username))
    if target is None:
        raise NotFound(f"no account named {username!r}")
    eligible = eligible_adjudicators(session, query_id, passage_id)
    if username not in eligible:
        who = ", ".join(eligible) or "nobody"
        raise ValueError(f"{username} may not adjudicate {name} (eligible: {who})")
    if fourth is not None:
        previous = session.get_one(User, fourth.user_id).username
        # the row is kept (judgments of the previous holder, a skip or an undone label, point at it)
        fourth.user_id = target.id
        fourth.package = f"{username}-adjudication"
        fourth.seed = annotator_seed(seed, username)
        session.flush()
        return previous
    add_fourth(session, query_id, passage_id, target.id, username, seed)
    return None


def assign_adjudication(session: Session, by: int, query_id: int, passage_id: int, username: str) -> str | None:
    """An admin gives a split pair's open adjudication to another eligible account (or to one, if none has it).

    Checked in this write: ``by`` is an active admin; the pair still waits for its 4th label (no
    reviewer override, the 4th holder has not labelled it); ``username`` is in
    :func:`eligible_adjudicators`.  The assignment row moves to the new holder, so the previous
    holder's open page can no longer store a label on it.

    Returns
    -------
    str or None
        The previous holder, or None when the pair had no 4th annotator yet.

    Raises
    ------
    SignedOut
        If ``by`` is not an active admin (nothing stored).
    NotFound
        If the pair or the account does not exist.
    ValueError
        If the pair is not waiting for adjudication or the account is not eligible (nothing stored).
    """
    require_account(session, by, ADMIN_ROLES, action="assign adjudications")
    return _assign_one(session, query_id, passage_id, username)


def assign_adjudications(session: Session, by: int, pairs: Sequence[tuple[int, int]], username: str) -> int:
    """:func:`assign_adjudication` for several pairs at once: all are given to ``username`` or none is.

    ``pairs`` are ``(query row id, passage row id)``.  Returns the number of pairs assigned.
    The first refused pair raises (its message names it) and the caller's transaction stores nothing.
    """
    require_account(session, by, ADMIN_ROLES, action="assign adjudications")
    keys = list(dict.fromkeys((int(q), int(p)) for q, p in pairs))
    if not keys:
        raise ValueError("pairs is empty: choose at least one pair")
    if len(keys) > MAX_BULK:
        raise ValueError(f"pairs: at most {MAX_BULK} at once, got {len(keys)}")
    for q, p in keys:
        _assign_one(session, q, p, username)
    return len(keys)


def override_labels(
    session: Session, by: int, changes: Sequence[tuple[int, int, int | None]], reason: str
) -> list[Resolution]:
    """A reviewer sets the final label of several pairs with one reason, in the caller's one transaction.

    ``changes`` are ``(query row id, passage row id, grade or None to exclude)``.  Each is an
    append-only :func:`db.resolution.override_label` (the account, active reviewer or admin, is
    checked first, once for all); a refused pair (a grade outside its scale) raises and the
    caller's transaction stores none of them.

    Returns
    -------
    list of Resolution
        One per change, in order.
    """
    require_account(session, by, REVIEW_ROLES, action="override final labels")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("an override needs a reason")
    items = list(changes)
    if not items:
        raise ValueError("changes is empty: choose at least one pair")
    if len(items) > MAX_BULK:
        raise ValueError(f"changes: at most {MAX_BULK} at once, got {len(items)}")
    out = []
    for q, p, grade in items:
        name = _pair_name(session, q, p)
        try:
            out.append(override_label(session, by, q, p, grade, reason))
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from exc
    return out
