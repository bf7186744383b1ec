"""Issue 21, finding 6: `pooljudge eval` on a FIFO, and grades so large that evaluating them eats the memory.

``eval`` opened a FIFO and waited for a writer forever (import refused it); a TREC qrels file with grade
2,000,000,000 was imported without a word and evaluating it allocated 15 GB (trec_eval keeps 8 bytes per grade
level).  Now eval refuses non-regular files as import does, every reader refuses a grade beyond +-1,000 unless
``--allow-large-grades`` says otherwise, and eval refuses (rather than warns) when trec_eval's allocation would
take more than half the memory available.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import core.memory
from core.memory import trec_eval_grade_bytes
from db.engine import Store, sqlite_url
from db.queries import list_collections, stored_qrels
from pooljudge.cli import main
from tests.sqlite_template import copy_store

HUGE = 2_000_000_000
GIB = 2**30
RUN = "q1 Q0 a 1 2.0 x\nq1 Q0 b 2 1.0 x\n"


@pytest.fixture
def no_trec_eval(monkeypatch):
    """A refusal that comes too late would make trec_eval allocate 16 GB: fail instead of trying."""

    def refuse(*args, **kwargs):
        raise AssertionError("pytrec_eval was called")

    monkeypatch.setattr("core.metrics.pytrec_eval.RelevanceEvaluator", refuse)


@pytest.fixture
def eight_gib(monkeypatch):
    monkeypatch.setattr(core.memory, "available_memory", lambda: 8 * GIB)


def _eval_in_subprocess(*args: str) -> subprocess.CompletedProcess[str]:
    try:  # a regression opens the FIFO and blocks: fail after a minute rather than hang the suite
        return subprocess.run(
            [sys.executable, "-m", "pooljudge.cli", "eval", *args, "-m", "P@1"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
        )
    except subprocess.TimeoutExpired:
        pytest.fail("eval opened the FIFO and waited for a writer")


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_eval_refuses_a_fifo_as_import_does(tmp_path, which):
    qrels, run = tmp_path / "t.qrels", tmp_path / "t.run"
    qrels.write_text("q1 0 a 1\n", encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    fifo = qrels if which == "qrels" else run
    fifo.unlink()
    os.mkfifo(fifo)
    done = _eval_in_subprocess(str(qrels), str(run))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f"error: {fifo}: not a regular file (a FIFO); refusing to read it\n"


def test_eval_refuses_a_huge_grade_in_a_qrels_file_at_its_line(tmp_path, capsys, no_trec_eval):
    qrels, run = tmp_path / "t.qrels", tmp_path / "t.run"
    qrels.write_text(f"q1 0 a 1\nq1 0 b {HUGE}\n", encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    assert main(["eval", str(qrels), str(run), "-m", "nDCG@10"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"error: {qrels}:2: grade {HUGE} is outside -1000..1000 (grade (column 4)); "
        "larger grades are read only when allowed (--allow-large-grades)\n"
    )


def test_allowed_huge_grades_are_still_refused_when_trec_eval_would_take_the_memory(
    tmp_path, capsys, no_trec_eval, eight_gib
):
    qrels, run = tmp_path / "t.qrels", tmp_path / "t.run"
    qrels.write_text(f"q1 0 a 1\nq1 0 b {HUGE}\n", encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    assert main(["eval", str(qrels), str(run), "-m", "nDCG@10", "--allow-large-grades"]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"error: the largest grade is {HUGE}: trec_eval would allocate about 14.9 GiB for it (8 bytes per grade "
        "level), more than half of the 8.0 GiB of memory available; refusing to evaluate (map the grades onto a "
        "small scale first)\n"
    )
    assert trec_eval_grade_bytes(HUGE) == 8 * (HUGE + 1)


def test_a_large_grade_that_fits_is_evaluated_with_a_warning(tmp_path, capsys, eight_gib):
    qrels, run = tmp_path / "t.qrels", tmp_path / "t.run"
    qrels.write_text("q1 0 b 2000000\n", encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    assert main(["eval", str(qrels), str(run), "-m", "P@2", "--allow-large-grades"]) == 0
    out, err = capsys.readouterr()
    assert out == "P@2\tall\t0.5000\n"
    assert err.startswith("warning: the largest grade is 2000000: trec_eval allocates 8 bytes per grade level")


def test_import_refuses_a_huge_grade_and_the_store_is_unchanged(
    tmp_path, capsys, no_trec_eval, eight_gib, sqlite_template
):
    url = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    good, huge = tmp_path / "good.qrels", tmp_path / "huge.qrels"
    good.write_text("q1 0 a 1\nq1 0 b 0\n", encoding="utf-8")
    huge.write_text(f"q1 0 a 1\nq1 0 b {HUGE}\n", encoding="utf-8")
    assert main(["--db", url, "-q", "import", "-f", "trec-qrels", str(huge), "-c", "new"]) == 1
    assert capsys.readouterr().err == (
        f"error: {huge}:2: grade {HUGE} is outside -1000..1000 (grade (column 4)); "
        "larger grades are read only when allowed (--allow-large-grades)\n"
    )
    assert main(["--db", url, "-q", "import", "-f", "trec-qrels", str(good), "-c", "c"]) == 0
    merge = ["--db", url, "-q", "import", "-f", "trec-qrels", str(huge), "-c", "c", "--merge", "--qrels-name", "v2"]
    assert main(merge) == 1
    store = Store(url)
    try:
        with store.read() as s:
            assert [c.name for c in list_collections(s)] == ["c"]
            assert stored_qrels(s, "c", None) == {"q1": {"a": 1, "b": 0}}
        # allowed explicitly, the import stores it; eval from the store then refuses before trec_eval runs
        assert main([*merge, "--allow-large-grades"]) == 0
        with store.read() as s:
            assert stored_qrels(s, "c", "v2") == {"q1": {"a": 1, "b": HUGE}}
    finally:
        store.dispose()
    run = tmp_path / "t.run"
    run.write_text(RUN, encoding="utf-8")
    assert main(["--db", url, "-q", "import", "-f", "trec-run", str(run), "-c", "c", "--merge"]) == 0
    capsys.readouterr()
    assert main(["--db", url, "-q", "eval", "-c", "c", "v2", "t", "-m", "nDCG@10"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: the largest grade is {HUGE}: trec_eval would allocate about 14.9 GiB")


def test_an_import_job_refuses_a_huge_grade_unless_its_params_allow_it(store, tmp_path):
    from core.errors import FormatError
    from db.jobs import create_job, get_job
    from pooljudge.jobs import run_job

    huge = tmp_path / "huge.qrels"
    huge.write_text(f"q1 0 a 1\nq1 0 b {HUGE}\n", encoding="utf-8")
    params = {"format": "trec-qrels", "path": str(huge), "collection": "c"}
    with store.write() as s:
        job = create_job(s, "import", params)
    with pytest.raises(FormatError):
        run_job(store, job)
    with store.read() as s:
        assert get_job(s, job).error == (
            f"{huge}:2: grade {HUGE} is outside -1000..1000 (grade (column 4)); "
            "larger grades are read only when allowed (--allow-large-grades)"
        )
        assert list_collections(s) == []
    with store.write() as s:
        job = create_job(s, "import", {**params, "allow_large_grades": True})
    run_job(store, job)
    with store.read() as s:
        assert stored_qrels(s, "c") == {"q1": {"a": 1, "b": HUGE}}
