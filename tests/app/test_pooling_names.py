"""The Pooling page refuses a taken pool name before it queues a job (issue 11, flows item 3)."""

from __future__ import annotations

from core.types import CollectionSource, Passage, Query
from db.importer import import_collection, save_run
from db.jobs import list_jobs
from db.pools import save_pool
from pooljudge.ui.common import md_escape
from tests.app.apptest import VIEWS, open_as_admin


def test_a_taken_pool_name_is_refused_and_no_job_starts(db, monkeypatch):
    import pooljudge.jobs

    launched = []
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: launched.append(job_id))
    with db.write() as s:
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter([Passage(f"d{i}", f"passage {i}") for i in range(3)]),
                queries=lambda: iter([Query("q1", "query one")]),
                qrels=lambda: iter(()),
            ),
            name="c",
            format="test",
            location="mem",
        )
        save_run(s, "c", "bm25", {"q1": {"d0": 2.0, "d1": 1.0}})
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
