"""The Error analysis page's Alignment tab (issue 22): start the alignment job on a pool, see its progress, then its
suggestions (both phrases and the cosine), with a deterministic fake encoder standing for the collection's."""

from __future__ import annotations

import pytest

from db.jobs import list_jobs
from pooljudge import alignment_job
from tests.app.apptest import open_as_admin, open_tab, record_launches, run_launches_inline
from tests.app.test_errors_page import PAGE, frame_with
from tests.core.detectors.test_alignment_detector import FakeEncoder
from tests.test_alignment_job import seed

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def _open(db):
    at = open_tab(open_as_admin(db, PAGE, default_timeout=60), "errors_tab", "Alignment")
    assert not at.exception
    return at


def test_a_queued_job_shows_its_progress(db, monkeypatch):
    seed(db)
    launched = record_launches(monkeypatch)  # the worker never starts: the job stays queued
    at = _open(db)
    assert any("No alignment suggestions stored yet." in c.value for c in at.caption)
    at.selectbox(key="errors_alignment_pool").set_value("p1")
    at.button(key="errors_alignment_start").click().run()
    assert not at.exception
    with db.read() as s:
        [job] = list_jobs(s, kind=alignment_job.KIND)
    assert launched == [job.id] and job.params["pool"] == "p1" and job.status == "queued"
    [bar] = at.get("progress")
    assert f"Alignment over pool p1 (job {job.id})" in bar.proto.text
    # a second press while it runs queues nothing more
    at.button(key="errors_alignment_start").click().run()
    with db.read() as s:
        assert len(list_jobs(s, kind=alignment_job.KIND)) == 1


def test_a_finished_job_shows_its_suggestions(db, monkeypatch):
    seed(db)
    monkeypatch.setattr(alignment_job, "load_encoder", lambda language, model="": FakeEncoder())
    launched = run_launches_inline(monkeypatch)
    at = _open(db)
    at.button(key="errors_alignment_start").click().run()
    assert not at.exception and len(launched) == 1
    [done] = [m.value for m in at.success]
    assert done == (
        f"Alignment over pool p1 (job {launched[0]}): 3 pairs aligned, 1 mismatches found, 1 new suggestions stored"
    )
    frame = frame_with(at, "passage phrase")
    assert frame[
        ["query", "passage", "category", "query phrase", "passage phrase", "kind", "status"]
    ].values.tolist() == [["q1", "honda", "entity_mismatch", "Toyota", "Honda", "name", "suggested"]]
    assert 0.4 < frame["cosine"].iloc[0] < 1.0
