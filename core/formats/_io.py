"""Strict, streaming access to text files: plain or gzip, path or file object.

Every reader in ``core.formats`` goes through :func:`iter_lines` or
:func:`read_json_document` so that encoding problems, truncation and empty
files are reported the same way everywhere: as a :class:`FormatError` naming
``file:line``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
from collections.abc import Iterator
from typing import IO, Any

from core.errors import FormatError

Source = str | os.PathLike[str] | IO[bytes] | IO[str]


def source_name(source: Source) -> str:
    """The name to show for ``source`` in error messages."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def require_file(source: Source) -> str:
    """Fail early, when a reader is called, for a path that is missing or is a folder; return its name.

    File objects pass unchecked.
    """
    name = source_name(source)
    if isinstance(source, (str, os.PathLike)):
        if not os.path.exists(name):
            raise FormatError(name, None, "file not found")
        if os.path.isdir(name):
            raise FormatError(name, None, "is a folder, expected a file")
    return name


def rewind(source: Source) -> None:
    """Seek a file-object source back to its start before another pass (paths are simply reopened)."""
    if isinstance(source, (str, os.PathLike)):
        return
    seekable = getattr(source, "seekable", None)
    if seekable is None or not seekable():
        raise FormatError(source_name(source), None, "cannot read a non-seekable stream twice; pass a path")
    source.seek(0)


@contextlib.contextmanager
def open_binary(source: Source) -> Iterator[IO[bytes]]:
    """Open ``source`` for reading bytes, transparently un-gzipping ``.gz`` files.

    A file object is used as is (text file objects are re-encoded as UTF-8)
    and is not closed.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FormatError(path, None, "file not found")
        if os.path.isdir(path):
            raise FormatError(path, None, "is a folder, expected a file")
        with open(path, "rb") as raw:
            magic = raw.read(2)
            raw.seek(0)
            if magic == b"\x1f\x8b":
                with gzip.open(raw, "rb") as unzipped:
                    yield unzipped
            else:
                yield raw
        return
    if isinstance(source, io.TextIOBase) or (hasattr(source, "read") and "b" not in getattr(source, "mode", "b")):
        yield io.BytesIO(source.read().encode("utf-8"))  # type: ignore[union-attr]
        return
    yield source  # type: ignore[misc]


def iter_lines(source: Source, *, allow_empty: bool = False) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, decoded strictly as UTF-8.

    Line numbers start at 1; the line terminator (``\\n`` or ``\\r\\n``) is
    removed and a UTF-8 byte-order mark on the first line is dropped.

    Raises
    ------
    FormatError
        On bytes that are not UTF-8, a corrupt gzip stream, or (unless
        ``allow_empty``) a file with no content at all.
    """
    name = source_name(source)
    lineno = 0
    with open_binary(source) as fh:
        try:
            for lineno, raw in enumerate(fh, start=1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise FormatError(name, lineno, f"invalid UTF-8 (byte {exc.start} of the line)") from None
                if lineno == 1 and text.startswith("\ufeff"):
                    text = text[1:]
                if text.endswith("\n"):
                    text = text[:-2] if text.endswith("\r\n") else text[:-1]
                yield lineno, text
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise FormatError(name, lineno + 1, f"cannot read compressed data ({exc})") from None
    if lineno == 0 and not allow_empty:
        raise FormatError(name, 1, "file is empty")


def iter_jsonl(source: Source, *, allow_empty: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON-lines file.

    Blank lines are allowed (many JSONL writers end with one); anything else
    that is not valid JSON is a :class:`FormatError` at its line.
    """
    name = source_name(source)
    seen = False
    for lineno, text in iter_lines(source, allow_empty=allow_empty):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(name, lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
        seen = True
        yield lineno, obj
    if not seen and not allow_empty:
        raise FormatError(name, 1, "no JSON records (file is empty or blank)")


def read_json_document(source: Source) -> Any:
    """Parse a whole-file JSON document, reporting errors at their line."""
    name = source_name(source)
    chunks = [text for _, text in iter_lines(source)]
    document = "\n".join(chunks)
    if not document.strip():
        raise FormatError(name, 1, "file is empty (blank)")
    try:
        return json.loads(document)
    except json.JSONDecodeError as exc:
        raise FormatError(name, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None


def open_text_for_write(path: str | os.PathLike[str]) -> IO[str]:
    """Open ``path`` for writing UTF-8 text with ``\\n`` newlines; gzip when it ends in ``.gz``."""
    path = os.fspath(path)
    parent = os.path.dirname(path)
    if parent:
        os.makedirs(parent, exist_ok=True)
    if path.endswith(".gz"):
        return io.TextIOWrapper(gzip.open(path, "wb"), encoding="utf-8", newline="\n")
    return open(path, "w", encoding="utf-8", newline="\n")


def require_str(value: Any, name: str, path: str, line: int, *, allow_empty: bool = False) -> str:
    """Check that a JSON field is a string (ids given as JSON numbers are accepted and stringified)."""
    if isinstance(value, bool) or value is None:
        raise FormatError(path, line, f"field {name!r} must be a string, got {json.dumps(value)}")
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise FormatError(path, line, f"field {name!r} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise FormatError(path, line, f"field {name!r} is empty")
    return value


def parse_int(token: str, what: str, path: str, line: int) -> int:
    """Parse an integer column strictly (``"2"``, ``"-1"``; not ``"2.0"`` or ``"x"``)."""
    try:
        return int(token)
    except ValueError:
        raise FormatError(path, line, f"{what} must be an integer, got {token!r}") from None


def parse_float(token: str, what: str, path: str, line: int) -> float:
    """Parse a finite float column strictly."""
    try:
        value = float(token)
    except ValueError:
        raise FormatError(path, line, f"{what} must be a number, got {token!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise FormatError(path, line, f"{what} must be a finite number, got {token!r}")
    return value
