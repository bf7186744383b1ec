"""Issue 10: qrels and runs naming queries or passages the collection lacks are refused (counted, the first
named at file:line) unless allowed; the relevance level a new collection gets; reader notes; names."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from core.errors import FormatError
from core.types import CollectionSource, Passage, QrelEntry, Query, RunEntry
from db.importer import import_collection, import_path, import_source, save_run, store_run
from db.models import Collection, ImportRecord, QrelsVersion, RunRecord
from db.queries import stored_run
from tests.db.import_helpers import import_table_counts, import_through, memory_source

PASSAGES = [Passage(f"d{i}", f"passage {i}") for i in range(1, 4)]
QUERIES = [Query("EN-Q1", "first"), Query("EN-Q2", "second")]


@pytest.fixture(params=["staged", "transaction"])
def load(request, store):
    def run(source, **kwargs):
        return import_through(request.param, store, source, **{"format": "t", "location": "m", **kwargs})

    return run


def _level(store, name="c"):
    with store.read() as s:
        return s.scalar(select(Collection.relevance_level).where(Collection.name == name))


def test_a_run_with_a_typo_in_a_query_id_is_refused_and_changes_nothing(store, load):
    load(memory_source(PASSAGES, QUERIES), name="c")
    before = import_table_counts(store)
    run = [
        RunEntry("EN-Q1", "d1", 2.0, origin="r.run:1"),
        RunEntry("EN-Q01", "d2", 1.0, origin="r.run:2"),
        RunEntry("EN-Q01", "d3", 0.5, origin="r.run:3"),
    ]
    with pytest.raises(FormatError) as raised:
        load(memory_source(runs={"bm25": run}), name="c", mode="merge")
    assert str(raised.value) == (
        "r.run:2: query id 'EN-Q01' is not in collection 'c' (unknown in the qrels and runs: 1 query id ('EN-Q01')); "
        "nothing was imported: correct the ids, or import with unknown ids allowed (--allow-unknown-ids; "
        "TREC qrels may judge documents outside the corpus)"
    )
    assert import_table_counts(store) == before
    summary = load(memory_source(runs={"bm25": run}), name="c", mode="merge", allow_unknown_ids=True)
    assert (summary.unknown_query_ids, summary.unknown_passage_ids, summary.runs) == (1, 0, {"bm25": 3})
    assert summary.notes == ["kept unknown ids (allowed) in the qrels and runs: 1 query id ('EN-Q01')"]


def test_unknown_ids_are_counted_distinct_and_the_first_five_named(store, load):
    load(memory_source(PASSAGES, QUERIES), name="c")
    before = import_table_counts(store)
    qrels = [QrelEntry("EN-Q1", f"x{i}", 1, origin=f"a.qrels:{i + 1}") for i in range(7)]
    qrels += [QrelEntry("EN-Q9", "d1", 1, origin="a.qrels:8"), QrelEntry("EN-Q2", "d2", 1, origin="a.qrels:9")]
    run = [RunEntry("EN-Q9", "x0", 1.0, origin="r.run:1"), RunEntry("EN-Q8", "x9", 1.0, origin="r.run:2")]
    with pytest.raises(FormatError) as raised:
        load(memory_source(qrels=qrels, runs={"r": run}), name="c", mode="merge")
    assert str(raised.value).startswith(
        "a.qrels:8: query id 'EN-Q9' is not in collection 'c' (unknown in the qrels and runs: 2 query ids ('EN-Q9', "
        "'EN-Q8'); 8 passage ids ('x0', 'x1', 'x2', 'x3', 'x4', ...)); nothing was imported"
    )
    assert import_table_counts(store) == before
    summary = load(memory_source(qrels=qrels, runs={"r": run}), name="c", mode="merge", allow_unknown_ids=True)
    assert (summary.unknown_query_ids, summary.unknown_passage_ids, summary.qrels_added) == (2, 8, 9)
    assert summary.as_dict()["unknown_query_ids"] == 2 and summary.as_dict()["unknown_passage_ids"] == 8


def test_a_collection_whose_qrels_judge_its_own_passages_imports(store, load):
    qrels = [QrelEntry("EN-Q1", "d1", 1), QrelEntry("EN-Q2", "d3", 0)]
    summary = load(memory_source(PASSAGES, QUERIES, qrels, {"bm25": [RunEntry("EN-Q2", "d2", 1.0)]}), name="c")
    assert (summary.unknown_query_ids, summary.unknown_passage_ids, summary.notes) == (0, 0, [])
    # qrels and a run of their own, merged later: checked against the stored collection
    more = load(
        memory_source(qrels=[QrelEntry("EN-Q2", "d1", 1)], runs={"r2": [RunEntry("EN-Q1", "d3", 1.0)]}),
        name="c",
        mode="merge",
        qrels_name="second",
    )
    assert (more.qrels_added, more.runs, more.unknown_query_ids, more.unknown_passage_ids) == (1, {"r2": 1}, 0, 0)
    # ids known partly from the store and partly from the same input
    mixed = load(
        memory_source(
            [Passage("d4", "four")],
            [Query("EN-Q3", "third")],
            [QrelEntry("EN-Q3", "d1", 1), QrelEntry("EN-Q1", "d4", 1)],
        ),
        name="c",
        mode="merge",
        qrels_name="third",
    )
    assert (mixed.qrels_added, mixed.unknown_query_ids, mixed.unknown_passage_ids) == (2, 0, 0)


def test_qrels_and_runs_of_a_collection_without_a_corpus_are_not_checked_and_the_summary_says_so(store, load):
    summary = load(memory_source(qrels=[QrelEntry("q1", "d1", 1)], runs={"r": [RunEntry("q1", "d1", 1.0)]}), name="c")
    assert (summary.unknown_query_ids, summary.unknown_passage_ids) == (0, 0)
    assert summary.notes == [
        "query ids in the qrels and runs were not checked: the collection holds no queries",
        "passage ids in the qrels and runs were not checked: the collection holds no passages",
    ]
    # queries but no passages: query ids are checked, passage ids are not
    with pytest.raises(FormatError, match=r"^r\.run:1: query id 'q2' is not in collection 'q'"):
        load(
            memory_source(queries=[Query("q1", "x")], runs={"r": [RunEntry("q2", "d1", 1.0, origin="r.run:1")]}),
            name="q",
        )


def test_store_run_and_save_run_refuse_unknown_ids_unless_allowed(store):
    with store.write() as s:
        import_collection(s, memory_source(PASSAGES, QUERIES), name="c", format="t", location="m")
    before = import_table_counts(store)
    bad = {"EN-Q1": {"d1": 1.0, "d404": 0.5}}
    with pytest.raises(ValueError) as raised:
        store_run(store, "c", "r", bad)
    assert str(raised.value) == (
        "passage id 'd404' is not in collection 'c' (unknown in run 'r': 1 passage id ('d404')); nothing was stored: "
        "correct the ids, or store the run with allow_unknown_ids=True"
    )
    with pytest.raises(ValueError, match=r"^query id 'EN-Q01' is not in collection 'c' \(unknown in run 's'"):
        with store.write() as s:
            save_run(s, "c", "s", {"EN-Q01": {"d1": 1.0}})
    assert import_table_counts(store) == before
    assert store_run(store, "c", "r", bad, allow_unknown_ids=True) == 2
    with store.write() as s:
        assert save_run(s, "c", "s", {"EN-Q01": {"d1": 1.0}}, allow_unknown_ids=True) == 1
    with store.read() as s:
        assert stored_run(s, "c", "r") == bad


# --------------------------------------------------------------------------- the relevance level


@pytest.mark.parametrize(
    ("grades", "level"),
    [
        ((1, 0, 1), 1),  # TREC-style binary
        ((0, 0), 1),  # binary, nothing relevant yet
        ((-1, 1), 1),  # binary with TREC's -1 (judged unusable)
        ((0, 1, 2, 3), 2),  # the 4-level scale
        ((0, 2), 2),
        ((), 2),  # no qrels: the 4-level scale the app labels on
    ],
)
def test_a_new_collection_gets_its_level_from_its_qrels(store, load, grades, level):
    qrels = [QrelEntry("EN-Q1" if i % 2 else "EN-Q2", f"d{i % 3 + 1}", g) for i, g in enumerate(grades)]
    summary = load(memory_source(PASSAGES, QUERIES, qrels), name="c")
    assert summary.relevance_level == level == _level(store)
    assert summary.as_dict()["relevance_level"] == level


def test_an_explicit_level_wins_and_an_existing_collection_keeps_its_own(store, load):
    summary = load(memory_source(PASSAGES, QUERIES, [QrelEntry("EN-Q1", "d1", 1)]), name="c", level=3)
    assert summary.relevance_level == 3 == _level(store)
    # a merge reports the stored level and never changes it
    more = load(memory_source(qrels=[QrelEntry("EN-Q1", "d2", 3)]), name="c", mode="merge", qrels_name="v2")
    assert more.relevance_level == 3 == _level(store)
    assert load(memory_source([Passage("d9", "x")]), name="c", mode="merge", level=3).relevance_level == 3
    before = import_table_counts(store)
    with pytest.raises(ValueError) as raised:
        load(memory_source([Passage("d8", "x")]), name="c", mode="merge", level=1)
    assert str(raised.value) == (
        "level 1 given, but collection 'c' exists with relevance level 3: the level is set when an import creates a "
        "collection; change it with `pooljudge level` or in the app"
    )
    assert import_table_counts(store) == before


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, 2**31])
def test_a_bad_level_is_refused_before_anything_is_written(store, load, bad):
    with pytest.raises(ValueError) as raised:
        load(memory_source(PASSAGES), name="c", level=bad)
    assert str(raised.value) == f"level must be an integer >= 1 (at most 2147483647), got {bad!r}"
    assert import_table_counts(store) == dict.fromkeys(import_table_counts(store), 0)


# --------------------------------------------------------------------------- reader notes


def test_reader_notes_reach_the_summary_and_the_import_record(store, load):
    notes: list[str] = []

    def passages():
        if not notes:  # a reader notes what it ignored while the stream is read, once
            notes.append("qa.jsonl: ignored key 'answer1' (first at line 3, 2 records)")
        yield from PASSAGES

    source = CollectionSource(passages=passages, queries=lambda: iter(QUERIES), qrels=lambda: iter(()), notes=notes)
    summary = load(source, name="c")
    assert summary.notes == ["qa.jsonl: ignored key 'answer1' (first at line 3, 2 records)"]
    assert summary.as_dict()["notes"] == summary.notes
    with store.read() as s:
        assert s.scalar(select(ImportRecord.counts))["notes"] == summary.notes


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"name": "evil\n\x1b[31m"},
            r"collection name 'evil\n\x1b[31m' contains a control character (U+000A) at position 5; "
            "names must be printable",
        ),
        ({"name": " c"}, "collection name ' c' has leading or trailing whitespace; remove it"),
        ({"name": "c" * 201}, "collection name is 201 characters long; the limit is 200"),
        ({"name": "c", "qrels_name": ""}, "qrels version name must not be empty"),
        (
            {"name": "c", "qrels_name": "v\t1"},
            r"qrels version name 'v\t1' contains a control character (U+0009) at position 2; "
            "names must be printable",
        ),
        (
            {"name": "c", "runs": {".trec": []}},
            "run name '.trec' is only a file extension (its file has no name before the "
            "extension); rename the file or give the run a name (--run-name)",
        ),
        (
            {"name": "c", "runs": {"r\u200b": []}},
            r"run name 'r\u200b' contains an invisible format character (U+200B) at "
            "position 2; names must be printable",
        ),
        ({"name": "c", "runs": {"r" * 201: []}}, "run name is 201 characters long; the limit is 200"),
    ],
)
def test_bad_names_are_refused_before_anything_is_written(store, load, kwargs, message):
    kwargs = dict(kwargs)  # the parameter is shared by both entry points
    runs = kwargs.pop("runs", None)
    with pytest.raises(ValueError) as raised:
        load(memory_source(PASSAGES, QUERIES, [QrelEntry("EN-Q1", "d1", 1)], runs), **kwargs)
    assert str(raised.value) == message
    assert import_table_counts(store) == dict.fromkeys(import_table_counts(store), 0)


def test_store_run_and_freeze_check_names(store):
    from db.resolution import freeze_qrels

    with store.write() as s:
        import_collection(s, memory_source(PASSAGES, QUERIES), name="c", format="t", location="m")
    with pytest.raises(ValueError, match=r"^run name 'bm25\\n' contains a control character"):
        store_run(store, "c", "bm25\n", {"EN-Q1": {"d1": 1.0}})
    with pytest.raises(ValueError, match="^qrels version name must not be empty$"):
        with store.write() as s:
            freeze_qrels(s, "c", "")
    with pytest.raises(ValueError, match=r"^qrels version name 'v1 ' has leading or trailing whitespace"):
        with store.write() as s:
            freeze_qrels(s, "c", "v1 ")
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(RunRecord)) == 0
        assert s.scalar(select(func.count()).select_from(QrelsVersion)) == 0


def test_run_name_renames_the_run_of_a_single_run_file(store, tmp_path):
    with store.write() as s:
        import_collection(s, memory_source(PASSAGES, QUERIES), name="c", format="t", location="m")
    hidden = tmp_path / ".trec"
    hidden.write_text("EN-Q1 Q0 d1 1 2.0 t\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"^run name '\.trec' is only a file extension"):
        import_path(store, "trec-run", hidden, name="c", mode="merge")
    summary = import_path(store, "trec-run", hidden, name="c", mode="merge", run_name="bm25")
    assert summary.runs == {"bm25": 1}
    with store.read() as s:
        assert stored_run(s, "c", "bm25") == {"EN-Q1": {"d1": 2.0}}
    with pytest.raises(ValueError, match=r"^run name must not be empty$"):
        import_path(store, "trec-run", hidden, name="c", mode="merge", run_name="")
    with pytest.raises(ValueError, match=r"^run_name names the run of a single-run file; this input has 0 runs$"):
        import_source(store, memory_source(PASSAGES), name="d", format="t", location="m", run_name="x")
