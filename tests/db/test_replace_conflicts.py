"""No unique key of judgments, or of a row they depend on, is resolved by deleting or rewriting that row (issue 21).

SQLite resolves ``REPLACE`` / ``INSERT OR REPLACE`` / ``UPDATE OR REPLACE`` by deleting the row the
new one collides with, without firing DELETE triggers (unless ``recursive_triggers`` is on) and,
with foreign keys off (the ``sqlite3`` shell's default), without looking at what refers to it.
These tests attack a store built through the project's own API from the real ``sqlite3`` shell with
its default settings, through every unique key of ``judgments`` and of every table that judgments
refer to directly or through other references, and then the same keys with ``INSERT ... ON CONFLICT
... DO UPDATE`` on SQLite and PostgreSQL.  Every attempt must fail, and the store must be unchanged.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import text
from sqlalchemy.exc import DatabaseError

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.labelling import next_item, record_judgment
from db.pools import save_pool
from tests.db.labelling_helpers import add_accounts, import_two_queries

SHELL = shutil.which("sqlite3")

# Every unique key of judgments and of the tables they reach through foreign keys.  A key is the list
# of (column, expression on the victim row) that a colliding row copies; the expression differs from
# the column only for the case-insensitive username index (``upper`` collides on ``lower`` alone).
KEYS: dict[str, dict[str, list[tuple[str, str]]]] = {
    "judgments": {
        "id": [("id", "id")],
        "assignment_id,submission_token": [
            ("assignment_id", "assignment_id"),
            ("submission_token", "submission_token"),
        ],
    },
    "users": {
        "id": [("id", "id")],
        "username": [("username", "username")],
        "lower(username)": [("username", "upper(username)")],
    },
    "assignments": {
        "id": [("id", "id")],
        "user_id,query_id,passage_id": [("user_id", "user_id"), ("query_id", "query_id"), ("passage_id", "passage_id")],
    },
    "passages": {
        "id": [("id", "id")],
        "collection_id,ext_id": [("collection_id", "collection_id"), ("ext_id", "ext_id")],
    },
    "queries": {
        "id": [("id", "id")],
        "collection_id,ext_id": [("collection_id", "collection_id"), ("ext_id", "ext_id")],
    },
    "pool_entries": {
        "id": [("id", "id")],
        "pool_id,query_id,passage_id": [("pool_id", "pool_id"), ("query_id", "query_id"), ("passage_id", "passage_id")],
    },
    "packages": {"id": [("id", "id")], "name": [("name", "name")]},
    "pools": {"id": [("id", "id")], "collection_id,name": [("collection_id", "collection_id"), ("name", "name")]},
    "collections": {"id": [("id", "id")], "name": [("name", "name")]},
}
# What a row colliding on ``id`` alone changes so that it collides on no other key of its table.
ID_ONLY = {
    "judgments": {"submission_token": "'fresh-token'"},
    "users": {"username": "'mallory'"},
    "assignments": {"user_id": "(SELECT id FROM users WHERE username = 'admin')"},
    "passages": {"ext_id": "'fresh'"},
    "queries": {"ext_id": "'fresh'"},
    "pool_entries": {"passage_id": "(SELECT id FROM passages WHERE ext_id = 'x')"},
    "packages": {"name": "'fresh'"},
    "pools": {"name": "'fresh'"},
    "collections": {"name": "'fresh'"},
}
# The trigger messages (or the foreign key's refusal, with foreign keys on) a refused attempt may show.
REFUSED = re.compile(r"append-only|already exists|cannot change|keep their|FOREIGN KEY constraint failed")


def _label_some(s, users: Mapping[str, int]) -> None:
    """ann1 labels its first two items, ann2 its first; every label carries a submission token."""
    for who, count in (("ann1", 2), ("ann2", 1)):
        for n in range(count):
            item = next_item(s, users[who])
            assert item is not None
            record_judgment(s, users[who], item.assignment_id, 3 - n, note="kept", token=f"{who}-{n}")


def _build(store: Store) -> dict[str, tuple[int, int]]:
    """A store with judgments; ``{table: (victim id, other id)}``, the victim being a row ann1's first judgment needs."""
    with store.write() as s:
        import_two_queries(s)
        users = add_accounts(s, ("ann1", "ann2", "ann3"))
        other = CollectionSource(
            passages=lambda: iter([Passage("x", "another passage")]),
            queries=lambda: iter([Query("y", "another query")]),
            qrels=lambda: iter(()),
        )
        import_collection(s, other, name="c2", format="t", location="m")
        save_pool(s, "c2", "p2", {"y": {"x": []}}, method="depth")
        create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=7, package_size=4)
        _label_some(s, users)
    with store.read() as s:
        q = lambda sql: s.execute(text(sql)).one()  # noqa: E731
        j, a, query, passage, user = q(
            "SELECT id, assignment_id, query_id, passage_id, user_id FROM judgments WHERE submission_token = 'ann1-0'"
        )
        entry, package = q(f"SELECT pool_entry_id, package_id FROM assignments WHERE id = {a}")
        pool = q(f"SELECT pool_id FROM pool_entries WHERE id = {entry}")[0]
        collection = q(f"SELECT collection_id FROM queries WHERE id = {query}")[0]
        victims = {
            "judgments": j,
            "users": user,
            "assignments": a,
            "queries": query,
            "passages": passage,
            "pool_entries": entry,
            "packages": package,
            "pools": pool,
            "collections": collection,
        }
        assert None not in victims.values()
        return {t: (v, q(f"SELECT min(id) FROM {t} WHERE id <> {v}")[0]) for t, v in victims.items()}


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _copy(columns: list[str], table: str, victim: int, overrides: Mapping[str, str]) -> str:
    """``(cols) SELECT ...`` copying the victim row, with ``overrides`` (SQL expressions on it)."""
    values = ", ".join(overrides.get(c, c) for c in columns)
    return f"{table} ({', '.join(columns)}) SELECT {values} FROM {table} WHERE id = {victim}"


def _fresh_id(table: str) -> str:
    return f"(SELECT max(id) + 1000 FROM {table})"


def _overrides(table: str, key: str) -> dict[str, str]:
    """A row that collides with the victim on ``key`` and on no other unique key of ``table``."""
    if key == "id":
        return {**ID_ONLY[table], "note": "'rewritten'"} if table == "judgments" else dict(ID_ONLY[table])
    changed = {c: e for c, e in KEYS[table][key] if c != e}
    return {
        "id": _fresh_id(table),
        **changed,
        **({"grade": "0", "note": "'rewritten'"} if table == "judgments" else {}),
    }


def _replace_attempts(conn: sqlite3.Connection, ids: Mapping[str, tuple[int, int]]) -> list[str]:
    """REPLACE, INSERT OR REPLACE and UPDATE OR REPLACE through every key of :data:`KEYS`."""
    attempts = []
    for table, keys in KEYS.items():
        victim, other = ids[table]
        columns = _columns(conn, table)
        for key, pairs in keys.items():
            row = _copy(columns, table, victim, _overrides(table, key))
            attempts += [f"REPLACE INTO {row};", f"INSERT OR REPLACE INTO {row};"]
            sets = ", ".join(f"{c} = (SELECT {e} FROM {table} WHERE id = {victim})" for c, e in pairs)
            attempts.append(f"UPDATE OR REPLACE {table} SET {sets} WHERE id = {other};")
    return attempts


def _closure(conn: sqlite3.Connection) -> set[str]:
    """judgments and every table it reaches through foreign keys, read from the store itself."""
    seen, todo = set(), ["judgments"]
    while todo:
        table = todo.pop()
        if table not in seen:
            seen.add(table)
            todo += [row[2] for row in conn.execute(f"PRAGMA foreign_key_list({table})")]
    return seen


def _unique_keys(conn: sqlite3.Connection, table: str) -> set[str]:
    """The store's unique keys of ``table`` (its INTEGER PRIMARY KEY ``id`` included) as :data:`KEYS` names them."""
    keys = {"id"}
    for _seq, name, unique, _origin, _partial in conn.execute(f"PRAGMA index_list({table})"):
        if unique:
            columns = [row[2] for row in conn.execute(f"PRAGMA index_info({name})")]
            if None in columns:  # an expression index: its expression as written
                sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
                expression = re.search(r"\((.*)\)\s*$", sql)
                assert expression is not None, sql
                keys.add(expression.group(1))
            else:
                keys.add(",".join(columns))
    return keys


def _shell(db: Path, sql: str, home: Path) -> subprocess.CompletedProcess[str]:
    # HOME without a ~/.sqliterc: nothing but the shell's own defaults applies.
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin"}
    return subprocess.run([SHELL or "sqlite3", str(db), sql], capture_output=True, text=True, env=env, timeout=60)


def _orphans(conn: sqlite3.Connection) -> int:
    """Judgments one of whose owners (or their owners, up to the collection) is missing."""
    return conn.execute(
        "SELECT count(*) FROM judgments j "
        "LEFT JOIN users u ON u.id = j.user_id LEFT JOIN queries q ON q.id = j.query_id "
        "LEFT JOIN passages p ON p.id = j.passage_id LEFT JOIN assignments a ON a.id = j.assignment_id "
        "LEFT JOIN collections cq ON cq.id = q.collection_id LEFT JOIN collections cp ON cp.id = p.collection_id "
        "LEFT JOIN pool_entries e ON e.id = a.pool_entry_id LEFT JOIN packages k ON k.id = a.package_id "
        "LEFT JOIN pools o ON o.id = e.pool_id "
        "WHERE u.id IS NULL OR q.id IS NULL OR p.id IS NULL OR a.id IS NULL OR cq.id IS NULL OR cp.id IS NULL "
        "OR e.id IS NULL OR k.id IS NULL OR o.id IS NULL"
    ).fetchone()[0]


@pytest.fixture
def shell_store(tmp_path):
    """A SQLite store with judgments, closed again: ``(database path, {table: (victim, other)})``."""
    if SHELL is None:
        message = "the sqlite3 command-line shell is not installed (`make test` installs Debian's sqlite3)"
        if os.environ.get("CI"):  # as for PostgreSQL: CI installs it, so its absence there is a failure
            pytest.fail(message)
        pytest.skip(message)
    path = tmp_path / "store.db"
    store = Store(sqlite_url(path))
    try:
        ids = _build(store)
    finally:
        store.dispose()
    return path, ids


def test_the_attacks_cover_every_unique_key_the_judgments_depend_on(shell_store):
    """:data:`KEYS` is the store's own list: a new unique key on one of these tables must be attacked here too."""
    path, _ids = shell_store
    with sqlite3.connect(path) as conn:
        assert _closure(conn) == set(KEYS)
        assert {t: _unique_keys(conn, t) for t in KEYS} == {t: set(keys) for t, keys in KEYS.items()}


@pytest.mark.slow
@pytest.mark.parametrize("pragma", ["", "PRAGMA foreign_keys = ON; "], ids=["shell-defaults", "foreign-keys-on"])
def test_replace_through_any_unique_key_is_refused_from_the_sqlite3_shell(shell_store, tmp_path, pragma):
    path, ids = shell_store
    # the shell's defaults are the attacker's: no foreign keys, no recursive triggers
    assert _shell(path, "PRAGMA foreign_keys; PRAGMA recursive_triggers;", tmp_path).stdout.split() == ["0", "0"]
    before = _shell(path, ".dump", tmp_path).stdout
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*), sum(grade) FROM judgments").fetchone() == (3, 8)
        attempts = _replace_attempts(conn, ids)
    assert len(attempts) == 3 * sum(len(keys) for keys in KEYS.values()) == 57
    accepted = []
    for sql in attempts:
        done = _shell(path, pragma + sql, tmp_path)
        if done.returncode == 0 or not REFUSED.search(done.stderr):
            accepted.append((sql, done.returncode, done.stderr.strip()))
    assert accepted == []
    assert _shell(path, ".dump", tmp_path).stdout == before  # every row of every table, byte for byte
    assert _shell(path, "PRAGMA foreign_key_check;", tmp_path).stdout == ""
    with sqlite3.connect(path) as conn:
        assert _orphans(conn) == 0
        assert conn.execute("SELECT count(*), sum(grade), min(note) FROM judgments").fetchone() == (3, 8, "kept")


def test_an_unjudged_row_may_still_take_a_free_key(shell_store, tmp_path):
    """The guards refuse collisions, not ordinary writes: the shell may still add and rename unjudged rows."""
    path, _ids = shell_store
    done = _shell(
        path,
        "INSERT INTO users (username, password_hash, role, active, created_at) "
        "SELECT 'newcomer', password_hash, role, active, created_at FROM users WHERE username = 'ann3'; "
        "UPDATE users SET username = 'renamed' WHERE username = 'newcomer'; "
        "UPDATE collections SET name = 'c2-renamed' WHERE name = 'c2';",
        tmp_path,
    )
    assert (done.returncode, done.stderr) == (0, "")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT count(*) FROM users WHERE username IN ('newcomer', 'renamed')").fetchone() == (1,)
        assert conn.execute("SELECT name FROM collections ORDER BY id").fetchall() == [("c",), ("c2-renamed",)]


def _upsert_attempts(columns: Mapping[str, list[str]], ids: Mapping[str, tuple[int, int]]) -> list[str]:
    """``INSERT ... ON CONFLICT (key) DO UPDATE`` through every key, each rewriting the victim's key or content."""
    attempts = []
    for table, keys in KEYS.items():
        victim, _other = ids[table]
        for key, pairs in keys.items():
            row = _copy(columns[table], table, victim, _overrides(table, key))
            target = "lower(username)" if key == "lower(username)" else ", ".join(c for c, _ in pairs)
            for change in _upsert_changes(table, key):
                attempts.append(f"INSERT INTO {row} ON CONFLICT ({target}) DO UPDATE SET {change}")
    return attempts


def _upsert_changes(table: str, key: str) -> list[str]:
    """What an upsert on ``key`` tries to rewrite in the row it collides with."""
    if table == "judgments":
        return ["grade = 0, note = 'rewritten'"]
    natural = {
        "users": ["username = 'mallory'"],
        "assignments": [f"passage_id = {_other_passage()}", f"query_id = {_other_query()}"],
        "passages": ["ext_id = 'fresh'"],
        "queries": ["ext_id = 'fresh'"],
    }.get(table, [])
    new_id = f"id = {table}.id + 1000" if key == "id" else "id = excluded.id"
    return [new_id, *natural]


def _other_passage() -> str:
    return "(SELECT min(id) FROM passages WHERE ext_id = 'x')"


def _other_query() -> str:
    return "(SELECT min(id) FROM queries WHERE ext_id = 'y')"


def _rows(store: Store) -> dict[str, list[tuple]]:
    with store.read() as s:
        return {t: [tuple(r) for r in s.execute(text(f"SELECT * FROM {t} ORDER BY id"))] for t in KEYS}


def test_upserts_through_any_unique_key_rewrite_nothing(store):
    """``ON CONFLICT ... DO UPDATE`` cannot change a judgment, nor the id or natural key of a judged owner row."""
    ids = _build(store)
    with store.engine.connect() as conn:
        columns = {t: [c["name"] for c in sa_inspect(conn).get_columns(t)] for t in KEYS}
    before = _rows(store)
    attempts = _upsert_attempts(columns, ids)
    assert len(attempts) == 30
    accepted = []
    for sql in attempts:
        try:
            with store.write() as s:
                s.execute(text(sql))
        except DatabaseError as exc:
            if REFUSED.search(str(exc.orig)) or "violates foreign key constraint" in str(exc.orig):
                continue
            accepted.append((sql, str(exc.orig)))  # refused, but not by a guard (e.g. a syntax error)
        else:
            accepted.append((sql, "stored"))
    assert accepted == []
    assert _rows(store) == before
    with store.read() as s:
        assert s.execute(text("SELECT count(*), sum(grade) FROM judgments")).one() == (3, 8)


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request, tmp_path):
    """The URL of an empty database (no schema), SQLite and PostgreSQL."""
    if request.param == "sqlite":
        return sqlite_url(tmp_path / "s.db")
    return request.getfixturevalue("pg_databases").create(migrated=False)  # dropped at the end of the session


@pytest.mark.slow
def test_migration_0010_downgrades_and_upgrades_again(empty_url):
    """Down to 0009 the guards of 0010 are gone (0004's id-only REPLACE guard is back), and up again they return."""
    from alembic import command

    from db.migrate import alembic_config

    store = Store(empty_url)
    try:
        dialect = store.engine.dialect.name
        command.downgrade(alembic_config(store.engine), "0009")
        assert _guards(store) == ({"judgments_no_replace"} if dialect == "sqlite" else set())
        command.upgrade(alembic_config(store.engine), "head")
        if dialect == "sqlite":
            expected = {f"{t}_no_replace" for t in KEYS} | {f"{t}_keys_no_replace" for t in KEYS if t != "judgments"}
        else:
            expected = {f"{t}_judged_keys_stay" for t in ("users", "queries", "passages", "assignments")}
        assert _guards(store) == expected
    finally:
        store.dispose()


def _guards(store: Store) -> set[str]:
    """The names of 0010's triggers (and 0004's REPLACE guard) in the store."""
    if store.engine.dialect.name == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
    else:
        sql = "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal"
    with store.read() as s:
        names = set(s.execute(text(sql)).scalars())
    return {n for n in names if n.endswith(("_no_replace", "_judged_keys_stay"))}
