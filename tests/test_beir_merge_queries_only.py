"""A BEIR merge that only adds queries (and qrels) accepts an absent or empty corpus.jsonl and says so (issue 20)."""

from __future__ import annotations

import json

import pytest

from core.errors import FormatError
from core.formats.beir import read_beir
from db.engine import Store, sqlite_url
from db.queries import iter_queries, stored_qrels
from pooljudge.cli import main
from tests.sqlite_template import copy_store


def _write(root, corpus: str | None, queries: list[tuple[str, str]], qrels: list[tuple[str, str, int]]) -> None:
    (root / "qrels").mkdir(parents=True)
    if corpus is not None:
        (root / "corpus.jsonl").write_text(corpus, encoding="utf-8")
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in queries), encoding="utf-8"
    )
    (root / "qrels" / "test.tsv").write_text("".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels), encoding="utf-8")


@pytest.mark.parametrize(("corpus", "note"), [(None, "no corpus.jsonl"), ("", "corpus.jsonl is empty")])
def test_a_merge_adds_queries_without_a_corpus(tmp_path, capsys, corpus, note, sqlite_template):
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    base = tmp_path / "base"
    corpus_text = "".join(json.dumps({"_id": d, "text": f"text {d}"}) + "\n" for d in ("d1", "d2"))
    _write(base, corpus_text, [("q1", "first")], [("q1", "d1", 1)])
    assert main(["--db", db, "import", "-f", "beir", str(base), "-c", "c"]) == 0
    more = tmp_path / "more"
    _write(more, corpus, [("q1", "first"), ("q2", "second")], [("q2", "d2", 2)])
    capsys.readouterr()
    assert main(["--db", db, "import", "-f", "beir", str(more), "-c", "c", "--merge", "--qrels-name", "extra"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("collection 'c': 0 passages, 1 queries, 1 qrels entries added")
    assert f"note: {note}: queries and qrels only, no passage added\n" in out
    store = Store(db)
    with store.read() as s:
        assert [q.id for q in iter_queries(s, "c")] == ["q1", "q2"]
        assert stored_qrels(s, "c", "extra") == {"q2": {"d2": 2}}
    store.dispose()


def test_a_new_collection_still_needs_its_corpus(tmp_path):
    _write(tmp_path / "x", "", [("q1", "first")], [])
    with pytest.raises(FormatError, match="file is empty"):
        list(read_beir(tmp_path / "x").passages())
    _write(tmp_path / "y", None, [("q1", "first")], [])
    with pytest.raises(FormatError, match="missing corpus.jsonl"):
        read_beir(tmp_path / "y")
