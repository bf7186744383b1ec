"""Set-up shared by the labelling tests (annotation, review, QC rework): a small collection and its accounts.

Collection ``c``: ten passages ``d0`` ... ``d9`` (title "T") and two queries; pool ``p`` pools d0-d4 for
``q1`` and d5-d9 for ``q2``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from core.types import CollectionSource, Passage, Query
from db.importer import import_collection
from db.labelling import next_item, record_judgment
from db.models import Package
from db.pools import save_pool
from db.users import add_user

DOCS = [f"d{i}" for i in range(10)]
PASSWORD = "correct horse"


def query_of(doc: str) -> str:
    """The query a passage of pool ``p`` is pooled for: ``q1`` for d0-d4, ``q2`` for d5-d9."""
    return "q1" if doc in DOCS[:5] else "q2"


def import_two_queries(
    s: Session, *, passage: str = "passage text {doc}", queries: tuple[str, str] = ("first query", "second query")
) -> None:
    """Import collection ``c`` and save pool ``p``; ``passage`` is the text pattern (``{doc}``: the passage id).

    Tests that read a served item find its passage id as the last word of its text.
    """
    source = CollectionSource(
        passages=lambda: iter([Passage(d, passage.format(doc=d), title="T") for d in DOCS]),
        queries=lambda: iter([Query("q1", queries[0]), Query("q2", queries[1])]),
        qrels=lambda: iter(()),
    )
    import_collection(s, source, name="c", format="t", location="m")
    save_pool(s, "c", "p", {q: {d: [] for d in DOCS if query_of(d) == q} for q in ("q1", "q2")}, method="depth")


def add_accounts(
    s: Session, annotators: Sequence[str], *, reviewers: Sequence[str] = ("rev1", "rev2"), admin: str = "admin"
) -> dict[str, int]:
    """Create the annotators, then the reviewers, then one admin; returns ``{username: id}``."""
    users = {name: add_user(s, name, PASSWORD, "annotator").id for name in annotators}
    users |= {name: add_user(s, name, PASSWORD, "reviewer").id for name in reviewers}
    users[admin] = add_user(s, admin, PASSWORD, "admin").id
    return users


def only_package(store, user_id: int) -> int:
    """The id of the user's package (the user has exactly one)."""
    with store.read() as s:
        return s.execute(select(Package.id).where(Package.user_id == user_id)).scalar_one()


def review_all(store, users: Mapping[str, int], grades: Mapping[str, int], notes: Mapping | None = None) -> None:
    """rev1 then rev2 label every QC item they are served with ``grades[doc]``.

    ``notes[(reviewer, doc)]``, when given, is stored with that reviewer's label.
    """
    notes = notes or {}
    for rev in ("rev1", "rev2"):
        while True:
            with store.read() as s:
                item = next_item(s, users[rev])
            if item is None:
                break
            doc = item.passage.split()[-1]
            with store.write() as s:
                record_judgment(s, users[rev], item.assignment_id, grades[doc], note=notes.get((rev, doc), ""))
