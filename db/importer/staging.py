"""The staging file: the whole input parsed into a private SQLite file, checked there and against the store."""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from core.lang import detect_language
from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer.common import (
    CHECK_ROWS,
    PASSAGE_FIELDS,
    QUERY_FIELDS,
    Plan,
    StagedProgress,
    UnknownIds,
    chunks,
    collection_has_rows,
    error_at,
    first_duplicate,
    known_in_store,
)
from db.models import PassageRecord, QrelsEntry, QueryRecord

if TYPE_CHECKING:
    from db.engine import Store


@dataclass
class _Counts:
    passages: int = 0
    queries: int = 0
    qrels: int = 0
    runs: dict[str, int] = field(default_factory=dict)


_STAGING_SCHEMA = """
CREATE TABLE passages (ext_id TEXT PRIMARY KEY, doc_id TEXT, position INTEGER, title TEXT, text TEXT,
                       language TEXT, origin TEXT, skip INTEGER NOT NULL DEFAULT 0);
CREATE TABLE queries (ext_id TEXT PRIMARY KEY, text TEXT, split TEXT, type TEXT, domain TEXT, language TEXT,
                      translation TEXT, answers TEXT, origin TEXT, skip INTEGER NOT NULL DEFAULT 0);
CREATE TABLE qrels (query_id TEXT, doc_id TEXT, grade INTEGER, origin TEXT, skip INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (query_id, doc_id));
CREATE TABLE run_entries (run INTEGER, query_id TEXT, doc_id TEXT, score REAL, origin TEXT,
                          PRIMARY KEY (run, query_id, doc_id));
"""


class Staging:
    """A throw-away SQLite file holding the validated input; its primary keys find duplicates.

    It is private to this process (no WAL, no journal, no fsync): losing it in
    a crash loses nothing, and it is deleted when the import ends either way.
    """

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        fd, self.path = tempfile.mkstemp(prefix="pooljudge-import-", suffix=".sqlite", dir=directory)
        os.close(fd)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + _STAGING_SCHEMA)

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *_exc: Any) -> None:
        self.db.close()
        for suffix in ("", "-journal"):
            try:
                os.unlink(self.path + suffix)
            except FileNotFoundError:
                pass

    def count(self, table: str, where: str = "skip = 0", params: tuple = ()) -> int:
        return self.db.execute(f"SELECT count(*) FROM {table} WHERE {where}", params).fetchone()[0]


def stage_source(staging: Staging, source: CollectionSource, tick: StagedProgress) -> _Counts:
    """Read every stream into the staging file: all parse errors and duplicates surface here."""
    read = [0]

    def stage(table: str, columns: int, stream, to_row, key, what) -> int:
        sql = f"INSERT INTO {table} VALUES ({', '.join('?' * columns)})"
        n = 0
        staging.db.execute("BEGIN")
        try:
            for chunk in chunks(stream()):
                staging.db.executemany(sql, [to_row(record) for record in chunk])
                n += len(chunk)
                read[0] += len(chunk)
                tick("reading", read[0], None)
        except sqlite3.IntegrityError:
            staging.db.execute("ROLLBACK")
            duplicate = first_duplicate(stream(), key, what)
            if duplicate is not None:
                raise duplicate from None
            raise
        except BaseException:
            staging.db.execute("ROLLBACK")
            raise
        staging.db.execute("COMMIT")
        return n

    counts = _Counts()
    counts.passages = stage("passages", 8, source.passages, _staged_passage, lambda r: r.id, "passage id")
    counts.queries = stage("queries", 10, source.queries, _staged_query, lambda r: r.id, "query id")
    counts.qrels = stage("qrels", 5, source.qrels, _staged_qrel, lambda e: (e.query_id, e.doc_id), "qrels entry")
    for index, (run_name, stream) in enumerate(source.runs.items()):
        counts.runs[run_name] = stage(
            "run_entries",
            5,
            stream,
            lambda e, i=index: (i, e.query_id, e.doc_id, e.score, e.origin),
            lambda e: (e.query_id, e.doc_id),
            "run entry",
        )
    return counts


def _staged_passage(p: Passage) -> tuple:
    return (
        p.id,
        p.doc_id,
        p.position,
        p.title or "",
        p.text,
        p.language or detect_language(p.text[:400] or p.title),
        p.origin,
        0,
    )


def _staged_query(q: Query) -> tuple:
    answers = None if q.answers is None else json.dumps(q.answers, ensure_ascii=False)
    return (
        q.id,
        q.text,
        q.split,
        q.type,
        q.domain,
        q.language or detect_language(q.text[:400]),
        q.translation,
        answers,
        q.origin,
        0,
    )


def _staged_qrel(e: QrelEntry) -> tuple:
    return (e.query_id, e.doc_id, e.grade, e.origin, 0)


def check_against_store(
    store: Store, staging: Staging, plan: Plan, qrels_name: str, tick: StagedProgress
) -> tuple[int, int, int]:
    """Merge: mark records identical to stored ones as skipped, refuse changed ones; read transactions only.

    Returns the numbers of passages, queries and qrels entries skipped.
    """
    done = [0]  # records checked so far, for the progress
    passages = _skip_stored_records(
        store, staging, plan, "passages", PassageRecord, PASSAGE_FIELDS, "passage", tick, done
    )
    queries = _skip_stored_records(
        store, staging, plan, "queries", QueryRecord, QUERY_FIELDS, "query", tick, done, decode=_decode_answers
    )
    qrels = 0
    if plan.version_id is not None and staging.count("qrels", "1"):
        qrels = _skip_stored_qrels(store, staging, plan.version_id, qrels_name)
    return passages, queries, qrels


def _decode_answers(values: list) -> list:
    """The staged query fields with ``answers`` (the last, stored as JSON text in the staging file) decoded."""
    values[-1] = None if values[-1] is None else json.loads(values[-1])
    return values


def _skip_stored_records(
    store: Store,
    staging: Staging,
    plan: Plan,
    table: str,
    model,
    fields: tuple[str, ...],
    what: str,
    tick: StagedProgress,
    done: list[int],
    decode=None,
) -> int:
    """Mark the staged passages or queries that the collection holds unchanged as skipped; refuse a changed one.

    Reads the store in transactions of :data:`CHECK_ROWS` ids each; returns how many were skipped.
    """
    skipped = 0
    last = 0
    while rows := staging.db.execute(
        f"SELECT rowid, ext_id, origin, {', '.join(fields)} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
        (last, CHECK_ROWS),
    ).fetchall():
        last = rows[-1][0]
        with store.read() as session:
            stored = {
                r[0]: r[1:]
                for r in session.execute(
                    select(model.ext_id, *(getattr(model, f) for f in fields)).where(
                        model.collection_id == plan.collection_id, model.ext_id.in_([r[1] for r in rows])
                    )
                )
            }
        same = []
        for rowid, ext_id, origin, *values in rows:
            old = stored.get(ext_id)
            if old is None:
                continue
            if decode is not None:
                values = decode(values)
            changed = [
                f
                for f, new, was in zip(fields, values, old)
                if new != was and not (f == "title" and not new and not was)
            ]
            if changed:
                raise error_at(
                    origin,
                    f"{what} id {ext_id!r} already exists in the collection with a different {', '.join(changed)}",
                )
            same.append((rowid,))
        staging.db.executemany(f"UPDATE {table} SET skip = 1 WHERE rowid = ?", same)
        skipped += len(same)
        done[0] += len(rows)
        tick("checking", done[0], None)
    return skipped


def _skip_stored_qrels(store: Store, staging: Staging, version_id: int, qrels_name: str) -> int:
    """Mark the staged qrels entries that the version holds with the same grade as skipped; refuse another grade."""
    with store.read() as session:
        existing = {
            (q, d): g
            for q, d, g in session.execute(
                select(QrelsEntry.query_id, QrelsEntry.doc_id, QrelsEntry.grade).where(
                    QrelsEntry.version_id == version_id
                )
            )
        }
    same = []
    for rowid, query_id, doc_id, grade, origin in staging.db.execute(
        "SELECT rowid, query_id, doc_id, grade, origin FROM qrels ORDER BY rowid"
    ):
        stored = existing.get((query_id, doc_id))
        if stored is None:
            continue
        if stored != grade:
            raise error_at(
                origin,
                f"qrels entry ({query_id!r}, {doc_id!r}) already has grade {stored} in version "
                f"{qrels_name!r}, this file says {grade}",
            )
        same.append((rowid,))
    staging.db.executemany("UPDATE qrels SET skip = 1 WHERE rowid = ?", same)
    return len(same)


def staged_unknown(store: Store, staging: Staging, plan: Plan, tick: StagedProgress) -> list[UnknownIds]:
    """The ids the staged qrels and runs name that neither the staged input nor the stored collection holds.

    Counted per kind, distinct, with the origin of each id's first use; the stored collection is asked in
    read transactions of :data:`CHECK_ROWS` ids each.
    """
    result = []
    done = 0
    for kind, column, table, model in (
        ("query", "query_id", "queries", QueryRecord),
        ("passage", "doc_id", "passages", PassageRecord),
    ):
        unknown = UnknownIds(kind)
        result.append(unknown)
        staged_any = staging.db.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
        with store.read() as session:
            stored_any = collection_has_rows(session, plan.collection_id, model)
        if not (staged_any or stored_any):
            unknown.checked = False
            continue
        refs = f"temp.refs_{table}"
        staging.db.execute(f"DROP TABLE IF EXISTS {refs}")
        staging.db.execute(f"CREATE TABLE {refs} (id TEXT PRIMARY KEY, origin TEXT)")
        for referring in ("qrels", "run_entries"):
            # rowid order, first insert wins: each id keeps the origin of its first use
            staging.db.execute(
                f"INSERT OR IGNORE INTO {refs} SELECT {column}, origin FROM {referring} "
                f"WHERE {column} NOT IN (SELECT ext_id FROM {table}) ORDER BY rowid"
            )
        cursor = staging.db.execute(f"SELECT id, origin FROM {refs} ORDER BY rowid")
        while rows := cursor.fetchmany(CHECK_ROWS):
            known: set[str] = set()
            if stored_any:
                assert plan.collection_id is not None  # only a stored collection has rows
                with store.read() as session:
                    known = known_in_store(session, plan.collection_id, model, [r[0] for r in rows])
            unknown.add(rows, known)
            done += len(rows)
            tick("checking", done, None)
        staging.db.execute(f"DROP TABLE {refs}")
    return result
