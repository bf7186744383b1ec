"""Store and read pools: pooled pairs with provenance, the selection for annotation, near-duplicates, pre-labels.

A pool is saved from plain data produced by :mod:`core.pooling`:
``{query_id: {doc_id: [(run_name, rank, score), ...]}}`` plus, optionally,
the selected documents per query in selection order and the near-duplicates
removed from the selection.  Only documents the store holds can be pooled
for annotation; others (a run may name documents whose text was never
imported) are counted and reported, not stored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import case, delete, func, insert, select, tuple_, update
from sqlalchemy.orm import Session

from core.names import check_name
from db.models import PassageRecord, Pool, PoolEntry, PoolProvenance, PreLabel, QueryRecord, RunRecord
from db.queries import NotFound, collection_id

Contribution = tuple[str, int, float | None]
"""``(run_name, rank, score)``: a run that retrieved the pair, at which 1-based rank."""

_CHUNK = 900  # stays under SQLite's bound-parameter limit in IN (...) lookups


@dataclass
class PoolSummary:
    pool: str
    queries: int = 0
    pairs: int = 0
    selected: int = 0
    duplicates: int = 0
    missing_documents: int = 0
    missing_queries: int = 0
    missing_examples: list[str] = field(default_factory=list)


def _ids(session: Session, model, cid: int, ext_ids: Iterable[str]) -> dict[str, int]:
    wanted = list(dict.fromkeys(ext_ids))
    found: dict[str, int] = {}
    for start in range(0, len(wanted), _CHUNK):
        chunk = wanted[start : start + _CHUNK]
        found.update(
            session.execute(
                select(model.ext_id, model.id).where(model.collection_id == cid, model.ext_id.in_(chunk))
            ).all()
        )
    return found


def save_pool(
    session: Session,
    collection: str,
    name: str,
    pool: Mapping[str, Mapping[str, Sequence[Contribution]]],
    *,
    method: str,
    params: dict[str, Any] | None = None,
    selection: Mapping[str, Sequence[str]] | None = None,
    selection_scores: Mapping[str, Mapping[str, float]] | None = None,
    duplicates: Mapping[str, Mapping[str, str]] | None = None,
) -> PoolSummary:
    """Save a pool; returns what was stored and what could not be (documents or queries the store lacks).

    Parameters
    ----------
    pool
        ``{qid: {docid: [(run_name, rank, score), ...]}}``; every run named must be stored in the collection.
    selection
        ``{qid: [docid, ...]}`` in selection order: these entries are marked selected with
        ``selection_rank`` 1, 2, ...; without a selection every pooled pair is selected
        ("annotate everything").
    duplicates
        ``{qid: {removed_docid: kept_docid}}``: near-duplicates dropped from the selection,
        linked to the entry kept in their place.
    """
    check_name(name, "pool name")
    cid = collection_id(session, collection)
    if session.scalar(select(Pool.id).where(Pool.collection_id == cid, Pool.name == name)) is not None:
        raise ValueError(f"a pool named {name!r} already exists in collection {collection!r}")
    runs = _ready_runs(session, cid, collection, pool)
    query_ids = _ids(session, QueryRecord, cid, pool.keys())
    passage_ids = _ids(session, PassageRecord, cid, (d for docs in pool.values() for d in docs))
    summary = PoolSummary(pool=name)
    row = Pool(collection_id=cid, name=name, method=method, params=params or {})
    session.add(row)
    session.flush()

    entry_rows, keys = _entry_rows(row.id, pool, query_ids, passage_ids, selection, selection_scores, summary)
    if entry_rows:
        session.execute(insert(PoolEntry), entry_rows)
    summary.pairs = len(entry_rows)
    entry_id = _entry_ids(session, row.id)
    provenance = [
        {"pool_entry_id": entry_id[(qid, docid)], "run_id": runs[run], "rank": rank, "score": score}
        for qid, docid in keys
        for run, rank, score in pool[qid][docid]
    ]
    if provenance:
        session.execute(insert(PoolProvenance), provenance)
    summary.duplicates = _mark_duplicates(session, duplicates or {}, entry_id)
    summary.selected = (
        session.scalar(
            select(func.count()).select_from(PoolEntry).where(PoolEntry.pool_id == row.id, PoolEntry.selected)
        )
        or 0
    )
    return summary


def _ready_runs(
    session: Session, cid: int, collection: str, pool: Mapping[str, Mapping[str, Sequence[Contribution]]]
) -> dict[str, int]:
    """``{run name: run id}`` of the runs ``pool`` names; raises :class:`NotFound` naming any the collection lacks."""
    run_names = {c[0] for docs in pool.values() for contributions in docs.values() for c in contributions}
    runs: dict[str, int] = dict(
        session.execute(  # a run still importing (status 'importing') does not exist yet
            select(RunRecord.name, RunRecord.id).where(RunRecord.collection_id == cid, RunRecord.status == "ready")
        ).all()
    )
    unknown = sorted(run_names - runs.keys())
    if unknown:
        raise NotFound(f"runs not in collection {collection!r}: {', '.join(unknown)}")
    return runs


def _entry_rows(
    pool_id: int,
    pool: Mapping[str, Mapping[str, Sequence[Contribution]]],
    query_ids: Mapping[str, int],
    passage_ids: Mapping[str, int],
    selection: Mapping[str, Sequence[str]] | None,
    selection_scores: Mapping[str, Mapping[str, float]] | None,
    summary: PoolSummary,
) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """The pool entry rows to insert and their ``(qid, docid)`` keys, in the same order.

    Pairs whose query or document the store lacks are left out and counted in ``summary``.
    """
    entry_rows: list[dict[str, Any]] = []
    keys: list[tuple[str, str]] = []
    for qid, docs in pool.items():
        if qid not in query_ids:
            summary.missing_queries += 1
            continue
        summary.queries += 1
        chosen = selection.get(qid, ()) if selection is not None else None
        rank_of = {d: i for i, d in enumerate(chosen, start=1)} if chosen is not None else None
        for docid in docs:
            if docid not in passage_ids:
                summary.missing_documents += 1
                if len(summary.missing_examples) < 5:
                    summary.missing_examples.append(docid)
                continue
            selected = rank_of is None or docid in rank_of
            entry_rows.append(
                {
                    "pool_id": pool_id,
                    "query_id": query_ids[qid],
                    "passage_id": passage_ids[docid],
                    "selected": selected,
                    "selection_rank": rank_of.get(docid) if rank_of is not None else None,
                    "selection_score": (selection_scores or {}).get(qid, {}).get(docid),
                }
            )
            keys.append((qid, docid))
    return entry_rows, keys


def _entry_ids(session: Session, pool_id: int) -> dict[tuple[str, str], int]:
    """``{(qid, docid): pool entry id}`` of a pool's stored entries."""
    return {
        (q, d): eid
        for eid, q, d in session.execute(
            select(PoolEntry.id, QueryRecord.ext_id, PassageRecord.ext_id)
            .join(QueryRecord, QueryRecord.id == PoolEntry.query_id)
            .join(PassageRecord, PassageRecord.id == PoolEntry.passage_id)
            .where(PoolEntry.pool_id == pool_id)
        )
    }


def _mark_duplicates(
    session: Session, duplicates: Mapping[str, Mapping[str, str]], entry_id: Mapping[tuple[str, str], int]
) -> int:
    """Link each removed near-duplicate to the entry kept in its place and unselect it; returns how many were linked."""
    linked = 0
    for qid, removed in duplicates.items():
        for dup, kept in removed.items():
            if (qid, dup) in entry_id and (qid, kept) in entry_id:
                session.execute(
                    update(PoolEntry)
                    .where(PoolEntry.id == entry_id[(qid, dup)])
                    .values(duplicate_of=entry_id[(qid, kept)], selected=False, selection_rank=None)
                )
                linked += 1
    return linked


@dataclass(frozen=True)
class PoolInfo:
    """A shown pool of a collection (:func:`list_pools`)."""

    name: str
    method: str
    params: dict[str, Any]
    created_at: datetime
    pairs: int
    """Pooled pairs."""
    selected: int
    """Pairs selected for annotation."""


def list_pools(session: Session, collection: str) -> list[PoolInfo]:
    """Shown pools of a collection (archived ones left out, :mod:`db.archive`), newest first, with their sizes."""
    cid = collection_id(session, collection)
    sizes = {
        pid: (n, sel)
        for pid, n, sel in session.execute(
            select(PoolEntry.pool_id, func.count(), func.sum(case((PoolEntry.selected, 1), else_=0)))
            .join(Pool, Pool.id == PoolEntry.pool_id)
            .where(Pool.collection_id == cid)
            .group_by(PoolEntry.pool_id)
        )
    }
    return [
        PoolInfo(
            name=p.name,
            method=p.method,
            params=p.params,
            created_at=p.created_at,
            pairs=sizes.get(p.id, (0, 0))[0],
            selected=int(sizes.get(p.id, (0, 0))[1] or 0),
        )
        for p in session.scalars(
            select(Pool)
            .where(Pool.collection_id == cid, Pool.archived_at.is_(None))
            .order_by(Pool.created_at.desc(), Pool.id.desc())
        )
    ]


def pool_names(session: Session, collection: str, *, selected: bool = False) -> list[str]:
    """The names :func:`list_pools` lists, in its order, without counting entries (pages read them every run);
    ``selected``: only pools with a selected pair."""
    cid = collection_id(session, collection)
    query = select(Pool.name).where(Pool.collection_id == cid, Pool.archived_at.is_(None))
    if selected:
        query = query.where(select(PoolEntry.id).where(PoolEntry.pool_id == Pool.id, PoolEntry.selected).exists())
    return list(session.scalars(query.order_by(Pool.created_at.desc(), Pool.id.desc())))


def load_pool(
    session: Session, collection: str, name: str
) -> tuple[dict[str, dict[str, list[Contribution]]], dict[str, list[str]]]:
    """A stored pool as ``({qid: {docid: [(run, rank, score)]}}, {qid: [selected docids in selection order]})``."""
    cid = collection_id(session, collection)
    pool_id = session.scalar(select(Pool.id).where(Pool.collection_id == cid, Pool.name == name))
    if pool_id is None:
        raise NotFound(f"no pool named {name!r} in collection {collection!r}")
    pool: dict[str, dict[str, list[Contribution]]] = {}
    selected: dict[str, list[tuple[int, str]]] = {}
    for qid, docid, is_selected, sel_rank in session.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id, PoolEntry.selected, PoolEntry.selection_rank)
        .join(QueryRecord, QueryRecord.id == PoolEntry.query_id)
        .join(PassageRecord, PassageRecord.id == PoolEntry.passage_id)
        .where(PoolEntry.pool_id == pool_id)
        .order_by(PoolEntry.id)
    ):
        pool.setdefault(qid, {})[docid] = []
        if is_selected:
            selected.setdefault(qid, []).append((sel_rank if sel_rank is not None else 1 << 30, docid))
    for qid, docid, run, rank, score in session.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id, RunRecord.name, PoolProvenance.rank, PoolProvenance.score)
        .join(PoolEntry, PoolEntry.id == PoolProvenance.pool_entry_id)
        .join(QueryRecord, QueryRecord.id == PoolEntry.query_id)
        .join(PassageRecord, PassageRecord.id == PoolEntry.passage_id)
        .join(RunRecord, RunRecord.id == PoolProvenance.run_id)
        .where(PoolEntry.pool_id == pool_id)
        .order_by(RunRecord.name)
    ):
        pool[qid][docid].append((run, rank, score))
    return pool, {q: [d for _, d in sorted(items)] for q, items in selected.items()}


def save_prelabels(
    session: Session,
    collection: str,
    rows: Iterable[tuple[str, str, float, dict[str, Any]]],
    *,
    source: str = "span_f1",
) -> int:
    """Store machine pre-labels ``(qid, docid, score, evidence)``; replaces earlier ones of the same source for those pairs."""
    cid = collection_id(session, collection)
    rows = list(rows)
    query_ids = _ids(session, QueryRecord, cid, (r[0] for r in rows))
    passage_ids = _ids(session, PassageRecord, cid, (r[1] for r in rows))
    values = [
        {
            "collection_id": cid,
            "query_id": query_ids[q],
            "passage_id": passage_ids[d],
            "source": source,
            "score": s,
            "evidence": ev,
        }
        for q, d, s, ev in rows
        if q in query_ids and d in passage_ids
    ]
    pairs = list({(v["query_id"], v["passage_id"]) for v in values})
    for start in range(0, len(pairs), _CHUNK // 2):
        session.execute(
            delete(PreLabel)
            .where(
                PreLabel.source == source,
                tuple_(PreLabel.query_id, PreLabel.passage_id).in_(pairs[start : start + _CHUNK // 2]),
            )
            # a plain bulk DELETE: no pre-label objects are loaded in the session to keep in step
            .execution_options(synchronize_session=False)
        )
    if values:
        session.execute(insert(PreLabel), values)
    return len(values)


def load_prelabels(session: Session, collection: str, *, source: str = "span_f1") -> dict[str, dict[str, float]]:
    """Pre-labels as ``{qid: {docid: score}}``."""
    cid = collection_id(session, collection)
    result: dict[str, dict[str, float]] = {}
    for qid, docid, score in session.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id, PreLabel.score)
        .join(QueryRecord, QueryRecord.id == PreLabel.query_id)
        .join(PassageRecord, PassageRecord.id == PreLabel.passage_id)
        .where(PreLabel.collection_id == cid, PreLabel.source == source)
    ):
        result.setdefault(qid, {})[docid] = score
    return result
