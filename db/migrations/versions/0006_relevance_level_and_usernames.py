"""relevance level per collection; usernames unique regardless of case

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26

* ``collections.relevance_level``: the grade from which binary measures
  (MAP, MRR, P, R, ...) count a passage as relevant.  It is a property of the
  collection so that the CLI, every page and the exports use one value.
  Existing collections get 1 when all their imported grades are 0/1
  (TREC-style binary qrels), else 2 (the 4-level scale, as T2Ranking and
  DuReader-retrieval count "partly satisfies" and above).
* ``users``: a unique index on ``lower(username)`` so ``ADMIN0`` cannot exist
  beside ``admin0`` (the check in :mod:`db.users` alone would race).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

GRADED_LEVEL = 2
BINARY_LEVEL = 1


def upgrade() -> None:
    with op.batch_alter_table("collections") as batch:
        batch.add_column(sa.Column("relevance_level", sa.Integer(), nullable=False, server_default=str(GRADED_LEVEL)))
    # binary = some imported grades, none above 1
    op.execute(
        f"UPDATE collections SET relevance_level = {BINARY_LEVEL} WHERE id IN ("
        " SELECT v.collection_id FROM qrels_versions v JOIN qrels_entries e ON e.version_id = v.id"
        " GROUP BY v.collection_id HAVING MAX(e.grade) <= 1)"
    )
    clashes = (
        op.get_bind()
        .execute(sa.text("SELECT lower(username) FROM users GROUP BY lower(username) HAVING COUNT(*) > 1"))
        .scalars()
        .all()
    )
    if clashes:
        raise RuntimeError(
            "usernames that differ only in case must be renamed before this upgrade "
            f"(`pooljudge user` cannot tell them apart): {', '.join(sorted(clashes))}"
        )
    op.create_index("uq_users_username_lower", "users", [sa.text("lower(username)")], unique=True)


def downgrade() -> None:
    op.drop_index("uq_users_username_lower", table_name="users")
    if op.get_bind().dialect.name == "sqlite":
        # A batch rebuild of collections would DROP the table, and with foreign keys on that
        # cascades to every passage, query and run; SQLite >= 3.35 drops a plain column in place.
        op.execute("ALTER TABLE collections DROP COLUMN relevance_level")
    else:
        op.drop_column("collections", "relevance_level")
