"""The Review page's background tables read only the rows they need and return exactly what the plain replay gives.

The reference below reads every labelling judgment of the collection, replays it with
:func:`core.judgments.current_labels` and filters in Python, pair by pair: the definition the faster reads
in :mod:`db.review` must match, row for row and in the same order, on SQLite and PostgreSQL.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from core.judgments import Event, current_labels
from core.resolution import resolve
from db import review
from db.access import LABELLING
from db.models import Assignment, FinalLabel, PassageRecord, QueryRecord
from db.queries import collection_id
from db.resolution import override_label
from db.review_progress import final_label_distribution
from tests.db.labelling_helpers import DOCS
from tests.db.test_review import _ids, judged, judged_seed, world  # noqa: F401  # fixtures: every resolution case

KINDS = ("table", "queue", "excluded")


def _reference_rows(s, cid: int) -> list:
    return [
        tuple(row)
        for row in s.execute(
            select(
                QueryRecord.id,
                PassageRecord.id,
                QueryRecord.ext_id,
                PassageRecord.ext_id,
                QueryRecord.text,
                PassageRecord.title,
                PassageRecord.text,
            )
            .select_from(Assignment)
            .join(QueryRecord, QueryRecord.id == Assignment.query_id)
            .join(PassageRecord, PassageRecord.id == Assignment.passage_id)
            .where(QueryRecord.collection_id == cid, Assignment.purpose.in_(LABELLING))
            .distinct()
            .order_by(QueryRecord.ext_id, PassageRecord.ext_id)
        )
    ]


def _reference(s, collection: str) -> dict:
    """Standing labels and the three tables, computed over every label of the collection."""
    cid = collection_id(s, collection)
    log = review.label_log(s, cid, LABELLING)
    labels = current_labels(Event((q, d), user, action, grade) for q, d, user, action, grade in log)
    finals, fourths = review._finals(s, cid), review._fourths(s, cid)
    out: dict = {"labels": list(labels.items()), "table": [], "queue": [], "excluded": [], "reviewable": {}}
    for row in _reference_rows(s, cid):
        out["reviewable"].setdefault(row[2], []).append(row[3])
        key, given = (row[0], row[1]), labels.get((row[2], row[3]), {})
        pair = review._review(row, given, finals.get(key), fourths.get(key))
        out["table"].append(pair)
        if key not in finals and resolve(list(given.values())).state == "needs_fourth":
            out["queue"].append(pair)
        if key in finals and finals[key][0] is None:
            out["excluded"].append(pair)
    final_pairs = s.execute(
        select(QueryRecord.ext_id, PassageRecord.ext_id)
        .select_from(FinalLabel)
        .join(QueryRecord, QueryRecord.id == FinalLabel.query_id)
        .join(PassageRecord, PassageRecord.id == FinalLabel.passage_id)
        .where(FinalLabel.collection_id == cid)
    )
    out["pending"] = len(set(labels) - {tuple(pair) for pair in final_pairs})
    return out


def _current(s, collection: str) -> dict:
    return {
        "labels": list(review.standing_labels(s, collection).items()),
        "table": review.review_table(s, collection),
        "queue": review.adjudication_queue(s, collection),
        "excluded": review.excluded_pairs(s, collection),
        "reviewable": review.reviewable_pairs(s, collection),
        "pending": final_label_distribution(s, collection).pending,
    }


@pytest.mark.slow
def test_tables_equal_the_full_replay(judged):  # noqa: F811
    store, u = judged
    with store.read() as s:
        expected, got = _reference(s, "c"), _current(s, "c")
    assert [len(expected[k]) for k in KINDS] == [10, 1, 1]  # the fixture's 10 pairs, d2 waits, d3 excluded
    assert list(expected["reviewable"].items()) == [("q1", DOCS[:5]), ("q2", DOCS[5:])]
    assert expected["pending"] == 2  # d2 (waiting for a 4th) and d4 (two labels after an undo)
    assert got == expected
    q, d = _ids(store, "d5")
    with store.write() as s:  # a reviewer excludes a pair (an override without a grade)
        override_label(s, u["boss"], q, d, None, "duplicate of d6")
    with store.read() as s:
        expected, got = _reference(s, "c"), _current(s, "c")
    assert [(p.docid, p.method) for p in expected["excluded"]] == [("d3", "excluded"), ("d5", "overridden")]
    assert got == expected
