"""A collection whose judged pairs are left out of the qrels for every reason (issue 20's honest export).

Collection ``c`` (``tests.db.labelling_helpers``), pool ``p`` labelled by ann1-ann3, ann4 adjudicates:

* d0: 3, 3, 3 -> unanimous (the only final label);
* d1: 0, 1, 2 -> waiting for a 4th label (ann4 holds it, unlabelled);
* d2: 0, 1, 2, then ann4's 3 -> excluded ("4 labels, no majority: 0, 1, 2, 3");
* d3: flagged by ann1, 2 and 2 by the others -> flagged;
* d4: one label -> waiting for more labels.
"""

from __future__ import annotations

from sqlalchemy import select

from db.adjudication import set_pool_adjudicators
from db.assignments import create_assignments
from db.labelling import record_judgment
from db.models import Assignment, PassageRecord
from tests.db.labelling_helpers import add_accounts, import_two_queries

LABELS = {
    "d0": {"ann1": 3, "ann2": 3, "ann3": 3},
    "d1": {"ann1": 0, "ann2": 1, "ann3": 2},
    "d2": {"ann1": 0, "ann2": 1, "ann3": 2, "ann4": 3},
    "d3": {"ann1": "flag", "ann2": 2, "ann3": 2},
    "d4": {"ann1": 1},
}


def _assignment(s, user_id: int, doc: str) -> int:
    return s.execute(
        select(Assignment.id)
        .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
        .where(Assignment.user_id == user_id, PassageRecord.ext_id == doc)
    ).scalar_one()


def build_unresolved(store) -> dict[str, int]:
    """Import, assign and label as above; returns ``{username: id}`` (annotators, rev1, rev2, admin)."""
    with store.write() as s:
        import_two_queries(s)
        users = add_accounts(s, ("ann1", "ann2", "ann3", "ann4"))
        create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=7)
        set_pool_adjudicators(s, "c", "p", ["ann4"])
    for doc, labels in LABELS.items():
        for user, grade in labels.items():
            with store.write() as s:
                aid = _assignment(s, users[user], doc)
                if grade == "flag":
                    record_judgment(s, users[user], aid, None, action="flag", note="which city?")
                else:
                    record_judgment(s, users[user], aid, grade)
    return users


def unresolved_template(folder) -> tuple:
    """``(path, ids)``: a SQLite store in ``folder`` built by :func:`build_unresolved`, for pages to copy."""
    from db.engine import Store, sqlite_url
    from tests.sqlite_template import fresh_sqlite

    path = fresh_sqlite(folder / "template.db")
    store = Store(sqlite_url(path), upgrade=False)
    ids = build_unresolved(store)
    store.dispose()
    return path, ids
