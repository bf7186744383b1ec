"""`pooljudge eval`: trec_eval semantics end to end through files and the store."""

from __future__ import annotations

import json

import pytest

from db.engine import sqlite_url
from pooljudge.cli import main
from tests.sqlite_template import fresh_sqlite


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "t.qrels"
    # q1: a is relevant (1), b judged non-relevant; q2: c is grade 2, d grade 1; q3 is missing from the run
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 2\nq2 0 d 1\nq3 0 e 3\n", encoding="utf-8")
    run = tmp_path / "t.run"
    # equal scores in q1: trec_eval ranks b (docid descending) before a, whatever the rank column says
    run.write_text(
        "q1 Q0 a 1 5.0 x\nq1 Q0 b 2 5.0 x\nq2 Q0 d 1 2.0 x\nq2 Q0 c 2 1.0 x\nq9 Q0 z 1 1.0 x\n", encoding="utf-8"
    )
    return qrels, run


def _store_of(tmp_path, qrels, run) -> str:
    """A new store (its URL) with collection ``c`` imported from the qrels and the run ``t`` merged in."""
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    assert main(["--db", db, "-q", "import", "-f", "trec-qrels", str(qrels), "-c", "c"]) == 0
    assert main(["--db", db, "-q", "import", "-f", "trec-run", str(run), "-c", "c", "--merge"]) == 0
    return db


def _tsv(out: str) -> dict[tuple[str, str], float]:
    return {(m, q): float(v) for m, q, v in (line.split("\t") for line in out.splitlines())}


def test_ties_level_and_missing_queries(files, capsys):
    qrels, run = files
    assert main(["eval", str(qrels), str(run), "-m", "P@1", "-m", "RR", "-m", "MRR@1", "--per-query"]) == 0
    got = _tsv(capsys.readouterr().out)
    assert got[("P@1", "q1")] == 0.0 and got[("RR", "q1")] == 0.5
    assert got[("P@1", "q2")] == 1.0  # d has grade 1 >= level 1
    assert got[("RR", "q3")] == 0.0  # in the qrels, missing from the run
    assert got[("RR", "all")] == pytest.approx((0.5 + 1.0 + 0.0) / 3, abs=1e-4)
    assert got[("MRR@1", "q1")] == 0.0 and got[("MRR@1", "q2")] == 1.0
    assert ("P@1", "q9") not in got  # run-only queries are ignored


def test_level_two_and_intersection(files, capsys):
    qrels, run = files
    assert (
        main(
            [
                "eval",
                str(qrels),
                str(run),
                "-m",
                "RR",
                "-m",
                "nDCG@2",
                "--level",
                "2",
                "--intersection",
                "--format",
                "json",
                "--per-query",
            ]
        )
        == 0
    )
    got = json.loads(capsys.readouterr().out)
    assert got["RR"]["q2"] == 0.5  # d (grade 1) no longer counts at level 2
    assert "q3" not in got["RR"]
    # nDCG ignores the level: q2 ranks d (gain 1) then c (gain 2); ideal is c then d
    dcg, ideal = 1 + 2 / 1.5849625007211563, 2 + 1 / 1.5849625007211563
    assert got["nDCG@2"]["q2"] == pytest.approx(dcg / ideal, abs=1e-12)


def test_eval_from_the_store(files, tmp_path, capsys):
    db = _store_of(tmp_path, *files)
    capsys.readouterr()
    assert main(["--db", db, "-q", "level", "-c", "c", "1"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "eval", "--collection", "c", "latest", "t", "-m", "RR"]) == 0
    assert capsys.readouterr().out == "RR\tall\t0.5000\n"


def test_eval_of_a_collection_defaults_to_the_collections_level(files, tmp_path, capsys):
    qrels, run = files
    db = _store_of(tmp_path, qrels, run)
    capsys.readouterr()
    assert main(["--db", db, "-q", "level", "-c", "c", "2"]) == 0
    assert capsys.readouterr().out == "relevance level of 'c': 2 -> 2 (binary measures count grade >= 2 as relevant)\n"
    # level 2: q1 has no relevant passage (0), q2 finds c at rank 2 (1/2), q3 is missing (0)
    assert main(["--db", db, "eval", "-c", "c", "latest", "t", "-m", "RR"]) == 0
    out, err = capsys.readouterr()
    assert out == "RR\tall\t0.1667\n"
    assert err == "binary measures count grade >= 2 as relevant (the collection's level)\n"
    assert main(["--db", db, "eval", "-c", "c", "latest", "t", "-m", "RR", "--level", "1"]) == 0
    assert capsys.readouterr() == ("RR\tall\t0.5000\n", "")  # an explicit level wins, nothing to say
    # the files themselves: trec_eval's default level 1, whatever the collection says
    assert main(["--db", db, "eval", str(qrels), str(run), "-m", "RR"]) == 0
    assert capsys.readouterr() == ("RR\tall\t0.5000\n", "")
    assert main(["--db", db, "level", "-c", "c", "1"]) == 0
    assert capsys.readouterr().out == "relevance level of 'c': 2 -> 1 (binary measures count grade >= 1 as relevant)\n"
    assert main(["--db", db, "level", "-c", "c"]) == 0
    assert capsys.readouterr().out == "1\n"
    assert main(["--db", db, "-q", "eval", "-c", "c", "latest", "t", "-m", "RR"]) == 0
    assert capsys.readouterr() == ("RR\tall\t0.5000\n", "")  # --quiet: no note


@pytest.mark.parametrize("bad", ["0", "-3", "2147483648"])
def test_setting_a_bad_level_is_an_argument_error_and_changes_nothing(files, tmp_path, capsys, bad):
    qrels, _ = files
    db = sqlite_url(fresh_sqlite(tmp_path / "s.db"))
    assert main(["--db", db, "-q", "import", "-f", "trec-qrels", str(qrels), "-c", "c"]) == 0
    assert main(["--db", db, "-q", "level", "-c", "c", "3"]) == 0
    capsys.readouterr()
    assert main(["--db", db, "level", "-c", "c", bad]) == 1
    assert capsys.readouterr() == (
        "",
        f"error: relevance level must be an integer >= 1 (at most 2147483647), got {bad}\n",
    )
    assert main(["--db", db, "level", "-c", "nope", "2"]) == 1
    assert capsys.readouterr().err == "error: no collection named 'nope' (collections: c)\n"
    assert main(["--db", db, "level", "-c", "c"]) == 0
    assert capsys.readouterr().out == "3\n"


def test_bad_measure_and_bad_run_are_errors(files, tmp_path, capsys):
    qrels, run = files
    assert main(["eval", str(qrels), str(run), "-m", "nDCG@ten"]) == 1
    assert "nDCG@ten" in capsys.readouterr().err
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 a 1 5.0 x\nq1 Q0 a 2 4.0 x\n", encoding="utf-8")
    assert main(["eval", str(qrels), str(bad), "-m", "RR"]) == 1
    assert f"{bad}:2" in capsys.readouterr().err


@pytest.mark.parametrize("grade", ["4294967297", str(10**20), "-2147483649"])
def test_huge_grade_is_a_file_line_error(files, tmp_path, capsys, grade):
    # 4294967297 used to give P@1 = 0 with exit 0, 10^20 a SystemError traceback
    _, run = files
    qrels = tmp_path / "huge.qrels"
    qrels.write_text(f"q1 0 a 1\nq1 0 b {grade}\n", encoding="utf-8")
    assert main(["eval", str(qrels), str(run), "-m", "P@1", "-m", "MAP", "-m", "nDCG@10"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"error: {qrels}:2: grade {grade} is outside -2147483648..2147483647 (grade (column 4))\n")


@pytest.mark.parametrize("cutoff", ["99999999999999999999", "2147483648"])
def test_huge_cutoff_is_an_argument_error(files, capsys, cutoff):
    qrels, run = files
    assert main(["eval", str(qrels), str(run), "-m", f"P@{cutoff}"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"error: P: the cutoff must be a positive integer (at most 2147483647), got {cutoff} (in 'P@{cutoff}')\n"
    )


def test_huge_level_is_an_argument_error(files, capsys):
    qrels, run = files
    assert main(["eval", str(qrels), str(run), "-m", "P@1", "--level", str(2**31)]) == 1
    assert capsys.readouterr().err == "error: level must be an integer >= 1 (at most 2147483647), got 2147483648\n"


def test_large_grade_warns_in_one_line(files, tmp_path, capsys):
    _, run = files
    qrels = tmp_path / "big.qrels"
    qrels.write_text("q1 0 a 2000000\n", encoding="utf-8")
    assert main(["eval", str(qrels), str(run), "-m", "nDCG@10", "--allow-large-grades"]) == 0
    out, err = capsys.readouterr()
    assert out == "nDCG@10\tall\t0.6309\n"  # a at rank 2 (b ranks first on the tie): 1/log2(3)
    assert err == (
        "warning: the largest grade is 2000000: trec_eval allocates 8 bytes per grade level, "
        "about 15 MiB per evaluation; grades above 1000000 are unusual\n"
    )


@pytest.mark.slow
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_nul_in_ids_is_a_file_line_error_not_an_abort(files, tmp_path, which):
    # two ids that differ only after a NUL made pytrec_eval abort the process (exit 134, a C assertion)
    import subprocess
    import sys
    from pathlib import Path

    qrels, run = files
    if which == "qrels":
        qrels = tmp_path / "nul.qrels"
        qrels.write_bytes(b"q1 0 a\x00x 1\nq1 0 a\x00y 0\n")
        bad, what = qrels, "document id (column 3) 'a\\x00x'"
    else:
        run = tmp_path / "nul.run"
        run.write_bytes(b"q1 Q0 a\x00x 1 2.0 t\nq1 Q0 a\x00y 2 1.0 t\n")
        bad, what = run, "document id (column 3) 'a\\x00x'"
    done = subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "eval", str(qrels), str(run), "-m", "P@1", "-m", "nDCG@10"],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == f"error: {bad}:1: {what} contains the control character U+0000 at character 2\n"


def test_a_binary_collection_evaluates_as_trec_eval_on_its_files(files, tmp_path, capsys):
    # import gives TREC-style 0/1 qrels level 1: eval -c with no option prints what trec_eval prints for the files
    _, run = files
    qrels = tmp_path / "binary.qrels"
    qrels.write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 1\nq2 0 d 0\n", encoding="utf-8")
    db = _store_of(tmp_path, qrels, run)
    capsys.readouterr()
    assert main(["--db", db, "eval", "-c", "c", "latest", "t"]) == 0
    from_store, note = capsys.readouterr()
    assert note == "binary measures count grade >= 1 as relevant (the collection's level)\n"
    assert main(["eval", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out == from_store
    # q1: a (grade 1) ranks second on the tie, q2: c second: MAP 1/2
    means = {m: v for m, q, v in (line.split("\t") for line in from_store.splitlines()) if q == "all"}
    assert means["MAP"] == "0.5000"
