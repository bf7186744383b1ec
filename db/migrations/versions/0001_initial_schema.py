"""initial schema

Revision ID: 0001
Revises:
Create Date: 2026-11-25

Also installs the triggers that make ``judgments`` append-only (UPDATE and
DELETE are rejected by the database itself, on SQLite and PostgreSQL).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create every table, parents before children (the order of the foreign keys), then the triggers."""
    _create_collections_and_users()
    _create_imports_and_jobs()
    _create_passages_and_pools()
    _create_qrels_versions_and_queries()
    _create_runs_and_error_tags()
    _create_final_labels_and_pool_entries()
    _create_qrels_and_run_entries()
    _create_assignments_and_provenance()
    _create_judgments()
    _install_append_only_triggers()


def _create_collections_and_users() -> None:
    """The two roots every other table hangs from."""
    op.create_table(
        "collections",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("language", sa.String(length=16), nullable=True),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sa.String(length=100), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("role IN ('admin', 'reviewer', 'annotator')", name="ck_users_role"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("username"),
    )


def _create_imports_and_jobs() -> None:
    """The import log and the background job queue."""
    op.create_table(
        "imports",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("format", sa.String(length=40), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("mode", sa.String(length=16), nullable=False),
        sa.Column("counts", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("imports", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_imports_collection_id"), ["collection_id"], unique=False)

    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("done", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('queued', 'running', 'done', 'failed', 'cancelled')", name="ck_jobs_status"),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_jobs_collection_id"), ["collection_id"], unique=False)


def _create_passages_and_pools() -> None:
    """A collection's passages and its named pools."""
    op.create_table(
        "passages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("ext_id", sa.String(length=512), nullable=False),
        sa.Column("doc_id", sa.String(length=512), nullable=True),
        sa.Column("position", sa.Integer(), nullable=True),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("language", sa.String(length=16), nullable=True),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "ext_id", name="uq_passages_collection_ext_id"),
    )
    with op.batch_alter_table("passages", schema=None) as batch_op:
        batch_op.create_index("ix_passages_document", ["collection_id", "doc_id", "position"], unique=False)

    op.create_table(
        "pools",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("method", sa.String(length=40), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "name", name="uq_pools_collection_name"),
    )
    with op.batch_alter_table("pools", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pools_collection_id"), ["collection_id"], unique=False)


def _create_qrels_versions_and_queries() -> None:
    """Versioned qrels headers and a collection's queries."""
    op.create_table(
        "qrels_versions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["created_by"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "name", name="uq_qrels_versions_collection_name"),
    )
    with op.batch_alter_table("qrels_versions", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_qrels_versions_collection_id"), ["collection_id"], unique=False)

    op.create_table(
        "queries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("ext_id", sa.String(length=512), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("split", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=True),
        sa.Column("domain", sa.String(length=64), nullable=True),
        sa.Column("language", sa.String(length=16), nullable=True),
        sa.Column("translation", sa.Text(), nullable=True),
        sa.Column("answers", sa.JSON(), nullable=True),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "ext_id", name="uq_queries_collection_ext_id"),
    )
    with op.batch_alter_table("queries", schema=None) as batch_op:
        batch_op.create_index("ix_queries_split", ["collection_id", "split"], unique=False)


def _create_runs_and_error_tags() -> None:
    """Retrieval runs and the error tags that may point at them."""
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "name", name="uq_runs_collection_name"),
    )
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_runs_collection_id"), ["collection_id"], unique=False)

    op.create_table(
        "error_tags",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=512), nullable=False),
        sa.Column("doc_id", sa.String(length=512), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=True),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("error_tags", schema=None) as batch_op:
        batch_op.create_index("ix_error_tags_pair", ["collection_id", "query_id", "doc_id"], unique=False)


def _create_final_labels_and_pool_entries() -> None:
    """Final (aggregated) labels and the entries of each pool."""
    op.create_table(
        "final_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=True),
        sa.Column("method", sa.String(length=16), nullable=False),
        sa.Column("n_labels", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("decided_by", sa.Integer(), nullable=True),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "method IN ('unanimous', 'majority', 'adjudicated', 'excluded', 'overridden', 'imported')",
            name="ck_final_labels_method",
        ),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["decided_by"], ["users.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("query_id", "passage_id", name="uq_final_labels_pair"),
    )
    with op.batch_alter_table("final_labels", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_final_labels_collection_id"), ["collection_id"], unique=False)

    op.create_table(
        "pool_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pool_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.Column("selected", sa.Boolean(), nullable=False),
        sa.Column("selection_score", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("pool_id", "query_id", "passage_id", name="uq_pool_entries_pair"),
    )
    with op.batch_alter_table("pool_entries", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_pool_entries_pool_id"), ["pool_id"], unique=False)


def _create_qrels_and_run_entries() -> None:
    """The rows of a qrels version and of a run."""
    op.create_table(
        "qrels_entries",
        sa.Column("version_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=512), nullable=False),
        sa.Column("doc_id", sa.String(length=512), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["version_id"], ["qrels_versions.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("version_id", "query_id", "doc_id"),
    )
    op.create_table(
        "run_entries",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.String(length=512), nullable=False),
        sa.Column("doc_id", sa.String(length=512), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("run_id", "query_id", "doc_id"),
    )


def _create_assignments_and_provenance() -> None:
    """Annotation assignments and which runs put each pool entry there."""
    op.create_table(
        "assignments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pool_entry_id", sa.Integer(), nullable=True),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("package", sa.String(length=100), nullable=False),
        sa.Column("order_index", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=True),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["pool_entry_id"], ["pool_entries.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("user_id", "query_id", "passage_id", name="uq_assignments_user_pair"),
    )
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.create_index("ix_assignments_user_package", ["user_id", "package", "order_index"], unique=False)

    op.create_table(
        "pool_provenance",
        sa.Column("pool_entry_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["pool_entry_id"], ["pool_entries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pool_entry_id", "run_id"),
    )


def _create_judgments() -> None:
    """The append-only judgments log (its triggers are installed by ``upgrade``)."""
    op.create_table(
        "judgments",
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
        sa.CheckConstraint("action IN ('label', 'undo', 'skip', 'flag')", name="ck_judgments_action"),
        sa.ForeignKeyConstraint(["assignment_id"], ["assignments.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("judgments", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_judgments_assignment_id"), ["assignment_id"], unique=False)
        batch_op.create_index("ix_judgments_pair", ["query_id", "passage_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_judgments_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    _drop_append_only_triggers()
    with op.batch_alter_table("judgments", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_judgments_user_id"))
        batch_op.drop_index("ix_judgments_pair")
        batch_op.drop_index(batch_op.f("ix_judgments_assignment_id"))

    op.drop_table("judgments")
    op.drop_table("pool_provenance")
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.drop_index("ix_assignments_user_package")

    op.drop_table("assignments")
    op.drop_table("run_entries")
    op.drop_table("qrels_entries")
    with op.batch_alter_table("pool_entries", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pool_entries_pool_id"))

    op.drop_table("pool_entries")
    with op.batch_alter_table("final_labels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_final_labels_collection_id"))

    op.drop_table("final_labels")
    with op.batch_alter_table("error_tags", schema=None) as batch_op:
        batch_op.drop_index("ix_error_tags_pair")

    op.drop_table("error_tags")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_runs_collection_id"))

    op.drop_table("runs")
    with op.batch_alter_table("queries", schema=None) as batch_op:
        batch_op.drop_index("ix_queries_split")

    op.drop_table("queries")
    with op.batch_alter_table("qrels_versions", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_qrels_versions_collection_id"))

    op.drop_table("qrels_versions")
    with op.batch_alter_table("pools", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_pools_collection_id"))

    op.drop_table("pools")
    with op.batch_alter_table("passages", schema=None) as batch_op:
        batch_op.drop_index("ix_passages_document")

    op.drop_table("passages")
    with op.batch_alter_table("jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_jobs_collection_id"))

    op.drop_table("jobs")
    with op.batch_alter_table("imports", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_imports_collection_id"))

    op.drop_table("imports")
    op.drop_table("users")
    op.drop_table("collections")


# A judgment may disappear only through a cascade, when its user, query or
# passage is deleted (dropping a collection or a user); any direct DELETE or
# UPDATE is refused by the database itself.
_PARENTS_EXIST = (
    "EXISTS (SELECT 1 FROM users WHERE id = OLD.user_id) "
    "AND EXISTS (SELECT 1 FROM queries WHERE id = OLD.query_id) "
    "AND EXISTS (SELECT 1 FROM passages WHERE id = OLD.passage_id)"
)
_SQLITE_TRIGGERS = {
    "judgments_no_update": "CREATE TRIGGER judgments_no_update BEFORE UPDATE ON judgments "
    "BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END",
    "judgments_no_delete": f"CREATE TRIGGER judgments_no_delete BEFORE DELETE ON judgments WHEN {_PARENTS_EXIST} "
    "BEGIN SELECT RAISE(ABORT, 'judgments are append-only'); END",
}


def _install_append_only_triggers() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for sql in _SQLITE_TRIGGERS.values():
            op.execute(sql)
    elif dialect == "postgresql":
        op.execute(
            "CREATE FUNCTION judgments_append_only() RETURNS trigger AS $$ BEGIN "
            f"IF TG_OP = 'UPDATE' OR ({_PARENTS_EXIST}) THEN "
            "RAISE EXCEPTION 'judgments are append-only'; END IF; RETURN OLD; END; $$ LANGUAGE plpgsql"
        )
        op.execute(
            "CREATE TRIGGER judgments_append_only BEFORE UPDATE OR DELETE ON judgments "
            "FOR EACH ROW EXECUTE FUNCTION judgments_append_only()"
        )


def _drop_append_only_triggers() -> None:
    dialect = op.get_bind().dialect.name
    if dialect == "sqlite":
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    elif dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS judgments_append_only ON judgments")
        op.execute("DROP FUNCTION IF EXISTS judgments_append_only()")
