"""indexes for the reads the Admin page's tabs make on every run

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27

* ``ix_judgments_action`` (action, assignment_id, user_id): the flagged items a package waits on
  (:func:`db.package_progress.flag_held`) are found among the flags alone, grouped in index order, instead of
  every judgment being read through the assignment index.
* ``ix_assignments_purpose``: the QC marker (:func:`db.markers.qc_marker`) reads the QC assignments, a few
  hundred of tens of thousands.
* ``ix_final_labels_decided`` (collection_id, decided_at) and ``ix_pool_entries_selected`` (pool_id, selected):
  the qrels marker's count of a collection's final labels and the pool list's selected counts read an index
  that holds every column they need, not the table's rows.

Indexes only: no row changes, and 0010's REPLACE guards are untouched.
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

INDEXES = {
    "ix_judgments_action": ("judgments", ["action", "assignment_id", "user_id"]),
    "ix_assignments_purpose": ("assignments", ["purpose"]),
    "ix_final_labels_decided": ("final_labels", ["collection_id", "decided_at"]),
    "ix_pool_entries_selected": ("pool_entries", ["pool_id", "selected"]),
}


def upgrade() -> None:
    for name, (table, columns) in INDEXES.items():
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, (table, _columns) in INDEXES.items():
        op.drop_index(name, table_name=table)
