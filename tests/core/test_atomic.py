"""core.atomic: one file helper and one folder helper, used by every cache writer."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import numpy as np
import pytest

from core import atomic
from core.atomic import atomic_folder, atomic_write, atomic_write_bytes

ROOT = Path(__file__).resolve().parents[2]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_failing_write_leaves_the_old_file_intact_and_no_temp_file(tmp_path):
    path = tmp_path / "index.json"
    path.write_bytes(b"old content")

    def half_then_fail(fh):
        fh.write(b"new cont")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        atomic_write(path, half_then_fail)
    assert path.read_bytes() == b"old content"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.json"]


def test_an_interrupted_write_leaves_nothing_either(tmp_path):
    path = tmp_path / "vectors.npy"

    def interrupted(fh):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, interrupted)
    assert list(tmp_path.iterdir()) == []


def test_a_write_is_flushed_fsynced_then_replaces_the_file(tmp_path, monkeypatch):
    path = tmp_path / "meta.json"
    path.write_bytes(b"old")
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: events.append("fsync") or real_fsync(fd))
    monkeypatch.setattr(
        atomic.os, "replace", lambda a, b: events.append(("replace", Path(a).parent, Path(b))) or real_replace(a, b)
    )
    assert atomic_write_bytes(path, b'{"new": 1}') == path
    assert path.read_bytes() == b'{"new": 1}'
    assert events[0] == "fsync"  # the data before the rename
    assert events[1] == ("replace", tmp_path, path)  # a temp file in the same directory
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~_umask()  # readable like any file, not mkstemp's 0600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["meta.json"]


def test_a_path_only_writer_may_write_to_the_temp_files_name(tmp_path):
    path = tmp_path / "index.bin"
    atomic_write(path, lambda fh: Path(fh.name).write_bytes(b"\x00\x01"))
    assert path.read_bytes() == b"\x00\x01"
    assert [p.name for p in tmp_path.iterdir()] == ["index.bin"]


def test_atomic_folder_publishes_first_writer_wins_and_cleans_up(tmp_path):
    target = tmp_path / "bm25" / "key"
    target.parent.mkdir()
    assert atomic_folder(target, lambda d: (d / "meta.json").write_text("first")) is True
    assert (target / "meta.json").read_text() == "first"
    assert stat.S_IMODE(target.stat().st_mode) == 0o777 & ~_umask()
    # a second process that built the same entry loses the race: its copy is discarded
    assert atomic_folder(target, lambda d: (d / "meta.json").write_text("second")) is False
    assert (target / "meta.json").read_text() == "first"
    assert [p.name for p in target.parent.iterdir()] == ["key"]

    def fail(d):
        (d / "part").write_text("half")
        raise RuntimeError("build failed")

    with pytest.raises(RuntimeError, match="build failed"):
        atomic_folder(tmp_path / "bm25" / "other", fail)
    assert [p.name for p in target.parent.iterdir()] == ["key"]


def test_atomic_folder_reports_a_real_failure(tmp_path):
    with pytest.raises(OSError):
        atomic_folder(tmp_path / "missing-parent" / "x", lambda d: None)


def test_cached_embeddings_keep_the_old_file_when_saving_fails(tmp_path, monkeypatch):
    from core.retrieval import encoder as enc

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path))

    class Fixed:
        fingerprint = "fixed"
        dim = 2

        def encode(self, texts, *, kind="passage", progress=None):
            return np.ones((len(texts), 2), dtype=np.float32)

    vectors = enc.encode_cached(Fixed(), ["a", "b"])
    [cached] = list((tmp_path / "embeddings").iterdir())
    before = cached.read_bytes()
    cached.write_bytes(b"corrupt")  # unreadable: the next call encodes again and overwrites

    def broken_save(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(enc.np, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        enc.encode_cached(Fixed(), ["a", "b"])
    assert cached.read_bytes() == b"corrupt"
    assert [p.name for p in (tmp_path / "embeddings").iterdir()] == [cached.name]
    monkeypatch.undo()
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path))
    assert np.array_equal(enc.encode_cached(Fixed(), ["a", "b"]), vectors) and cached.read_bytes() == before


def test_a_failing_bm25_index_save_leaves_no_staging_folder(tmp_path, monkeypatch):
    from core.retrieval.bm25 import BM25Retriever
    from core.text import analyzer_for
    from pooljudge.corpus import Corpus
    from pooljudge.retrievers import index_retriever

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path))
    corpus = Corpus(
        collection="c", language="en", doc_ids=["d1", "d2"], texts=["apple pie", "pear tart"], queries={}, answers={}
    )

    def broken_save(self, folder):
        (Path(folder) / "half.npy").write_bytes(b"x")
        raise OSError("disk full")

    monkeypatch.setattr(BM25Retriever, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        index_retriever(BM25Retriever(analyzer_for("en")), corpus)
    assert list((tmp_path / "bm25").iterdir()) == []
    monkeypatch.undo()
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path))
    index_retriever(BM25Retriever(analyzer_for("en")), corpus)
    [entry] = (tmp_path / "bm25").iterdir()
    assert (entry / "meta.json").is_file() and not entry.name.startswith(".")


def test_no_other_atomic_write_helpers_remain():
    pattern = re.compile(r"os\.replace\(|os\.rename\(|mkstemp\(|mkdtemp\(|def _atomic_write")
    out = [
        f"{p.relative_to(ROOT)}:{n}"
        for folder in ("core", "pooljudge")
        for p in sorted((ROOT / folder).rglob("*.py"))
        if "formats" not in p.parts
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    # pooljudge/uploads.py's mkdtemp is a private folder for an upload being unpacked, not an atomic write
    assert sorted({line.split(":")[0] for line in out}) == ["core/atomic.py", "pooljudge/uploads.py"]
