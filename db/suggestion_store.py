"""Store detector suggestions computed elsewhere (a background job) as automatic tags, as suggest_tags does.

:func:`db.error_analysis.suggest_tags` runs the detectors and stores in one
go; a job that runs a slow detector over a whole pool (the embedding
alignment, :mod:`pooljudge.alignment_job`) computes first, without a
transaction open, and stores here.  The rules are the same: a suggestion is
not stored when an automatic tag of the same (query, doc, category) exists in
the collection, whatever its status (a rejected one does not come back).
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy.orm import Session

from core.detectors import Suggestion
from db.error_analysis import _auto_tag_keys, _run_id, _suggested_tag
from db.queries import collection_id


def store_suggestions(
    session: Session, collection: str, run_name: str | None, found: Iterable[tuple[str, str, Suggestion]]
) -> int:
    """Store ``(query id, doc id, suggestion)`` triples as suggested automatic tags.

    Parameters
    ----------
    session : Session
        Inside the caller's write transaction (all or nothing).
    collection : str
    run_name : str or None
        The run recorded on each tag (``None``: none).
    found : iterable of (str, str, Suggestion)
        The suggestions, with the ids of their pair; each keeps its ``detector``.

    Returns
    -------
    int
        The number of tags stored (suggestions already tagged left out).

    Raises
    ------
    NotFound
        When the collection or the run does not exist.
    """
    cid = collection_id(session, collection)
    rid = _run_id(session, cid, run_name)
    existing = _auto_tag_keys(session, cid)
    stored = 0
    for qid, doc_id, suggestion in found:
        key = (qid, doc_id, suggestion.category)
        if key in existing:
            continue
        existing.add(key)
        session.add(_suggested_tag(cid, rid, qid, doc_id, suggestion))
        stored += 1
    session.flush()
    return stored
