"""Tests for core.formats.msmarco: MS MARCO / T2Ranking TSV collections."""

from __future__ import annotations

import gzip
from collections import Counter
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.msmarco import read_msmarco, read_t2ranking, split_from_name
from core.types import Passage, QrelEntry, Query


def text(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    return path


def gz(path: Path, content: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write(content)
    return path


def test_split_from_name() -> None:
    assert split_from_name("queries.train.tsv") == "train"
    assert split_from_name("data/queries.dev.small.tsv") == "dev"
    assert split_from_name("queries.test.tsv.gz") == "test"
    assert split_from_name("queries.eval.tsv") == "test"
    assert split_from_name("queries.tsv") == "test"


def test_msmarco_folder(tmp_path: Path) -> None:
    root = tmp_path / "marco"
    text(root / "collection.tsv", "0\tThe presence of communication.\n1\t\n7\tpassage with 中文\n")
    text(root / "queries.train.tsv", "100\twhat is rba\n101\tdefine x\n")
    gz(root / "queries.dev.small.tsv.gz", "200\tdev query\n")
    text(root / "qrels.train.tsv", "100\t0\t0\t1\n101\t0\t7\t1\n")
    text(root / "qrels.dev.small.tsv", "200\t0\t1\t1\n")
    text(root / "top1000.dev.tsv", "ignored\tfile\n")
    source = read_msmarco(root)
    assert list(source.passages()) == [
        Passage("0", "The presence of communication."),
        Passage("1", ""),
        Passage("7", "passage with 中文"),
    ]
    queries = list(source.queries())
    assert queries == [
        Query("200", "dev query", split="dev"),
        Query("100", "what is rba", split="train"),
        Query("101", "define x", split="train"),
    ]
    assert queries[0].origin == f"{root / 'queries.dev.small.tsv.gz'}:1"
    assert list(source.qrels()) == [QrelEntry("200", "1", 1), QrelEntry("100", "0", 1), QrelEntry("101", "7", 1)]
    assert source.language is None


def test_t2ranking_style_headers_and_shapes(tmp_path: Path) -> None:
    root = tmp_path / "t2"
    text(root / "collection.tsv", "pid\tpara\n0\t第一段\n1\t第二段\n")
    text(root / "queries.dev.tsv", "qid\ttext\n5\t问题\n")
    text(root / "qrels.dev.tsv", "qid\t-\tpid\trel\n5\t0\t0\t3\n5\t0\t1\t0\n")
    text(root / "qrels.retrieval.dev.tsv", "qid\tpid\n5\t0\n")
    source = read_t2ranking(root)
    assert source.language == "zh"
    assert list(source.passages()) == [Passage("0", "第一段", language="zh"), Passage("1", "第二段", language="zh")]
    assert list(source.queries()) == [Query("5", "问题", split="dev", language="zh")]
    # the binary qrels.retrieval.* file repeats graded judgments: the graded file is used
    assert list(source.qrels()) == [QrelEntry("5", "0", 3), QrelEntry("5", "1", 0)]
    assert "qrels.retrieval" not in source.description
    # explicitly asked for, the 2-column file means relevant = 1
    binary = read_t2ranking(qrels=root / "qrels.retrieval.dev.tsv")
    assert list(binary.qrels()) == [QrelEntry("5", "0", 1)]
    assert list(binary.passages()) == [] and list(binary.queries()) == []


def test_three_columns_with_header_and_explicit_files(tmp_path: Path) -> None:
    coll = text(tmp_path / "c.tsv", "a\tx\nb\ty\n")
    q = text(tmp_path / "q.tsv", "1\tquery one\n")
    qr = gz(tmp_path / "rels.tsv.gz", "qid\tpid\trel\n1\ta\t2\n1\tb\t-1\n")
    source = read_msmarco(coll, queries=q, qrels=[qr])
    assert [p.id for p in source.passages()] == ["a", "b"]
    assert list(source.queries()) == [Query("1", "query one")]
    entries = list(source.qrels())
    assert entries == [QrelEntry("1", "a", 2), QrelEntry("1", "b", -1)]
    assert entries[0].origin == f"{qr}:2"


def test_no_collection_in_folder(tmp_path: Path) -> None:
    root = tmp_path / "t"
    text(root / "qrels.test.tsv", "1\t0\t9\t2\n")
    source = read_msmarco(root)
    assert list(source.passages()) == []
    assert list(source.queries()) == []
    assert list(source.qrels()) == [QrelEntry("1", "9", 2)]


@pytest.mark.parametrize(
    ("name", "content", "line", "phrase"),
    [
        ("collection.tsv", "0\ta\n1\tb\tc\n", 2, "expected 2 tab-separated columns 'pid<TAB>text', got 3"),
        ("collection.tsv", "0\ta\n1 b\n", 2, "got 1"),
        ("collection.tsv", "0\ta\n\tb\n", 2, "passage id (column 1) is empty"),
        ("collection.tsv", "0\ta\n1\tb\n0\tc\n", 3, "duplicate passage id '0' (first at line 1)"),
        ("collection.tsv", "pid\tpara\n", 2, "no passages after the header line"),
        ("collection.tsv", "0\ta\n\n1\tb\n", 2, "blank line inside the file"),
        ("queries.dev.tsv", "1\tq\n2\t \n", 2, "query '2' has empty text"),
        ("queries.dev.tsv", "1\tq\n1\tagain\n", 2, "duplicate query id '1'"),
        ("qrels.dev.tsv", "1\t0\t9\t2\n1\t9\t1\n", 2, "expected 4 tab-separated columns (like line 1), got 3"),
        ("qrels.dev.tsv", "1\t0\t9\thigh\n", 1, "label (column 4) must be an integer, got 'high'"),
        ("qrels.dev.tsv", "1\t9\t1\n", 1, "3 columns without a header line is ambiguous"),
        ("qrels.dev.tsv", "1\t0\t9\t1\t5\n", 1, "got 5"),
        ("qrels.dev.tsv", "qid\tpid\n1\t9\n1\t9\n", 3, "duplicate judgment for query '1', passage '9'"),
        ("qrels.dev.tsv", "qid\tpid\trel\n1\t9\n", 2, "expected 3 tab-separated columns (like the header on line 1)"),
    ],
)
def test_malformed(tmp_path: Path, name: str, content: str, line: int, phrase: str) -> None:
    path = text(tmp_path / name, content)
    source = read_msmarco(tmp_path)
    with pytest.raises(FormatError) as info:
        list(source.passages())
        list(source.queries())
        list(source.qrels())
    assert (info.value.path, info.value.line) == (str(path), line)
    assert phrase in info.value.message


def test_bad_utf8_and_duplicates_across_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "queries.train.tsv").write_bytes(b"1\tok\n2\t\xff\xfe\n")
    with pytest.raises(FormatError) as info:
        list(read_msmarco(bad).queries())
    assert (info.value.path, info.value.line) == (str(bad / "queries.train.tsv"), 2)
    assert "invalid UTF-8" in info.value.message

    two = tmp_path / "two"
    text(two / "queries.dev.tsv", "1\tq\n")
    train = text(two / "queries.train.tsv", "2\tq\n1\tq again\n")
    with pytest.raises(FormatError) as info:
        list(read_msmarco(two).queries())
    assert (info.value.path, info.value.line) == (str(train), 2)
    assert f"duplicate query id '1' (first at {two / 'queries.dev.tsv'}:1)" in info.value.message


def test_missing_files(tmp_path: Path) -> None:
    with pytest.raises(FormatError) as info:
        read_msmarco(tmp_path / "nowhere")
    assert (info.value.path, info.value.line) == (str(tmp_path / "nowhere"), None)
    with pytest.raises(FormatError) as info:
        read_msmarco(queries=tmp_path / "queries.dev.tsv")
    assert (info.value.path, info.value.line) == (str(tmp_path / "queries.dev.tsv"), None)
    assert "file not found" in info.value.message
    with pytest.raises(FormatError) as info:
        read_msmarco(tmp_path)
    assert info.value.path == str(tmp_path)
    assert "no collection.tsv, queries*.tsv or qrels*.tsv" in info.value.message


@pytest.mark.shared_data
def test_t2ranking_sample(shared_data: Path) -> None:
    folder = shared_data / "t2ranking-sample"
    test = read_t2ranking(queries=folder / "queries.test.tsv", qrels=folder / "qrels.test.tsv")
    qrels = list(test.qrels())
    assert len(qrels) == 1685
    assert len({e.query_id for e in qrels}) == 100
    assert {e.grade for e in qrels} == {0, 1, 2, 3}
    queries = list(test.queries())
    assert len(queries) == 100
    assert {q.split for q in queries} == {"test"} and {q.language for q in queries} == {"zh"}
    assert {q.id for q in queries} == {e.query_id for e in qrels}
    assert queries[0] == Query("15", "西安发源地的卡没用完", split="test", language="zh")

    whole = read_t2ranking(folder)
    assert list(whole.passages()) == []
    assert Counter(q.split for q in whole.queries()) == {"test": 100, "train": 100}
    graded = {(e.query_id, e.doc_id): e.grade for e in whole.qrels()}
    assert len(graded) == 1685 + 973

    binary = list(read_t2ranking(qrels=folder / "retrieval_qrels.tsv").qrels())
    assert len(binary) == 873
    assert {e.grade for e in binary} == {1}
    # the binary file lists exactly the pairs graded 2 or 3
    assert {(e.query_id, e.doc_id) for e in binary} == {k for k, g in graded.items() if g >= 2}


# Issue 10: a first record whose id is literally "id" or "pid" used to be taken for a header and dropped.


@pytest.mark.parametrize("reader", [read_msmarco, read_t2ranking])
def test_a_first_id_named_like_a_header_is_kept(tmp_path: Path, reader) -> None:
    root = tmp_path / "c"
    text(root / "collection.tsv", "pid\tthe passage whose id is pid\nid\tone whose id is id\n")
    text(root / "queries.dev.tsv", "id\twhat is an id\nqid\twhat is a qid\n")
    text(root / "qrels.dev.tsv", "qid\t0\tpid\t1\nid\t0\tid\t2\n")
    source = reader(root)
    assert [(p.id, p.text) for p in source.passages()] == [
        ("pid", "the passage whose id is pid"),
        ("id", "one whose id is id"),
    ]
    assert [(q.id, q.text) for q in source.queries()] == [("id", "what is an id"), ("qid", "what is a qid")]
    assert [(e.query_id, e.doc_id, e.grade) for e in source.qrels()] == [("qid", "pid", 1), ("id", "id", 2)]


def test_two_column_qrels_starting_with_qid_keep_the_pair(tmp_path: Path) -> None:
    qrels = text(tmp_path / "qrels.retrieval.dev.tsv", "qid\t7\n8\t9\n")
    assert list(read_msmarco(qrels=qrels).qrels()) == [QrelEntry("qid", "7", 1), QrelEntry("8", "9", 1)]


@pytest.mark.parametrize(
    ("name", "header", "row"),
    [
        ("collection.tsv", "pid\tpara", "0\ta"),
        ("collection.tsv", "PID\tText", "0\ta"),
        ("queries.dev.tsv", "qid\ttext", "5\tq"),
        ("qrels.dev.tsv", "qid\t-\tpid\trel", "5\t0\t0\t3"),
        ("qrels.dev.tsv", "qid\tpid", "5\t0"),
        ("qrels.dev.tsv", "query-id\tcorpus-id\tscore", "5\t0\t1"),
    ],
)
def test_an_exact_header_row_is_still_skipped(tmp_path: Path, name: str, header: str, row: str) -> None:
    text(tmp_path / name, f"{header}\n{row}\n")
    source = read_msmarco(tmp_path)
    records = [*source.passages(), *source.queries(), *source.qrels()]
    assert len(records) == 1
    assert records[0].origin == f"{tmp_path / name}:2"


def test_the_header_flag(tmp_path: Path) -> None:
    coll = text(tmp_path / "collection.tsv", "pid\tpara\n0\ta\n")
    q = text(tmp_path / "queries.dev.tsv", "num\tquestion\n5\tq\n")
    # header=False: the T2Ranking-looking first line is a passage
    assert [p.id for p in read_msmarco(coll, header=False).passages()] == ["pid", "0"]
    # header=True: a header the reader does not know is skipped
    assert [x.id for x in read_msmarco(queries=q, header=True).queries()] == ["5"]
    # by default that unknown header is a query
    assert [x.id for x in read_msmarco(queries=q).queries()] == ["num", "5"]
    with pytest.raises(FormatError) as info:
        list(read_msmarco(text(tmp_path / "x.tsv", "pid\tpara\textra\n0\ta\n"), header=True).passages())
    assert str(info.value) == f"{tmp_path / 'x.tsv'}:1: header must have 2 columns 'pid<TAB>text', got 3"
