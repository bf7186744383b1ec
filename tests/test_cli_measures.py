"""`pooljudge eval -m` with a bad measure: one clear line naming the measure and the allowed range (issue 10)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "t.qrels"
    qrels.write_text("q1 0 a 1\n", encoding="utf-8")
    run = tmp_path / "t.run"
    run.write_text("q1 Q0 a 1 1.0 x\n", encoding="utf-8")
    return qrels, run


def _eval(files, *measures: str) -> subprocess.CompletedProcess:
    qrels, run = files
    args = [a for m in measures for a in ("-m", m)]
    return subprocess.run(
        [sys.executable, "-m", "pooljudge.cli", "eval", str(qrels), str(run), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("measure", "shown"),
    [
        ("P@99999999999999999999", "99999999999999999999"),
        ("P@2147483648", "2147483648"),
        ("P@0", "0"),
        ("P@1.5", "'1.5'"),
        ("P@", "''"),
        ("P@" + "9" * 5000, "99999999999999999999... (a 5000-digit number)"),
    ],
)
def test_bad_cutoff_is_one_clear_error(files, measure, shown):
    done = _eval(files, "MAP", measure)
    assert done.returncode == 1
    assert done.stdout == ""
    in_text = measure if len(measure) <= 40 else measure[:30] + "..."
    assert done.stderr == (
        f"error: P: the cutoff must be a positive integer (at most 2147483647), got {shown} (in {in_text!r})\n"
    )


@pytest.mark.slow
def test_a_good_cutoff_still_evaluates(files):
    done = _eval(files, "P@2147483647")
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.split("\t")[:2] == ["P@2147483647", "all"]
