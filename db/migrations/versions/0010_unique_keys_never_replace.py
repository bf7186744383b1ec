"""unique keys never replace: no conflict on a unique key deletes or rewrites what judgments depend on

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27

SQLite resolves ``REPLACE``, ``INSERT OR REPLACE`` and ``UPDATE OR REPLACE`` by
deleting the row the new one collides with, on any unique key; that delete
fires no DELETE trigger unless ``recursive_triggers`` is on, and with foreign
keys off (the ``sqlite3`` shell's default) nothing checks what referred to the
deleted row.  0004's guard looked at ``judgments.id`` only, so a REPLACE
through ``(assignment_id, submission_token)`` rewrote a judgment, and one
through ``users.username`` (or the unique keys of assignments, passages,
queries) deleted an owner and orphaned its judgments.

* SQLite: on ``judgments`` and on every table it reaches through foreign keys
  (users, assignments, queries, passages, pool_entries, packages, pools,
  collections), a BEFORE INSERT trigger refuses a row that collides with an
  existing one on ANY unique key, and a BEFORE UPDATE trigger refuses a
  change of ``id`` and a key that another row holds.  Triggers fire whatever
  the connection's PRAGMAs, and a refused row never reaches conflict
  resolution, so REPLACE has nothing to delete.  Ordinary inserts and updates
  are untouched: a collision they make failed on the UNIQUE constraint before
  and fails on the trigger now (both are ``IntegrityError``).
* Both dialects: the key of a row that judgments refer to stays as it was
  (a user's username, a query's or passage's ``(collection_id, ext_id)``, an
  assignment's ``(query_id, passage_id)``), so that ``INSERT ... ON CONFLICT
  ... DO UPDATE`` (PostgreSQL's upsert, SQLite's too) cannot change what a
  stored judgment is about.  An assignment's ``user_id`` may change: the app
  hands an open adjudication to another account and keeps the row.  On
  PostgreSQL an upsert on ``judgments`` already fires the append-only UPDATE
  trigger, and the foreign keys, always enforced, refuse a new ``id`` for a
  referenced row.
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

# A unique key: (column, template) pairs; the template wraps the column for an expression index.
Key = tuple[tuple[str, str], ...]


def _key(*columns: str) -> Key:
    return tuple((column, "{}") for column in columns)


# The unique keys besides ``id`` of judgments and of each table it reaches through foreign keys
# (tests/db/test_replace_conflicts.py compares this list with the store's own indexes).
KEYS: dict[str, tuple[Key, ...]] = {
    "judgments": (_key("assignment_id", "submission_token"),),
    "users": (_key("username"), (("username", "lower({})"),)),
    "assignments": (_key("user_id", "query_id", "passage_id"),),
    "queries": (_key("collection_id", "ext_id"),),
    "passages": (_key("collection_id", "ext_id"),),
    "pool_entries": (_key("pool_id", "query_id", "passage_id"),),
    "packages": (_key("name"),),
    "pools": (_key("collection_id", "name"),),
    "collections": (_key("name"),),
}
# The columns a row keeps once judgments refer to it: table -> (judgments' column, those columns).
JUDGED = {
    "users": ("user_id", ("username",)),
    "queries": ("query_id", ("collection_id", "ext_id")),
    "passages": ("passage_id", ("collection_id", "ext_id")),
    "assignments": ("assignment_id", ("query_id", "passage_id")),
}
_APPEND_ONLY = "judgments are append-only"


def _label(key: Key) -> str:
    return "(" + ", ".join(template.format(column) for column, template in key) + ")"


def _collides(table: str, key: Key, other: str = "") -> str:
    """SQL true when a row of ``table`` (``other``: and what else it must be) holds NEW's ``key``.

    ``=`` is false on NULL, so a NULL collides with nothing, as in a UNIQUE constraint.
    """
    same = " AND ".join(f"{t.format(c)} = {t.format('NEW.' + c)}" for c, t in key)
    return f"EXISTS (SELECT 1 FROM {table} WHERE {same}{other})"


def _raise(message: str, condition: str) -> str:
    return f"SELECT RAISE(ABORT, '{message}') WHERE {condition};"


def _prefix(table: str) -> str:
    return f"{_APPEND_ONLY}: " if table == "judgments" else f"{table}: "


def _insert_trigger(table: str) -> str:
    checks = [_raise(f"{_prefix(table)}id already exists", f"EXISTS (SELECT 1 FROM {table} WHERE id = NEW.id)")]
    checks += [_raise(f"{_prefix(table)}{_label(k)} already exists", _collides(table, k)) for k in KEYS[table]]
    return f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} BEGIN {' '.join(checks)} END"


def _update_trigger(table: str) -> str:
    columns = dict.fromkeys(["id", *(c for key in KEYS[table] for c, _t in key)])
    checks = [_raise(f"{table}: id cannot change", "NEW.id IS NOT OLD.id")]
    checks += [
        _raise(f"{table}: {_label(k)} already exists", _collides(table, k, " AND id <> OLD.id")) for k in KEYS[table]
    ]
    if table in JUDGED:
        column, kept = JUDGED[table]
        changed = " OR ".join(f"NEW.{c} IS NOT OLD.{c}" for c in kept)
        checks.append(
            _raise(
                f"{table} with judgments keep their {_label(_key(*kept))}",
                f"({changed}) AND EXISTS (SELECT 1 FROM judgments WHERE {column} = OLD.id)",
            )
        )
    return f"CREATE TRIGGER {table}_keys_no_replace BEFORE UPDATE OF {', '.join(columns)} ON {table} BEGIN {' '.join(checks)} END"


# 0004's guard, put back by the downgrade.
_JUDGMENTS_0004 = (
    "CREATE TRIGGER judgments_no_replace BEFORE INSERT ON judgments "
    "WHEN EXISTS (SELECT 1 FROM judgments WHERE id = NEW.id) "
    f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}: judgment id exists'); END"
)
# PostgreSQL: TG_ARGV[0] is the judgments column that refers to the row, TG_ARGV[1] the kept key's name.
_PG_FUNCTION = (
    "CREATE FUNCTION judged_keys_stay() RETURNS trigger AS $$ DECLARE judged boolean; BEGIN "
    "EXECUTE format('SELECT EXISTS (SELECT 1 FROM judgments WHERE %I = $1)', TG_ARGV[0]) INTO judged USING OLD.id; "
    "IF judged THEN RAISE EXCEPTION '% with judgments keep their %', TG_TABLE_NAME, TG_ARGV[1]; END IF; "
    "RETURN NEW; END; $$ LANGUAGE plpgsql"
)


def _pg_trigger(table: str) -> str:
    column, kept = JUDGED[table]
    changed = " OR ".join(f"NEW.{c} IS DISTINCT FROM OLD.{c}" for c in kept)
    return (
        f"CREATE TRIGGER {table}_judged_keys_stay BEFORE UPDATE OF {', '.join(kept)} ON {table} "
        f"FOR EACH ROW WHEN ({changed}) "
        f"EXECUTE FUNCTION judged_keys_stay('{column}', '{_label(_key(*kept))}')"
    )


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        op.execute("DROP TRIGGER IF EXISTS judgments_no_replace")
        for table in KEYS:
            op.execute(_insert_trigger(table))
            if table != "judgments":  # judgments_no_update already refuses every update
                op.execute(_update_trigger(table))
    elif dialect == "postgresql":
        op.execute(_PG_FUNCTION)
        for table in JUDGED:
            op.execute(_pg_trigger(table))


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for table in KEYS:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_no_replace")
            op.execute(f"DROP TRIGGER IF EXISTS {table}_keys_no_replace")
        op.execute(_JUDGMENTS_0004)
    elif dialect == "postgresql":
        for table in JUDGED:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_judged_keys_stay ON {table}")
        op.execute("DROP FUNCTION IF EXISTS judged_keys_stay()")
