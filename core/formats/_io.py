"""Strict, streaming access to text files: plain or gzip, path or file object.

Every reader in ``core.formats`` goes through :func:`iter_lines` or
:func:`read_json_document` so that encoding problems, truncation and empty
files are reported the same way everywhere: as a :class:`FormatError` naming
``file:line``.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import io
import json
import os
import unicodedata
import zlib
from collections.abc import Iterator
from typing import IO, Any, cast

from core.errors import FormatError

Source = str | os.PathLike[str] | IO[bytes] | IO[str]


def source_name(source: Source) -> str:
    """The name to show for ``source`` in error messages."""
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def path_problem(path: str | os.PathLike[str], missing: str = "file not found") -> str | None:
    """Why ``path`` cannot be opened, or ``None`` when it exists.

    A symlink loop and a symlink to nothing are told apart from a missing
    file: ``os.path.exists`` is ``False`` for all three, and "file not found"
    on a file the user can see in a listing sends them looking in the wrong place.

    Parameters
    ----------
    path : str or os.PathLike
        The path as the user named it.
    missing : str
        The message for a path that does not exist at all.
    """
    name = os.fspath(path)
    try:
        os.stat(name)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop: following the link leads back to itself, so there is no file to read"
        if os.path.islink(name):
            try:
                target = os.readlink(name)
            except OSError:
                target = "?"
            return f"broken symlink: it points to {target!r}, which does not exist"
        if exc.errno == errno.ENOENT:
            return missing
        return f"cannot open: {exc.strerror or exc}"
    return None


def require_path(path: str | os.PathLike[str], missing: str = "file not found") -> str:
    """Raise a :class:`FormatError` naming ``path`` when :func:`path_problem` finds one; return its name."""
    name = os.fspath(path)
    problem = path_problem(name, missing)
    if problem is not None:
        raise FormatError(name, None, problem)
    return name


def is_existing_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a file, for a folder reader looking for an optional file.

    A symlink that loops or points nowhere is not silently "absent": it
    raises the :class:`FormatError` of :func:`path_problem`.
    """
    if os.path.isfile(path):
        return True
    if os.path.islink(path):
        require_path(path)
    return False


def require_file(source: Source) -> str:
    """Fail early, when a reader is called, for a path that is missing or is a folder; return its name.

    File objects pass unchecked.
    """
    name = source_name(source)
    if isinstance(source, (str, os.PathLike)):
        require_path(name)
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
        path = require_file(source)
        try:
            raw = open(path, "rb")
        except OSError as exc:
            raise FormatError(path, None, f"cannot open: {exc.strerror or exc}") from None
        with raw:
            magic = raw.read(2)
            raw.seek(0)
            if magic == b"\x1f\x8b":
                with gzip.open(raw, "rb") as unzipped:
                    # a GzipFile has every IO[bytes] method, but typeshed does not declare it one
                    yield cast(IO[bytes], unzipped)
            else:
                yield raw
        return
    if isinstance(source, io.TextIOBase) or (hasattr(source, "read") and "b" not in getattr(source, "mode", "b")):
        yield io.BytesIO(source.read().encode("utf-8"))  # type: ignore[union-attr]
        return
    yield source  # type: ignore[misc]


def iter_lines(source: Source, *, allow_empty: bool = False) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` for each line, decoded strictly as UTF-8.

    Line numbers start at 1.  Lines end at ``\\n``; the terminator is removed
    together with one ``\\r`` before it, and a ``\\r`` ending the last line
    without a ``\\n`` is removed the same way (a file cut after the ``\\r`` of
    its final ``\\r\\n``).  A ``\\r`` anywhere else is content.  A UTF-8
    byte-order mark at the very start of the file is dropped.

    Raises
    ------
    FormatError
        On bytes that are not UTF-8, a byte-order mark at the start of any
        later line (files concatenated with ``cat``: the mark would become
        part of an id), a corrupt or truncated gzip stream, or (unless
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
                if text.startswith("\ufeff"):
                    if lineno > 1:
                        raise FormatError(
                            name,
                            lineno,
                            "byte-order mark (U+FEFF) at the start of the line: only the first line of a file "
                            "may start with one (were two files concatenated?)",
                        )
                    text = text[1:]
                if text.endswith("\n"):
                    text = text[:-1]
                if text.endswith("\r"):
                    text = text[:-1]
                yield lineno, text
        except (OSError, EOFError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
            raise FormatError(name, lineno + 1, f"cannot read compressed data ({exc})") from None
    if lineno == 0 and not allow_empty:
        raise FormatError(name, 1, "file is empty")


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice (raised by :func:`unique_keys`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook`` for :func:`json.loads` that refuses a repeated key.

    Plain :func:`json.loads` keeps the last value silently, so
    ``{"_id": "d1", "_id": "d9"}`` would import as ``d9``.
    """
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKeyError(key)
        result[key] = value
    return result


def _no_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON (JSON has no NaN or Infinity)")


class KeyCursor:
    """Walks a JSON text forward to the line of each object key, in document order (linear time)."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        self.text = text
        self.pos = 0
        self.line = first_line
        self.found = False

    def line_of(self, key: str) -> int:
        """Line of the next ``"key":`` after the cursor (best effort: the current line if not found)."""
        text = self.text
        for pattern in (json.dumps(key, ensure_ascii=False), json.dumps(key)):
            start = self.pos
            while True:
                hit = text.find(pattern, start)
                if hit < 0:
                    break
                end = hit + len(pattern)
                while end < len(text) and text[end] in " \t\r\n":
                    end += 1
                if end < len(text) and text[end] == ":":
                    self.line += text.count("\n", self.pos, hit)
                    self.pos = hit
                    self.found = True
                    return self.line
                start = hit + 1
        self.found = False
        return self.line


def locate_key(text: str, key: str, occurrence: int = 1, first_line: int = 1) -> int:
    """Best-effort line of the ``occurrence``-th ``"key":`` in a JSON text (the last one found)."""
    cursor = KeyCursor(text, first_line)
    for _ in range(occurrence):
        cursor.line_of(key)
        if not cursor.found:
            break
        cursor.pos += 1  # look past this hit next time
    return cursor.line


def load_json(text: str, path: str, line: int = 1) -> Any:
    """Parse JSON ``text`` that starts at ``line`` of ``path``; every problem is a ``file:line`` error.

    This is the one JSON parser of the readers.  Refused, where plain
    :func:`json.loads` would accept or crash: a key repeated in one object
    (located at its second occurrence), ``NaN``/``Infinity``, nesting too
    deep for the parser (``RecursionError``) and integers too long to convert.

    Raises
    ------
    FormatError
        Naming ``path`` and the line of the problem.
    """
    try:
        return json.loads(text, object_pairs_hook=unique_keys, parse_constant=_no_constant)
    except DuplicateKeyError as dup:
        at = locate_key(text, dup.key, occurrence=2, first_line=line)
        raise FormatError(path, at, f"key {dup.key!r} appears twice in the same JSON object") from None
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno + line - 1, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise FormatError(path, line, "invalid JSON: nested too deeply (arrays or objects inside each other)") from None
    except ValueError as exc:  # NaN, Infinity, an integer of more than 4300 digits
        raise FormatError(path, line, f"invalid JSON: {exc}") from None


def iter_jsonl(source: Source, *, allow_empty: bool = False) -> Iterator[tuple[int, Any]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSON-lines file.

    Blank lines are allowed (many JSONL writers end with one); anything else
    that is not valid JSON (see :func:`load_json`) is a :class:`FormatError`
    at its line.
    """
    name = source_name(source)
    seen = False
    for lineno, text in iter_lines(source, allow_empty=allow_empty):
        if not text.strip():
            continue
        obj = load_json(text, name, lineno)
        seen = True
        yield lineno, obj
    if not seen and not allow_empty:
        raise FormatError(name, 1, "no JSON records (file is empty or blank)")


def read_json_document(source: Source) -> Any:
    """Parse a whole-file JSON document with :func:`load_json`, reporting errors at their line."""
    name = source_name(source)
    chunks = [text for _, text in iter_lines(source)]
    document = "\n".join(chunks)
    if not document.strip():
        raise FormatError(name, 1, "file is empty (blank)")
    return load_json(document, name)


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
        raise FormatError(path, line, f"field {name!r} must be a string, got {shown_json(value)}")
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise FormatError(path, line, f"field {name!r} must be a string, got {type(value).__name__}")
    if not allow_empty and is_blank(value):
        raise FormatError(path, line, f"field {name!r} is empty")
    return value


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace and invisible format characters.

    Format characters (Unicode category Cf: zero-width space U+200B, zero-width
    joiners, the byte-order mark U+FEFF, soft hyphen...) render as nothing, so a
    query made of them is as empty as one made of spaces.
    """
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def parse_int(token: str, what: str, path: str, line: int) -> int:
    """Parse an integer column strictly (``"2"``, ``"-1"``; not ``"2.0"`` or ``"x"``)."""
    digits = token.strip().lstrip("+-").lstrip("0")
    if len(digits) > 30 and digits.isdigit():  # int() refuses more than 4300 digits; no grade needs 30
        raise FormatError(path, line, f"{what} {shorten(token, 30)} is too large")
    try:
        return int(token)
    except ValueError:
        raise FormatError(path, line, f"{what} must be an integer, got {shorten(token)}") from None


def parse_float(token: str, what: str, path: str, line: int) -> float:
    """Parse a finite float column strictly."""
    try:
        value = float(token)
    except ValueError:
        raise FormatError(path, line, f"{what} must be a number, got {shorten(token)}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise FormatError(path, line, f"{what} must be a finite number, got {shorten(token)}")
    return value


def shown_json(value: Any, limit: int = 80) -> str:
    """``value`` as JSON for an error message, at most about ``limit`` characters.

    A wrong-typed field can be a megabyte object or nested a thousand deep;
    the message shows its start and its size, never the whole value.
    """
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return f"a {type(value).__name__}"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text):,} characters)"


def shorten(value: str, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters so that a 50 MB column does not become a 50 MB message."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}... ({len(value):,} characters)"
