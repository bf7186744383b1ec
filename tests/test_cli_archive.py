"""pooljudge archive / restore / rename: hidden from `pooljudge collections`, judgments intact, undone exactly."""

from __future__ import annotations

import getpass

from sqlalchemy import func, select

from core.types import CollectionSource, Passage, Query
from db.assignments import create_assignments
from db.engine import Store, sqlite_url
from db.importer import import_collection, save_run
from db.labelling import record_judgment
from db.models import Assignment, Collection, Judgment
from db.pools import save_pool
from db.users import add_user
from pooljudge.cli import main
from tests.sqlite_template import fresh_sqlite


def _store(tmp_path) -> str:
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    store = Store(db)
    source = CollectionSource(
        passages=lambda: iter([Passage(d, f"text {d}") for d in ("d1", "d2")]),
        queries=lambda: iter([Query("q1", "query")]),
        qrels=lambda: iter(()),
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
        save_run(s, "c", "bm25", {"q1": {"d1": 1.0}})
        save_pool(s, "c", "p", {"q1": {"d1": [], "d2": []}}, method="depth")
        users = [add_user(s, n, "correct horse", "annotator").id for n in ("a1", "a2", "a3")]
        create_assignments(s, "c", "p", annotators=["a1", "a2", "a3"], seed=1)
    with store.write() as s:
        for uid in users:
            for aid in s.scalars(select(Assignment.id).where(Assignment.user_id == uid)):
                record_judgment(s, uid, aid, 1, elapsed_ms=500)
    store.dispose()
    return db


def _judgments(db) -> int:
    store = Store(db)
    with store.read() as s:
        n = s.scalar(select(func.count()).select_from(Judgment))
    store.dispose()
    return n


def test_cli_archive_and_restore_a_collection_keeps_its_judgments(tmp_path, capsys):
    db = _store(tmp_path)
    assert _judgments(db) == 6
    capsys.readouterr()
    assert main(["--db", db, "archive", "collection", "c"]) == 0
    assert capsys.readouterr().out == (
        "archived collection 'c' (hidden, nothing deleted; undo with `pooljudge restore`)\n"
    )
    assert main(["--db", db, "collections"]) == 0
    assert capsys.readouterr().out.startswith("no collections")
    store = Store(db)
    with store.read() as s:
        assert s.execute(select(Collection.archived_by)).scalar() == f"{getpass.getuser()} (cli)"
    store.dispose()
    assert _judgments(db) == 6
    assert main(["--db", db, "archive", "collection", "c"]) == 1
    assert capsys.readouterr().err.startswith("error: collection 'c' is already archived (by ")
    assert main(["--db", db, "restore", "collection", "c"]) == 0
    assert capsys.readouterr().out == "restored collection 'c'\n"
    assert main(["--db", db, "collections"]) == 0
    assert capsys.readouterr().out.startswith("c\t")
    assert _judgments(db) == 6


def test_cli_archive_a_run_and_rename(tmp_path, capsys):
    db = _store(tmp_path)
    capsys.readouterr()
    assert main(["--db", db, "archive", "run", "bm25"]) == 1
    assert capsys.readouterr().err == "error: a run belongs to a collection: name it (--collection)\n"
    assert main(["--db", db, "archive", "run", "bm25", "-c", "c"]) == 0
    assert capsys.readouterr().out.startswith("archived run 'bm25'")
    assert main(["--db", db, "collections"]) == 0
    assert "runs: -" in capsys.readouterr().out
    assert main(["--db", db, "restore", "run", "bm25", "-c", "c"]) == 0
    assert main(["--db", db, "rename", "run", "bm25", "bm25-v2", "-c", "c"]) == 0
    assert capsys.readouterr().out.endswith("renamed run 'bm25' to 'bm25-v2'\n")
    assert main(["--db", db, "rename", "pool", "p", "bad\nname", "-c", "c"]) == 1
    assert capsys.readouterr().err.startswith("error: new pool name ")
    assert main(["--db", db, "rename", "collection", "c", "c"]) == 1
    assert capsys.readouterr().err == "error: collection 'c' already has that name; nothing was renamed\n"
    assert main(["--db", db, "collections"]) == 0
    assert "runs: bm25-v2" in capsys.readouterr().out


def test_cli_archived_lists_what_is_hidden_with_who_and_when(tmp_path, capsys):
    db = _store(tmp_path)
    capsys.readouterr()
    assert main(["--db", db, "archived"]) == 0
    assert capsys.readouterr().out == "nothing is archived\n"
    assert main(["--db", db, "archive", "pool", "p", "-c", "c"]) == 0
    assert main(["--db", db, "archive", "collection", "c"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "archived"]) == 0
    lines = capsys.readouterr().out.splitlines()
    who = f"{getpass.getuser()} (cli)"
    assert [line.rsplit("\t", 1)[0] for line in lines] == [f"collection\tc\tc\t{who}", f"pool\tc\tp\t{who}"]
    assert all(line.endswith(" UTC") for line in lines)
