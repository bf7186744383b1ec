"""Short flags mean one thing each: ``-q`` is the top-level ``--quiet``, ``eval``'s per-query flag is ``-p``."""

from __future__ import annotations

import pytest

from pooljudge.cli import main


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "t.qrels"
    qrels.write_text("q1 0 a 1\nq2 0 c 1\n", encoding="utf-8")
    run = tmp_path / "t.run"
    run.write_text("q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\nq2 Q0 d 1 1.0 x\nq2 Q0 c 2 0.5 x\n", encoding="utf-8")
    return str(qrels), str(run)


def test_p_prints_one_line_per_query_after_the_top_level_quiet(files, capsys):
    assert main(["-q", "eval", *files, "-m", "RR", "-p"]) == 0
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert lines == [["RR", "q1", "1.0000"], ["RR", "q2", "0.5000"], ["RR", "all", "0.7500"]]


def test_long_per_query_still_works(files, capsys):
    assert main(["eval", *files, "-m", "RR", "--per-query"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 3


def test_without_p_only_the_mean(files, capsys):
    assert main(["eval", *files, "-m", "RR"]) == 0
    assert capsys.readouterr().out.splitlines() == ["RR\tall\t0.7500"]


def test_q_under_eval_is_no_longer_per_query(files, capsys):
    # argparse rejects it (exit 2) rather than silently reading it as --quiet or --per-query
    with pytest.raises(SystemExit) as exc:
        main(["eval", *files, "-m", "RR", "-q"])
    assert exc.value.code == 2
    assert "-q" in capsys.readouterr().err
