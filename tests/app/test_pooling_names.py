"""The Pooling page refuses a taken pool name before it queues a job (issue 11, flows item 3)."""

from __future__ import annotations

import pytest

from db.jobs import list_jobs
from db.pools import save_pool
from pooljudge.ui.common import md_escape
from tests.app.apptest import VIEWS, import_tiny_collection, open_as_admin, record_launches

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def test_a_taken_pool_name_is_refused_and_no_job_starts(db, monkeypatch):
    launched = record_launches(monkeypatch)
    with db.write() as s:
        import_tiny_collection(s)
        save_pool(s, "c", "huge", {"q1": {"d0": [("bm25", 1, 2.0)]}}, method="depth")
    at = open_as_admin(db, VIEWS / "pooling.py")
    at.text_input[0].set_value("huge")
    at.text_input[1].set_value("bm25:name=bm25-again")
    at.multiselect[1].set_value([])
    at.button[0].click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [md_escape("a pool named 'huge' already exists in collection 'c'")]
    with db.read() as s:
        assert list_jobs(s, kind="pool") == []
    assert launched == []
