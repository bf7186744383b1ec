"""Tests for core.formats.trec: strict TREC qrels/run readers and deterministic writers."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.trec import (
    iter_trec_qrels,
    iter_trec_run,
    load_qrels,
    load_run,
    read_trec_qrels,
    read_trec_run,
    run_name_from_path,
    write_qrels,
    write_run,
)
from core.types import QrelEntry, RunEntry


def write_bytes(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- qrels reading


def test_qrels_whitespace_runs_tabs_and_negative_grades(tmp_path: Path) -> None:
    f = write_text(tmp_path / "q.txt", "q1   0\tdA  2\nq1 Q0 <dbpedia:Arènes_de_Lutèce> -1\nq2\t0\td:1\t0\n")
    entries = list(iter_trec_qrels(f))
    assert entries == [
        QrelEntry("q1", "dA", 2),
        QrelEntry("q1", "<dbpedia:Arènes_de_Lutèce>", -1),
        QrelEntry("q2", "d:1", 0),
    ]
    assert [e.origin for e in entries] == [f"{f}:1", f"{f}:2", f"{f}:3"]
    assert load_qrels(f) == {"q1": {"dA": 2, "<dbpedia:Arènes_de_Lutèce>": -1}, "q2": {"d:1": 0}}


def test_qrels_crlf_and_trailing_blank_lines_are_tolerated(tmp_path: Path) -> None:
    f = write_bytes(tmp_path / "q.txt", b"q1 0 d1 1\r\nq1 0 d2 0\r\n\r\n   \n")
    assert load_qrels(f) == {"q1": {"d1": 1, "d2": 0}}


def test_qrels_gzip_and_file_objects(tmp_path: Path) -> None:
    text = "q1 0 d1 3\nq2 0 d2 1\n"
    gz = tmp_path / "q.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as fh:
        fh.write(text)
    expected = {"q1": {"d1": 3}, "q2": {"d2": 1}}
    assert load_qrels(gz) == expected
    assert load_qrels(io.BytesIO(text.encode())) == expected
    assert load_qrels(io.StringIO(text)) == expected
    # gzip content is detected by its magic bytes, whatever the name
    plain_name = tmp_path / "gz-without-suffix"
    plain_name.write_bytes(gz.read_bytes())
    assert load_qrels(plain_name) == expected


@pytest.mark.shared_data
def test_qrels_real_cwl_file_with_column_runs(shared_data: Path) -> None:
    qrels = load_qrels(shared_data / "ir_measures-tests" / "cwl.qrels")
    assert sum(len(d) for d in qrels.values()) == 23  # 23 lines, the last without a newline
    assert qrels["T1"]["D1"] == 1 and qrels["T1"]["D2"] == 0
    compat = load_qrels(shared_data / "ir_measures-tests" / "compat.qrels")
    assert sum(len(d) for d in compat.values()) == 311
    assert len(compat) == 2


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        ("q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 whitespace-separated columns"),
        ("q1 0 d1 1 extra\n", 1, "got 5"),
        ("q1 0 d1 2.0\n", 1, "grade (column 4) must be an integer, got '2.0'"),
        ("q1 0 d1 x\n", 1, "must be an integer, got 'x'"),
        ("q1 0 d1 1_0\n", 1, "must be an integer, got '1_0'"),
        ("q1 0 d1 1\n\nq1 0 d2 1\n", 2, "blank line inside the file"),
        ("\n\n  \n", 1, "only blank lines"),
    ],
)
def test_qrels_malformed(tmp_path: Path, content: str, line: int, phrase: str) -> None:
    f = write_text(tmp_path / "bad.qrels", content)
    with pytest.raises(FormatError) as info:
        list(iter_trec_qrels(f))
    assert info.value.path == str(f)
    assert info.value.line == line
    assert phrase in info.value.message


def test_qrels_duplicate_names_both_lines(tmp_path: Path) -> None:
    f = write_text(tmp_path / "dup.qrels", "q1 0 d1 1\nq2 0 d1 1\nq1 0 d1 0\n")
    with pytest.raises(FormatError) as info:
        load_qrels(f)
    assert (info.value.path, info.value.line) == (str(f), 3)
    assert "duplicate judgment for query 'q1', document 'd1' (already judged at line 1)" in info.value.message
    assert str(info.value).startswith(f"{f}:3: ")


def test_qrels_empty_file_bad_utf8_truncated_gzip_missing(tmp_path: Path) -> None:
    empty = write_bytes(tmp_path / "empty.qrels", b"")
    with pytest.raises(FormatError) as info:
        load_qrels(empty)
    assert (info.value.path, info.value.line) == (str(empty), 1)
    assert "file is empty" in info.value.message

    bad = write_bytes(tmp_path / "latin1.qrels", b"q1 0 d1 1\nq1 0 caf\xe9 1\n")
    with pytest.raises(FormatError) as info:
        load_qrels(bad)
    assert (info.value.path, info.value.line) == (str(bad), 2)
    assert "invalid UTF-8" in info.value.message

    whole = gzip.compress(b"".join(b"q%d 0 d 1\n" % i for i in range(2000)))
    cut = write_bytes(tmp_path / "cut.qrels.gz", whole[: len(whole) // 2])
    with pytest.raises(FormatError) as info:
        load_qrels(cut)
    assert info.value.path == str(cut)
    assert info.value.line is not None and info.value.line > 1
    assert "cannot read compressed data" in info.value.message

    with pytest.raises(FormatError) as info:
        read_trec_qrels(tmp_path / "nope.qrels")
    assert (info.value.path, info.value.line) == (str(tmp_path / "nope.qrels"), None)
    assert "file not found" in info.value.message


def test_read_trec_qrels_source(tmp_path: Path) -> None:
    f = write_text(tmp_path / "x.qrels", "q1 0 d1 1\n")
    source = read_trec_qrels(f)
    assert list(source.passages()) == [] and list(source.queries()) == [] and source.runs == {}
    assert list(source.qrels()) == [QrelEntry("q1", "d1", 1)]
    assert list(source.qrels()) == [QrelEntry("q1", "d1", 1)]  # re-iterable


# --------------------------------------------------------------------------- run reading


def test_run_reading_ignores_rank_keeps_file_order(tmp_path: Path) -> None:
    f = write_text(
        tmp_path / "bm25.trec",
        "q1 Q0 d2 7 1.5 tag\nq1\tQ0\td1\t1\t-2e-3\ttag\nq2 E1 <x:é> 3 10 other\n",
    )
    entries = list(iter_trec_run(f))
    assert entries == [RunEntry("q1", "d2", 1.5), RunEntry("q1", "d1", -0.002), RunEntry("q2", "<x:é>", 10.0)]
    assert entries[2].origin == f"{f}:3"
    assert load_run(f) == {"q1": {"d2": 1.5, "d1": -0.002}, "q2": {"<x:é>": 10.0}}


@pytest.mark.shared_data
def test_run_real_files(shared_data: Path) -> None:
    cwl = load_run(shared_data / "ir_measures-tests" / "cwl.run")
    assert sorted(cwl) == ["T1", "T2", "T3"]
    assert sum(len(d) for d in cwl.values()) == 30
    assert cwl["T1"]["D1"] == 4.3
    compat = load_run(shared_data / "ir_measures-tests" / "compat.run")
    assert sum(len(d) for d in compat.values()) == 1927
    assert compat["31_1"]["MARCO_2925879"] == 1000.0


@pytest.mark.parametrize(
    ("content", "line", "phrase"),
    [
        ("q1 Q0 d1 1 2.0\n", 1, "expected 6 whitespace-separated columns 'qid Q0 docid rank score tag', got 5"),
        ("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 1.5 1.0 t\n", 2, "rank (column 4) must be an integer, got '1.5'"),
        ("q1 Q0 d1 1 abc t\n", 1, "score (column 5) must be a number, got 'abc'"),
        ("q1 Q0 d1 1 nan t\n", 1, "must be a finite number, got 'nan'"),
        ("q1 Q0 d1 1 -inf t\n", 1, "must be a finite number, got '-inf'"),
        ("q1 Q0 d1 1 1e999 t\n", 1, "must be a finite number, got '1e999'"),
        ("q1 Q0 d1 1 1.0 t\n\t\nq1 Q0 d2 2 0.5 t\n", 2, "blank line inside the file"),
        ("q1 Q0 d1 1 1.0 t\nq2 Q0 d1 1 1.0 t\nq1 Q0 d1 3 0.2 t\n", 3, "twice for query 'q1' (first at line 1)"),
    ],
)
def test_run_malformed(tmp_path: Path, content: str, line: int, phrase: str) -> None:
    f = write_text(tmp_path / "bad.run", content)
    with pytest.raises(FormatError) as info:
        load_run(f)
    assert info.value.path == str(f)
    assert info.value.line == line
    assert phrase in info.value.message


def test_run_trailing_blank_lines_tolerated(tmp_path: Path) -> None:
    f = write_text(tmp_path / "r.run", "q1 Q0 d1 1 1.0 t\n\n\n")
    assert load_run(f) == {"q1": {"d1": 1.0}}


def test_read_trec_run_names(tmp_path: Path) -> None:
    f = write_text(tmp_path / "bm25.trec", "q1 Q0 d1 1 1.0 t\n")
    assert list(read_trec_run(f).runs) == ["bm25"]
    assert list(read_trec_run(f, name="mine").runs) == ["mine"]
    assert list(read_trec_run(f).runs["bm25"]()) == [RunEntry("q1", "d1", 1.0)]
    assert run_name_from_path("runs/bm25.trec.gz") == "bm25"
    assert run_name_from_path("run.dense.txt") == "run.dense"
    assert run_name_from_path("x.run") == "x"
    assert run_name_from_path("x.run.gz") == "x"
    assert run_name_from_path("plain") == "plain"
    assert run_name_from_path(".trec") == ".trec"
    with pytest.raises(FormatError) as info:
        read_trec_run(tmp_path)
    assert (info.value.path, info.value.line) == (str(tmp_path), None)
    assert "is a folder" in info.value.message


# --------------------------------------------------------------------------- writing


def test_write_qrels_sorted_and_binary(tmp_path: Path) -> None:
    qrels = {"q2": {"b": 3, "a": 0}, "q1": {"z": 1, "<dbpedia:Loënga>": 2}}
    out = tmp_path / "out.qrels"
    write_qrels(qrels, out)
    assert out.read_text(encoding="utf-8") == ("q1 0 <dbpedia:Loënga> 2\nq1 0 z 1\nq2 0 a 0\nq2 0 b 3\n")
    assert load_qrels(out) == qrels
    buffer = io.StringIO()
    write_qrels(qrels, buffer, level=2)
    assert buffer.getvalue() == "q1 0 <dbpedia:Loënga> 1\nq1 0 z 0\nq2 0 a 0\nq2 0 b 1\n"


def test_write_run_order_ranks_repr_and_depth(tmp_path: Path) -> None:
    run = {"q2": {"x": 0.5}, "q1": {"b": 1.0, "a": 1.0, "c": 2.5, "d": 0.1 + 0.2}}
    buffer = io.StringIO()
    write_run(run, buffer, tag="bm25")
    assert buffer.getvalue() == (
        "q1 Q0 c 1 2.5 bm25\n"
        "q1 Q0 b 2 1.0 bm25\n"  # ties by docid descending, as trec_eval ranks them
        "q1 Q0 a 3 1.0 bm25\n"
        "q1 Q0 d 4 0.30000000000000004 bm25\n"
        "q2 Q0 x 1 0.5 bm25\n"
    )
    buffer = io.StringIO()
    write_run(run, buffer, depth=2)
    assert buffer.getvalue() == ("q1 Q0 c 1 2.5 pooljudge\nq1 Q0 b 2 1.0 pooljudge\nq2 Q0 x 1 0.5 pooljudge\n")


@pytest.mark.parametrize("suffix", [".trec", ".trec.gz"])
def test_run_round_trip_is_lossless(tmp_path: Path, suffix: str) -> None:
    run = {
        "q:1": {"<dbpedia:Arènes_de_Lutèce>": 1 / 3, "文档-7": -1e-300, "d<3>": 123456789.123456789},
        "クエリ": {"a": 5e-324, "b": 1.7976931348623157e308, "c": 0.0},
    }
    out = tmp_path / f"r{suffix}"
    write_run(run, out)
    assert load_run(out) == run
    binary = io.BytesIO()
    write_run(run, binary)
    assert load_run(io.BytesIO(binary.getvalue())) == run


def test_qrels_round_trip_gzip(tmp_path: Path) -> None:
    qrels = {"q:1": {"<dbpedia:Jörg_Buttgereit>": 2, "d2": -1}, "2": {"x": 0}}
    out = tmp_path / "q.qrels.gz"
    write_qrels(qrels, out)
    assert out.read_bytes()[:2] == b"\x1f\x8b"
    assert load_qrels(out) == qrels


@pytest.mark.parametrize(
    ("call", "phrase"),
    [
        (lambda f: write_qrels({"q 1": {"d": 1}}, f), "query id 'q 1' contains whitespace"),
        (lambda f: write_qrels({"q": {"d\t1": 1}}, f), "contains whitespace"),
        (lambda f: write_qrels({"q": {"d\u3000x": 1}}, f), "contains whitespace"),
        (lambda f: write_qrels({"q": {"": 1}}, f), "is empty"),
        (lambda f: write_qrels({"q": {"d": 1.5}}, f), "must be an int"),
        (lambda f: write_qrels({"q": {"d": True}}, f), "must be an int"),
        (lambda f: write_qrels({1: {"d": 1}}, f), "must be a str"),
        (lambda f: write_run({"q": {"my doc": 1.0}}, f), "'my doc' contains whitespace"),
        (lambda f: write_run({"q": {"d": float("nan")}}, f), "must be finite"),
        (lambda f: write_run({"q": {"d": "1.0"}}, f), "must be a number"),
        (lambda f: write_run({"q": {"d": 1.0}}, f, tag="my run"), "run tag 'my run' contains whitespace"),
        (lambda f: write_run({"q": {"d": 1.0}}, f, depth=0), "depth must be at least 1"),
    ],
)
def test_writers_refuse_what_cannot_be_read_back(tmp_path: Path, call, phrase: str) -> None:
    out = tmp_path / "out.txt"
    with pytest.raises(ValueError, match=None) as info:
        call(out)
    assert phrase in str(info.value)
    assert not out.exists()  # nothing written
