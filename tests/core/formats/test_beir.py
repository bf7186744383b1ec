"""Tests for core.formats.beir: BEIR folders with pooljudge's extensions."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.beir import read_beir, write_beir
from core.formats.trec import load_run
from core.types import Passage, QrelEntry, Query, RunEntry


def jsonl(path: Path, records: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def text(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def make_folder(root: Path) -> Path:
    jsonl(
        root / "corpus.jsonl",
        [
            {"_id": "<dbpedia:Arènes_de_Lutèce>", "title": "Arènes", "text": "Roman amphitheatre.", "metadata": {}},
            {"_id": "d2", "title": "", "text": "Second.", "doc_id": "D", "position": 1, "language": "en"},
            {"_id": 3, "text": ""},
        ],
    )
    jsonl(
        root / "queries.jsonl",
        [
            {"_id": "q1", "text": "amphitheatre", "metadata": {"x": 1}},
            {"_id": "q2", "text": "second", "split": "dev", "answers": ["a", ["b", "B"]]},
            {"_id": "q3", "text": "third", "type": "factoid", "domain": "news", "language": "zh", "translation": "t"},
            {"_id": "q4", "text": "unjudged"},
        ],
    )
    text(root / "qrels" / "train.tsv", "q1\t<dbpedia:Arènes_de_Lutèce>\t2\nq1\td2\t0\n")
    text(root / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq2\td2\t1\nq3\t3\t-1\n")
    text(root / "runs" / "bm25.trec", "q1 Q0 d2 1 2.5 bm25\nq1 Q0 3 2 1.5 bm25\n")
    with gzip.open(root / "runs" / "dense.trec.gz", "wt", encoding="utf-8") as fh:
        fh.write("q2 Q0 d2 1 0.75 dense\n")
    text(root / "runs" / "README.md", "not a run\n")
    return root


def test_read_hand_written_folder(tmp_path: Path) -> None:
    root = make_folder(tmp_path / "beir")
    source = read_beir(root)
    passages = list(source.passages())
    assert passages == [
        Passage("<dbpedia:Arènes_de_Lutèce>", "Roman amphitheatre.", "Arènes"),
        Passage("d2", "Second.", "", doc_id="D", position=1, language="en"),
        Passage("3", "", ""),
    ]
    assert passages[1].origin == f"{root / 'corpus.jsonl'}:2"
    queries = list(source.queries())
    assert queries == [
        Query("q1", "amphitheatre", split="train"),  # from qrels/train.tsv
        Query("q2", "second", split="dev", answers=["a", ["b", "B"]]),  # own field beats test.tsv
        Query("q3", "third", split="test", type="factoid", domain="news", language="zh", translation="t"),
        Query("q4", "unjudged", split="test"),  # no judgments: test
    ]
    qrels = list(source.qrels())
    assert qrels == [
        QrelEntry("q1", "<dbpedia:Arènes_de_Lutèce>", 2),
        QrelEntry("q1", "d2", 0),
        QrelEntry("q2", "d2", 1),
        QrelEntry("q3", "3", -1),
    ]
    assert qrels[2].origin == f"{root / 'qrels' / 'test.tsv'}:2"  # after the header
    assert sorted(source.runs) == ["bm25", "dense"]
    assert list(source.runs["bm25"]()) == [RunEntry("q1", "d2", 2.5), RunEntry("q1", "3", 1.5)]
    assert list(source.runs["dense"]()) == [RunEntry("q2", "d2", 0.75)]


def test_folder_without_qrels_and_gzipped_jsonl(tmp_path: Path) -> None:
    root = tmp_path / "b"
    root.mkdir()
    with gzip.open(root / "corpus.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"_id": "d1", "title": "t", "text": "x"}) + "\n")
    jsonl(root / "queries.jsonl", [{"_id": "q1", "text": "x"}])
    source = read_beir(root)
    assert [p.id for p in source.passages()] == ["d1"]
    assert list(source.queries()) == [Query("q1", "x")]
    assert list(source.qrels()) == []
    assert source.runs == {}


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_beir(tmp_path / "absent")
    assert (info.value.path, info.value.line) == (str(tmp_path / "absent"), None)
    assert "not found" in info.value.message
    jsonl(tmp_path / "queries.jsonl", [{"_id": "q", "text": "x"}])
    with pytest.raises(FormatError) as info:
        read_beir(tmp_path)
    assert (info.value.path, info.value.line) == (str(tmp_path / "corpus.jsonl"), None)
    assert "missing corpus.jsonl" in info.value.message
    (tmp_path / "queries.jsonl").unlink()
    jsonl(tmp_path / "corpus.jsonl", [{"_id": "d", "text": "x"}])
    with pytest.raises(FormatError) as info:
        read_beir(tmp_path)
    assert info.value.path == str(tmp_path / "queries.jsonl")
    assert "missing queries.jsonl" in info.value.message


def test_query_in_two_split_files_without_own_split(tmp_path: Path) -> None:
    root = tmp_path / "b"
    jsonl(root / "corpus.jsonl", [{"_id": "d", "text": "x"}])
    jsonl(root / "queries.jsonl", [{"_id": "q0", "text": "x", "split": "dev"}, {"_id": "q1", "text": "y"}])
    text(root / "qrels" / "train.tsv", "q1\td\t1\nq0\td\t1\n")
    text(root / "qrels" / "test.tsv", "q1\td2\t0\nq0\td2\t1\n")
    source = read_beir(root)
    with pytest.raises(FormatError) as info:
        list(source.queries())
    assert (info.value.path, info.value.line) == (str(root / "queries.jsonl"), 2)
    assert "query 'q1' is judged in several split qrels files (train.tsv, test.tsv)" in info.value.message


def test_same_pair_in_two_split_files(tmp_path: Path) -> None:
    root = tmp_path / "b"
    jsonl(root / "corpus.jsonl", [{"_id": "d", "text": "x"}])
    jsonl(root / "queries.jsonl", [{"_id": "q", "text": "x", "split": "dev"}])
    text(root / "qrels" / "dev.tsv", "q\td\t1\n")
    text(root / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq\td\t0\n")
    with pytest.raises(FormatError) as info:
        list(read_beir(root).qrels())
    assert (info.value.path, info.value.line) == (str(root / "qrels" / "test.tsv"), 2)
    assert f"also judged at {root / 'qrels' / 'dev.tsv'}:1" in info.value.message


def test_unknown_qrels_file_name(tmp_path: Path) -> None:
    root = tmp_path / "b"
    jsonl(root / "corpus.jsonl", [{"_id": "d", "text": "x"}])
    jsonl(root / "queries.jsonl", [{"_id": "q", "text": "x"}])
    text(root / "qrels" / "validation.tsv", "q\td\t1\n")
    with pytest.raises(FormatError) as info:
        read_beir(root)
    assert (info.value.path, info.value.line) == (str(root / "qrels" / "validation.tsv"), None)
    assert "qrels file must be named train.tsv, dev.tsv, test.tsv" in info.value.message


@pytest.mark.parametrize(
    ("corpus", "line", "phrase"),
    [
        ([{"_id": "d1", "text": "x"}, {"_id": "d2", "title": "t"}], 2, "missing field 'text'"),
        ([{"_id": "d1", "text": "x", "position": "3"}], 1, "field 'position' must be an integer >= 0"),
        ([{"_id": "d1", "text": "x", "position": -1}], 1, "field 'position' must be an integer >= 0"),
        ([{"_id": "", "text": "x"}], 1, "field '_id' is empty"),
        ([{"_id": "d1", "text": 5}], 1, "field 'text' must be a string"),
        ([{"_id": "d1", "text": "x", "doc_id": 7}], 1, "field 'doc_id' must be a string or null"),
        ([["d1", "x"]], 1, "expected a JSON object, got list"),
        (
            [{"_id": "d1", "text": "a"}, {"_id": "d2", "text": "b"}, {"_id": "d1", "text": "c"}],
            3,
            "duplicate passage id 'd1' (first at line 1)",
        ),
    ],
)
def test_malformed_corpus(tmp_path: Path, corpus: list[object], line: int, phrase: str) -> None:
    root = tmp_path / "b"
    path = jsonl(root / "corpus.jsonl", corpus)
    jsonl(root / "queries.jsonl", [{"_id": "q", "text": "x"}])
    with pytest.raises(FormatError) as info:
        list(read_beir(root).passages())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


def test_truncated_json_line(tmp_path: Path) -> None:
    root = tmp_path / "b"
    path = text(root / "corpus.jsonl", '{"_id": "d1", "text": "x"}\n{"_id": "d2", "te\n')
    jsonl(root / "queries.jsonl", [{"_id": "q", "text": "x"}])
    with pytest.raises(FormatError) as info:
        list(read_beir(root).passages())
    assert (info.value.path, info.value.line) == (str(path), 2)
    assert "invalid JSON" in info.value.message


@pytest.mark.parametrize(
    ("queries", "line", "phrase"),
    [
        ([{"_id": "q1", "text": "x", "split": "validation"}], 1, "field 'split' must be one of train, dev, test"),
        ([{"_id": "q1", "text": "x", "answers": "a"}], 1, "field 'answers' must be a list"),
        ([{"_id": "q1", "text": "x", "answers": ["a", [1]]}], 1, "each answer must be a string or a list of strings"),
        ([{"_id": "q1", "text": "  "}], 1, "field 'text' is empty"),
        ([{"_id": "q1", "text": "x"}, {"_id": "q1", "text": "y"}], 2, "duplicate query id 'q1' (first at line 1)"),
    ],
)
def test_malformed_queries(tmp_path: Path, queries: list[object], line: int, phrase: str) -> None:
    root = tmp_path / "b"
    jsonl(root / "corpus.jsonl", [{"_id": "d", "text": "x"}])
    path = jsonl(root / "queries.jsonl", queries)
    with pytest.raises(FormatError) as info:
        list(read_beir(root).queries())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        ("q\td\n", 1, "expected 3 tab-separated columns 'query-id corpus-id score', got 2"),
        ("query-id\tcorpus-id\tscore\nq\td\thigh\n", 2, "score (column 3) must be an integer, got 'high'"),
        ("q\td 1\t1\nq\t\t1\n", 2, "corpus-id is empty"),
        ("q\td\t1\nq\td\t2\n", 2, "duplicate judgment for query 'q', document 'd' (already judged at line 1)"),
        ("", 1, "file is empty"),
    ],
)
def test_malformed_qrels(tmp_path: Path, content: str, line: int, phrase: str) -> None:
    root = tmp_path / "b"
    jsonl(root / "corpus.jsonl", [{"_id": "d", "text": "x"}])
    jsonl(root / "queries.jsonl", [{"_id": "q", "text": "x"}])
    path = text(root / "qrels" / "test.tsv", content)
    with pytest.raises(FormatError) as info:
        list(read_beir(root).qrels())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


def test_write_read_round_trip_with_extensions(tmp_path: Path) -> None:
    passages = [
        Passage("<dbpedia:Loënga>", 'text with\ttab and "quotes"', "Loënga", doc_id="doc 1", position=0, language="no"),
        Passage("d 2", "", "only title"),
        Passage("文档:3", "中文段落", "", doc_id="doc 1", position=1),
    ]
    queries = [
        Query("q1", "first", split="train", answers=["x", ["y", "Y"]]),
        Query("q2", "second", split="dev", type="list", domain="law", language="zh", translation="two"),
        Query("q3", "third"),
    ]
    qrels = {"q1": {"<dbpedia:Loënga>": 3, "d 2": 0}, "q2": {"文档:3": 1}, "q3": {"d 2": 2}, "orphan": {"x": 1}}
    runs = {"bm25": {"q1": {"<dbpedia:Loënga>": 0.1 + 0.2, "文档:3": 1e-9}}, "dense.v2": {"q3": {"x": -1.5}}}
    root = tmp_path / "out"
    write_beir(root, iter(passages), iter(queries), qrels, runs)
    assert sorted(p.name for p in (root / "qrels").iterdir()) == ["dev.tsv", "test.tsv", "train.tsv"]
    assert (root / "qrels" / "test.tsv").read_text(encoding="utf-8") == (
        "query-id\tcorpus-id\tscore\norphan\tx\t1\nq3\td 2\t2\n"
    )
    first_query = json.loads((root / "queries.jsonl").read_text(encoding="utf-8").splitlines()[2])
    assert first_query == {"_id": "q3", "text": "third"}  # defaults are not written
    source = read_beir(root)
    assert list(source.passages()) == passages
    assert list(source.queries()) == queries
    assert {(e.query_id, e.doc_id): e.grade for e in source.qrels()} == {
        (q, d): g for q, docs in qrels.items() for d, g in docs.items()
    }
    assert sorted(source.runs) == ["bm25", "dense.v2"]
    assert load_run(root / "runs" / "bm25.trec") == runs["bm25"]
    assert {e.doc_id: e.score for e in source.runs["dense.v2"]()} == {"x": -1.5}


@pytest.mark.parametrize(
    ("kwargs", "error", "phrase"),
    [
        ({"qrels": {"q": {"d\tx": 1}}}, ValueError, "contains a tab or line break"),
        ({"runs": {"bm25": {"q": {"d x": 1.0}}}}, ValueError, "'d x' contains whitespace"),
        ({"runs": {"my run": {"q": {"d": 1.0}}}}, ValueError, "run name 'my run' contains whitespace"),
        ({"runs": {"empty": {"q": {}}}}, ValueError, "run 'empty' is empty"),
        ({"passages": [Passage("d", "x"), Passage("d", "y")]}, ValueError, "duplicate passage id 'd'"),
        ({"queries": [Query("q", "x", split="validation")]}, ValueError, "split must be one of"),
        ({"passages": []}, ValueError, "no passages"),
    ],
)
def test_write_refuses_unreadable_collections(tmp_path: Path, kwargs: dict, error: type, phrase: str) -> None:
    args = {"passages": [Passage("d", "x")], "queries": [Query("q", "x")], "qrels": None, "runs": None, **kwargs}
    with pytest.raises(error) as info:
        write_beir(tmp_path / "out", **args)
    assert phrase in str(info.value)


def test_write_refuses_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "stale.txt").write_text("x")
    with pytest.raises(FileExistsError):
        write_beir(tmp_path, [Passage("d", "x")], [Query("q", "x")], None, None)


@pytest.mark.shared_data
def test_dbpedia_subset_counts(shared_data: Path) -> None:
    source = read_beir(shared_data / "agentset-dbpedia-subset")
    passages = list(source.passages())
    queries = list(source.queries())
    qrels = list(source.qrels())
    assert len(passages) == 5000
    assert len(queries) == 50
    assert len(qrels) == 3709
    assert len({e.query_id for e in qrels}) == 40
    assert {e.grade for e in qrels} == {0, 1, 2}
    assert {q.split for q in queries} == {"test"}
    ids = {p.id for p in passages}
    assert "<dbpedia:Arènes_de_Lutèce>" in ids or any("è" in i for i in ids)
    assert any("<" in i and ":" in i for i in ids)
    assert passages[0].id == "<dbpedia:Oceanic_Airlines>" and passages[0].title == "Oceanic Airlines"


@pytest.mark.slow  # reads, writes and reads back the real DBpedia subset
@pytest.mark.shared_data
def test_dbpedia_subset_round_trip(shared_data: Path, tmp_path: Path) -> None:
    source = read_beir(shared_data / "agentset-dbpedia-subset")
    passages = list(source.passages())
    queries = list(source.queries())
    qrels: dict[str, dict[str, int]] = {}
    for e in source.qrels():
        qrels.setdefault(e.query_id, {})[e.doc_id] = e.grade
    write_beir(tmp_path / "copy", passages, queries, qrels, None)
    again = read_beir(tmp_path / "copy")
    assert list(again.passages()) == passages
    assert list(again.queries()) == queries
    reread: dict[str, dict[str, int]] = {}
    for e in again.qrels():
        reread.setdefault(e.query_id, {})[e.doc_id] = e.grade
    assert reread == qrels
