"""archive and guidelines per collection, adjudicators per pool

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26

* ``archived_at``/``archived_by`` on collections, pools, runs and qrels
  versions: archiving hides a container from the pages and listings (with who
  and when) and can be undone; nothing is deleted, judgments least of all.
  ``archived_by`` keeps the username as text, so the record survives whatever
  happens to the account and the table needs no rebuild on SQLite.
* ``collections.guidelines``: the annotation guide of a collection (per scale:
  grade names, definitions, examples); NULL means the built-in T2Ranking guide.
* ``pool_adjudicators``: the accounts an admin chose to adjudicate a pool's
  three-way splits; without any, the fourth label comes from the pool's own
  annotators.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

ARCHIVABLE = ("collections", "pools", "runs", "qrels_versions")


def upgrade() -> None:
    for table in ARCHIVABLE:
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True))
            batch.add_column(sa.Column("archived_by", sa.String(length=100), nullable=True))
    with op.batch_alter_table("collections") as batch:
        batch.add_column(sa.Column("guidelines", sa.JSON(), nullable=True))
    op.create_table(
        "pool_adjudicators",
        sa.Column("pool_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("pool_id", "user_id"),
    )
    op.create_index("ix_pool_adjudicators_user_id", "pool_adjudicators", ["user_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_pool_adjudicators_user_id", table_name="pool_adjudicators")
    op.drop_table("pool_adjudicators")
    # In place, never a batch rebuild: on SQLite rebuilding collections (DROP TABLE) would cascade
    # to every passage, query and run; SQLite >= 3.35 drops a plain column with ALTER TABLE.
    for table, column in [("collections", "guidelines")] + [
        (t, c) for t in ARCHIVABLE for c in ("archived_by", "archived_at")
    ]:
        op.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
