"""Archive, restore and rename collections, pools, runs and qrels versions.

Archiving hides, it never deletes: the row gets ``archived_at`` and
``archived_by`` (the acting username as text, so the record outlives the
account) and disappears from the listings and pickers
(:func:`db.queries.list_collections`, :func:`db.queries.list_runs`,
:func:`db.pools.list_pools`, the default "newest" qrels version).  Restoring
clears both columns; nothing else is touched, so judgments, packages and
assignments are exactly as they were.  A name lookup (``pooljudge eval -c``,
``export``) still finds an archived item: the name stays taken, and a rename
is refused when the new name clashes with any item, archived or not.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from core.names import check_name
from db.access import ADMIN_ROLES, require_account
from db.models import Collection, Pool, QrelsVersion, RunRecord, utcnow
from db.queries import READY, NotFound, known_names

_Archivable = Collection | Pool | RunRecord | QrelsVersion
_CHILDREN: dict[str, type[Pool] | type[RunRecord] | type[QrelsVersion]] = {
    "pool": Pool,
    "run": RunRecord,
    "qrels": QrelsVersion,
}
"""The kinds that belong to a collection."""
_CHILD_TYPES = (Pool, RunRecord, QrelsVersion)
_Query = TypeVar("_Query", bound="Select[Any]")
KINDS: dict[str, type[_Archivable]] = {"collection": Collection, **_CHILDREN}
"""What can be archived, by the name the CLI and the Manage page use."""

_LABELS = {"collection": "collection", "pool": "pool", "run": "run", "qrels": "qrels version"}


@dataclass(frozen=True)
class Item:
    """One archivable item, archived or not."""

    kind: str
    name: str
    collection: str | None
    """The collection it belongs to (None for a collection)."""
    archived_at: datetime | None
    archived_by: str | None

    @property
    def archived(self) -> bool:
        return self.archived_at is not None


def _check_kind(kind: object) -> str:
    if not isinstance(kind, str) or kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return kind


def _acting(session: Session, acting_user_id: int | None, by: str | None, action: str) -> str | None:
    """The username recorded as ``archived_by``: the app's account, re-checked in this write, else ``by``."""
    if acting_user_id is None:
        return by
    return require_account(session, acting_user_id, ADMIN_ROLES, action=action).username


def _row(session: Session, kind: str, name: str, collection: str | None) -> _Archivable:
    """The ready row of ``kind`` called ``name`` (in ``collection``), archived or not."""
    label = _LABELS[_check_kind(kind)]
    if kind == "collection":
        row = session.scalar(select(Collection).where(Collection.name == name, Collection.status == READY))
        if row is None:
            known = known_names(
                session, select(Collection.name).where(Collection.status == READY).order_by(Collection.name)
            )
            raise NotFound(f"no collection named {name!r} (collections: {known})")
        return row
    if collection is None:
        raise ValueError(f"a {label} belongs to a collection: name it (--collection)")
    model = _CHILDREN[kind]
    parent = _row(session, "collection", collection, None)
    child = session.scalar(
        _ready_only(select(model).where(model.collection_id == parent.id, model.name == name), model)
    )
    if child is None:
        names = _ready_only(select(model.name).where(model.collection_id == parent.id).order_by(model.name), model)
        known = known_names(session, names)
        raise NotFound(f"no {label} named {name!r} in collection {collection!r} ({label}s: {known})")
    assert isinstance(child, _CHILD_TYPES)  # select() over a union of models is typed as their base
    return child


def _ready_only(query: _Query, model: type[_Archivable]) -> _Query:
    """``query`` limited to the ready rows of ``model`` (a pool has no import status: every one counts)."""
    status = getattr(model, "status", None)
    return query if status is None else query.where(status == READY)


def _item(kind: str, row: _Archivable, collection: str | None) -> Item:
    return Item(
        kind=kind, name=row.name, collection=collection, archived_at=row.archived_at, archived_by=row.archived_by
    )


def archive(
    session: Session,
    kind: str,
    name: str,
    *,
    collection: str | None = None,
    by: str | None = None,
    acting_user_id: int | None = None,
) -> Item:
    """Hide an item from the listings and pickers; nothing is deleted.

    Parameters
    ----------
    kind : str
        ``collection``, ``pool``, ``run`` or ``qrels``.
    name : str
        The item's name.
    collection : str, optional
        The collection a pool, run or qrels version belongs to (required for those).
    by : str, optional
        Recorded as ``archived_by`` when no ``acting_user_id`` is given (the CLI: the system user).
    acting_user_id : int, optional
        The app's account: re-read inside this write and refused unless an active admin; its
        username is recorded.

    Raises
    ------
    NotFound
        For an unknown item (the message lists the known names).
    ValueError
        For a bad kind, a missing collection, or an item already archived.
    db.access.SignedOut
        When ``acting_user_id`` is not an active admin (nothing is changed).
    """
    who = _acting(session, acting_user_id, by, f"archive a {_LABELS.get(kind, 'item')}")
    row = _row(session, kind, name, collection)
    if row.archived_at is not None:
        raise ValueError(
            f"{_LABELS[kind]} {name!r} is already archived "
            f"(by {row.archived_by or 'unknown'} at {row.archived_at:%Y-%m-%d %H:%M} UTC)"
        )
    row.archived_at = utcnow()
    row.archived_by = (who or "unknown")[:100]  # archived_by is String(100), as usernames are
    session.flush()
    return _item(kind, row, collection)


def restore(
    session: Session,
    kind: str,
    name: str,
    *,
    collection: str | None = None,
    acting_user_id: int | None = None,
) -> Item:
    """Show an archived item again; it comes back exactly as it was (see :func:`archive` for the arguments).

    Raises
    ------
    ValueError
        For an item that is not archived.
    """
    _acting(session, acting_user_id, None, f"restore a {_LABELS.get(kind, 'item')}")
    row = _row(session, kind, name, collection)
    if row.archived_at is None:
        raise ValueError(f"{_LABELS[kind]} {name!r} is not archived")
    row.archived_at = None
    row.archived_by = None
    session.flush()
    return _item(kind, row, collection)


def rename(
    session: Session,
    kind: str,
    old: str,
    new: str,
    *,
    collection: str | None = None,
    acting_user_id: int | None = None,
) -> Item:
    """Rename an item (archived or not); ``new`` must be a valid name no other item of its kind holds.

    Raises
    ------
    ValueError
        For an invalid new name (:func:`core.names.check_name`) or a clash (nothing is changed).
    """
    _acting(session, acting_user_id, None, f"rename a {_LABELS.get(kind, 'item')}")
    label = _LABELS[_check_kind(kind)]
    check_name(new, f"new {label} name")
    row = _row(session, kind, old, collection)
    if new == old:
        raise ValueError(f"{label} {old!r} already has that name; nothing was renamed")
    model = KINDS[kind]
    # every status counts: the unique index covers an import's staged rows too
    clash = select(model.archived_at).where(model.name == new, model.id != row.id)
    if not isinstance(row, Collection):
        clash = clash.where(_CHILDREN[kind].collection_id == row.collection_id)
    found = session.execute(clash.limit(1)).first()
    if found is not None:
        raise ValueError(
            f"a {label} named {new!r} already exists"
            + (" (archived)" if found[0] is not None else "")
            + (f" in collection {collection!r}" if kind != "collection" else "")
            + "; nothing was renamed"
        )
    row.name = new
    session.flush()
    return _item(kind, row, collection if kind != "collection" else None)


def list_items(session: Session, *, archived_only: bool = False) -> list[Item]:
    """Every collection, pool, run and qrels version (archived ones included), for the Manage page.

    Ordered by collection name, then kind (collection, pool, run, qrels), then name.
    """
    collections = {c.id: c for c in session.scalars(select(Collection).where(Collection.status == READY))}
    items: list[Item] = [_item("collection", c, None) for c in collections.values()]
    for kind, model in _CHILDREN.items():
        for row in session.scalars(_ready_only(select(model).where(model.collection_id.in_(list(collections))), model)):
            assert isinstance(row, _CHILD_TYPES)  # select() over a union of models is typed as their base
            items.append(_item(kind, row, collections[row.collection_id].name))
    order = list(KINDS)
    items.sort(
        key=lambda i: (
            i.collection if i.collection is not None else i.name,
            i.kind != "collection",
            order.index(i.kind),
            i.name,
        )
    )
    return [i for i in items if i.archived] if archived_only else items


def as_rows(items: list[Item]) -> list[dict[str, Any]]:
    """Plain rows for a table: kind, collection, name, state, archived by, archived at."""
    return [
        {
            "kind": _LABELS[i.kind],
            "collection": i.collection or i.name,
            "name": i.name,
            "state": "archived" if i.archived else "shown",
            "archived by": i.archived_by or "",
            "archived at": f"{i.archived_at:%Y-%m-%d %H:%M} UTC" if i.archived_at is not None else "",
        }
        for i in items
    ]
