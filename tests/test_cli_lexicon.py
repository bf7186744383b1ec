"""`pooljudge lexicon add/list/remove/import -c C`: a collection's own names, stored (issue 22)."""

from __future__ import annotations

from core.types import CollectionSource, Passage, Query
from db.engine import Store, sqlite_url
from db.importer import import_collection
from db.lexicon import collection_lexicon
from pooljudge.cli import main
from tests.sqlite_template import fresh_sqlite


def _db(tmp_path) -> str:
    url = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    store = Store(url)
    source = CollectionSource(
        passages=lambda: iter([Passage("p1", "text")]), queries=lambda: iter([Query("q1", "q")]), qrels=lambda: iter(())
    )
    with store.write() as s:
        import_collection(s, source, name="c", format="t", location="m")
    store.dispose()
    return url


def _lexicon(url: str) -> dict[str, str]:
    store = Store(url)
    try:
        with store.read() as s:
            return collection_lexicon(s, "c")
    finally:
        store.dispose()


def test_add_list_remove(tmp_path, capsys):
    db = _db(tmp_path)
    assert main(["--db", db, "lexicon", "add", "-c", "c", "青川烧", "liquor"]) == 0
    assert main(["--db", db, "lexicon", "add", "-c", "c", "Zorblax", "plan"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "lexicon", "list", "-c", "c"]) == 0
    assert capsys.readouterr().out == "青川烧\tliquor\nZorblax\tplan\n"
    assert main(["--db", db, "lexicon", "remove", "-c", "c", "zorblax"]) == 0
    assert capsys.readouterr().out == "removed 'zorblax' from the lexicon of 'c'\n"
    assert _lexicon(db) == {"青川烧": "liquor"}
    # errors: a name already there, a name not there, an unknown collection
    assert main(["--db", db, "lexicon", "add", "-c", "c", "青川烧", "beer"]) == 1
    assert capsys.readouterr().err == "error: '青川烧' is already in the lexicon of 'c', as 'liquor'\n"
    assert main(["--db", db, "lexicon", "remove", "-c", "c", "nope"]) == 1
    assert capsys.readouterr().err == "error: no name 'nope' in the lexicon of 'c'\n"
    assert main(["--db", db, "lexicon", "list", "-c", "missing"]) == 1
    assert "missing" in capsys.readouterr().err
    assert _lexicon(db) == {"青川烧": "liquor"}


def test_import_a_file_and_a_bad_line_names_file_and_line(tmp_path, capsys):
    db = _db(tmp_path)
    good = tmp_path / "names.tsv"
    good.write_text("# my names\n青川烧\tliquor\n\nZorblax\tplan\n", encoding="utf-8")
    assert main(["--db", db, "lexicon", "import", "-c", "c", str(good)]) == 0
    assert capsys.readouterr().out == "lexicon of 'c': 2 names added, 0 kinds changed\n"
    bad = tmp_path / "bad.tsv"
    bad.write_text("岭南春\tliquor\nQuintor plan\n", encoding="utf-8")
    assert main(["--db", db, "lexicon", "import", "-c", "c", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err == "error: bad.tsv line 2: expected name<TAB>kind, got 'Quintor plan'\n"
    assert str(tmp_path) not in err  # the file's name, not its folder
    assert _lexicon(db) == {"青川烧": "liquor", "Zorblax": "plan"}  # nothing of the bad file
