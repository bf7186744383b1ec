"""Import then export round-trips losslessly; exported qrels and runs follow TREC conventions."""

from __future__ import annotations

import json

import pytest

from db.engine import Store, sqlite_url
from db.queries import iter_passages, iter_queries, list_collections, stored_qrels, stored_run
from pooljudge.cli import main
from tests.sqlite_template import copy_store

CORPUS = [
    {
        "_id": "<dbpedia:Arènes_de_Lutèce>",
        "title": "Arènes de Lutèce",
        "text": "A Roman amphitheatre in Paris.",
        "doc_id": "arenes",
        "position": 0,
        "language": "en",
    },
    {"_id": "doc 2:b", "title": "", "text": "西安是陕西省的省会。", "doc_id": "xian", "position": 0, "language": "zh"},
    {
        "_id": "d3",
        "title": "Paris",
        "text": "It lies on the Seine & <b>has</b> bridges.",
        "doc_id": "arenes",
        "position": 1,
        "language": "en",
    },
]
QUERIES = [
    {"_id": "q1", "text": "roman amphitheatre paris", "split": "test", "language": "en", "type": "ENTITY"},
    {
        "_id": "q2",
        "text": "西安在哪个省",
        "split": "dev",
        "language": "zh",
        "answers": ["陕西", ["陕西省", "陕"]],
        "translation": "Which province is Xi'an in?",
    },
]


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "src"
    (root / "qrels").mkdir(parents=True)
    (root / "runs").mkdir()
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CORPUS), encoding="utf-8"
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in QUERIES), encoding="utf-8"
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq1\t<dbpedia:Arènes_de_Lutèce>\t3\nq1\td3\t1\n", encoding="utf-8"
    )
    (root / "qrels" / "dev.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq2\tdoc 2:b\t2\nq2\td3\t-1\n", encoding="utf-8"
    )
    (root / "runs" / "bm25.trec").write_text(
        "q1 Q0 d3 1 2.5 bm25\nq1 Q0 <dbpedia:Arènes_de_Lutèce> 2 2.5 bm25\nq2 Q0 d3 1 0.1 bm25\n", encoding="utf-8"
    )
    return root


def _snapshot(db, name):
    store = Store(db)
    with store.read() as s:
        info = next(c for c in list_collections(s) if c.name == name)
        snap = (
            list(iter_passages(s, name)),
            list(iter_queries(s, name)),
            stored_qrels(s, name),
            {r: stored_run(s, name, r) for r in info.runs},
        )
    store.dispose()
    return snap


def test_beir_import_export_import_is_lossless(folder, tmp_path, sqlite_template):
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    assert main(["--db", db, "-q", "import", "-f", "beir", str(folder), "-c", "one"]) == 0
    out = tmp_path / "exported"
    assert main(["--db", db, "export", "beir", "-c", "one", "-o", str(out), "--with-runs"]) == 0
    assert main(["--db", db, "-q", "import", "-f", "beir", str(out), "-c", "two"]) == 0
    first, second = _snapshot(db, "one"), _snapshot(db, "two")
    assert first == second
    passages, queries, qrels, runs = first
    assert [p.id for p in passages] == [r["_id"] for r in CORPUS]
    assert queries[1].answers == ["陕西", ["陕西省", "陕"]] and queries[1].split == "dev"
    assert qrels == {"q1": {"<dbpedia:Arènes_de_Lutèce>": 3, "d3": 1}, "q2": {"doc 2:b": 2, "d3": -1}}
    assert runs == {"bm25": {"q1": {"d3": 2.5, "<dbpedia:Arènes_de_Lutèce>": 2.5}, "q2": {"d3": 0.1}}}


def test_export_trec_qrels_graded_and_binary(tmp_path, capsys, sqlite_template):
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    qrels = tmp_path / "in.qrels"
    qrels.write_text("q2 0 b 3\nq1 0 <dbpedia:Été> 2\nq1 0 a 1\nq1 0 c -1\n", encoding="utf-8")
    assert main(["--db", db, "-q", "import", "-f", "trec-qrels", str(qrels), "-c", "q"]) == 0
    graded, binary = tmp_path / "g.qrels", tmp_path / "b.qrels.gz"
    assert main(["--db", db, "export", "qrels", "-c", "q", "-o", str(graded)]) == 0
    assert graded.read_text(encoding="utf-8").splitlines() == [
        "q1 0 <dbpedia:Été> 2",
        "q1 0 a 1",
        "q1 0 c -1",
        "q2 0 b 3",
    ]
    assert main(["--db", db, "export", "qrels", "-c", "q", "-o", str(binary), "--level", "2"]) == 0
    import gzip

    assert gzip.decompress(binary.read_bytes()).decode("utf-8").splitlines() == [
        "q1 0 <dbpedia:Été> 1",
        "q1 0 a 0",
        "q1 0 c 0",
        "q2 0 b 1",
    ]


@pytest.mark.parametrize("bad", ["0", "-1", "2147483648"])
def test_export_qrels_refuses_a_bad_level_naming_the_argument(tmp_path, capsys, bad, sqlite_template):
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    qrels = tmp_path / "in.qrels"
    qrels.write_text("q1 0 a 1\n", encoding="utf-8")
    assert main(["--db", db, "-q", "import", "-f", "trec-qrels", str(qrels), "-c", "q"]) == 0
    capsys.readouterr()
    out = tmp_path / "out.qrels"
    assert main(["--db", db, "export", "qrels", "-c", "q", "-o", str(out), "--level", bad]) == 1
    assert capsys.readouterr().err == f"error: --level must be an integer >= 1 (at most 2147483647), got {bad}\n"
    assert not out.exists()


def test_export_refuses_ids_that_trec_files_cannot_hold(folder, tmp_path, capsys, sqlite_template):
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    main(["--db", db, "-q", "import", "-f", "beir", str(folder), "-c", "one"])
    capsys.readouterr()
    assert main(["--db", db, "export", "qrels", "-c", "one", "-o", str(tmp_path / "x.qrels")]) == 1
    assert "doc 2:b" in capsys.readouterr().err


def test_export_run_orders_ties_as_trec_eval(tmp_path, capsys, sqlite_template):
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    run = tmp_path / "in.run"
    run.write_text("q1 Q0 b 1 1.0 x\nq1 Q0 a 2 1.0 x\nq1 Q0 c 3 2.0 x\nq10 Q0 z 1 0.5 x\n", encoding="utf-8")
    assert main(["--db", db, "-q", "import", "-f", "trec-run", str(run), "-c", "r"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "export", "run", "-c", "r", "--run", "in", "--tag", "T"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # trec_eval's order (core.ranking): the tie of a and b goes to the larger doc id, so the ranks written
    # are the ranks the measures use
    assert [line.split() for line in lines] == [
        ["q1", "Q0", "c", "1", "2.0", "T"],
        ["q1", "Q0", "b", "2", "1.0", "T"],
        ["q1", "Q0", "a", "3", "1.0", "T"],
        ["q10", "Q0", "z", "1", "0.5", "T"],
    ]
