"""The Import page runs imports as background jobs: progress from the store, errors as text."""

from __future__ import annotations

import os

import pytest

from db.jobs import create_job, list_jobs, report_progress, start_job
from tests.app.apptest import VIEWS, open_as_admin

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = VIEWS / "import_collections.py"


def test_a_running_import_shows_its_progress_after_a_reload(db):
    with db.write() as s:
        job = create_job(s, "import", {"format": "msmarco", "path": "/data/c.tsv", "collection": "big"})
        start_job(s, job)
        report_progress(s, job, 50_000, 200_000, "Writing")
    at = open_as_admin(db, PAGE)  # a fresh session: what a reload is
    assert not at.exception
    [bar] = at.get("progress")
    assert bar.value == 25
    assert "Writing (50,000/200,000)" in bar.proto.text and "big" in bar.proto.text


def test_a_failed_import_shows_file_and_line_as_escaped_text(db):
    from db.jobs import fail_job

    with db.write() as s:
        job = create_job(s, "import", {"format": "trec-run", "path": "/in/*bad*.run", "collection": "c"})
        start_job(s, job)
        fail_job(s, job, "/in/*bad*.run:2: expected a number in column 5, got '<b>two</b>'")
    at = open_as_admin(db, PAGE)
    [error] = at.error
    assert "Traceback" not in error.value
    assert r"\*bad\*\.run\:2\:" in error.value and r"\<b\>" in error.value  # markdown and HTML escaped
    assert "/in/*bad*.run:2: expected a number in column 5, got '<b>two</b>'" in error.value.replace("\\", "")
    assert "Nothing was imported" in error.value


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_is_refused_on_the_page_and_no_job_starts(db, tmp_path):
    fifo = tmp_path / "corpus.tsv"
    os.mkfifo(fifo)
    at = open_as_admin(db, PAGE)
    at.text_input[0].input(str(fifo))
    at.selectbox[0].select("msmarco")
    at.text_input[1].input("c")
    at.button[0].click().run()
    [error] = at.error
    assert "not a regular file (a FIFO)" in error.value.replace("\\", "")
    with db.read() as s:
        assert list_jobs(s, kind="import") == []
