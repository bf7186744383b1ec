"""Files uploaded through the browser: staged in a private temp folder, zips unpacked safely, removed afterwards.

The Import page writes an upload with :func:`stage_upload` and queues an
import job naming the staging folder; the job (:func:`pooljudge.jobs.run_import_job`)
calls :func:`prepare` to unpack a zip, runs the same strict readers as a path
on the server, puts the uploaded file's name in place of the temp path in
every message (:func:`public_text`), and removes the folder with
:func:`discard`, whatever the outcome.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

UPLOAD_MAX_MB = 200
"""The largest upload the Import page accepts, in MB (Streamlit's unit).  ``server.maxUploadSize`` in
``.streamlit/config.toml`` must be at least this: Streamlit refuses anything above it first."""

ZIP_MAX_BYTES = 4 * 1024**3
"""A zip may unpack to at most this many bytes (4 GiB) in all: a zip bomb is refused, not unpacked."""

ZIP_MAX_FILES = 10_000
"""A zip may hold at most this many members (folders included); BEIR folders hold a handful."""

STAGING_PREFIX = "pooljudge-upload-"
_CHUNK = 1 << 20


class UploadError(ValueError):
    """An upload refused before anything was read: the message names the uploaded file."""


def _safe_basename(name: str) -> str:
    # the browser sends a base name, but nothing guarantees it: keep the last component only
    base = re.split(r"[\\/]", name)[-1].strip().replace("\x00", "")
    return base if base not in ("", ".", "..") else "upload"


def stage_upload(name: str, data: bytes, *, root: str | os.PathLike[str] | None = None) -> Path:
    """Write an upload into a new private folder (mode 0700); returns the folder.

    The file keeps its base name (a run's default name is the file name without
    extension), under ``<folder>/in/``.
    """
    folder = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=root))
    (folder / "in").mkdir()
    target = folder / "in" / _safe_basename(name)
    with open(target, "xb") as out:
        out.write(data)
    return folder


def _member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a zip member may not be unpacked, or None."""
    name = info.filename
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "is an absolute path"
    if ".." in re.split(r"[\\/]", name):
        return "leaves the folder (..)"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link"
    if "\x00" in name:
        return "has a NUL character in its name"
    return None


def safe_extract(
    archive: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    shown_as: str,
    max_bytes: int = ZIP_MAX_BYTES,
    max_files: int = ZIP_MAX_FILES,
) -> None:
    """Unpack a zip into ``dest``, member by member, refusing anything unsafe before writing anything.

    Parameters
    ----------
    archive
        The zip file.
    dest
        An empty folder to unpack into.
    shown_as
        The name the user knows the zip by (the uploaded file's), used in every message.
    max_bytes, max_files
        Limits on the total unpacked size and on the number of members.

    Raises
    ------
    UploadError
        ``"{shown_as}: is not a zip file"``, ``"{shown_as}: member '{m}' is an absolute path"``,
        ``... leaves the folder (..)``, ``... is a symbolic link``,
        ``"{shown_as}: holds more than {max_files:,} files"``, ``"{shown_as}: unpacks to more than
        {max_bytes:,} bytes"``, ``"{shown_as}: member '{m}' appears twice (as ...)"``, ``"{shown_as}: member
        '{m}' is a file and also a folder (of '{n}')"``; each ends ``"; nothing was imported"``.  ``dest`` may then hold part of
        the zip: the caller discards the whole staging folder.
    """

    try:
        zf = zipfile.ZipFile(archive)
    except zipfile.BadZipFile:
        raise _refusal(shown_as, "is not a zip file") from None
    with zf:
        members = zf.infolist()
        _check_members(members, shown_as=shown_as, max_bytes=max_bytes, max_files=max_files)
        root = Path(dest).resolve()
        written = 0
        for info in members:
            if info.filename.startswith("__MACOSX/"):  # macOS resource forks, never data
                continue
            target = (root / PurePosixPath(info.filename.replace("\\", "/"))).resolve()
            if root not in target.parents and target != root:  # belt and braces after the checks above
                raise _refusal(shown_as, f"member {info.filename!r} leaves the folder (..)")
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            written = _copy_member(zf, info, target, written=written, max_bytes=max_bytes, shown_as=shown_as)


def _refusal(shown_as: str, problem: str) -> UploadError:
    return UploadError(f"{shown_as}: {problem}; nothing was imported")


def _check_members(members: list[zipfile.ZipInfo], *, shown_as: str, max_bytes: int, max_files: int) -> None:
    """Refuse the zip from its directory alone, before the first byte is written: count, names, declared size."""
    if len(members) > max_files:
        raise _refusal(shown_as, f"holds more than {max_files:,} files")
    for info in members:
        problem = _member_problem(info)
        if problem is not None:
            raise _refusal(shown_as, f"member {info.filename!r} {problem}")
    if sum(info.file_size for info in members) > max_bytes:
        raise _refusal(shown_as, f"unpacks to more than {max_bytes:,} bytes")
    _check_name_clashes(members, shown_as=shown_as)


def _unpacked_parts(name: str) -> tuple[str, ...]:
    """The path a member is unpacked to, as :func:`safe_extract` writes it (``\\`` as ``/``, ``.`` and ``//`` dropped)."""
    return PurePosixPath(name.replace("\\", "/")).parts


def _check_name_clashes(members: list[zipfile.ZipInfo], *, shown_as: str) -> None:
    """Refuse two files unpacked to one path, and a path that is a file and also a folder (``a`` and ``a/b``).

    Checked on the normalised paths, before anything is written: else the second write fails half-way with
    an error that shows the staging folder.  A folder named twice (or implied by its files) is fine.
    """
    files: dict[tuple[str, ...], str] = {}
    folders: dict[tuple[str, ...], str] = {}  # each folder -> the first member that makes it
    for info in members:
        if info.filename.startswith("__MACOSX/"):  # skipped by the extractor
            continue
        parts = _unpacked_parts(info.filename)
        if not info.is_dir():
            if parts in files:
                first = files[parts]
                clash = f"member {'/'.join(parts)!r} appears twice (as {first!r} and {info.filename!r})"
                raise _refusal(shown_as, clash)
            files[parts] = info.filename
        for depth in range(1, len(parts) if not info.is_dir() else len(parts) + 1):
            folders.setdefault(parts[:depth], info.filename)
    for parts, name in files.items():
        if parts in folders:
            raise _refusal(shown_as, f"member {name!r} is a file and also a folder (of {folders[parts]!r})")


def _copy_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, *, written: int, max_bytes: int, shown_as: str
) -> int:
    """Unpack one member to ``target`` (a new file); return the bytes written so far, this member's included.

    Headers can lie about sizes: what is actually written is counted (zipfile also stops at the declared
    size and then fails the CRC check).
    """
    try:
        with zf.open(info) as src, open(target, "xb") as out:
            while chunk := src.read(_CHUNK):
                written += len(chunk)
                if written > max_bytes:
                    raise _refusal(shown_as, f"unpacks to more than {max_bytes:,} bytes")
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise _refusal(shown_as, f"is damaged ({exc})") from None
    except NotImplementedError as exc:  # an unsupported compression method
        raise _refusal(shown_as, f"cannot be unpacked ({exc})") from None
    except RuntimeError as exc:  # an encrypted member
        raise _refusal(shown_as, f"cannot be unpacked ({exc})") from None
    return written


def prepare(folder: str | os.PathLike[str], shown_as: str) -> tuple[Path, dict[str, str]]:
    """The path to import from a staging folder, and ``{temp path: shown name}`` for messages.

    A ``.zip`` upload is unpacked (:func:`safe_extract`) into ``<folder>/x``; when it holds a single
    folder (a BEIR folder zipped as itself), that folder is the input, else the unpacked root.
    """
    folder = Path(folder)
    [upload] = list((folder / "in").iterdir())
    if not upload.name.lower().endswith(".zip"):
        return upload, {str(upload): shown_as}
    unpacked = folder / "x"
    unpacked.mkdir()
    safe_extract(upload, unpacked, shown_as=shown_as)
    entries = [e for e in unpacked.iterdir() if e.name != "__MACOSX"]
    path = entries[0] if len(entries) == 1 else unpacked
    return path, {str(unpacked): shown_as}


def public_text(text: str, names: dict[str, str]) -> str:
    """``text`` with every staging path replaced by the name the user uploaded."""
    for temp, shown in sorted(names.items(), key=lambda kv: -len(kv[0])):
        text = text.replace(temp, shown)
    return text


def is_staging_folder(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` is one :func:`stage_upload` made (a job's params never make us remove anything else)."""
    path = Path(folder)
    return path.name.startswith(STAGING_PREFIX) and path.is_dir() and not path.is_symlink()


def discard(folder: str | os.PathLike[str]) -> None:
    """Remove a staging folder and everything in it; anything else is left alone."""
    if is_staging_folder(folder):
        shutil.rmtree(folder, ignore_errors=True)
