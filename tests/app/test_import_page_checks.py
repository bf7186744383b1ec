"""Import page (issue 10): the unknown-ids checkbox, the level and run name reach the job; a finished job shows
the relevance level, the unknown ids it kept and the reader's notes, escaped."""

from __future__ import annotations

import pytest

from db.jobs import create_job, finish_job, list_jobs, start_job
from tests.app.apptest import VIEWS, open_as_admin

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = VIEWS / "import_collections.py"


def test_the_form_passes_the_checkbox_the_level_and_the_run_name_to_the_job(db, tmp_path, monkeypatch):
    import pooljudge.jobs

    monkeypatch.setattr(pooljudge.jobs, "launch", lambda *_a, **_k: None)  # the job itself is not run here
    run = tmp_path / "bm25.trec"
    run.write_text("q1 Q0 d1 1 2.0 t\n", encoding="utf-8")
    at = open_as_admin(db, PAGE)
    at.text_input[0].input(str(run))
    at.selectbox[0].select("trec-run")
    at.text_input[1].input("c")
    at.text_input[3].input(" my run ")
    at.selectbox[1].select(1)
    at.checkbox[1].check()
    at.checkbox[2].check()  # grades beyond -1000..1000
    at.button[0].click().run()
    assert not at.exception and not at.error
    with db.read() as s:
        [job] = list_jobs(s, kind="import")
    assert job.params == {
        "format": "trec-run",
        "path": str(run),
        "collection": "c",
        "merge": False,
        "qrels_name": "imported",
        "allow_unknown_ids": True,
        "allow_large_grades": True,
        "level": 1,
        "run_name": "my run",
    }


def test_a_finished_job_shows_level_unknown_ids_and_escaped_notes(db):
    result = {
        "collection": "c",
        "passages_added": 3,
        "passages_skipped": 0,
        "queries_added": 2,
        "queries_skipped": 0,
        "qrels_added": 4,
        "qrels_skipped": 0,
        "qrels_version": "imported",
        "runs": {"bm25": 3},
        "relevance_level": 1,
        "unknown_query_ids": 1,
        "unknown_passage_ids": 12,
        "notes": ["qa.jsonl: ignored key '<b>answer1</b>' (first at line 3)"],
    }
    with db.write() as s:
        job = create_job(s, "import", {"format": "beir", "path": "/in/c", "collection": "c"})
        start_job(s, job)
        finish_job(s, job, result)
    at = open_as_admin(db, PAGE)
    assert not at.exception
    [success] = at.success
    assert success.value.endswith(
        "4 qrels entries and 1 runs imported; relevance level 1; kept 1 unknown query id and 12 unknown passage ids."
    )
    [note] = at.info
    assert note.value == r"Note: qa\.jsonl\: ignored key \'\<b\>answer1\<\/b\>\' \(first at line 3\)"


def test_the_form_asks_for_an_upload_or_a_path_and_a_name(db, tmp_path, monkeypatch):
    import pooljudge.jobs

    monkeypatch.setattr(pooljudge.jobs, "launch", lambda *_a, **_k: None)
    at = open_as_admin(db, PAGE)
    assert at.get("file_uploader")  # the upload field is on the page, above the server path
    at.text_input[1].input("c")
    at.button[0].click().run()
    assert [e.value for e in at.error] == [
        "Give a collection name, and either a file to upload or a path on the server (not both)."
    ]
    with db.read() as s:
        assert list_jobs(s, kind="import") == []
