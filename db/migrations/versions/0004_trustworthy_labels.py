"""trustworthy labels: append-only that holds, sessions, login throttling, staged imports

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26

* ``judgments`` gets ``submission_token`` (one stored judgment per rendered
  item and submission) and foreign keys that RESTRICT instead of CASCADE: an
  account, assignment, query or passage with judgments cannot be deleted.
  SQLite cannot alter a foreign key, so the table is rebuilt (nothing
  references ``judgments``, so the copy fires no ON DELETE action elsewhere).
* SQLite also gets triggers that hold even on a connection without
  ``PRAGMA foreign_keys`` (the ``sqlite3`` shell): no REPLACE of an existing
  judgment id, no DELETE of a judgment, no DELETE of a parent that has
  judgments.  On PostgreSQL ``INSERT ... ON CONFLICT DO UPDATE`` fires the
  UPDATE trigger of 0001, and the foreign keys are always enforced.
* ``auth_sessions`` and ``login_throttle`` for revocable sessions and
  login back-off.
* ``status``/``staged_at`` on collections, runs and qrels versions: an import
  stages its rows invisibly and flips the container to ``ready`` at the end.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

_APPEND_ONLY = "judgments are append-only"

_SQLITE_TRIGGERS = {
    "judgments_no_update": "CREATE TRIGGER judgments_no_update BEFORE UPDATE ON judgments "
    f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END",
    "judgments_no_delete": "CREATE TRIGGER judgments_no_delete BEFORE DELETE ON judgments "
    f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END",
    # REPLACE deletes the conflicting row without firing DELETE triggers (unless recursive_triggers
    # is on), so the insert itself must refuse an id that exists.
    "judgments_no_replace": "CREATE TRIGGER judgments_no_replace BEFORE INSERT ON judgments "
    "WHEN EXISTS (SELECT 1 FROM judgments WHERE id = NEW.id) "
    f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}: judgment id exists'); END",
}
_SQLITE_PARENT_GUARDS = {
    table: f"CREATE TRIGGER {table}_keep_judged BEFORE DELETE ON {table} "
    f"WHEN EXISTS (SELECT 1 FROM judgments WHERE {column} = OLD.id) "
    f"BEGIN SELECT RAISE(ABORT, '{table} with judgments cannot be deleted'); END"
    for table, column in (
        ("users", "user_id"),
        ("assignments", "assignment_id"),
        ("queries", "query_id"),
        ("passages", "passage_id"),
    )
}

_JUDGMENT_FKS = (
    ("assignment_id", "assignments"),
    ("query_id", "queries"),
    ("passage_id", "passages"),
    ("user_id", "users"),
)


def _judgments_table(ondelete: dict[str, str], *, with_token: bool) -> sa.Table:
    columns: list[sa.schema.SchemaItem] = [
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("assignment_id", sa.Integer(), nullable=True),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("elapsed_ms", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    ]
    constraints: list[sa.schema.SchemaItem] = [
        sa.CheckConstraint("action IN ('label', 'undo', 'skip', 'flag')", name="ck_judgments_action"),
        *(
            sa.ForeignKeyConstraint([column], [f"{table}.id"], ondelete=ondelete[column], name=f"fk_judgments_{column}")
            for column, table in _JUDGMENT_FKS
        ),
        sa.PrimaryKeyConstraint("id"),
    ]
    if with_token:
        columns.append(sa.Column("submission_token", sa.String(length=64), nullable=True))
        constraints.append(sa.UniqueConstraint("assignment_id", "submission_token", name="uq_judgments_submission"))
    return sa.Table(
        "judgments",
        sa.MetaData(),
        *columns,
        *constraints,
        sa.Index("ix_judgments_pair", "query_id", "passage_id"),
        sa.Index("ix_judgments_assignment_id", "assignment_id"),
        sa.Index("ix_judgments_user_id", "user_id"),
    )


_RESTRICT = {column: "RESTRICT" for column, _ in _JUDGMENT_FKS}
_BEFORE = {"assignment_id": "SET NULL", "query_id": "CASCADE", "passage_id": "CASCADE", "user_id": "CASCADE"}


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    op.create_table(
        "auth_sessions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("client", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("token_hash"),
    )
    op.create_index("ix_auth_sessions_user_id", "auth_sessions", ["user_id"], unique=False)
    op.create_table(
        "login_throttle",
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        sa.Column("locked_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_failure_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("key"),
    )
    for table in ("collections", "runs", "qrels_versions"):
        op.add_column(table, sa.Column("status", sa.String(length=16), server_default="ready", nullable=False))
        op.add_column(table, sa.Column("staged_at", sa.DateTime(timezone=True), nullable=True))

    if dialect == "sqlite":
        for name in ("judgments_no_update", "judgments_no_delete"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        with op.batch_alter_table(
            "judgments", recreate="always", copy_from=_judgments_table(_BEFORE, with_token=False)
        ) as batch_op:
            batch_op.add_column(sa.Column("submission_token", sa.String(length=64), nullable=True))
            for column, table in _JUDGMENT_FKS:
                batch_op.drop_constraint(f"fk_judgments_{column}", type_="foreignkey")
                batch_op.create_foreign_key(f"fk_judgments_{column}", table, [column], ["id"], ondelete="RESTRICT")
            batch_op.create_unique_constraint("uq_judgments_submission", ["assignment_id", "submission_token"])
        for sql in (*_SQLITE_TRIGGERS.values(), *_SQLITE_PARENT_GUARDS.values()):
            op.execute(sql)
    else:
        op.add_column("judgments", sa.Column("submission_token", sa.String(length=64), nullable=True))
        op.create_unique_constraint("uq_judgments_submission", "judgments", ["assignment_id", "submission_token"])
        for column, table in _JUDGMENT_FKS:
            op.drop_constraint(f"judgments_{column}_fkey", "judgments", type_="foreignkey")
            op.create_foreign_key(f"fk_judgments_{column}", "judgments", table, [column], ["id"], ondelete="RESTRICT")
        if dialect == "postgresql":
            # With RESTRICT no cascade can reach a judgment any more: every DELETE is refused.
            op.execute(
                "CREATE OR REPLACE FUNCTION judgments_append_only() RETURNS trigger AS $$ BEGIN "
                f"RAISE EXCEPTION '{_APPEND_ONLY}'; END; $$ LANGUAGE plpgsql"
            )


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in (*_SQLITE_TRIGGERS, *(f"{t}_keep_judged" for t in _SQLITE_PARENT_GUARDS)):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
        with op.batch_alter_table(
            "judgments", recreate="always", copy_from=_judgments_table(_RESTRICT, with_token=True)
        ) as batch_op:
            batch_op.drop_constraint("uq_judgments_submission", type_="unique")
            batch_op.drop_column("submission_token")
            for column, table in _JUDGMENT_FKS:
                batch_op.drop_constraint(f"fk_judgments_{column}", type_="foreignkey")
                batch_op.create_foreign_key(f"fk_judgments_{column}", table, [column], ["id"], ondelete=_BEFORE[column])
        # the triggers of 0001
        op.execute(
            "CREATE TRIGGER judgments_no_update BEFORE UPDATE ON judgments "
            f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END"
        )
        op.execute(
            "CREATE TRIGGER judgments_no_delete BEFORE DELETE ON judgments WHEN "
            "EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) "
            "AND EXISTS (SELECT 1 FROM queries WHERE id = OLD.query_id) "
            "AND EXISTS (SELECT 1 FROM passages WHERE id = OLD.passage_id) "
            f"BEGIN SELECT RAISE(ABORT, '{_APPEND_ONLY}'); END"
        )
    else:
        for column, table in _JUDGMENT_FKS:
            op.drop_constraint(f"fk_judgments_{column}", "judgments", type_="foreignkey")
            op.create_foreign_key(
                f"judgments_{column}_fkey", "judgments", table, [column], ["id"], ondelete=_BEFORE[column]
            )
        op.drop_constraint("uq_judgments_submission", "judgments", type_="unique")
        op.drop_column("judgments", "submission_token")
        if dialect == "postgresql":
            op.execute(
                "CREATE OR REPLACE FUNCTION judgments_append_only() RETURNS trigger AS $$ BEGIN "
                "IF TG_OP = 'UPDATE' OR (EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) "
                "AND EXISTS (SELECT 1 FROM queries WHERE id = OLD.query_id) "
                "AND EXISTS (SELECT 1 FROM passages WHERE id = OLD.passage_id)) THEN "
                f"RAISE EXCEPTION '{_APPEND_ONLY}'; END IF; RETURN OLD; END; $$ LANGUAGE plpgsql"
            )
    for table in ("collections", "runs", "qrels_versions"):
        # plain ALTER TABLE (SQLite >= 3.35): a batch copy of collections would cascade into its passages
        op.execute(f"ALTER TABLE {table} DROP COLUMN staged_at")
        op.execute(f"ALTER TABLE {table} DROP COLUMN status")
    op.drop_table("login_throttle")
    op.drop_index("ix_auth_sessions_user_id", table_name="auth_sessions")
    op.drop_table("auth_sessions")
