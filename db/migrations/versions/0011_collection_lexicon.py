"""collection lexicon: the names an admin adds for a collection's entity-mismatch detector (issue 22)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

* ``lexicon_names``: one row per name of a collection's lexicon, with its
  *kind* (``liquor``, ``phone``, ``site``...): :func:`core.detectors.suggest`
  compares a query name of kind K with the passage's other names of kind K
  (:mod:`core.detectors.names`).  ``name`` is unique within the collection,
  case-insensitively, since names match so.  ``created_by`` is the username
  as text, as in 0008 and 0009.  Nothing refers to these rows, so 0010's
  REPLACE guards (on the tables judgments reach) need no trigger here.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "lexicon_names",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("name_key", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "name_key", name="uq_lexicon_names_collection_name"),
    )


def downgrade() -> None:
    op.drop_table("lexicon_names")
