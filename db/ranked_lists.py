"""Read functions behind the Review page's ranked-list view: a pool's queries and one query's pooled list.

Every function takes a :class:`~sqlalchemy.orm.Session` first, only reads, and returns plain data
(frozen dataclasses), never ORM objects.  Labels shown come from *labelling* assignments only.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.judgments import Event, current_labels
from core.ranking import rank_positions
from db.access import LABELLING
from db.models import (
    Assignment,
    FinalLabel,
    Judgment,
    PassageRecord,
    Pool,
    PoolEntry,
    PoolProvenance,
    QueryRecord,
    RunEntryRecord,
    RunRecord,
    User,
)
from db.queries import NotFound, collection_id
from db.review import Final, final_parts, pair_state
from db.vocab import Purpose, Visibility


@dataclass(frozen=True)
class RankedEntry:
    """One pooled passage of a query as the ranked-list view shows it.

    ``position`` is its place in the list shown (1-based); ``run_rank`` its rank in the chosen run
    (trec_eval order; None when the run did not retrieve it, or no run was chosen).
    ``state`` is ``"unlabelled"`` while nobody labelled it.
    """

    position: int
    run_rank: int | None
    query_id: int
    passage_id: int
    docid: str
    title: str
    passage: str
    labels: dict[str, int]
    state: str
    final_grade: int | None
    method: str | None
    reason: str
    fourth: str | None


@dataclass(frozen=True)
class RankedList:
    """A query's whole pooled list (selected entries) with every label, in pool or run order."""

    qid: str
    query: str
    query_language: str | None
    pool: str
    run: str | None
    entries: list[RankedEntry]


def _pool_id(session: Session, cid: int, collection: str, pool: str) -> int:
    pool_id = session.scalar(select(Pool.id).where(Pool.collection_id == cid, Pool.name == pool))
    if pool_id is None:
        raise NotFound(f"no pool named {pool!r} in collection {collection!r}")
    return pool_id


def pool_queries(session: Session, collection: str, pool: str) -> list[tuple[str, str, int]]:
    """``(qid, query text, selected passages)`` of every query of a pool, by qid."""
    cid = collection_id(session, collection)
    pool_id = _pool_id(session, cid, collection, pool)
    return [
        (qid, text, n)
        for qid, text, n in session.execute(
            select(QueryRecord.ext_id, QueryRecord.text, func.count())
            .join(PoolEntry, PoolEntry.query_id == QueryRecord.id)
            .where(PoolEntry.pool_id == pool_id, PoolEntry.selected)
            .group_by(QueryRecord.ext_id, QueryRecord.text)
            .order_by(QueryRecord.ext_id)
        )
    ]


def pool_version(session: Session, collection: str, pool: str) -> int:
    """A value that names the pool's contents for good: its row id (a saved pool's entries never change, and a
    pool saved again under the name would be a new row).  Pages key their copy of :func:`pool_queries` on it."""
    return _pool_id(session, collection_id(session, collection), collection, pool)


def _query(session: Session, cid: int, collection: str, qid: str) -> tuple[int, str, str | None]:
    """``(row id, text, language)`` of a query of the collection."""
    query = session.execute(
        select(QueryRecord.id, QueryRecord.text, QueryRecord.language).where(
            QueryRecord.collection_id == cid, QueryRecord.ext_id == qid
        )
    ).one_or_none()
    if query is None:
        raise NotFound(f"no query {qid!r} in collection {collection!r}")
    row_id, text, language = query
    return row_id, text, language


ListRow = tuple[int, str, str | None, str, int | None, int | None]
"""``(passage row id, docid, title, text, selection rank, best run rank)`` of a pooled passage."""


def _pool_order(session: Session, pool_id: int, query_row: int) -> list[ListRow]:
    """The query's selected entries in pool order: selection rank, else best contributing rank, then docid."""
    # per entry, through the provenance key: a grouped subquery would aggregate every pool's provenance first
    best = select(func.min(PoolProvenance.rank)).where(PoolProvenance.pool_entry_id == PoolEntry.id).scalar_subquery()
    # selected checked here: a condition on it lets SQLite walk the pool's selected entries by their index
    # rather than find the query's few through the (pool, query, passage) key
    rows = [
        (pid, docid, title, text, selection_rank, best_rank)
        for pid, docid, title, text, selection_rank, best_rank, selected in session.execute(
            select(
                PassageRecord.id,
                PassageRecord.ext_id,
                PassageRecord.title,
                PassageRecord.text,
                PoolEntry.selection_rank,
                best,
                PoolEntry.selected,
            )
            .select_from(PoolEntry)
            .join(PassageRecord, PassageRecord.id == PoolEntry.passage_id)
            .where(PoolEntry.pool_id == pool_id, PoolEntry.query_id == query_row)
        )
        if selected
    ]
    inf = float("inf")
    rows.sort(key=lambda r: (r[4] if r[4] is not None else inf, r[5] if r[5] is not None else inf, r[1]))
    return rows


def _run_ranks(session: Session, cid: int, collection: str, run: str, qid: str) -> dict[str, int]:
    """``{docid: rank}`` of the query in a ready run (trec_eval order)."""
    run_id = session.scalar(
        select(RunRecord.id).where(
            RunRecord.collection_id == cid, RunRecord.name == run, RunRecord.status == Visibility.READY
        )
    )
    if run_id is None:
        raise NotFound(f"no run named {run!r} in collection {collection!r}")
    scores = dict(
        session.execute(
            select(RunEntryRecord.doc_id, RunEntryRecord.score).where(
                RunEntryRecord.run_id == run_id, RunEntryRecord.query_id == qid
            )
        ).all()
    )
    return rank_positions(scores)


@dataclass(frozen=True)
class _QueryLabels:
    """Every passage's labels, final label and 4th annotator for one query, by passage row id."""

    labels: dict[int, dict[str, int]]
    finals: dict[int, Final]
    fourths: dict[int, str]


def _query_labels(session: Session, query_row: int, passage_rows: list[int]) -> _QueryLabels:
    events = session.execute(
        select(Judgment.passage_id, User.username, Judgment.action, Judgment.grade)
        .select_from(Judgment)
        .join(Assignment, Assignment.id == Judgment.assignment_id)
        .join(User, User.id == Judgment.user_id)
        .where(Judgment.query_id == query_row, Assignment.purpose.in_(LABELLING))
        .order_by(Judgment.id)
    ).all()
    replayed = current_labels(Event(pid, user, action, grade) for pid, user, action, grade in events)
    finals = {
        p: (g, m, r)
        for p, g, m, r in session.execute(
            select(FinalLabel.passage_id, FinalLabel.grade, FinalLabel.method, FinalLabel.reason).where(
                FinalLabel.query_id == query_row
            )
        )
    }
    # the list's few assignments through the passages' index, the purpose checked here: with a condition on
    # the purpose, SQLite may walk every 4th-annotator assignment of the store by the purpose's index instead
    fourths = {
        pid: user
        for pid, user, purpose in session.execute(
            select(Assignment.passage_id, User.username, Assignment.purpose)
            .join(User, User.id == Assignment.user_id)
            .where(Assignment.passage_id.in_(passage_rows), Assignment.query_id == query_row)
        )
        if purpose == Purpose.FOURTH
    }
    labels = {pid: dict(replayed[pid]) for pid, *_ in events if pid in replayed}
    return _QueryLabels(labels=labels, finals=finals, fourths=fourths)


def ranked_list(session: Session, collection: str, pool: str, qid: str, *, run: str | None = None) -> RankedList:
    """One query's pooled passages with each annotator's label and the final label, as one list (Quepid's view).

    Parameters
    ----------
    pool : str
        The pool whose selected entries make the list.
    qid : str
        The query's id.
    run : str, optional
        Order by this run's ranking (trec_eval order: score descending, ties by docid descending);
        passages the run did not retrieve follow in pool order.  None: pool order, i.e. the
        selection order when the pool was selected, else the best rank any contributing run gave
        it, then docid.

    Raises
    ------
    NotFound
        If the collection, pool, query (in that pool) or run does not exist.
    """
    cid = collection_id(session, collection)
    pool_id = _pool_id(session, cid, collection, pool)
    query_row, query_text, query_language = _query(session, cid, collection, qid)
    rows = _pool_order(session, pool_id, query_row)
    if not rows:
        raise NotFound(f"query {qid!r} has no selected passages in pool {pool!r}")
    ranks: dict[str, int] = {}
    if run is not None:
        ranks = _run_ranks(session, cid, collection, run, qid)
        order = {r[1]: i for i, r in enumerate(rows)}
        rows.sort(key=lambda r: (ranks.get(r[1], float("inf")), order[r[1]]))
    known = _query_labels(session, query_row, [r[0] for r in rows])
    entries = []
    for position, (pid, docid, title, text, _sel, _best) in enumerate(rows, start=1):
        given = known.labels.get(pid, {})
        final = known.finals.get(pid)
        grade, method, reason = final_parts(final, given)
        entries.append(
            RankedEntry(
                position=position,
                run_rank=ranks.get(docid),
                query_id=query_row,
                passage_id=pid,
                docid=docid,
                title=title or "",
                passage=text,
                labels=given,
                state=pair_state(given, final) if given or final else "unlabelled",
                final_grade=grade,
                method=method,
                reason=reason,
                fourth=known.fourths.get(pid),
            )
        )
    return RankedList(qid=qid, query=query_text, query_language=query_language, pool=pool, run=run, entries=entries)


__all__ = [
    "RankedEntry",
    "RankedList",
    "pool_queries",
    "ranked_list",
]
