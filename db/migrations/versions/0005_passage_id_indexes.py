"""indexes on passage_id

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26

Deleting a passage (a crashed import's leftovers are dropped at the next
open) makes the database check every table that references it; without an
index starting with ``passage_id`` each check scans the whole table, once per
deleted passage.
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TABLES = ("pool_entries", "pre_labels", "assignments", "qc_items", "label_overrides", "judgments", "final_labels")


def upgrade() -> None:
    for table in TABLES:
        op.create_index(f"ix_{table}_passage_id", table, ["passage_id"], unique=False)


def downgrade() -> None:
    for table in TABLES:
        op.drop_index(f"ix_{table}_passage_id", table_name=table)
