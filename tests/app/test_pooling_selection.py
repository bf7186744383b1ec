"""The Pooling page's Selection control: top N by runs or by re-rankers, active selection, checked before a job."""

from __future__ import annotations

import pytest

from db.jobs import list_jobs
from pooljudge.ui.common import md_escape
from tests.app.apptest import VIEWS, import_tiny_collection, open_as_admin, record_launches

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test


@pytest.fixture
def page(db, monkeypatch, tmp_path):
    """The Pooling page over a 3-passage collection with one run; launching a job records it instead."""
    launched = record_launches(monkeypatch)
    with db.write() as s:
        import_tiny_collection(s)
    model = tmp_path / "ce"
    model.mkdir()  # only its existence is checked before the job
    at = open_as_admin(db, VIEWS / "pooling.py")
    at.text_input[0].set_value("p")
    return at, launched, model


def selection(at, kind: str):
    return next(r for r in at.radio if r.label == "Selection").set_value(kind)


def job_params(db):
    with db.read() as s:
        return [j.params for j in list_jobs(s, kind="pool")]


def test_top_n_by_runs_is_the_default(page, db):
    at, launched, _ = page
    at.button[0].click().run()
    assert not at.exception and not at.error
    [params] = job_params(db)
    assert params["select"] == 5 and "select_by" not in params and "select_method" not in params
    assert len(launched) == 1


def test_top_n_by_a_reranker_folder(page, db):
    at, _, model = page
    selection(at, "top N by re-ranker")
    next(t for t in at.text_input if t.label.startswith("Or model folders")).set_value(str(model))
    next(n for n in at.number_input if n.label.startswith("N:")).set_value(3)
    at.button[0].click().run()
    assert not at.exception and not at.error
    [params] = job_params(db)
    assert (params["select"], params["select_by"]) == (3, [str(model)])


def test_active_selection_with_a_band(page, db):
    at, _, model = page
    selection(at, "active")
    next(t for t in at.text_input if t.label.startswith("Or model folders")).set_value(str(model))
    next(s for s in at.slider if s.label.startswith("Active band")).set_value((0.2, 0.7))
    at.button[0].click().run()
    assert not at.exception and not at.error
    [params] = job_params(db)
    assert params["select"] is None
    assert (params["select_method"], params["active_model"], params["active_band"]) == (
        "active",
        str(model),
        [0.2, 0.7],
    )


def test_a_model_selection_without_a_model_or_with_a_missing_folder_starts_no_job(page, db):
    at, launched, _ = page
    selection(at, "active")
    at.button[0].click().run()
    assert [e.value for e in at.error] == [
        md_escape("selection 'active' needs a model: pick a registered one or give a folder")
    ]
    next(t for t in at.text_input if t.label.startswith("Or model folders")).set_value("/no/such/ce")
    at.button[0].click().run()
    assert len(at.error) == 1 and md_escape("/no/such/ce") in at.error[0].value  # escaped, named
    assert job_params(db) == [] and launched == []


def test_the_done_job_shows_the_active_report(page, db):
    at, _, model = page
    from db.jobs import create_job, finish_job
    from db.queries import collection_id

    with db.write() as s:
        job_id = create_job(
            s,
            "pool",
            {
                "collection": "c",
                "name": "a",
                "select_method": "active",
                "active_model": str(model),
                "active_band": [0.1, 0.9],
            },
            collection_id=collection_id(s, "c"),
        )
    with db.write() as s:
        finish_job(
            s,
            job_id,
            {
                "pool": "a",
                "pairs": 10,
                "selected": 4,
                "duplicates": 0,
                "prelabels": 0,
                "active": {
                    "kept": 4,
                    "confident_relevant": 2,
                    "confident_irrelevant": 4,
                    "saved": 6,
                    "pairs": 10,
                    "band": [0.1, 0.9],
                },
            },
        )
    at.run()
    assert any(
        "Active selection: kept 4 of 10 pairs, saved 6 (2 confidently relevant, 4 confidently not; "
        "band [0.1, 0.9])" in i.value
        for i in at.info
    )


def test_a_registered_reranker_is_offered_by_name(db, monkeypatch, tmp_path):
    from db.trained_models import register_model

    record_launches(monkeypatch)
    with db.write() as s:
        import_tiny_collection(s)
        for name, kind in (("ce-1", "cross-encoder"), ("de-1", "dual-encoder")):
            (tmp_path / name).mkdir()
            register_model(
                s, "c", name=name, kind=kind, path=str(tmp_path / name), base_model=None, params={}, history=[], best={}
            )
    at = open_as_admin(db, VIEWS / "pooling.py")
    at.text_input[0].set_value("p")
    picker = next(m for m in at.multiselect if m.label.startswith("Re-ranker"))
    assert picker.options == ["ce-1"]  # a dual encoder cannot re-rank
    selection(at, "top N by re-ranker")
    picker.set_value(["ce-1"])
    at.button[0].click().run()
    assert not at.exception and not at.error
    [params] = job_params(db)
    assert params["select_by"] == ["ce-1"]
