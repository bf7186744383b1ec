"""`pooljudge freeze` and `export qrels` say which judged pairs they leave out, by reason, and offer what to do."""

from __future__ import annotations

import pytest

from db.engine import Store, sqlite_url
from db.importer import save_run
from pooljudge.cli import main
from tests.db.unresolved_helpers import build_unresolved
from tests.sqlite_template import fresh_sqlite

COUNTS = (
    "1 pairs with a final label (only resolved pairs are exported: the default); 4 judged pairs without one left "
    "out: 1 waiting for a 4th label, 1 excluded after a 4th differing label, 1 flagged, 1 waiting for more labels"
)


def _db(tmp_path) -> str:
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    store = Store(db)
    build_unresolved(store)
    store.dispose()
    return db


def test_freeze_and_export_count_the_pairs_they_leave_out_by_reason(tmp_path, capsys):
    db = _db(tmp_path)
    assert main(["--db", db, "freeze", "-c", "c", "--name", "v1"]) == 0
    out, err = capsys.readouterr()
    assert out == "qrels version 'v1': 1 final labels\n"
    assert err == f"{COUNTS}\n--list-unresolved lists them\n"
    assert main(["--db", db, "export", "qrels", "-c", "c", "--version", "v1"]) == 0
    out, err = capsys.readouterr()
    assert out == "q1 0 d0 3\n"
    assert err.splitlines() == [
        COUNTS,
        "--list-unresolved lists them; --unresolved-median PATH writes the median of their labels so far to a "
        "separate qrels file",
    ]


def test_export_lists_them_and_writes_their_median_labels_to_a_separate_file(tmp_path, capsys):
    db = _db(tmp_path)
    main(["--db", db, "freeze", "-c", "c", "--name", "v1"])
    capsys.readouterr()
    qrels, median = tmp_path / "v1.qrels", tmp_path / "v1.unresolved.qrels"
    args = ["--db", db, "export", "qrels", "-c", "c", "-o", str(qrels), "--list-unresolved"]
    assert main([*args, "--unresolved-median", str(median)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        COUNTS,
        "q1\td1\twaiting for a 4th label\tann1: 0, ann2: 1, ann3: 2\t",
        "q1\td2\texcluded after a 4th differing label\tann1: 0, ann2: 1, ann3: 2, ann4: 3\t"
        "4 labels, no majority: 0, 1, 2, 3",
        "q1\td3\tflagged\tann2: 2, ann3: 2\t",
        "q1\td4\twaiting for more labels\tann1: 1\t",
        f"wrote the median label of 4 unresolved pairs to {median} (not final labels)",
    ]
    assert qrels.read_text() == "q1 0 d0 3\n"  # the export itself keeps resolved pairs only
    assert median.read_text() == "q1 0 d1 1\nq1 0 d2 1\nq1 0 d3 2\nq1 0 d4 1\n"


@pytest.mark.slow
def test_an_archived_collection_read_by_name_says_so(tmp_path, capsys):
    db = _db(tmp_path)
    main(["--db", db, "freeze", "-c", "c", "--name", "v1"])
    assert main(["--db", db, "archive", "collection", "c"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "export", "qrels", "-c", "c", "--version", "v1"]) == 0
    out, err = capsys.readouterr()
    assert out == "q1 0 d0 3\n"
    assert err.startswith("note: collection 'c' is archived (by ")
    assert "it is read all the same (`pooljudge restore collection 'c'` shows it again).\n" in err
    store = Store(db)
    with store.write() as s:
        save_run(s, "c", "bm25", {"q1": {"d0": 2.0, "d1": 1.0}})
    store.dispose()
    assert main(["--db", db, "eval", "-c", "c", "v1", "bm25", "-m", "P@1"]) == 0
    out, err = capsys.readouterr()
    assert out.split() == ["P@1", "all", "1.0000"]
    assert err.startswith("note: collection 'c' is archived (by ")
