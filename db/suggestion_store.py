"""Store detector suggestions computed elsewhere (a background job) as automatic tags, as suggest_tags does.

:func:`db.error_analysis.suggest_tags` runs the detectors and stores in one
go; a job that runs a slow detector over a whole pool (the embedding
alignment, :mod:`pooljudge.alignment_job`) computes first, without a
transaction open, and stores here.  The rules are the same: a suggestion is
not stored when an automatic tag of the same (query, doc, category) exists in
the collection, whatever its status (a rejected one does not come back).
The helpers that apply those rules (:func:`tag_run_id`, :func:`auto_tag_keys`,
:func:`suggested_tag`) live here and :mod:`db.error_analysis` builds on them.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.detectors import Suggestion
from db.models import ErrorTag, RunRecord
from db.queries import NotFound, collection_id
from db.vocab import Visibility


def tag_run_id(session: Session, cid: int, run_name: str | None) -> int | None:
    """The row id of the run a tag records.

    Parameters
    ----------
    session : Session
    cid : int
        The collection's row id.
    run_name : str or None
        The run's name; ``None`` for a tag that records no run.

    Returns
    -------
    int or None

    Raises
    ------
    NotFound
        No ready run of that name in the collection (a run still importing does not exist yet).
    """
    if run_name is None:
        return None
    rid = session.scalar(
        select(RunRecord.id).where(
            RunRecord.collection_id == cid, RunRecord.name == run_name, RunRecord.status == Visibility.READY
        )
    )
    if rid is None:
        raise NotFound(f"no run named {run_name!r} in this collection")
    return rid


def auto_tag_keys(session: Session, cid: int) -> set[tuple[str, str, str]]:
    """``(qid, doc id, category)`` of every automatic tag of the collection, whatever its status.

    Parameters
    ----------
    session : Session
    cid : int
        The collection's row id.

    Returns
    -------
    set of (str, str, str)
        A suggestion with one of these keys is not stored again (a rejected one does not come back).
    """
    return {
        (qid, doc_id, category)
        for qid, doc_id, category in session.execute(
            select(ErrorTag.query_id, ErrorTag.doc_id, ErrorTag.category).where(
                ErrorTag.collection_id == cid, ErrorTag.source == "auto"
            )
        )
    }


def suggested_tag(cid: int, rid: int | None, qid: str, doc_id: str, suggestion: Suggestion) -> ErrorTag:
    """A detector's suggestion as an automatic tag awaiting an analyst (``status="suggested"``).

    Parameters
    ----------
    cid : int
        The collection's row id.
    rid : int or None
        The run's row id (:func:`tag_run_id`).
    qid, doc_id : str
        The pair's query and passage ids.
    suggestion : Suggestion
        Its category and evidence are stored.

    Returns
    -------
    ErrorTag
        Not added to any session.
    """
    return ErrorTag(
        collection_id=cid,
        query_id=qid,
        doc_id=doc_id,
        run_id=rid,
        category=suggestion.category,
        status="suggested",
        source="auto",
        evidence=suggestion.to_dict(),
    )


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
    rid = tag_run_id(session, cid, run_name)
    existing = auto_tag_keys(session, cid)
    stored = 0
    for qid, doc_id, suggestion in found:
        key = (qid, doc_id, suggestion.category)
        if key in existing:
            continue
        existing.add(key)
        session.add(suggested_tag(cid, rid, qid, doc_id, suggestion))
        stored += 1
    session.flush()
    return stored
