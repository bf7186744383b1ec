"""Issue 21, finding 4: a zip whose member names collide is refused before anything is written.

Two members of the same name (also after the extractor's normalisation: ``\\`` as ``/``, ``./``, doubled
slashes), or a file and a folder of the same name (``a`` and ``a/b``), used to raise an unhandled
``FileExistsError`` that showed the server's temporary path.  Now the error names the members and the upload.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from pooljudge.uploads import UploadError, safe_extract

pytestmark = pytest.mark.filterwarnings("ignore:Duplicate name:UserWarning")  # the zips are built that way


def _zip(names: list[str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        for name in names:
            if name.endswith("/"):
                zf.writestr(zipfile.ZipInfo(name), b"")  # a folder entry
            else:
                zf.writestr(name, b"data\n")
    return buffer.getvalue()


def _extract(tmp_path: Path, names: list[str]) -> Path:
    archive = tmp_path / "in.zip"
    archive.write_bytes(_zip(names))
    dest = tmp_path / "out"
    dest.mkdir()
    safe_extract(archive, dest, shown_as="my data.zip")
    return dest


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (
            ["beir/corpus.jsonl", "beir/corpus.jsonl"],
            "member 'beir/corpus.jsonl' appears twice (as 'beir/corpus.jsonl' and 'beir/corpus.jsonl')",
        ),
        (
            ["beir/corpus.jsonl", "beir\\corpus.jsonl"],
            "member 'beir/corpus.jsonl' appears twice (as 'beir/corpus.jsonl' and 'beir\\\\corpus.jsonl')",
        ),
        (
            ["beir/corpus.jsonl", "./beir//corpus.jsonl"],
            "member 'beir/corpus.jsonl' appears twice (as 'beir/corpus.jsonl' and './beir//corpus.jsonl')",
        ),
        (["a", "a/b"], "member 'a' is a file and also a folder (of 'a/b')"),
        (["a/b/c", "a/b"], "member 'a/b' is a file and also a folder (of 'a/b/c')"),
        (["a/", "a"], "member 'a' is a file and also a folder (of 'a/')"),
    ],
)
def test_colliding_member_names_are_refused_before_anything_is_written(tmp_path, names, message):
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, names)
    assert str(raised.value) == f"my data.zip: {message}; nothing was imported"
    assert str(tmp_path) not in str(raised.value)
    assert list((tmp_path / "out").iterdir()) == []


def test_a_folder_entry_repeated_or_implied_is_not_a_clash(tmp_path):
    dest = _extract(tmp_path, ["beir/", "beir/", "beir/qrels/", "beir/corpus.jsonl", "beir/qrels/test.tsv"])
    assert sorted(str(p.relative_to(dest)) for p in dest.rglob("*")) == [
        "beir",
        "beir/corpus.jsonl",
        "beir/qrels",
        "beir/qrels/test.tsv",
    ]


def test_an_import_job_with_a_duplicate_member_fails_cleanly_and_stores_nothing(store, tmp_path):
    from db.jobs import create_job, get_job
    from db.queries import import_history, list_collections
    from pooljudge.jobs import run_job
    from pooljudge.uploads import stage_upload

    data = _zip(["scifact/corpus.jsonl", "scifact/queries.jsonl", "scifact/corpus.jsonl"])
    folder = stage_upload("scifact.zip", data, root=tmp_path)
    with store.write() as s:
        job = create_job(
            s,
            "import",
            {"path": "scifact.zip", "upload": {"dir": str(folder), "name": "scifact.zip"}, "format": "beir"},
        )
    with pytest.raises(UploadError):
        run_job(store, job)
    with store.read() as s:
        error = get_job(s, job).error
        assert list_collections(s) == [] and import_history(s) == []
    assert error == (
        "scifact.zip: member 'scifact/corpus.jsonl' appears twice (as 'scifact/corpus.jsonl' and "
        "'scifact/corpus.jsonl'); nothing was imported"
    )
    assert not folder.exists()
