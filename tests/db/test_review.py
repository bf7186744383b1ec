"""Read functions behind the Review and Admin pages, on a small store with every resolution case."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import select, update

from core.types import CollectionSource, Passage, Query, RunEntry
from db.adjudication import set_pool_adjudicators
from db.assignments import create_assignments
from db.importer import import_collection
from db.labelling import next_item, record_judgment, undo_last
from db.models import Assignment, FinalLabel, Package, PassageRecord, QueryRecord
from db.package_qc import close_qc_round, package_progress, resubmit_package, start_qc_round
from db.pools import save_pool
from db.queries import NotFound
from db.ranked_lists import pool_queries, ranked_list
from db.resolution import override_label
from db.review import (
    active_users,
    activity_marker,
    adjudication_queue,
    excluded_pairs,
    pair_review,
    reviewable_pairs,
    standing_labels,
)
from db.review_progress import (
    AnnotatorWork,
    DailyLabels,
    final_label_distribution,
    flagged,
    package_overview,
    qc_history,
    throughput,
)
from db.users import add_user
from tests.db.labelling_helpers import DOCS, add_accounts, import_two_queries
from tests.db.labelling_helpers import query_of as _qid
from tests.db.seeded import BACKENDS, seed_once, store_copy


def _world(store):
    with store.write() as s:
        import_two_queries(s, queries=("first query", "second <b>query</b>"))
        users = add_accounts(s, ("ann1", "ann2", "ann3", "ann4"), admin="boss")
        create_assignments(s, "c", "p", annotators=["ann1", "ann2", "ann3"], seed=7, package_size=10)
        set_pool_adjudicators(s, "c", "p", ["ann4"])  # ann4 adjudicates p's splits (not one of its annotators)
    return users


@pytest.fixture
def world(store):
    return store, _world(store)


def _ids(store, doc):
    with store.read() as s:
        q = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == _qid(doc)))
        d = s.scalar(select(PassageRecord.id).where(PassageRecord.ext_id == doc))
    return q, d


def _act(store, user_id, doc, grade=None, *, action="label", elapsed_ms=None, note=""):
    q, d = _ids(store, doc)
    with store.write() as s:
        aid = s.scalar(
            select(Assignment.id).where(
                Assignment.user_id == user_id, Assignment.query_id == q, Assignment.passage_id == d
            )
        )
        # relabel: the fixture relabels d4 and flags labelled items on purpose
        record_judgment(s, user_id, aid, grade, action=action, elapsed_ms=elapsed_ms, note=note, relabel=True)


def _judge(store):
    """The world, then d0 unanimous 3, d1 majority 2, d2 waiting for a 4th, d3 excluded, d4 pending after relabel
    and undo, d5 unanimous 1 overridden to 0, d6 adjudicated 1; a flag on d6 and a skip on d7."""
    u = _world(store)
    a1, a2, a3, a4 = (u[f"ann{i}"] for i in range(1, 5))
    ann1 = {"d0": 3, "d1": 2, "d2": 0, "d3": 0, "d4": 1, "d5": 1, "d6": 0}
    for i, (doc, grade) in enumerate(ann1.items()):
        _act(store, a1, doc, grade, elapsed_ms=1000 * (i + 1))
    _act(store, a1, "d4", 2, elapsed_ms=8000)  # relabel: 8 label events, median of 1..8 s = 4.5 s
    for doc, grade in {"d0": 3, "d1": 2, "d2": 1, "d3": 1, "d4": 1}.items():
        _act(store, a2, doc, grade, elapsed_ms=1500)
    with store.write() as s:
        undo_last(s, a2)  # withdraws ann2's d4 label
    for doc, grade in {"d5": 1, "d6": 1}.items():
        _act(store, a2, doc, grade, elapsed_ms=1500)
    _act(store, a2, "d6", action="flag", note="*odd* <script>alert(1)</script>")
    times3 = [2000, None, 4000, None, 6000, 8000, None]
    for (doc, grade), ms in zip({"d0": 3, "d1": 0, "d2": 2, "d3": 2, "d4": 1, "d5": 1, "d6": 2}.items(), times3):
        _act(store, a3, doc, grade, elapsed_ms=ms)
    _act(store, a3, "d7", action="skip")
    _act(store, a4, "d3", 3)
    _act(store, a4, "d6", 1)
    q, d = _ids(store, "d5")
    with store.write() as s:
        override_label(s, u["rev1"], q, d, 0, "the passage is about something else")
    return u


@pytest.fixture(scope="module", params=BACKENDS)
def judged_seed(request):
    """The judged world, built once per backend for the module (:func:`_judge`)."""
    yield from seed_once(request, _judge)


@pytest.fixture
def judged(judged_seed, request):
    """``(store, users)``: a store of the test's own holding the judged world (:func:`_judge`)."""
    for store in store_copy(judged_seed, request):
        yield store, judged_seed.value


@pytest.mark.slow
def test_standing_labels_replay_relabels_and_undos(judged):
    store, _ = judged
    with store.read() as s:
        labels = standing_labels(s, "c")
    assert labels == {
        ("q1", "d0"): {"ann1": 3, "ann2": 3, "ann3": 3},
        ("q1", "d1"): {"ann1": 2, "ann2": 2, "ann3": 0},
        ("q1", "d2"): {"ann1": 0, "ann2": 1, "ann3": 2},
        ("q1", "d3"): {"ann1": 0, "ann2": 1, "ann3": 2, "ann4": 3},
        ("q1", "d4"): {"ann1": 2, "ann3": 1},
        ("q2", "d5"): {"ann1": 1, "ann2": 1, "ann3": 1},
        ("q2", "d6"): {"ann1": 0, "ann2": 1, "ann3": 2, "ann4": 1},
    }
    # chronological annotator order within a pair (the 4th label comes last)
    assert list(labels[("q2", "d6")]) == ["ann1", "ann2", "ann3", "ann4"]
    with pytest.raises(NotFound):
        with store.read() as s:
            standing_labels(s, "nope")


@pytest.mark.slow
def test_adjudication_queue_and_excluded_pairs(judged):
    store, _ = judged
    with store.read() as s:
        queue = adjudication_queue(s, "c")
        excluded = excluded_pairs(s, "c")
    assert [(p.qid, p.docid, p.labels, p.fourth, p.state, p.final_grade, p.method) for p in queue] == [
        ("q1", "d2", {"ann1": 0, "ann2": 1, "ann3": 2}, "ann4", "needs_fourth", None, None)
    ]
    assert queue[0].query == "first query" and queue[0].passage == "passage text d2" and queue[0].title == "T"
    assert [(p.qid, p.docid, p.labels, p.state, p.final_grade, p.method) for p in excluded] == [
        ("q1", "d3", {"ann1": 0, "ann2": 1, "ann3": 2, "ann4": 3}, "excluded", None, "excluded")
    ]
    assert excluded[0].reason == "4 labels, no majority: 0, 1, 2, 3"  # stored with the exclusion (issue 20)
    with store.write() as s:  # an exclusion stored before exclusions said why: the review gives the reason too
        s.execute(update(FinalLabel).where(FinalLabel.method == "excluded").values(reason=""))
    with store.read() as s:
        assert [p.reason for p in excluded_pairs(s, "c")] == ["4 labels, no majority: 0, 1, 2, 3"]


@pytest.mark.slow
def test_pair_review_shows_labels_final_label_and_override_history(judged):
    store, u = judged
    with store.read() as s:
        pair = pair_review(s, "c", "q2", "d5")
        pairs = reviewable_pairs(s, "c")
    assert (pair.query, pair.passage, pair.labels) == (
        "second <b>query</b>",
        "passage text d5",
        {"ann1": 1, "ann2": 1, "ann3": 1},
    )
    assert (pair.final_grade, pair.method, pair.reason, pair.state) == (
        0,
        "overridden",
        "the passage is about something else",
        "resolved",
    )
    assert [(o["reviewer"], o["grade"], o["reason"]) for o in pair.overrides] == [
        ("rev1", 0, "the passage is about something else")
    ]
    assert pairs == {"q1": DOCS[:5], "q2": DOCS[5:]}
    with pytest.raises(NotFound):
        with store.read() as s:
            pair_review(s, "c", "q1", "d9")  # d9 belongs to q2: not an assigned pair


@pytest.mark.slow
def test_an_excluding_override_lists_the_pair_as_excluded(judged):
    store, u = judged
    q, d = _ids(store, "d5")
    with store.write() as s:
        override_label(s, u["boss"], q, d, None, "duplicate of d6")
    with store.read() as s:
        pair = pair_review(s, "c", "q2", "d5")
        excluded = excluded_pairs(s, "c")
    assert (pair.final_grade, pair.method, pair.state) == (None, "overridden", "excluded")
    assert [(o["reviewer"], o["grade"]) for o in pair.overrides] == [("rev1", 0), ("boss", None)]
    assert [(p.docid, p.method) for p in excluded] == [("d3", "excluded"), ("d5", "overridden")]


@pytest.mark.slow
def test_final_label_distribution(judged):
    store, _ = judged
    with store.read() as s:
        dist = final_label_distribution(s, "c")
    assert dist.by_grade == {0: 1, 1: 1, 2: 1, 3: 1}
    assert dist.excluded == 1 and dist.total == 5 and dist.pending == 2  # d2 (needs a 4th) and d4
    assert dist.by_method == {"unanimous": 1, "majority": 1, "adjudicated": 1, "excluded": 1, "overridden": 1}
    assert dist.cells == [
        {"method": "unanimous", "grade": 3, "pairs": 1},
        {"method": "majority", "grade": 2, "pairs": 1},
        {"method": "adjudicated", "grade": 1, "pairs": 1},
        {"method": "excluded", "grade": None, "pairs": 1},
        {"method": "overridden", "grade": 0, "pairs": 1},
    ]


@pytest.mark.slow
def test_throughput_and_flags(judged):
    store, _ = judged
    with store.read() as s:
        result = throughput(s, "c")
        flags = flagged(s, "c")
    today = datetime.now(UTC).date()
    assert result.daily == [
        DailyLabels(annotator="ann1", day=today, labels=8),
        DailyLabels(annotator="ann2", day=today, labels=7),
        DailyLabels(annotator="ann3", day=today, labels=7),
        DailyLabels(annotator="ann4", day=today, labels=2),
    ]
    assert result.annotators == {
        "ann1": AnnotatorWork(labels=8, pairs=7, qc_labels=0, skips=0, flags=0, undos=0, median_seconds=4.5),
        "ann2": AnnotatorWork(labels=7, pairs=6, qc_labels=0, skips=0, flags=1, undos=1, median_seconds=1.5),
        "ann3": AnnotatorWork(labels=7, pairs=7, qc_labels=0, skips=1, flags=0, undos=0, median_seconds=5.0),
        "ann4": AnnotatorWork(labels=2, pairs=2, qc_labels=0, skips=0, flags=0, undos=0, median_seconds=None),
    }
    assert [(f.annotator, f.qid, f.docid, f.note, f.query, f.purpose) for f in flags] == [
        ("ann2", "q2", "d6", "*odd* <script>alert(1)</script>", "second <b>query</b>", "label")
    ]


@pytest.mark.slow
def test_package_overview_matches_package_progress(judged):
    store, _ = judged
    with store.read() as s:
        rows = package_overview(s, "c")
        assert package_overview(s) == rows
        expected = {p.name: package_progress(s, p.id) for p in s.scalars(select(Package))}
    assert [(r.name, r.annotator, r.status, r.labelled, r.total, r.pool, r.collection) for r in rows] == [
        ("ann1-p001", "ann1", "open", 7, 10, "p", "c"),
        ("ann2-p001", "ann2", "open", 6, 10, "p", "c"),
        ("ann3-p001", "ann3", "open", 7, 10, "p", "c"),
    ]
    assert {r.name: (r.labelled, r.total) for r in rows} == expected
    assert not any(r.finished for r in rows) and all(r.rounds == 0 and r.last_accuracy is None for r in rows)


@pytest.mark.slow
def test_qc_history_keeps_every_round_and_qc_labels_stay_out_of_agreement(world):
    store, u = world
    for doc in DOCS:
        _act(store, u["ann1"], doc, 3)
    with store.read() as s:
        [package] = [r for r in package_overview(s, "c") if r.annotator == "ann1"]
        before = standing_labels(s, "c")
    assert package.finished and (package.labelled, package.total) == (10, 10)
    with store.write() as s:
        round1 = start_qc_round(s, package.id, reviewers=["rev1", "rev2"], sample_size=4, seed=3)
    with store.read() as s:
        [row] = qc_history(s, package.id)
    assert (row.round_no, row.status, row.sample_size, row.accuracy, row.reviewed) == (
        1,
        "reviewing",
        4,
        None,
        {"rev1": 0, "rev2": 0},
    )

    def review(user, limit):
        for _ in range(limit):
            with store.read() as s:
                item = next_item(s, u[user])
            if item is None:
                return
            with store.write() as s:
                record_judgment(s, u[user], item.assignment_id, 0)

    review("rev1", 10)
    review("rev2", 3)
    with store.read() as s:
        [row] = qc_history(s, collection="c")
        assert standing_labels(s, "c") == before  # reviewers' QC labels are not labelling judgments
        assert throughput(s, "c").annotators["rev1"].qc_labels == 4
    assert row.reviewed == {"rev1": 4, "rev2": 3}
    with pytest.raises(ValueError, match="not complete"):
        with store.write() as s:
            close_qc_round(s, round1)
    review("rev2", 10)
    with store.write() as s:
        result = close_qc_round(s, round1)
    assert result["decision"] == "revise" and result["accuracy"] == 0.0
    from db.rework import disputed_items, relabel_disputed

    with store.write() as s:  # every disputed item answered (here: confirmed) before resubmitting (issue 11)
        for item in disputed_items(s, u["ann1"], package.id):
            relabel_disputed(s, u["ann1"], item.assignment_id, item.annotator_label)
        resubmit_package(s, u["ann1"], package.id)
        round2 = start_qc_round(s, package.id, reviewers=["rev1", "rev2", "boss"], sample_size=4, seed=3)  # boss: kept
    with store.read() as s:
        history = qc_history(s, package.id)
        [after] = [r for r in package_overview(s) if r.id == package.id]
        assert qc_history(s, collection="c") == history
    assert [(r.id, r.round_no, r.status, r.accuracy, r.n_checked) for r in history] == [
        (round1, 1, "revise", 0.0, result["n_checked"]),
        (round2, 2, "reviewing", None, None),
    ]
    assert history[0].decided_at is not None and history[1].decided_at is None
    assert (after.status, after.rounds, after.last_accuracy) == ("in_qc", 2, 0.0)


@pytest.mark.slow
def test_activity_marker_moves_with_the_log_and_active_users(judged):
    store, u = judged
    with store.read() as s:
        first = activity_marker(s, "c")
        assert active_users(s, ["annotator"]) == ["ann1", "ann2", "ann3", "ann4"]
        assert active_users(s, ["reviewer", "admin"]) == ["boss", "rev1", "rev2"]
    _act(store, u["ann3"], "d8", 2)
    with store.read() as s:
        second = activity_marker(s, "c")
    assert second[0] > first[0] and second[1:] == first[1:]


# --------------------------------------------------------------------------- review at scale (issue 11)


@pytest.mark.slow
def test_filter_pairs_by_search_annotator_state_and_grade(judged):
    from db.review import filter_pairs, review_table

    store, _ = judged
    with store.read() as s:
        rows = review_table(s, "c")
    assert [(p.docid, p.state) for p in rows] == [
        ("d0", "resolved"),
        ("d1", "resolved"),
        ("d2", "needs_fourth"),
        ("d3", "excluded"),
        ("d4", "pending"),
        ("d5", "resolved"),
        ("d6", "resolved"),
        ("d7", "pending"),
        ("d8", "pending"),
        ("d9", "pending"),
    ]

    def docs(**kw):
        return [p.docid for p in filter_pairs(rows, **kw)]

    assert docs() == DOCS
    assert docs(state="needs_fourth") == ["d2"]
    assert docs(search="  SECOND <b>") == ["d5", "d6", "d7", "d8", "d9"]  # query text, case-insensitive
    assert docs(search="d1") == ["d1"] and docs(search="Q1") == ["d0", "d1", "d2", "d3", "d4"]
    assert docs(annotator="ann4") == ["d2", "d3", "d6"]  # labelled, or holds the 4th label (d2)
    assert docs(final_grade="excluded") == ["d3"]
    assert docs(final_grade=0) == ["d5"] and docs(final_grade=2) == ["d1"] and docs(final_grade=1) == ["d6"]
    assert docs(label=3) == ["d0", "d3"]
    assert docs(annotator="ann1", label=0) == ["d2", "d3", "d6"]  # the label that annotator gave
    assert docs(annotator="ann4", state="resolved") == ["d6"]
    assert docs(search="q2", state="pending", annotator="ann3") == []  # ann3 only skipped d7
    with pytest.raises(
        ValueError, match="^state must be one of pending, needs_fourth, resolved, excluded, got 'open'$"
    ):
        filter_pairs(rows, state="open")
    with pytest.raises(ValueError, match="^label must be a grade, got True$"):
        filter_pairs(rows, label=True)
    with pytest.raises(ValueError, match="^final_grade must be a grade or 'excluded', got 'x'$"):
        filter_pairs(rows, final_grade="x")


@pytest.fixture
def ranked(store):
    """Collection ``r`` whose query q1 is pooled b, d, a (the selection order), labelled and partly overridden.

    c was pooled but not selected; x1-x3 label b and d; a reviewer overrides a to 1; run ``bm25`` ranks c,
    then a and d tied at 5.0.
    """
    docs = ["a", "b", "c", "d"]
    run = [RunEntry("q1", "c", 9.0), RunEntry("q1", "a", 5.0), RunEntry("q1", "d", 5.0), RunEntry("q2", "a", 1.0)]
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"text <i>{d}</i>", title=f"T{d}") for d in docs]),
        queries=lambda: iter([Query("q1", "query <one>"), Query("q2", "two")]),
        qrels=lambda: iter(()),
        runs={"bm25": lambda: iter(run)},
    )
    with store.write() as s:
        import_collection(s, source, name="r", format="t", location="m")
        # pool order: the selection (b, d, a); c was pooled but not selected
        save_pool(
            s,
            "r",
            "p",
            {
                "q1": {"a": [("bm25", 2, 5.0)], "b": [], "c": [("bm25", 1, 9.0)], "d": [("bm25", 3, 5.0)]},
                "q2": {"a": []},
            },
            method="depth",
            selection={"q1": ["b", "d", "a"], "q2": ["a"]},
        )
        ids = {n: add_user(s, n, "correct horse", "annotator").id for n in ("x1", "x2", "x3")}
        rev = add_user(s, "rev", "correct horse", "reviewer").id
        create_assignments(s, "r", "p", annotators=["x1", "x2", "x3"], seed=1)
    with store.read() as s:
        q = s.scalar(select(QueryRecord.id).where(QueryRecord.ext_id == "q1"))
        pid = dict(s.execute(select(PassageRecord.ext_id, PassageRecord.id)).all())
        aids = {
            (u, p): a
            for u, p, a in s.execute(
                select(Assignment.user_id, Assignment.passage_id, Assignment.id).where(Assignment.query_id == q)
            )
        }
    for name, grades in {"x1": {"b": 3, "d": 0}, "x2": {"b": 3, "d": 1}, "x3": {"b": 2}}.items():
        for doc, grade in grades.items():
            with store.write() as s:
                record_judgment(s, ids[name], aids[(ids[name], pid[doc])], grade)
    with store.write() as s:
        override_label(s, rev, q, pid["a"], 1, "checked by hand")
    return store


def test_ranked_list_shows_a_querys_pool_with_every_label_in_pool_or_run_order(ranked):
    store = ranked
    with store.read() as s:
        assert pool_queries(s, "r", "p") == [("q1", "query <one>", 3), ("q2", "two", 1)]
        pooled = ranked_list(s, "r", "p", "q1")
        by_run = ranked_list(s, "r", "p", "q1", run="bm25")
    assert (pooled.qid, pooled.query, pooled.pool, pooled.run) == ("q1", "query <one>", "p", None)
    assert [(e.position, e.docid, e.run_rank, e.labels, e.state, e.final_grade, e.method) for e in pooled.entries] == [
        (1, "b", None, {"x1": 3, "x2": 3, "x3": 2}, "resolved", 3, "majority"),
        (2, "d", None, {"x1": 0, "x2": 1}, "pending", None, None),
        (3, "a", None, {}, "resolved", 1, "overridden"),
    ]
    assert pooled.entries[0].passage == "text <i>b</i>" and pooled.entries[0].title == "Tb"
    assert pooled.entries[2].reason == "checked by hand"
    # bm25 ranks c 1 (not selected: not listed), then a and d tied at 5.0: docid descending, d before a;
    # b was not retrieved by bm25: it follows, in pool order
    assert [(e.position, e.docid, e.run_rank) for e in by_run.entries] == [(1, "d", 2), (2, "a", 3), (3, "b", None)]
    with store.read() as s:
        with pytest.raises(NotFound, match="no run named 'nope' in collection 'r'"):
            ranked_list(s, "r", "p", "q1", run="nope")
        with pytest.raises(NotFound, match="no query 'q9' in collection 'r'"):
            ranked_list(s, "r", "p", "q9")
        with pytest.raises(NotFound, match="no pool named 'x' in collection 'r'"):
            ranked_list(s, "r", "x", "q1")
