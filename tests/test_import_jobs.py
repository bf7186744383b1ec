"""Imports as background jobs: the job row carries progress, the summary, or the file:line error as plain text."""

from __future__ import annotations

import pytest

from core.errors import FormatError
from db.jobs import create_job, get_job
from db.queries import list_collections
from pooljudge.jobs import run_job


@pytest.mark.slow
def test_an_import_job_reports_stages_and_its_summary(store, tmp_path):
    corpus = tmp_path / "collection.tsv"
    corpus.write_text("".join(f"{i}\tpassage {i}\n" for i in range(12_000)), encoding="utf-8")
    with store.write() as s:
        job = create_job(s, "import", {"format": "msmarco", "path": str(corpus), "collection": "c"})
    result = run_job(store, job)
    assert (result.collection, result.passages_added) == ("c", 12_000)
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


def _qa(tmp_path):
    path = tmp_path / "qa.json"
    path.write_text(
        '{"id": 0, "query": "who?", "answer": ["a"], "positive": ["p a"], "negative": ["n"], "answer1": "x"}\n',
        encoding="utf-8",
    )
    return path


def test_an_import_job_result_carries_the_level_and_the_readers_notes(store, tmp_path):
    with store.write() as s:
        job = create_job(s, "import", {"format": "qa-jsonl", "path": str(_qa(tmp_path)), "collection": "rgb"})
    result = run_job(store, job)
    assert (result.passages_added, result.qrels_added, result.relevance_level) == (2, 2, 1)
    assert [n for n in result.notes if "answer1" in n] and result.unknown_passage_ids == 0
    with store.read() as s:
        assert get_job(s, job).result["notes"] == result.notes


def test_an_import_job_refuses_unknown_ids_unless_its_params_allow_them(store, tmp_path):
    with store.write() as s:
        seed = create_job(s, "import", {"format": "qa-jsonl", "path": str(_qa(tmp_path)), "collection": "rgb"})
    run_job(store, seed)
    run = tmp_path / "r.run"
    run.write_text("0 Q0 nowhere 1 1.0 t\n", encoding="utf-8")
    params = {"format": "trec-run", "path": str(run), "collection": "rgb", "merge": True}
    with store.write() as s:
        refused = create_job(s, "import", params)
    with pytest.raises(FormatError, match=r":1: passage id 'nowhere' is not in collection 'rgb'"):
        run_job(store, refused)
    with store.write() as s:
        allowed = create_job(s, "import", {**params, "allow_unknown_ids": True, "run_name": "bm25"})
    result = run_job(store, allowed)
    assert (result.runs, result.unknown_query_ids, result.unknown_passage_ids) == ({"bm25": 1}, 0, 1)
    with store.read() as s:
        assert get_job(s, refused).status == "failed" and get_job(s, allowed).status == "done"


# --------------------------------------------------------------------------- uploads through the browser


def _beir_zip(qrels: str = "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n") -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("scifact/corpus.jsonl", '{"_id": "d1", "text": "alpha"}\n{"_id": "d2", "text": "beta"}\n')
        zf.writestr("scifact/queries.jsonl", '{"_id": "q1", "text": "alpha?"}\n')
        zf.writestr("scifact/qrels/test.tsv", qrels)
    return buffer.getvalue()


def _upload_job(store, tmp_path, name, data, **params):
    from pooljudge.uploads import stage_upload

    folder = stage_upload(name, data, root=tmp_path)
    with store.write() as s:
        job = create_job(s, "import", {"path": name, "upload": {"dir": str(folder), "name": name}, **params})
    return job, folder


def test_an_uploaded_beir_zip_and_trec_run_are_imported_and_their_staging_removed(store, tmp_path):
    from db.queries import import_history, stored_run

    job, folder = _upload_job(store, tmp_path, "scifact.zip", _beir_zip(), format="beir", collection="sci")
    result = run_job(store, job)
    assert (result.passages_added, result.queries_added, result.qrels_added) == (2, 1, 2)
    assert not folder.exists()
    job, folder = _upload_job(
        store,
        tmp_path,
        "bm25.trec",
        b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\n",
        format="trec-run",
        collection="sci",
        merge=True,
    )
    assert run_job(store, job).runs == {"bm25": 2}
    assert not folder.exists()
    with store.read() as s:
        assert stored_run(s, "sci", "bm25") == {"q1": {"d1": 2.0, "d2": 1.0}}
        assert [h["source"] for h in import_history(s)] == ["upload: bm25.trec", "upload: scifact.zip"]


def test_an_uploaded_files_error_names_the_upload_and_line_and_stores_nothing(store, tmp_path):
    bad = _beir_zip("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\tx\n")
    job, folder = _upload_job(store, tmp_path, "scifact.zip", bad, format="beir", collection="sci")
    with pytest.raises(FormatError):
        run_job(store, job)
    with store.read() as s:
        info = get_job(s, job)
        assert list_collections(s) == []
    assert info.error.startswith("scifact.zip/scifact/qrels/test.tsv:3: ") and str(tmp_path) not in info.error
    assert not folder.exists()
    job, folder = _upload_job(store, tmp_path, "run.trec.gz", b"not gzip", format="trec-run", collection="c")
    with pytest.raises(FormatError):
        run_job(store, job)
    with store.read() as s:
        error = get_job(s, job).error
    assert error.startswith("run.trec.gz") and str(tmp_path) not in error and not folder.exists()


def test_an_unsafe_uploaded_zip_is_refused_by_the_job(store, tmp_path):
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("../evil.txt", "x")
    job, folder = _upload_job(store, tmp_path, "evil.zip", buffer.getvalue(), format="beir", collection="c")
    with pytest.raises(ValueError):
        run_job(store, job)
    with store.read() as s:
        assert get_job(s, job).error == "evil.zip: member '../evil.txt' leaves the folder (..); nothing was imported"
        assert list_collections(s) == []
    assert not folder.exists() and not (tmp_path / "evil.txt").exists()


def test_a_new_stage_without_a_total_does_not_keep_the_previous_stages_total(store):
    from db.jobs import create_job, get_job
    from pooljudge.jobs import Reporter

    with store.write() as session:
        job_id = create_job(session, "train", {})
    report = Reporter(store, job_id, interval=0.0)
    report(5, 32, "retrieving candidates")
    with store.read() as session:
        assert (get_job(session, job_id).done, get_job(session, job_id).total) == (5, 32)
    report.stage_callback("training")  # the next stage's total is not known yet
    with store.read() as session:
        job = get_job(session, job_id)
    assert (job.message, job.done, job.total, job.fraction) == ("training", 0, None, None)
    report(3, 240, "training")
    with store.read() as session:
        assert (get_job(session, job_id).done, get_job(session, job_id).total) == (3, 240)
