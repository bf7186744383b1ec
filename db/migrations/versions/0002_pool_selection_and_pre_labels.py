"""pool selection and pre-labels

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25

Columns are added with plain ALTER TABLE ADD COLUMN (no SQLite batch copy):
recreating ``pool_entries`` would fire the ON DELETE actions of the tables
that reference it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "pre_labels",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=40), nullable=False),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("query_id", "passage_id", "source", name="uq_pre_labels_pair_source"),
    )
    op.create_index("ix_pre_labels_collection_id", "pre_labels", ["collection_id"], unique=False)
    op.add_column("pool_entries", sa.Column("selection_rank", sa.Integer(), nullable=True))
    if op.get_bind().dialect.name == "sqlite":
        # SQLite can add a column with an inline foreign key, but Alembic only offers
        # batch mode (table copy) for it.
        op.execute(
            "ALTER TABLE pool_entries ADD COLUMN duplicate_of INTEGER "
            "CONSTRAINT fk_pool_entries_duplicate_of REFERENCES pool_entries (id) ON DELETE SET NULL"
        )
    else:
        op.add_column("pool_entries", sa.Column("duplicate_of", sa.Integer(), nullable=True))
        op.create_foreign_key(
            "fk_pool_entries_duplicate_of",
            "pool_entries",
            "pool_entries",
            ["duplicate_of"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade() -> None:
    with op.batch_alter_table("pool_entries", schema=None) as batch_op:
        batch_op.drop_constraint("fk_pool_entries_duplicate_of", type_="foreignkey")
        batch_op.drop_column("duplicate_of")
        batch_op.drop_column("selection_rank")
    op.drop_index("ix_pre_labels_collection_id", table_name="pre_labels")
    op.drop_table("pre_labels")
