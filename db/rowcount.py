"""How many rows an UPDATE or DELETE run through a :class:`~sqlalchemy.orm.Session` changed."""

from __future__ import annotations

from typing import Any, cast

from sqlalchemy import CursorResult
from sqlalchemy.orm import Session
from sqlalchemy.sql.dml import UpdateBase


def rowcount(session: Session, statement: UpdateBase) -> int:
    """Execute an UPDATE or DELETE in the session and return the number of rows it matched.

    ``Session.execute`` is annotated as returning a plain ``Result`` whatever the statement; for
    an UPDATE or DELETE it is a ``CursorResult``, the one that carries ``rowcount``.
    """
    return cast("CursorResult[Any]", session.execute(statement)).rowcount
