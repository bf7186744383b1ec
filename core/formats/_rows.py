"""Helpers shared by the tabular readers and writers (TREC, BEIR TSV, MS MARCO TSV).

Private to ``core.formats``: the public readers build on these so that
column splitting, the blank-line policy, id checks and number parsing behave
(and fail) the same way in every format.

Blank-line policy
-----------------
A blank (empty or whitespace-only) line *inside* a tabular file is a
:class:`~core.errors.FormatError` at that line: it usually means a file was
concatenated or truncated by hand.  Blank lines at the very *end* of a file
are tolerated, because many tools write a trailing empty line.  A file made
only of blank lines is an error.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeGuard

from core.errors import FormatError
from core.formats._io import Source, is_blank, iter_lines, open_text_for_write, shorten, source_name
from core.limits import (
    GRADE_BOUND,
    GRADE_RANGE,
    ID_MAX_CHARS,
    PASSAGE_TEXT_MAX_CHARS,
    POSITION_MAX,
    QUERY_TEXT_MAX_CHARS,
    grade_in_range,
    large_grades_allowed,
)
from core.validators import is_integer, is_real

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
# Unicode category Cc is exactly U+0000..U+001F and U+007F..U+009F; plus the byte-order mark.
_ID_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\ufeff]")
_NON_FINITE = {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}


def iter_rows(source: Source, *, sep: str | None, what: str = "records") -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, columns)`` for every non-blank line of ``source``.

    Parameters
    ----------
    source : path or file object
        Plain or gzip text, decoded strictly as UTF-8.
    sep : str or None
        Column separator: ``"\\t"`` for TSV, ``None`` for runs of any
        whitespace (TREC files).
    what : str
        What the file holds, for the "only blank lines" message.

    Raises
    ------
    FormatError
        On a blank line followed by more content, on a file with no content
        or only blank lines, and on anything :func:`iter_lines` rejects.
    """
    name = source_name(source)
    pending_blank: int | None = None
    seen = False
    for lineno, text in iter_lines(source):
        if not text.strip():
            if pending_blank is None:
                pending_blank = lineno
            continue
        if pending_blank is not None:
            raise FormatError(
                name,
                pending_blank,
                "blank line inside the file (only trailing blank lines at the end are allowed)",
            )
        seen = True
        yield lineno, (text.split() if sep is None else text.split(sep))
    if not seen:
        raise FormatError(name, 1, f"no {what}: the file has only blank lines")


def check_id(value: str, what: str, path: str, line: int | None) -> str:
    """Check an id read from a file; the one id rule of every reader.

    An id is at most :data:`core.limits.ID_MAX_CHARS` characters, not empty
    (nor only whitespace and invisible format characters, see
    :func:`~core.formats._io.is_blank`), holds no control character
    (Unicode category Cc: NUL, tab, line breaks, escape...; pytrec_eval aborts
    the process on two ids that differ after a NUL) and no byte-order mark,
    and has no leading or trailing whitespace.

    Raises
    ------
    FormatError
        At ``path:line``, naming ``what`` and the problem.
    """
    # Fast path for the usual id: isprintable() is False for Cc, Cf (the BOM) and every whitespace but " ".
    if value.isprintable() and 0 < len(value) <= ID_MAX_CHARS and value[0] != " " and value[-1] != " ":
        return value
    if len(value) > ID_MAX_CHARS:
        raise FormatError(
            path, line, f"{what} is {len(value):,} characters long, the limit is {ID_MAX_CHARS} ({shorten(value, 40)})"
        )
    if is_blank(value):
        raise FormatError(path, line, f"{what} is empty" if not value else f"{what} {value!r} is blank")
    bad = _ID_FORBIDDEN.search(value)
    if bad is not None:
        ch, index = bad.group(), bad.start()
        if ch == "\ufeff":
            raise FormatError(
                path, line, f"{what} {value!r} contains a byte-order mark (U+FEFF) at character {index + 1}"
            )
        raise FormatError(
            path, line, f"{what} {value!r} contains the control character U+{ord(ch):04X} at character {index + 1}"
        )
    if value != value.strip():
        raise FormatError(path, line, f"{what} {value!r} has leading or trailing whitespace")
    return value


def check_text(
    value: str,
    what: str,
    path: str,
    line: int | None,
    *,
    limit: int = PASSAGE_TEXT_MAX_CHARS,
    allow_empty: bool = True,
) -> str:
    """Check a text field (passage text or title, query text); the one text rule of every reader.

    Parameters
    ----------
    value : str
        The text as read.
    what : str
        How to name it in a message (``"passage text"``, ``"query 'q1' text"``).
    limit : int
        Most characters allowed: :data:`core.limits.PASSAGE_TEXT_MAX_CHARS`
        (default) or :data:`core.limits.QUERY_TEXT_MAX_CHARS`.
    allow_empty : bool
        Accept a text that is empty or :func:`~core.formats._io.is_blank`
        (passages may be; queries may not).

    Raises
    ------
    FormatError
        At ``path:line`` for a text over ``limit``, holding a NUL character
        (PostgreSQL text cannot store it), or blank when not allowed.
    """
    if len(value) > limit:
        raise FormatError(path, line, f"{what} is {len(value):,} characters long, the limit is {limit:,}")
    if "\x00" in value:
        raise FormatError(
            path, line, f"{what} contains a NUL character (U+0000) at character {value.index(chr(0)) + 1}"
        )
    if not allow_empty and is_blank(value):
        shown = "" if not value.strip() else f" (only invisible characters: {value!r})"
        raise FormatError(path, line, f"{what} is empty{shown}")
    return value


def check_query_text(value: str, what: str, path: str, line: int | None) -> str:
    """:func:`check_text` for a query: not blank, at most :data:`core.limits.QUERY_TEXT_MAX_CHARS`."""
    return check_text(value, what, path, line, limit=QUERY_TEXT_MAX_CHARS, allow_empty=False)


def parse_grade(token: str, what: str, path: str, line: int, *, bounded: bool = True) -> int:
    """Parse an integer column: ASCII digits with an optional sign (``"2"``, ``"-1"``).

    Stricter than :func:`int`, which also accepts ``"1_0"`` and non-ASCII digits.
    With ``bounded`` (the default) the value must be a grade in
    :data:`core.limits.GRADE_MIN`..:data:`core.limits.GRADE_MAX`; the rank
    column of a run, which is read but never used, passes ``bounded=False``.
    """
    if not _INT_RE.match(token):
        raise FormatError(path, line, f"{what} must be an integer, got {shorten(token)}")
    if len(token.lstrip("+-").lstrip("0")) > 30:
        # int() refuses more than 4300 digits with a ValueError; no grade or rank needs 30
        if bounded:
            raise FormatError(path, line, f"grade {shorten(token, 30)} is outside {GRADE_RANGE} ({what})")
        raise FormatError(path, line, f"{what} {shorten(token, 30)} is too large")
    value = int(token)
    if bounded:
        check_grade_range(value, what, path, line)
    return value


def check_grade_range(value: int, what: str, path: str, line: int) -> int:
    """Refuse a grade trec_eval cannot hold (a C ``int``), or one beyond :data:`core.limits.GRADE_BOUND`
    unless large grades are allowed (:func:`core.limits.allow_large_grades`), with a ``file:line`` error."""
    if not grade_in_range(value):
        raise FormatError(path, line, f"grade {value} is outside {GRADE_RANGE} ({what})")
    if abs(value) > GRADE_BOUND and not large_grades_allowed():
        bound = f"-{GRADE_BOUND}..{GRADE_BOUND}"
        hint = "larger grades are read only when allowed (--allow-large-grades)"
        raise FormatError(path, line, f"grade {value} is outside {bound} ({what}); {hint}")
    return value


def check_position_range(value: int, what: str, path: str, line: int) -> int:
    """Refuse a position the store cannot hold (a signed 64-bit integer)."""
    if value > POSITION_MAX:
        raise FormatError(path, line, f"position {value} is outside 0..{POSITION_MAX} ({what})")
    return value


def parse_score(token: str, what: str, path: str, line: int) -> float:
    """Parse a finite decimal number (``"4.2"``, ``"-1e-05"``, ``"1000"``)."""
    if token.lower() in _NON_FINITE:
        raise FormatError(path, line, f"{what} must be a finite number, got {token!r}")
    if not _FLOAT_RE.match(token):
        raise FormatError(path, line, f"{what} must be a number, got {shorten(token)}")
    value = float(token)
    if not math.isfinite(value):  # e.g. "1e999" overflows to inf
        raise FormatError(path, line, f"{what} must be a finite number, got {shorten(token)}")
    return value


def find_line(source: Source, predicate: Callable[[str], bool], *, before: int) -> int | None:
    """Re-read ``source`` and return the first line number (< ``before``) whose text matches.

    Used to name the earlier line of a duplicate without keeping a line number
    per record in memory.  Returns ``None`` when ``source`` is a file object
    (which cannot be read twice) or when nothing matches.
    """
    if not isinstance(source, (str, os.PathLike)):
        return None
    for lineno, text in iter_lines(source, allow_empty=True):
        if lineno >= before:
            return None
        try:
            if predicate(text):
                return lineno
        except Exception:  # a line that does not parse cannot be the earlier record
            continue
    return None


# --------------------------------------------------------------------------- writing


def check_token(value: Any, what: str) -> str:
    """Check that ``value`` can be written as one column of a whitespace-separated file.

    Raises
    ------
    ValueError
        When ``value`` is not a string, is empty or contains whitespace.
    """
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a str, got {type(value).__name__}: {value!r}")
    if not value:
        raise ValueError(f"{what} is empty")
    if any(ch.isspace() for ch in value):
        raise ValueError(f"{what} {value!r} contains whitespace and cannot be written to a whitespace-separated file")
    return value


def check_tsv_field(value: Any, what: str) -> str:
    """Check that ``value`` can be written as one TSV column (no tab or line break)."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a str, got {type(value).__name__}: {value!r}")
    if not value:
        raise ValueError(f"{what} is empty")
    if any(ch in value for ch in "\t\n\r"):
        raise ValueError(f"{what} {value!r} contains a tab or line break and cannot be written to a TSV file")
    return value


def check_grade(value: Any, what: str) -> int:
    """Check an integer grade for writing (``bool`` is refused)."""
    if not is_integer(value):
        raise ValueError(f"{what} must be an int, got {type(value).__name__}: {value!r}")
    return int(value)


def check_score(value: Any, what: str) -> float:
    """Check a finite real score for writing."""
    if not is_real(value):
        raise ValueError(f"{what} must be a number, got {type(value).__name__}: {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be finite, got {number!r}")
    return number


def _is_binary(fileobj: object) -> TypeGuard[IO[bytes]]:
    if isinstance(fileobj, io.TextIOBase):
        return False
    if isinstance(fileobj, (io.BufferedIOBase, io.RawIOBase)):
        return True
    return "b" in getattr(fileobj, "mode", "")


@contextlib.contextmanager
def open_for_write(target: str | os.PathLike[str] | IO[str] | IO[bytes]) -> Iterator[IO[str]]:
    """Open a path (gzip when it ends in ``.gz``) or wrap a file object for writing UTF-8 text.

    File objects are not closed; binary ones get UTF-8 text written into them.
    """
    if isinstance(target, (str, os.PathLike)):
        with open_text_for_write(target) as fh:
            yield fh
        return
    if _is_binary(target):
        wrapper = io.TextIOWrapper(target, encoding="utf-8", newline="\n", write_through=True)
        try:
            yield wrapper
            wrapper.flush()
        finally:
            wrapper.detach()
        return
    yield target  # type: ignore[misc]


class SeenPairs:
    """Remembers the line of each (query, document) pair of a file and refuses a repeat, naming both lines.

    ``message`` is formatted with ``qid``, ``docid`` and ``earlier`` (the first line).
    """

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        self.message = message
        self._lines: dict[str, dict[str, int]] = {}

    def add(self, qid: str, docid: str, lineno: int) -> None:
        docs = self._lines.setdefault(qid, {})
        earlier = docs.get(docid)
        if earlier is not None:
            raise FormatError(self.name, lineno, self.message.format(qid=qid, docid=docid, earlier=earlier))
        docs[docid] = lineno
