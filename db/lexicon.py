"""A collection's lexicon: names and their kinds an admin adds for the entity-mismatch detector (migration 0011).

:mod:`core.detectors.names` compares a query name of kind K with the
passage's other names of kind K (two liquor brands, two phone makers); its
packaged list knows the common ones, a collection's lexicon adds its own
(``lexicon_names`` rows).  :func:`db.error_analysis.suggest_tags`
reads it when no ``lexicon=`` is given.  A name is unique within its
collection case-insensitively, since names match so.  Names and kinds are
untrusted text: whoever shows them escapes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.names import NAME_MAX_CHARS, check_name
from db.models import LexiconName
from db.queries import NotFound, collection_id

KIND_MAX_CHARS = 64


@dataclass(frozen=True)
class LexiconEntry:
    """A stored lexicon name of a collection."""

    name: str
    kind: str
    created_by: str | None
    created_at: datetime


def _checked(name: object, kind: object) -> tuple[str, str]:
    """``(name, kind)`` when both are printable names without a tab, else ``ValueError`` saying which and why."""
    return check_name(name, "lexicon name", limit=NAME_MAX_CHARS), check_name(
        kind, "lexicon kind", limit=KIND_MAX_CHARS
    )


def _row(session: Session, cid: int, name: str) -> LexiconName | None:
    return session.scalar(
        select(LexiconName).where(LexiconName.collection_id == cid, LexiconName.name_key == name.casefold())
    )


def list_lexicon(session: Session, collection: str) -> list[LexiconEntry]:
    """The collection's lexicon names, oldest first.

    Raises
    ------
    NotFound
        When the collection does not exist.
    """
    rows = session.scalars(
        select(LexiconName)
        .where(LexiconName.collection_id == collection_id(session, collection))
        .order_by(LexiconName.created_at, LexiconName.id)
    )
    return [LexiconEntry(r.name, r.kind, r.created_by, r.created_at) for r in rows]


def collection_lexicon(session: Session, collection: str) -> dict[str, str]:
    """The collection's lexicon as ``{name: kind}``, for :func:`core.detectors.suggest`'s ``lexicon``."""
    return {e.name: e.kind for e in list_lexicon(session, collection)}


def add_lexicon_name(
    session: Session, collection: str, name: str, kind: str, *, created_by: str | None = None
) -> LexiconEntry:
    """Add ``name`` of ``kind`` to the collection's lexicon.

    Parameters
    ----------
    session : Session
        Inside the caller's write transaction.
    collection, name, kind : str
        The name and kind are stored as given (no leading or trailing space allowed).
    created_by : str, optional
        The admin's username, kept as text.

    Raises
    ------
    ValueError
        An empty or unprintable name or kind, or a name already in the lexicon
        (in any case), saying its kind.
    NotFound
        When the collection does not exist.
    """
    name, kind = _checked(name, kind)
    cid = collection_id(session, collection)
    existing = _row(session, cid, name)
    if existing is not None:
        raise ValueError(f"{existing.name!r} is already in the lexicon of {collection!r}, as {existing.kind!r}")
    row = LexiconName(collection_id=cid, name=name, name_key=name.casefold(), kind=kind, created_by=created_by)
    session.add(row)
    session.flush()
    return LexiconEntry(row.name, row.kind, row.created_by, row.created_at)


def remove_lexicon_name(session: Session, collection: str, name: str) -> None:
    """Remove ``name`` (in any case) from the collection's lexicon.

    Raises
    ------
    NotFound
        When the collection does not exist or its lexicon has no such name.
    """
    row = _row(session, collection_id(session, collection), name)
    if row is None:
        raise NotFound(f"no name {name!r} in the lexicon of {collection!r}")
    session.delete(row)
    session.flush()


def import_lexicon(
    session: Session, collection: str, names: Mapping[str, str], *, created_by: str | None = None
) -> tuple[int, int]:
    """Add ``names`` (``{name: kind}``, e.g. from :func:`core.detectors.load_lexicon`) to the lexicon.

    A name already there takes the new kind.  Every name is checked before
    anything is written, so a bad one leaves the lexicon as it was (the
    caller's transaction holds the rest).

    Returns
    -------
    tuple of int
        ``(added, changed)``: new names, and names whose kind changed.

    Raises
    ------
    ValueError
        Naming the first bad name or kind.
    NotFound
        When the collection does not exist.
    """
    checked = [_checked(n, k) for n, k in names.items()]
    cid = collection_id(session, collection)
    added = changed = 0
    for name, kind in checked:
        row = _row(session, cid, name)
        if row is None:
            session.add(
                LexiconName(collection_id=cid, name=name, name_key=name.casefold(), kind=kind, created_by=created_by)
            )
            session.flush()  # a file naming one name twice in two cases updates the first
            added += 1
        elif row.kind != kind:
            row.kind = kind
            changed += 1
    session.flush()
    return added, changed
