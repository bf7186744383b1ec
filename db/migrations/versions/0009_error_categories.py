"""error categories: the error categories a project defines for a collection, stored before any tag uses them

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26

* ``error_categories``: one row per user-defined error category of a
  collection (the built-in taxonomy, :mod:`core.detectors`, is code, not
  rows): ``key`` is what ``error_tags.category`` holds, unique within the
  collection; ``name`` and ``description`` are what the Error analysis page
  shows.  ``created_by`` is the username as text, as in 0008.  Before this
  table a category lived in the browser session until a tag used it.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "error_categories",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "key", name="uq_error_categories_collection_key"),
    )


def downgrade() -> None:
    op.drop_table("error_categories")
