"""Uploaded zips are unpacked safely: absolute paths, '..', symlinks, too many files and zip bombs are refused."""

from __future__ import annotations

import io
import stat
import tomllib
import zipfile
from pathlib import Path

import pytest

from pooljudge.uploads import (
    UPLOAD_MAX_MB,
    UploadError,
    discard,
    prepare,
    public_text,
    safe_extract,
    stage_upload,
)

ROOT = Path(__file__).resolve().parents[1]


def _zip(members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buffer.getvalue()


def _extract(tmp_path, data: bytes, **kw) -> Path:
    archive = tmp_path / "in.zip"
    archive.write_bytes(data)
    dest = tmp_path / "out"
    dest.mkdir(exist_ok=True)
    safe_extract(archive, dest, shown_as="my data.zip", **kw)
    return dest


def _symlink(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


@pytest.mark.parametrize(
    ("member", "message"),
    [
        ("/etc/passwd", "my data.zip: member '/etc/passwd' is an absolute path; nothing was imported"),
        ("C:/Windows/x.txt", "my data.zip: member 'C:/Windows/x.txt' is an absolute path; nothing was imported"),
        (
            "beir/../../evil.txt",
            "my data.zip: member 'beir/../../evil.txt' leaves the folder (..); nothing was imported",
        ),
        (
            "beir\\..\\evil.txt",
            "my data.zip: member 'beir\\\\..\\\\evil.txt' leaves the folder (..); nothing was imported",
        ),
    ],
)
def test_unsafe_member_paths_are_refused_before_anything_is_written(tmp_path, member, message):
    data = _zip([("beir/corpus.jsonl", b"{}\n"), (member, b"x")])
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, data)
    assert str(raised.value) == message
    assert list((tmp_path / "out").iterdir()) == []


def test_a_symlink_member_is_refused(tmp_path):
    data = _zip([(_symlink("beir/link", "/etc/passwd"), b"/etc/passwd")])
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, data)
    assert str(raised.value) == "my data.zip: member 'beir/link' is a symbolic link; nothing was imported"


def test_too_many_files_and_a_zip_bomb_are_refused(tmp_path):
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, _zip([(f"f{i}.txt", b"x") for i in range(4)]), max_files=3)
    assert str(raised.value) == "my data.zip: holds more than 3 files; nothing was imported"
    bomb = _zip([("zeros.txt", b"\0" * 5_000_000)])
    assert len(bomb) < 10_000  # deflate squeezes 5 MB of zeros to a few KB
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, bomb, max_bytes=1_000_000)
    assert str(raised.value) == "my data.zip: unpacks to more than 1,000,000 bytes; nothing was imported"


def test_a_zip_whose_headers_understate_sizes_is_refused_as_damaged(tmp_path):
    data = bytearray(_zip([("a.txt", b"a" * 3_000)]))
    central = data.index(b"PK\x01\x02")
    data[central + 24 : central + 28] = (10).to_bytes(4, "little")  # declared: 10 bytes, true: 3,000
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, bytes(data))
    assert str(raised.value) == "my data.zip: is damaged (Bad CRC-32 for file 'a.txt'); nothing was imported"


def test_not_a_zip(tmp_path):
    with pytest.raises(UploadError) as raised:
        _extract(tmp_path, b"plain text, not a zip")
    assert str(raised.value) == "my data.zip: is not a zip file; nothing was imported"


def test_prepare_uses_the_single_folder_of_a_zip_and_names_the_upload(tmp_path):
    data = _zip([("scifact/corpus.jsonl", b"{}\n"), ("scifact/qrels/test.tsv", b"q\td\t1\n"), ("__MACOSX/._x", b"")])
    folder = stage_upload("scifact.zip", data, root=tmp_path)
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    path, names = prepare(folder, "scifact.zip")
    assert path == folder / "x" / "scifact" and sorted(p.name for p in path.iterdir()) == ["corpus.jsonl", "qrels"]
    assert public_text(f"{path}/corpus.jsonl:2: bad", names) == "scifact.zip/scifact/corpus.jsonl:2: bad"
    discard(folder)
    assert not folder.exists()


def test_a_staged_file_keeps_its_base_name_and_discard_removes_only_staging_folders(tmp_path):
    folder = stage_upload("../../bm25.trec", b"q1 Q0 d1 1 1.0 t\n", root=tmp_path)
    path, names = prepare(folder, "../../bm25.trec")
    assert path == folder / "in" / "bm25.trec" and names == {str(path): "../../bm25.trec"}
    other = tmp_path / "keep"
    other.mkdir()
    discard(other)
    assert other.exists()


def test_streamlit_accepts_uploads_as_large_as_the_page_allows():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] >= UPLOAD_MAX_MB == 200
