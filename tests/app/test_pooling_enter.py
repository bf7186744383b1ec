"""Issue 20: Enter in a Pooling field never starts a job, and a second click while a pooling job builds the same
pool or run is refused on the Pooling page with what to do there (never an import's advice)."""

from __future__ import annotations

import pytest

from db.importer import store_run
from db.jobs import create_job, list_jobs
from db.queries import collection_id
from pooljudge.pool_job import _stage_runs
from pooljudge.pool_params import PoolJobParams
from pooljudge.ui.common import md_escape
from tests.app.apptest import VIEWS, import_tiny_collection, open_as_admin, record_launches

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


def _forms(at) -> dict[str, bool]:
    """Each form on the page: its id and whether Enter in one of its boxes submits it."""
    return {f.proto.form.form_id: f.proto.form.enter_to_submit for f in at.get("form")}


def test_enter_in_a_pooling_field_does_not_submit(db):
    with db.write() as s:
        import_tiny_collection(s)
    at = open_as_admin(db, VIEWS / "pooling.py")
    assert _forms(at) == {"new-pool": False}


def _queue_pool_job(db, name: str, retrievers: list[str]) -> int:
    params = PoolJobParams(collection="c", name=name, retrievers=retrievers, runs=[], k=10, depth=5, size=5)
    with db.write() as s:
        return create_job(s, "pool", params, collection_id=collection_id(s, "c"))


@pytest.mark.parametrize(
    ("queued", "expected"),
    [
        (
            ("again", ["bm25:name=other"]),
            "pooling job {job} is already building pool 'again': wait for it (under Jobs below), "
            "or give this pool another name",
        ),
        (
            ("first", ["bm25:name=bm25-new"]),
            "pooling job {job} is already making run 'bm25-new': wait for it and choose the run under "
            "'Stored runs to pool', or name the new one, e.g. bm25:name=my-bm25",
        ),
    ],
)
def test_a_second_click_while_a_job_builds_the_same_names_is_refused(db, monkeypatch, queued, expected):
    launched = record_launches(monkeypatch)
    with db.write() as s:
        import_tiny_collection(s)
    job = _queue_pool_job(db, *queued)
    at = open_as_admin(db, VIEWS / "pooling.py")
    at.text_input[0].set_value("again")
    at.text_input[1].set_value("bm25:name=bm25-new")
    at.multiselect[1].set_value([])
    at.button[0].click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [md_escape(expected.format(job=job))]
    with db.read() as s:
        assert [j.id for j in list_jobs(s, kind="pool")] == [job]
    assert launched == []


def test_a_run_stored_meanwhile_fails_the_job_with_pooling_advice(db):
    """The race the page cannot see (a run of that name stored after the job's checks): pooling words."""
    with db.write() as s:
        import_tiny_collection(s)
    store_run(db, "c", "late", {"q1": {"d0": 1.0}})
    with pytest.raises(ValueError) as refused:
        _stage_runs(db, "c", {"late": ({"q1": {"d1": 2.0}}, {})})
    assert str(refused.value) == (
        "run 'late' was stored in 'c' while this job ran (by another pooling job or an import): "
        "pool the stored run (Stored runs to pool), or name the new one, e.g. name=my-late"
    )


@pytest.mark.parametrize(("page", "form"), [("import_collections.py", "import"), ("models.py", "train-model")])
def test_enter_never_submits_the_other_job_forms(db, page, form):
    with db.write() as s:
        import_tiny_collection(s)
    at = open_as_admin(db, VIEWS / page)
    assert not at.exception
    assert _forms(at)[form] is False
