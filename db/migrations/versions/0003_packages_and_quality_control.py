"""packages and quality control

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25

assignments.package_id is added with ALTER TABLE ADD COLUMN and an inline
foreign key on SQLite (no batch table copy; see 0002).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Label overrides, annotation packages with their QC rounds, and each assignment's package."""
    _create_label_overrides()
    _create_packages()
    _create_qc_rounds_and_items()
    _add_assignment_package_id()


def _create_label_overrides() -> None:
    """A reviewer's grade that overrides the aggregated one for a pair."""
    op.create_table(
        "label_overrides",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=True),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="SET NULL"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("label_overrides", schema=None) as batch_op:
        batch_op.create_index("ix_label_overrides_pair", ["query_id", "passage_id"], unique=False)


def _create_packages() -> None:
    """Named packages of assignments, with their review status."""
    op.create_table(
        "packages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("pool_id", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('open', 'submitted', 'in_qc', 'revise', 'passed')", name="ck_packages_status"),
        sa.ForeignKeyConstraint(["pool_id"], ["pools.id"], ondelete="SET NULL"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name"),
    )
    with op.batch_alter_table("packages", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_packages_user_id"), ["user_id"], unique=False)


def _create_qc_rounds_and_items() -> None:
    """Quality-control rounds of a package and the pairs each round samples."""
    op.create_table(
        "qc_rounds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("package_id", sa.Integer(), nullable=False),
        sa.Column("round_no", sa.Integer(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("sample_size", sa.Integer(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("accuracy", sa.Float(), nullable=True),
        sa.Column("n_checked", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("decided_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('reviewing', 'passed', 'revise')", name="ck_qc_rounds_status"),
        sa.ForeignKeyConstraint(["package_id"], ["packages.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("package_id", "round_no", name="uq_qc_rounds_package_round"),
    )
    op.create_table(
        "qc_items",
        sa.Column("qc_round_id", sa.Integer(), nullable=False),
        sa.Column("query_id", sa.Integer(), nullable=False),
        sa.Column("passage_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["passage_id"], ["passages.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["qc_round_id"], ["qc_rounds.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["query_id"], ["queries.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("qc_round_id", "query_id", "passage_id"),
    )


def _add_assignment_package_id() -> None:
    """Add ``assignments.package_id`` (inline foreign key on SQLite: no batch table copy)."""
    if op.get_bind().dialect.name == "sqlite":
        op.execute(
            "ALTER TABLE assignments ADD COLUMN package_id INTEGER "
            "CONSTRAINT fk_assignments_package_id REFERENCES packages (id) ON DELETE SET NULL"
        )
    else:
        op.add_column("assignments", sa.Column("package_id", sa.Integer(), nullable=True))
        op.create_foreign_key(
            "fk_assignments_package_id", "assignments", "packages", ["package_id"], ["id"], ondelete="SET NULL"
        )


def downgrade() -> None:
    with op.batch_alter_table("assignments", schema=None) as batch_op:
        batch_op.drop_constraint("fk_assignments_package_id", type_="foreignkey")
        batch_op.drop_column("package_id")

    op.drop_table("qc_items")
    op.drop_table("qc_rounds")
    with op.batch_alter_table("packages", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_packages_user_id"))

    op.drop_table("packages")
    with op.batch_alter_table("label_overrides", schema=None) as batch_op:
        batch_op.drop_index("ix_label_overrides_pair")

    op.drop_table("label_overrides")
