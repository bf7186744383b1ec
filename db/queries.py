"""Read functions over the store: collections, their statistics, qrels, runs, records and judgments.

Every function takes a :class:`~sqlalchemy.orm.Session` first and returns
plain data (``core.types`` shapes, dicts, dataclasses), never ORM objects, so
pages and the CLI cannot lazily hit the database after the transaction.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, case, distinct, func, select
from sqlalchemy.orm import InstrumentedAttribute, Session, aliased

from core.limits import CUTOFF_MAX
from core.names import display_name
from core.types import SPLITS, Passage, Qrels, Query, Run
from core.validators import is_integer
from db.access import ADMIN_ROLES, require_account
from db.models import (
    Assignment,
    Collection,
    ImportRecord,
    Judgment,
    PassageRecord,
    PoolEntry,
    PoolProvenance,
    QrelsEntry,
    QrelsVersion,
    QueryRecord,
    RunEntryRecord,
    RunRecord,
    User,
)
from db.vocab import Visibility

READY = Visibility.READY
"""Only containers with this ``status`` exist for readers; ``importing`` ones are an import's staging
(:mod:`db.importer`), invisible until its final flip.  Every read of collections, runs and qrels versions
filters on it."""


class NotFound(LookupError):
    """A named collection, run or qrels version does not exist."""


@dataclass(frozen=True)
class CollectionInfo:
    id: int
    name: str
    language: str | None
    description: str
    passages: int
    queries: int
    runs: list[str]
    qrels_versions: list[str]
    relevance_level: int = 2
    """Binary measures count grade ``>= relevance_level`` as relevant (:func:`relevance_level`)."""


@dataclass(frozen=True)
class SplitStats:
    """One row of DuReader-retrieval Table 3 style statistics."""

    split: str
    queries: int
    judged_queries: int
    judged_pairs: int
    relevant_pairs: int
    relevant_passages: int
    avg_relevant_per_query: float
    avg_query_chars: float
    avg_relevant_passage_chars: float | None


def collection_id(session: Session, name: str) -> int:
    """The id of the collection called ``name``."""
    found = session.scalar(select(Collection.id).where(Collection.name == name, Collection.status == READY))
    if found is None:
        raise _unknown_collection(session, name)
    return found


def _unknown_collection(session: Session, name: str) -> NotFound:
    """The error for a collection name the store lacks, naming the known collections."""
    known = (
        ", ".join(session.scalars(select(Collection.name).where(Collection.status == READY).order_by(Collection.name)))
        or "none"
    )
    return NotFound(f"no collection named {name!r} (collections: {known})")


def known_names(session: Session, names: Select[Any]) -> str:
    """The names ``names`` selects, comma-separated and shown safely (:func:`core.names.display_name`), or "none".

    For a ``NotFound`` message that lists what the user could have meant.
    """
    return ", ".join(display_name(n) for n in session.scalars(names)) or "none"


def list_collections(session: Session) -> list[CollectionInfo]:
    """Every shown collection with its passage and query counts, runs and qrels versions.

    Archived collections, runs and qrels versions (:mod:`db.archive`) are left out: this feeds the pickers.
    """
    passages = dict(
        session.execute(select(PassageRecord.collection_id, func.count()).group_by(PassageRecord.collection_id)).all()
    )
    queries = dict(
        session.execute(select(QueryRecord.collection_id, func.count()).group_by(QueryRecord.collection_id)).all()
    )
    runs: dict[int, list[str]] = {}
    for cid, name in session.execute(
        select(RunRecord.collection_id, RunRecord.name)
        .where(RunRecord.status == READY, RunRecord.archived_at.is_(None))
        .order_by(RunRecord.name)
    ):
        runs.setdefault(cid, []).append(name)
    versions: dict[int, list[str]] = {}
    for cid, name in session.execute(
        select(QrelsVersion.collection_id, QrelsVersion.name)
        .where(QrelsVersion.status == READY, QrelsVersion.archived_at.is_(None))
        .order_by(QrelsVersion.created_at, QrelsVersion.id)
    ):
        versions.setdefault(cid, []).append(name)
    return [
        CollectionInfo(
            id=c.id,
            name=c.name,
            language=c.language,
            description=c.description,
            passages=passages.get(c.id, 0),
            queries=queries.get(c.id, 0),
            runs=runs.get(c.id, []),
            qrels_versions=versions.get(c.id, []),
            relevance_level=c.relevance_level,
        )
        for c in session.scalars(
            select(Collection)
            .where(Collection.status == READY, Collection.archived_at.is_(None))
            .order_by(Collection.name)
        )
    ]


def relevance_level(session: Session, collection: str) -> int:
    """The collection's relevance level: binary measures count grade ``>= level`` as relevant.

    One value per collection, the default of ``pooljudge eval --collection``
    and of every page that shows a measure (TREC-style binary qrels use 1,
    T2Ranking-style 0-3 grades 2).  nDCG uses the graded label whatever the
    level.
    """
    found = session.scalar(
        select(Collection.relevance_level).where(Collection.name == collection, Collection.status == READY)
    )
    if found is None:
        raise _unknown_collection(session, collection)
    return found


def relevance_levels(session: Session) -> tuple[tuple[str, int], ...]:
    """``((collection, level), ...)`` of every shown collection, by name: a cheap key that changes with any
    level, and with an archive, restore or rename (pages cache their listings on it)."""
    return tuple(
        (name, level)
        for name, level in session.execute(
            select(Collection.name, Collection.relevance_level)
            .where(Collection.status == READY, Collection.archived_at.is_(None))
            .order_by(Collection.name)
        )
    )


def check_relevance_level(level: object, what: str = "relevance level") -> int:
    """``level`` as an ``int`` in ``1..CUTOFF_MAX`` (trec_eval reads it as a C int); refuses bool and non-int.

    Raises
    ------
    ValueError
        ``"{what} must be an integer >= 1 (at most 2147483647), got {level!r}"``.
    """
    refused = ValueError(f"{what} must be an integer >= 1 (at most {CUTOFF_MAX}), got {level!r}")
    # bool is an int: True would otherwise pass as level 1
    if not is_integer(level):
        raise refused
    assert isinstance(level, numbers.Integral)  # what is_integer checked (it does not narrow the type)
    if not 1 <= int(level) <= CUTOFF_MAX:
        raise refused
    return int(level)


def set_relevance_level(session: Session, collection: str, level: int, *, acting_user_id: int | None = None) -> int:
    """Set the collection's relevance level; returns the previous one.

    Parameters
    ----------
    collection : str
        The collection's name.
    level : int
        ``1..CUTOFF_MAX``; a bool or a non-int is refused.
    acting_user_id : int, optional
        The account changing it from the app: re-read inside this transaction
        and refused unless it is an active admin (the CLI, run by whoever owns
        the store, passes none).

    Raises
    ------
    ValueError
        For a bad level (nothing is changed).
    NotFound
        For an unknown collection.
    db.access.SignedOut
        When ``acting_user_id`` is not an active admin.
    """
    level = check_relevance_level(level)
    if acting_user_id is not None:
        require_account(session, acting_user_id, ADMIN_ROLES, action="change a collection's relevance level")
    row = session.scalar(select(Collection).where(Collection.name == collection, Collection.status == READY))
    if row is None:
        raise _unknown_collection(session, collection)
    previous = row.relevance_level
    row.relevance_level = level
    return previous


def _version_id(session: Session, cid: int, version: str | None) -> int | None:
    """The named qrels version, or the newest shown one when ``version`` is None (None if there is none).

    An archived version is found by its name only: hidden means never picked by default.
    """
    query = select(QrelsVersion.id).where(QrelsVersion.collection_id == cid, QrelsVersion.status == READY)
    if version is not None:
        found = session.scalar(query.where(QrelsVersion.name == version))
        if found is None:
            raise NotFound(f"no qrels version named {version!r} in this collection")
        return found
    return session.scalar(
        query.where(QrelsVersion.archived_at.is_(None))
        .order_by(QrelsVersion.created_at.desc(), QrelsVersion.id.desc())
        .limit(1)
    )


def stored_qrels(session: Session, collection: str, version: str | None = None) -> Qrels:
    """The graded qrels of a stored version (default: the newest) as ``{qid: {docid: grade}}``.

    Reads the store; :func:`core.formats.trec.load_qrels` reads a file.
    """
    vid = _version_id(session, collection_id(session, collection), version)
    qrels: Qrels = {}
    if vid is None:
        return qrels
    for qid, did, grade in session.execute(
        select(QrelsEntry.query_id, QrelsEntry.doc_id, QrelsEntry.grade).where(QrelsEntry.version_id == vid)
    ):
        qrels.setdefault(qid, {})[did] = grade
    return qrels


def stored_run(session: Session, collection: str, run: str) -> Run:
    """A run of the store as ``{qid: {docid: score}}``.

    Reads the store; :func:`core.formats.trec.load_run` reads a file.
    """
    cid = collection_id(session, collection)
    rid = session.scalar(
        select(RunRecord.id).where(RunRecord.collection_id == cid, RunRecord.name == run, RunRecord.status == READY)
    )
    if rid is None:
        known = (
            ", ".join(
                session.scalars(select(RunRecord.name).where(RunRecord.collection_id == cid, RunRecord.status == READY))
            )
            or "none"
        )
        raise NotFound(f"no run named {run!r} in collection {collection!r} (runs: {known})")
    result: Run = {}
    for qid, did, score in session.execute(
        select(RunEntryRecord.query_id, RunEntryRecord.doc_id, RunEntryRecord.score).where(RunEntryRecord.run_id == rid)
    ):
        result.setdefault(qid, {})[did] = score
    return result


def iter_passages(session: Session, collection: str, *, batch: int = 5_000) -> Iterator[Passage]:
    """Stream a collection's passages in document order (doc_id, position, id)."""
    cid = collection_id(session, collection)
    rows = session.execute(
        select(*_PASSAGE_COLUMNS)
        .where(PassageRecord.collection_id == cid)
        .order_by(PassageRecord.id)
        .execution_options(yield_per=batch)
    )
    for row in rows:
        yield _as_passage(row)


_PASSAGE_COLUMNS = (
    PassageRecord.ext_id,
    PassageRecord.text,
    PassageRecord.title,
    PassageRecord.doc_id,
    PassageRecord.position,
    PassageRecord.language,
)
"""The stored fields of a :class:`core.types.Passage`, in the order :func:`_as_passage` reads them."""


def _as_passage(row: Any) -> Passage:
    """A passage from a row of :data:`_PASSAGE_COLUMNS`."""
    ext_id, text, title, doc_id, position, language = row
    return Passage(id=ext_id, text=text, title=title, doc_id=doc_id, position=position, language=language)


def passages_by_id(session: Session, collection: str, ids: Iterable[str], *, chunk: int = 500) -> dict[str, Passage]:
    """The passages of a collection with the given ids, as ``{id: Passage}``.

    For showing a handful of passages (a query's top k): ids the collection
    lacks are simply absent from the result; duplicates are looked up once.
    """
    cid = collection_id(session, collection)
    wanted = sorted(set(ids))
    found: dict[str, Passage] = {}
    for start in range(0, len(wanted), chunk):
        for row in session.execute(
            select(*_PASSAGE_COLUMNS).where(
                PassageRecord.collection_id == cid, PassageRecord.ext_id.in_(wanted[start : start + chunk])
            )
        ):
            passage = _as_passage(row)
            found[passage.id] = passage
    return found


def passage_lengths(session: Session, collection: str) -> list[int]:
    """The length in characters of every passage of a collection, computed by the database (no text is loaded)."""
    cid = collection_id(session, collection)
    return list(session.scalars(select(func.length(PassageRecord.text)).where(PassageRecord.collection_id == cid)))


def document_layout(
    session: Session, collection: str, passage_ids: Iterable[str], *, chunk: int = 500
) -> list[Passage]:
    """Every passage of the documents that hold ``passage_ids``, without text (ids, ``doc_id``, ``position``).

    What :func:`core.analysis.relevant_positions` needs to place the relevant
    passages in their documents, without reading the corpus: passages with no
    document come back alone.
    """
    cid = collection_id(session, collection)
    wanted = sorted(set(passage_ids))
    documents: set[str] = set()
    out: dict[str, Passage] = {}
    for start in range(0, len(wanted), chunk):
        for ext_id, doc_id, position in session.execute(
            select(PassageRecord.ext_id, PassageRecord.doc_id, PassageRecord.position).where(
                PassageRecord.collection_id == cid, PassageRecord.ext_id.in_(wanted[start : start + chunk])
            )
        ):
            if doc_id is None:
                out[ext_id] = Passage(id=ext_id, text="", position=position)
            else:
                documents.add(doc_id)
    docs = sorted(documents)
    for start in range(0, len(docs), chunk):
        for ext_id, doc_id, position in session.execute(
            select(PassageRecord.ext_id, PassageRecord.doc_id, PassageRecord.position).where(
                PassageRecord.collection_id == cid, PassageRecord.doc_id.in_(docs[start : start + chunk])
            )
        ):
            out[ext_id] = Passage(id=ext_id, text="", doc_id=doc_id, position=position)
    return list(out.values())


def iter_queries(session: Session, collection: str) -> Iterator[Query]:
    """A collection's queries in import order."""
    cid = collection_id(session, collection)
    for q in session.scalars(select(QueryRecord).where(QueryRecord.collection_id == cid).order_by(QueryRecord.id)):
        yield Query(
            id=q.ext_id,
            text=q.text,
            split=q.split,
            type=q.type,
            domain=q.domain,
            language=q.language,
            translation=q.translation,
            answers=q.answers,
        )


def split_statistics(
    session: Session, collection: str, *, version: str | None = None, level: int = 1
) -> list[SplitStats]:
    """Per-split statistics as in DuReader-retrieval's Table 3.

    A passage counts as relevant when its grade in the qrels version is
    ``>= level``; passage lengths are those of relevant passages the store
    holds (``None`` when it holds none of them, e.g. a qrels-only import).
    Lengths are in characters.
    """
    cid = collection_id(session, collection)
    vid = _version_id(session, cid, version)
    splits = session.execute(
        select(QueryRecord.split, func.count(), func.avg(func.length(QueryRecord.text)))
        .where(QueryRecord.collection_id == cid)
        .group_by(QueryRecord.split)
    ).all()
    result = []
    for split, n_queries, avg_q in sorted(
        splits, key=lambda r: ("train", "dev", "test").index(r[0]) if r[0] in ("train", "dev", "test") else 9
    ):
        judged = relevant = rel_passages = judged_q = 0
        avg_p = None
        if vid is not None:
            in_split = (
                select(QueryRecord.ext_id)
                .where(QueryRecord.collection_id == cid, QueryRecord.split == split)
                .scalar_subquery()
            )
            base = select(QrelsEntry).where(QrelsEntry.version_id == vid, QrelsEntry.query_id.in_(in_split)).subquery()
            judged, relevant, rel_passages, judged_q = session.execute(
                select(
                    func.count(),
                    func.coalesce(func.sum(case((base.c.grade >= level, 1), else_=0)), 0),
                    func.count(distinct(case((base.c.grade >= level, base.c.doc_id)))),
                    func.count(distinct(base.c.query_id)),
                )
            ).one()
            p = aliased(PassageRecord)
            avg_p = session.scalar(
                select(func.avg(func.length(p.text))).where(
                    p.collection_id == cid,
                    p.ext_id.in_(select(base.c.doc_id).where(base.c.grade >= level).distinct()),
                )
            )
        result.append(
            SplitStats(
                split=split,
                queries=n_queries,
                judged_queries=judged_q,
                judged_pairs=judged,
                relevant_pairs=relevant,
                relevant_passages=rel_passages,
                avg_relevant_per_query=(relevant / judged_q) if judged_q else 0.0,
                avg_query_chars=float(avg_q or 0.0),
                avg_relevant_passage_chars=float(avg_p) if avg_p is not None else None,
            )
        )
    return result


def query_splits(session: Session, collection: str) -> list[str]:
    """The query splits of ``collection``: ``train``, ``dev``, ``test`` first (those it has), then the others by name.

    Parameters
    ----------
    session : Session
        An open session.
    collection : str
        A ready collection's name (``NotFound`` otherwise).

    Returns
    -------
    list of str
    """
    cid = collection_id(session, collection)
    found = set(session.scalars(select(QueryRecord.split).distinct().where(QueryRecord.collection_id == cid)))
    return sorted(found, key=lambda s: (SPLITS.index(s) if s in SPLITS else len(SPLITS), s))


def corpus_statistics(session: Session, collection: str) -> dict[str, Any]:
    """Passages, documents, average passage length (characters) and passages per document."""
    cid = collection_id(session, collection)
    passages, documents, avg_chars = session.execute(
        select(
            func.count(), func.count(distinct(PassageRecord.doc_id)), func.avg(func.length(PassageRecord.text))
        ).where(PassageRecord.collection_id == cid)
    ).one()
    return {
        "passages": passages,
        "documents": documents,
        "avg_passage_chars": float(avg_chars or 0.0),
        "passages_per_document": (passages / documents) if documents else None,
    }


def iter_judgments(session: Session, collection: str) -> Iterator[dict[str, Any]]:
    """Every judgment row of a collection with its annotator and pool provenance, oldest first.

    Provenance lists the runs that contributed the pair to the assignment's
    pool and their ranks: this is for export and analysis, never for the
    annotation screen.
    """
    cid = collection_id(session, collection)
    rows = session.execute(
        select(
            Judgment.id,
            QueryRecord.ext_id,
            PassageRecord.ext_id,
            User.username,
            Judgment.action,
            Judgment.grade,
            Judgment.note,
            Judgment.elapsed_ms,
            Judgment.created_at,
            Assignment.package,
            Assignment.pool_entry_id,
        )
        .join(QueryRecord, QueryRecord.id == Judgment.query_id)
        .join(PassageRecord, PassageRecord.id == Judgment.passage_id)
        .join(User, User.id == Judgment.user_id)
        .outerjoin(Assignment, Assignment.id == Judgment.assignment_id)
        .where(QueryRecord.collection_id == cid)
        .order_by(Judgment.created_at, Judgment.id)
    ).all()
    entry_ids = {r[10] for r in rows if r[10] is not None}
    provenance: dict[int, list[dict[str, Any]]] = {}
    if entry_ids:
        for entry_id, run_name, rank, score in session.execute(
            select(PoolProvenance.pool_entry_id, RunRecord.name, PoolProvenance.rank, PoolProvenance.score)
            .join(RunRecord, RunRecord.id == PoolProvenance.run_id)
            .where(PoolProvenance.pool_entry_id.in_(entry_ids))
            .order_by(PoolProvenance.pool_entry_id, PoolProvenance.rank)
        ):
            provenance.setdefault(entry_id, []).append({"run": run_name, "rank": rank, "score": score})
    pools = (
        dict(session.execute(select(PoolEntry.id, PoolEntry.pool_id).where(PoolEntry.id.in_(entry_ids))).all())
        if entry_ids
        else {}
    )
    for jid, qid, pid, user, action, grade, note, elapsed, created, package, entry_id in rows:
        yield {
            "judgment_id": jid,
            "query_id": qid,
            "doc_id": pid,
            "annotator": user,
            "action": action,
            "grade": grade,
            "note": note,
            "elapsed_ms": elapsed,
            "created_at": created.isoformat(),
            "package": package,
            "pool_id": pools.get(entry_id),
            "provenance": provenance.get(entry_id, []),
        }


def import_history(session: Session) -> list[dict[str, Any]]:
    """Every import, newest first, with what it added."""
    rows = session.execute(
        select(
            Collection.name,
            ImportRecord.format,
            ImportRecord.source,
            ImportRecord.mode,
            ImportRecord.counts,
            ImportRecord.created_at,
        )
        .join(Collection, Collection.id == ImportRecord.collection_id)
        .where(Collection.status == READY)
        .order_by(ImportRecord.created_at.desc(), ImportRecord.id.desc())
    ).all()
    return [
        {
            "collection": name,
            "format": fmt,
            "source": source,
            "mode": mode,
            "passages": counts.get("passages_added"),
            "queries": counts.get("queries_added"),
            "qrels": counts.get("qrels_added"),
            "runs": ", ".join(counts.get("runs", {})),
            "at": at,
        }
        for name, fmt, source, mode, counts, at in rows
    ]


@dataclass(frozen=True)
class RunInfo:
    """A shown run of a collection (:func:`list_runs`)."""

    name: str
    source: str
    """Who stored it: ``"import"`` for an imported file, ``"retriever"`` (the default of :func:`db.importer.store_run`) for a retrieved run."""
    params: dict[str, Any]
    """The run's configuration (a retriever's ``spec``, ``k``, ...); empty for an imported run."""
    created_at: datetime
    queries: int
    """Queries with at least one entry."""
    entries: int


def list_runs(session: Session, collection: str) -> list[RunInfo]:
    """A collection's shown runs (archived ones left out) with their source, configuration and size, oldest first."""
    cid = collection_id(session, collection)
    sizes = {
        rid: (queries, entries)
        for rid, queries, entries in session.execute(
            select(RunEntryRecord.run_id, func.count(distinct(RunEntryRecord.query_id)), func.count())
            .join(RunRecord, RunRecord.id == RunEntryRecord.run_id)
            .where(RunRecord.collection_id == cid, RunRecord.status == READY)
            .group_by(RunEntryRecord.run_id)
        )
    }
    return [
        RunInfo(
            name=r.name,
            source=r.source,
            params=r.params,
            created_at=r.created_at,
            queries=sizes.get(r.id, (0, 0))[0],
            entries=sizes.get(r.id, (0, 0))[1],
        )
        for r in session.scalars(
            select(RunRecord)
            .where(RunRecord.collection_id == cid, RunRecord.status == READY, RunRecord.archived_at.is_(None))
            .order_by(RunRecord.created_at, RunRecord.id)
        )
    ]


def run_names(session: Session, collection: str) -> list[str]:
    """The names :func:`list_runs` lists, in its order, without counting entries (pages read them every run)."""
    cid = collection_id(session, collection)
    return list(
        session.scalars(
            select(RunRecord.name)
            .where(RunRecord.collection_id == cid, RunRecord.status == READY, RunRecord.archived_at.is_(None))
            .order_by(RunRecord.created_at, RunRecord.id)
        )
    )


def has_collections(session: Session, name: str | None = None) -> bool:
    """Whether the store holds any collection, or one named ``name``.

    Every row counts, whatever its status: a collection being imported or archived still takes its name.
    """
    query = select(func.count()).select_from(Collection)
    if name is not None:
        query = query.where(Collection.name == name)
    return bool(session.scalar(query))


def statistics_marker(session: Session) -> tuple[int, int, int]:
    """Changes whenever collection statistics can change: a collection, an import or a qrels version added (made ready)."""
    return (
        _highest_id(session, Collection.id, Collection.status == READY),
        _highest_id(session, ImportRecord.id),
        _highest_id(session, QrelsVersion.id, QrelsVersion.status == READY),
    )


def _highest_id(session: Session, column: InstrumentedAttribute[int], *where: ColumnElement[bool]) -> int:
    """The largest ``column`` among the rows matching ``where``; 0 when there is none."""
    return session.scalar(select(func.max(column)).where(*where)) or 0
