"""trained models: the registry of re-rankers and dense encoders trained on a collection's labels

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-26

* ``trained_models``: one row per model trained by the ``train`` job
  (:mod:`pooljudge.training`): its name (unique within the collection), kind
  (``cross-encoder``, ``dual-encoder``, ``rocketqav2``), the Hugging Face
  folder it was saved to, the base it started from, the parameters, the
  training curve and the best held-out evaluation.  The weights stay on disk;
  the row is how the CLI, the Models page and ``rerank:model=NAME`` find them.
  ``job_id`` points at the job that trained it without a foreign key, so
  pruning old job rows never touches a model.  ``archived_at``/``archived_by``
  as in 0007.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "trained_models",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("collection_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("base_model", sa.Text(), nullable=True),
        sa.Column("params", sa.JSON(), nullable=False),
        sa.Column("history", sa.JSON(), nullable=False),
        sa.Column("best", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=True),
        sa.Column("job_id", sa.Integer(), nullable=True),
        sa.Column("archived_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("archived_by", sa.String(length=100), nullable=True),
        sa.CheckConstraint("kind IN ('cross-encoder', 'dual-encoder', 'rocketqav2')", name="ck_trained_models_kind"),
        sa.ForeignKeyConstraint(["collection_id"], ["collections.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("collection_id", "name", name="uq_trained_models_collection_name"),
    )
    op.create_index("ix_trained_models_collection_id", "trained_models", ["collection_id"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_trained_models_collection_id", table_name="trained_models")
    op.drop_table("trained_models")
