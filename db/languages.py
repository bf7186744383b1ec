"""The languages of the store's text: whether annotators may be given a query or passage outside a set of languages."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from db.models import Assignment, PassageRecord, QueryRecord


def may_assign_text_outside(session: Session, languages: Collection[str]) -> bool:
    """Whether the store has assignments and some query or passage in a language outside ``languages``.

    A text without a language counts as outside.  The answer covers every assigned text and may say True for
    a store whose other-language texts are all unassigned: three reads that stop at their first row, instead
    of a join of every assignment with its texts.

    Parameters
    ----------
    session : Session
        An open session.
    languages : collection of str
        Language codes (``"en"``, ...).

    Returns
    -------
    bool
        False when nothing is assigned or every query and passage is in one of ``languages``.
    """
    if session.scalar(select(Assignment.id).limit(1)) is None:
        return False
    known = list(languages)
    for model in (QueryRecord, PassageRecord):
        outside = or_(model.language.is_(None), model.language.not_in(known))
        if session.scalar(select(model.id).where(outside).limit(1)) is not None:
            return True
    return False
