"""Issue 20: the Dataset statistics page never encodes on the request (27.8 s on first open): it shows its tables at
once, queues a query-vectors job and shows its progress; the job stores the vectors by content key and the page
reads them without loading a model."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

import pooljudge.encoders
from core.analysis import intra_list_similarity
from db.jobs import list_jobs
from db.queries import iter_queries
from pooljudge.jobs import run_job
from pooljudge.query_vectors_job import KIND, vectors_key
from pooljudge.seed import DEMO_NAME, ensure_demo
from pooljudge.ui.common import md_escape
from tests.app.apptest import VIEWS, open_as_admin, record_launches

PAGE = VIEWS / "dataset_statistics.py"


class FakeEncoder:
    """Deterministic 8-d vectors from each text's digest: no model, no torch."""

    fingerprint = "fake-encoder-1"
    dim = 8

    def encode(self, texts, *, kind="passage", progress=None):
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8) for t in texts]
        if progress is not None:
            progress(len(texts), len(texts))
        return np.asarray(rows, dtype=np.float32) + 1.0


@pytest.fixture
def loads(monkeypatch, tmp_path):
    """The models loaded (their specs), each a FakeEncoder; a private cache folder."""
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    specs: list[dict] = []

    def encoder_for(spec=None, **_):
        specs.append(dict(spec or {}))
        return FakeEncoder()

    monkeypatch.setattr(pooljudge.encoders, "encoder_for", encoder_for)
    return specs


def _ils(at):
    return next((d.value for d in at.dataframe if "ILS" in d.value.columns), None)


@pytest.mark.slow
def test_the_page_queues_the_encoding_and_reads_what_the_job_stored(db, monkeypatch, loads):
    ensure_demo(db)
    launched = record_launches(monkeypatch)
    at = open_as_admin(db, PAGE)
    assert not at.exception, at.exception
    assert any("judged pairs" in d.value.columns for d in at.dataframe)  # the tables are there at once
    assert _ils(at) is None and loads == []  # no model loaded on the request
    with db.read() as s:
        texts = [q.text for q in iter_queries(s, DEMO_NAME)]
        [job] = list_jobs(s, kind=KIND)
    assert job.params == {"collection": DEMO_NAME, "model": "", "key": vectors_key(texts, "")}
    assert launched == [job.id]
    assert [p.proto.text for p in at.get("progress")] == [f"Encoding the queries (job {job.id}): queued"]
    at.run()  # a rerun while the job is queued starts no second one
    with db.read() as s:
        assert [j.id for j in list_jobs(s, kind=KIND)] == [job.id]

    run_job(db, job.id)  # the worker
    assert loads == [{}]  # the bundled model's spec, in the worker
    at.run()
    assert not at.exception, at.exception
    ils = _ils(at).set_index("split")
    expected = FakeEncoder().encode(texts)
    assert ils.loc["all", "queries"] == len(texts) == 54
    assert ils.loc["all", "ILS"] == round(intra_list_similarity(expected), 4)
    assert loads == [{}]  # the page read the stored vectors: still no model loaded on a request

    fresh = open_as_admin(db, PAGE)  # another session: the stored vectors at once, no new job
    assert _ils(fresh) is not None
    with db.read() as s:
        assert len(list_jobs(s, kind=KIND)) == 1


@pytest.mark.slow
def test_a_failed_encoding_is_shown_and_not_retried_by_itself(db, monkeypatch, loads):
    ensure_demo(db)
    launched = record_launches(monkeypatch)
    at = open_as_admin(db, PAGE)
    at.expander[0].text_input(key="stats_model").input("/nowhere/model").run()
    [job_id] = launched[1:]

    def refuse(spec=None, **_):
        raise ValueError("model folder '/nowhere/model' does not exist")

    monkeypatch.setattr(pooljudge.encoders, "encoder_for", refuse)
    with pytest.raises(ValueError):
        run_job(db, job_id)
    at.run()
    assert [e.value for e in at.error] == [
        md_escape("Could not encode the queries with /nowhere/model: model folder '/nowhere/model' does not exist")
    ]
    assert launched[1:] == [job_id]  # shown, not started again
    at.button(key="stats_encode_again").click().run()
    assert len(launched) == 3 and launched[2] != job_id
