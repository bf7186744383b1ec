"""Imports as background jobs: the job row carries progress, the summary, or the file:line error as plain text."""

from __future__ import annotations

import pytest

from core.errors import FormatError
from db.jobs import create_job, get_job
from db.queries import list_collections
from pooljudge.jobs import run_job


def test_an_import_job_reports_stages_and_its_summary(store, tmp_path):
    corpus = tmp_path / "collection.tsv"
    corpus.write_text("".join(f"{i}\tpassage {i}\n" for i in range(12_000)), encoding="utf-8")
    with store.write() as s:
        job = create_job(s, "import", {"format": "msmarco", "path": str(corpus), "collection": "c"})
    result = run_job(store, job)
    assert (result["collection"], result["passages_added"]) == ("c", 12_000)
    with store.read() as s:
        info = get_job(s, job)
        [collection] = list_collections(s)
    assert (info.status, info.done, info.total, info.fraction) == ("done", 12_000, 12_000, 1.0)
    assert info.result["passages_added"] == 12_000 and collection.passages == 12_000


def test_a_failed_import_job_keeps_the_message_not_a_traceback(store, tmp_path):
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 two t\n", encoding="utf-8")
    with store.write() as s:
        job = create_job(s, "import", {"format": "trec-run", "path": str(bad), "collection": "c"})
    with pytest.raises(FormatError) as raised:
        run_job(store, job)
    with store.read() as s:
        info = get_job(s, job)
        assert list_collections(s) == []
    assert info.status == "failed"
    assert info.error == str(raised.value) and info.error.startswith(f"{bad}:2: ")
