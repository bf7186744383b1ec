"""Names in the CLI: stored names printed escaped, bad names refused before anything is written."""

from __future__ import annotations

from sqlalchemy import insert

from db.engine import Store, sqlite_url
from db.models import Collection, QrelsVersion, RunRecord
from pooljudge.cli import main
from tests.clirun import run_cli
from tests.sqlite_template import fresh_sqlite


def test_collections_prints_stored_names_escaped(tmp_path, capsys):
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    store = Store(db)
    with store.write() as s:  # names stored before they were checked
        cid = s.execute(insert(Collection).values(name="evil\n\x1b[31mred\tcol", description="")).inserted_primary_key[
            0
        ]
        s.execute(insert(RunRecord).values(collection_id=cid, name="run\r\x1b]0;title\x07", source="import", params={}))
        s.execute(insert(QrelsVersion).values(collection_id=cid, name="v\u202e1", source="import"))
    store.dispose()
    capsys.readouterr()
    assert main(["--db", db, "collections"]) == 0
    assert capsys.readouterr().out == (
        "evil\\n\\x1b[31mred\\tcol\t?\t0 passages\t0 queries\tlevel 2\truns: run\\r\\x1b]0;title\\x07\tqrels: v\\u202e1\n"
    )


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _beir(folder, qrels="query-id\tcorpus-id\tscore\nEN-Q1\td1\t1\nEN-Q1\td2\t0\n"):
    _write(folder / "corpus.jsonl", '{"_id": "d1", "text": "alpha"}\n{"_id": "d2", "text": "beta"}\n')
    _write(folder / "queries.jsonl", '{"_id": "EN-Q1", "text": "alpha?"}\n')
    _write(folder / "qrels" / "test.tsv", qrels)
    return folder


def _counts(db):
    from sqlalchemy import func, select

    from db.models import ImportRecord, QrelsEntry, RunEntryRecord, RunRecord

    store = Store(db)
    with store.read() as s:
        counts = [
            s.scalar(select(func.count()).select_from(t))
            for t in (Collection, RunRecord, RunEntryRecord, QrelsVersion, QrelsEntry, ImportRecord)
        ]
    store.dispose()
    return counts


def test_import_refuses_unknown_ids_unless_allowed_and_reports_them(tmp_path, capsys):
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    assert main(["--db", db, "-q", "import", "-f", "beir", str(_beir(tmp_path / "b")), "-c", "c"]) == 0
    assert capsys.readouterr().out == (
        "collection 'c': 2 passages, 1 queries, 2 qrels entries added; runs: none; relevance level 1\n"
    )
    run = _write(tmp_path / "bm25.trec", "EN-Q1 Q0 d1 1 2.0 t\nEN-Q01 Q0 d2 2 1.0 t\nEN-Q1 Q0 d404 3 0.5 t\n")
    before = _counts(db)
    assert main(["--db", db, "-q", "import", "-f", "trec-run", str(run), "-c", "c", "--merge"]) == 1
    assert capsys.readouterr() == (
        "",
        (
            f"error: {run}:2: query id 'EN-Q01' is not in collection 'c' (unknown in the qrels and runs: 1 query id "
            "('EN-Q01'); 1 passage id ('d404')); nothing was imported: correct the ids, or import with unknown ids "
            "allowed (--allow-unknown-ids; TREC qrels may judge documents outside the corpus)\n"
        ),
    )
    assert _counts(db) == before
    assert (
        main(["--db", db, "-q", "import", "-f", "trec-run", str(run), "-c", "c", "--merge", "--allow-unknown-ids"]) == 0
    )
    assert capsys.readouterr().out == (
        "collection 'c': 0 passages, 0 queries, 0 qrels entries added (0 passages, 0 queries, 0 qrels already present); "
        "runs: 'bm25' (3 entries); relevance level 1; kept unknown 1 query id and 1 passage id\n"
        "note: kept unknown ids (allowed) in the qrels and runs: 1 query id ('EN-Q01'); 1 passage id ('d404')\n"
    )


def test_import_level_run_name_and_qrels_name(tmp_path, capsys):
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    graded = _beir(tmp_path / "g", qrels="query-id\tcorpus-id\tscore\nEN-Q1\td1\t3\nEN-Q1\td2\t1\n")
    assert main(["--db", db, "-q", "import", "-f", "beir", str(graded), "-c", "graded"]) == 0
    assert capsys.readouterr().out.endswith("; runs: none; relevance level 2\n")
    assert main(["--db", db, "-q", "import", "-f", "beir", str(graded), "-c", "strict", "--level", "3"]) == 0
    assert capsys.readouterr().out.endswith("; runs: none; relevance level 3\n")
    before = _counts(db)
    assert main(["--db", db, "-q", "import", "-f", "beir", str(graded), "-c", "zero", "--level", "0"]) == 1
    assert capsys.readouterr().err == "error: level must be an integer >= 1 (at most 2147483647), got 0\n"
    assert main(["--db", db, "-q", "import", "-f", "beir", str(graded), "-c", "q", "--qrels-name", ""]) == 1
    assert capsys.readouterr().err == "error: qrels version name must not be empty\n"
    assert main(["--db", db, "-q", "import", "-f", "beir", str(graded), "-c", "bad\x1b[2J"]) == 1
    assert capsys.readouterr().err == (
        "error: collection name 'bad\\x1b[2J' contains a control character (U+001B) at position 4; "
        "names must be printable\n"
    )
    hidden = _write(tmp_path / ".trec", "EN-Q1 Q0 d1 1 2.0 t\n")
    assert main(["--db", db, "-q", "import", "-f", "trec-run", str(hidden), "-c", "graded", "--merge"]) == 1
    assert capsys.readouterr().err == (
        "error: run name '.trec' is only a file extension (its file has no name before the extension); rename the "
        "file or give the run a name (--run-name)\n"
    )
    assert _counts(db) == before
    assert run_cli(db, "import -f trec-run", hidden, "-c", "graded", "--merge", "--run-name", "bm25") == 0
    assert "runs: 'bm25' (1 entries); relevance level 2\n" in capsys.readouterr().out


def test_import_prints_the_readers_notes(tmp_path, capsys, monkeypatch):
    import core.formats.trec as trec

    original = trec.read_trec_qrels

    def noting(path, name=None):
        source = original(path, name)
        source.notes.append("a.qrels: ignored 'x'")
        return source

    monkeypatch.setattr(trec, "read_trec_qrels", noting)
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    qrels = _write(tmp_path / "a.qrels", "q1 0 d1 1\n")
    assert main(["--db", db, "-q", "import", "-f", "trec-qrels", str(qrels), "-c", "c"]) == 0
    assert capsys.readouterr().out == (
        "collection 'c': 0 passages, 0 queries, 1 qrels entries added; runs: none; relevance level 1\n"
        "note: a.qrels: ignored 'x'\n"
        "note: query ids in the qrels and runs were not checked: the collection holds no queries\n"
        "note: passage ids in the qrels and runs were not checked: the collection holds no passages\n"
    )
