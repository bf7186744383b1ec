"""Reader for SMART-format test collections: Cranfield, CISI (and relatives).

Documents and queries
---------------------
A SMART file is a sequence of records.  A record starts with a line
``.I <id>``; field markers alone on their line introduce the field's lines::

    .I 1
    .T
    experimental investigation of the aerodynamics of a
    wing in a slipstream .
    .A
    brenckman,m.
    .B
    j. ae. scs. 25, 1958, 324.
    .W
    experimental investigation of the aerodynamics of a
    ...

Known markers: ``.T`` title, ``.A`` authors, ``.B`` bibliographic data,
``.W`` text; ``.X`` (CISI cross-references) and the CACM markers ``.K``,
``.N``, ``.C`` are recognised and ignored.  Any other ``.<capital letter>``
line is an error, as is a marker followed by text on its own line, text
before the first ``.I`` or between ``.I`` and the first marker.

- A passage is one record: ``id`` the ``.I`` token as written, ``text`` the
  ``.W`` lines joined with ``"\\n"`` and stripped at both ends (Cranfield's
  ``.W`` starts by repeating the title; it is kept as is), ``title`` the
  ``.T`` lines joined with single spaces.  Authors and bibliographic data are
  read and validated but not stored.  There is no document structure
  (``doc_id`` and ``position`` are ``None``).
- A record with an id and no ``.W`` field is an error, and so is a blank
  ``.W`` in a record that has other content, or in a query.  A document
  record whose fields are *all* empty is kept as a passage with empty text
  and title: Cranfield documents 471 and 995 are such placeholders (``.T``,
  ``.A``, ``.B``, ``.W`` markers with nothing under them), and query 125 has
  a judgment on 995.
- **The empty last record is tolerated**: ``cran.qry`` and
  ``cran.all.1400`` both end with a bare ``.I`` line (no id, no fields).  A
  bare ``.I`` is accepted only there, followed by nothing but blank lines;
  anywhere else it is an error.
- **Repeated fields**: a marker seen twice in one record appends the new lines
  to the field (``repeated_fields="append"``, the default).  CISI lists one
  ``.A`` per author, and three Cranfield documents need it: 240 has stray
  ``.A``/``.B`` lines inside its abstract, 576 and 578 have two ``.W``
  blocks.  ``repeated_fields="error"`` refuses them instead.
- Query ids: Cranfield's qrels number queries 1..225 **by position** in
  ``cran.qry``, not by their ``.I`` numbers (001, 002, 004, 008, ...), so
  ``query_ids="position"`` (default) numbers the queries 1, 2, 3... in file
  order; ``query_ids="field"`` keeps the ``.I`` token (CISI, whose qrels use
  the ``.I`` numbers).

Qrels
-----
Three whitespace-separated shapes, detected from the first non-blank line and
then required on every line (``qrels_format`` forces one):

``"cranfield"``: ``qid docid grade`` (3 columns)
    Cleverdon's relevance codes, 1 = most relevant:
    1 complete answer; 2 high relevance (research impracticable or much more
    work without it); 3 useful background or method; 4 minimum interest (e.g.
    historical); 5 no interest (never listed).  They are mapped with
    ``grade_map`` onto pooljudge's 0-3 scale; the default
    :data:`CRANFIELD_GRADE_MAP` is **1->3, 2->2, 3->1, 4->1, 5->0**:

    - 1 "complete answer" is pooljudge's 3 "precisely answers";
    - 2 "high degree of relevance" is 2 "partly satisfies";
    - 3 "useful background" and 4 "minimum interest" are on topic but do not
      meet the information need, pooljudge's 1 (the difference between them,
      how *little* they help, has no level of its own on a 4-level scale
      whose 0 means "no match", and a cited reference is not "no match");
    - 5 "no interest" is 0.

    With the default relevance level 2, binary measures count Cleverdon 1-2
    (740 of the 1,837 Cranfield pairs) as relevant.  The common practice of
    counting every listed pair as relevant is relevance level 1.  A grade
    absent from ``grade_map`` is an error.
``"cisi"``: ``qid docid 0 0.000000`` (4 columns, the 4th with a decimal point)
    CISI.REL lists relevant pairs only, with two zero placeholder columns
    (both must be zero).  Every pair gets ``listed_grade`` (default 2, the
    lowest grade the default binary relevance level counts).
``"trec"``: ``qid iteration docid grade`` (4 integer-looking columns)
    TREC qrels; grades are kept as given, without ``grade_map``.

A pair ``(qid, docid)`` listed twice is an error (Cranfield has none).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from core.errors import FormatError
from core.formats._io import (
    Source,
    iter_lines,
    parse_float,
    parse_int,
    require_file,
    require_path,
    rewind,
    source_name,
)
from core.formats._rows import check_grade_range, check_id, check_query_text, check_text
from core.types import CollectionSource, Passage, QrelEntry, Query, empty_stream
from core.validators import is_integer

CRANFIELD_GRADE_MAP: Mapping[int, int] = {1: 3, 2: 2, 3: 1, 4: 1, 5: 0}
"""Cleverdon's relevance codes (1 = most relevant) onto pooljudge's 0-3 scale."""

FIELDS: Mapping[str, str] = {"T": "title", "A": "authors", "B": "bibliography", "W": "text"}
"""SMART field markers that are read, by marker letter."""

IGNORED_FIELDS = frozenset({"X", "K", "N", "C"})
"""SMART field markers recognised and skipped (cross-references, keywords, entry data, categories)."""

QueryIds = Literal["position", "field"]
QrelsFormat = Literal["auto", "cranfield", "cisi", "trec"]
_Shape = Literal["cranfield", "cisi", "trec"]

_MARKER = re.compile(r"^\.([A-Z])(?:[ \t]+(.*?))?[ \t]*$")


@dataclass(slots=True)
class SmartRecord:
    """One ``.I`` record of a SMART file.

    ``fields`` maps a field name (``title``, ``authors``, ``bibliography``,
    ``text``) to its raw lines; ``line`` is the 1-based line of ``.I``.
    """

    id: str
    line: int
    fields: dict[str, list[str]] = field(default_factory=dict)

    @property
    def title(self) -> str:
        """The ``.T`` lines joined with single spaces."""
        return " ".join(part.strip() for part in self.fields.get("title", []) if part.strip())

    @property
    def text(self) -> str:
        """The ``.W`` lines joined with newlines, stripped at both ends."""
        return "\n".join(self.fields.get("text", [])).strip()


def iter_smart_records(
    source: Source,
    *,
    repeated_fields: Literal["append", "error"] = "append",
    allow_empty_records: bool = False,
) -> Iterator[SmartRecord]:
    """Parse a SMART file into records, strictly.

    Parameters
    ----------
    source : str, os.PathLike or file object
        The SMART file, plain or gzip-compressed, ``\\n`` or ``\\r\\n`` line
        ends.
    repeated_fields : {"append", "error"}, optional
        What a field marker seen twice in one record does: append to the
        field (default) or raise.
    allow_empty_records : bool, optional
        Accept a record whose fields (``.W`` included) are all present but
        empty, like Cranfield documents 471 and 995.  Default ``False``.

    Yields
    ------
    SmartRecord
        Each record with an id, in file order; the bare trailing ``.I`` is
        not yielded.

    Raises
    ------
    FormatError
        For text outside a field, a bare ``.I`` that is not the last record,
        a duplicate record id, an unknown marker, a marker followed by text, a
        repeated field (with ``"error"``), a record without ``.W`` text, or
        a file with no records.  A record without a ``.W`` marker is always
        an error; one with an empty ``.W`` is an error unless the whole
        record is empty and ``allow_empty_records``.
    """
    if repeated_fields not in ("append", "error"):
        raise ValueError(f"repeated_fields must be 'append' or 'error', got {repeated_fields!r}")
    parser = _SmartParser(source_name(source), repeated_fields, allow_empty_records)
    for lineno, text in iter_lines(source):
        yield from parser.feed(lineno, text)
    yield from parser.close()


class _SmartParser:
    """The state of :func:`iter_smart_records` between lines: the record and field being read."""

    def __init__(self, name: str, repeated_fields: str, allow_empty_records: bool) -> None:
        self.name = name
        self.repeated_fields = repeated_fields
        self.allow_empty_records = allow_empty_records
        self.seen: dict[str, int] = {}
        self.record: SmartRecord | None = None
        self.bare_line: int | None = None  # line of a bare ".I" (allowed only at the very end)
        self.current: list[str] | None = None  # lines of the field being read; None = ignored field
        self.in_field = False
        self.count = 0

    def feed(self, lineno: int, text: str) -> Iterator[SmartRecord]:
        """Read one line; yields the previous record when this line starts a new one."""
        match = _MARKER.match(text)
        if self.bare_line is not None and text.strip():
            raise FormatError(
                self.name,
                self.bare_line,
                "'.I' without a record id (a bare '.I' is only allowed as the empty last record)",
            )
        if match is None:
            self._text(lineno, text)
            return
        letter, rest = match.group(1), match.group(2)
        if letter == "I":
            yield from self._flush()
            self._start(lineno, text, rest)
        else:
            self._marker(lineno, text, letter, rest)

    def close(self) -> Iterator[SmartRecord]:
        """The last record; a file without any record is an error."""
        yield from self._flush()
        if self.count == 0:
            raise FormatError(self.name, 1, "no SMART records (expected '.I <id>' lines)")

    def _flush(self) -> Iterator[SmartRecord]:
        if self.record is not None:
            self.count += 1
            yield self._finish(self.record)
            self.record = None

    def _finish(self, rec: SmartRecord) -> SmartRecord:
        if "text" not in rec.fields:
            raise FormatError(
                self.name, rec.line, f"record {rec.id!r} has no .W field (expected a .W field with its text)"
            )
        if not rec.text:
            blank = not any(part.strip() for lines in rec.fields.values() for part in lines)
            if not (self.allow_empty_records and blank):
                allowed = (
                    " (only a record whose fields are all empty is allowed here)" if self.allow_empty_records else ""
                )
                raise FormatError(
                    self.name, rec.line, f"record {rec.id!r} has an empty .W field, expected text{allowed}"
                )
        return rec

    def _text(self, lineno: int, text: str) -> None:
        if self.record is None:
            if text.strip():
                raise FormatError(self.name, lineno, "expected '.I <id>' to start a record, got text")
            return
        if not self.in_field:
            if text.strip():
                raise FormatError(
                    self.name,
                    lineno,
                    f"text in record {self.record.id!r} before any field marker (expected .T, .A, .B or .W)",
                )
            return
        if self.current is not None:
            self.current.append(text)

    def _start(self, lineno: int, text: str, rest: str | None) -> None:
        if not rest:
            self.bare_line = lineno
            return
        if len(rest.split()) != 1:
            raise FormatError(self.name, lineno, f"expected '.I <id>' with one id, got {text.strip()!r}")
        check_id(rest, "record id", self.name, lineno)
        if rest in self.seen:
            raise FormatError(self.name, lineno, f"duplicate record id {rest!r} (first at line {self.seen[rest]})")
        self.seen[rest] = lineno
        self.record = SmartRecord(rest, lineno)
        self.in_field = False
        self.current = None

    def _marker(self, lineno: int, text: str, letter: str, rest: str | None) -> None:
        if letter not in FIELDS and letter not in IGNORED_FIELDS:
            known = ", ".join(f".{m}" for m in ("I", *FIELDS, *sorted(IGNORED_FIELDS)))
            raise FormatError(self.name, lineno, f"unknown SMART field marker '.{letter}' (expected one of {known})")
        if rest:
            raise FormatError(
                self.name, lineno, f"field marker '.{letter}' must be alone on its line, got {text.strip()!r}"
            )
        if self.record is None:
            raise FormatError(self.name, lineno, f"field marker '.{letter}' before any '.I <id>' record start")
        self.in_field = True
        if letter in IGNORED_FIELDS:
            self.current = None
            return
        key = FIELDS[letter]
        if key in self.record.fields:
            if self.repeated_fields == "error":
                raise FormatError(self.name, lineno, f"field '.{letter}' repeated in record {self.record.id!r}")
            self.current = self.record.fields[key]
        else:
            self.current = self.record.fields[key] = []


def _passages(source: Source, repeated_fields: Literal["append", "error"]) -> Iterator[Passage]:
    name = source_name(source)
    rewind(source)
    for rec in iter_smart_records(source, repeated_fields=repeated_fields, allow_empty_records=True):
        check_text(rec.text, f"text of record {rec.id!r}", name, rec.line)
        check_text(rec.title, f"title of record {rec.id!r}", name, rec.line)
        yield Passage(id=rec.id, text=rec.text, title=rec.title, language="en", origin=f"{name}:{rec.line}")


def _queries(source: Source, query_ids: QueryIds, repeated_fields: Literal["append", "error"]) -> Iterator[Query]:
    name = source_name(source)
    rewind(source)
    for position, rec in enumerate(iter_smart_records(source, repeated_fields=repeated_fields), start=1):
        qid = str(position) if query_ids == "position" else rec.id
        check_query_text(rec.text, f"text (.W) of query record {rec.id!r}", name, rec.line)
        yield Query(id=qid, text=rec.text, split="test", language="en", origin=f"{name}:{rec.line}")


_SHAPES: dict[_Shape, str] = {
    "cranfield": "3 columns 'qid docid grade'",
    "cisi": "4 columns 'qid docid 0 0.000000'",
    "trec": "4 columns 'qid iteration docid grade'",
}


def _detect_shape(columns: list[str], name: str, line: int) -> _Shape:
    if len(columns) == 3:
        return "cranfield"
    if len(columns) == 4:
        return "cisi" if any(c in columns[3] for c in ".eE") else "trec"
    raise FormatError(
        name,
        line,
        f"cannot tell the qrels shape from {len(columns)} columns: expected {', or '.join(_SHAPES.values())}",
    )


def _qrels(
    source: Source,
    qrels_format: QrelsFormat,
    grade_map: Mapping[int, int],
    listed_grade: int,
) -> Iterator[QrelEntry]:
    name = source_name(source)
    rewind(source)
    shape = None if qrels_format == "auto" else qrels_format
    shape_line = 0
    seen: dict[tuple[str, str], int] = {}
    for lineno, text in iter_lines(source):
        columns = text.split()
        if not columns:
            continue
        if shape is None:
            shape, shape_line = _detect_shape(columns, name, lineno), lineno
        expected = 3 if shape == "cranfield" else 4
        if len(columns) != expected:
            detected = f" (the shape of line {shape_line})" if shape_line else ""
            raise FormatError(name, lineno, f"expected {_SHAPES[shape]}{detected}, got {len(columns)} columns")
        if shape == "cranfield":
            qid, docid = columns[0], columns[1]
            code = parse_int(columns[2], "relevance grade", name, lineno)
            if code not in grade_map:
                raise FormatError(
                    name,
                    lineno,
                    f"relevance grade {code} is not in the grade mapping (known: {', '.join(map(str, sorted(grade_map)))})",
                )
            grade = grade_map[code]
        elif shape == "cisi":
            qid, docid = columns[0], columns[1]
            if (
                parse_int(columns[2], "third column", name, lineno) != 0
                or parse_float(columns[3], "fourth column", name, lineno) != 0.0
            ):
                raise FormatError(
                    name,
                    lineno,
                    f"expected the CISI placeholders '0 0.000000' in columns 3-4, got {columns[2]!r} {columns[3]!r}",
                )
            grade = listed_grade
        else:
            qid, docid = columns[0], columns[2]
            grade = parse_int(columns[3], "relevance grade", name, lineno)
            check_grade_range(grade, "relevance grade", name, lineno)
        check_id(qid, "query id", name, lineno)
        check_id(docid, "document id", name, lineno)
        key = (qid, docid)
        if key in seen:
            raise FormatError(
                name, lineno, f"duplicate judgment for query {qid!r}, document {docid!r} (first at line {seen[key]})"
            )
        seen[key] = lineno
        yield QrelEntry(qid, docid, grade, origin=f"{name}:{lineno}")
    if not seen:
        raise FormatError(name, 1, "no judgments (the file has only blank lines)")


def read_smart(
    docs_path: Source,
    queries_path: Source | None = None,
    qrels_path: Source | None = None,
    *,
    grade_map: Mapping[int, int] = CRANFIELD_GRADE_MAP,
    query_ids: QueryIds = "position",
    qrels_format: QrelsFormat = "auto",
    listed_grade: int = 2,
    repeated_fields: Literal["append", "error"] = "append",
) -> CollectionSource:
    """Read a SMART-format collection (Cranfield, CISI).

    Parameters
    ----------
    docs_path : str, os.PathLike or file object
        The documents (``cran.all.1400``, ``CISI.ALL``), plain or gzip.
    queries_path : str, os.PathLike, file object or None, optional
        The queries in SMART format (``cran.qry``, ``CISI.QRY``).
    qrels_path : str, os.PathLike, file object or None, optional
        The judgments (``cranqrel``, ``CISI.REL``); shapes in the module
        docstring.
    grade_map : mapping of int to int, optional
        Cranfield-shape grades to pooljudge grades; default
        :data:`CRANFIELD_GRADE_MAP` (1->3, 2->2, 3->1, 4->1, 5->0).
    query_ids : {"position", "field"}, optional
        Number queries 1, 2, ... by position (default; Cranfield) or keep
        their ``.I`` token (CISI).
    qrels_format : {"auto", "cranfield", "cisi", "trec"}, optional
        Qrels shape; ``"auto"`` (default) detects it from the first line.
    listed_grade : int, optional
        Grade of every pair in CISI-shape qrels (default 2).
    repeated_fields : {"append", "error"}, optional
        A field marker repeated in one record appends (default) or raises.

    Returns
    -------
    CollectionSource
        Streams of passages, queries (split ``"test"``) and qrels;
        ``language`` is ``"en"``.

    Raises
    ------
    FormatError
        At call time for a missing file; while streaming for any problem
        listed in :func:`iter_smart_records`, or in the qrels a wrong column
        count, a non-integer grade, a grade outside ``grade_map``, or a
        duplicate pair.
    ValueError
        For an unknown option value.
    """
    _check_options(query_ids, qrels_format, repeated_fields, grade_map, listed_grade)
    return _smart_source(
        docs_path, queries_path, qrels_path, query_ids, qrels_format, dict(grade_map), listed_grade, repeated_fields
    )


def _smart_source(
    docs_path: Source,
    queries_path: Source | None,
    qrels_path: Source | None,
    query_ids: QueryIds,
    qrels_format: QrelsFormat,
    grade_map: dict[int, int],
    listed_grade: int,
    repeated_fields: Literal["append", "error"],
) -> CollectionSource:
    """:func:`read_smart`'s streams over files that exist, with checked options."""
    for source in (docs_path, queries_path, qrels_path):
        if source is not None:
            require_file(source)
    return CollectionSource(
        passages=lambda: _passages(docs_path, repeated_fields),
        queries=lambda: empty_stream() if queries_path is None else _queries(queries_path, query_ids, repeated_fields),
        qrels=lambda: (
            empty_stream() if qrels_path is None else _qrels(qrels_path, qrels_format, grade_map, listed_grade)
        ),
        language="en",
        description=f"SMART collection from {source_name(docs_path)}",
    )


def _check_options(
    query_ids: object, qrels_format: object, repeated_fields: object, grade_map: Mapping[int, int], listed_grade: object
) -> None:
    """Refuse :func:`read_smart`'s unknown option values at call time."""
    if query_ids not in ("position", "field"):
        raise ValueError(f"query_ids must be 'position' or 'field', got {query_ids!r}")
    if qrels_format not in ("auto", "cranfield", "cisi", "trec"):
        raise ValueError(f"qrels_format must be auto, cranfield, cisi or trec, got {qrels_format!r}")
    if repeated_fields not in ("append", "error"):
        raise ValueError(f"repeated_fields must be 'append' or 'error', got {repeated_fields!r}")
    for key, value in grade_map.items():
        for x in (key, value):
            if not is_integer(x):
                raise ValueError(f"grade_map must map integers to integers, got {key!r}: {value!r}")
    if not is_integer(listed_grade):
        raise ValueError(f"listed_grade must be an integer, got {listed_grade!r}")


_FOLDER_LAYOUTS = {
    "cranfield": (("cran.all.1400",), ("cran.qry",), ("cranqrel",), "position"),
    "cisi": (("CISI.ALL",), ("CISI.QRY",), ("CISI.REL",), "field"),
}


def read_smart_folder(folder: str | os.PathLike[str], **options: object) -> CollectionSource:
    """Read a Cranfield or CISI folder with its usual file names.

    Parameters
    ----------
    folder : str or os.PathLike
        A folder holding ``cran.all.1400`` (+ ``cran.qry``, ``cranqrel``) or
        ``CISI.ALL`` (+ ``CISI.QRY``, ``CISI.REL``); each name may end in
        ``.gz``.  The documents file is required, the others are read when
        present.
    **options
        Passed to :func:`read_smart`.  ``query_ids`` defaults to
        ``"position"`` for Cranfield and ``"field"`` for CISI.

    Returns
    -------
    CollectionSource
        As :func:`read_smart`.

    Raises
    ------
    FormatError
        If the folder is missing, holds neither layout, or holds both.
    """
    root = require_path(folder, "folder not found")
    if not os.path.isdir(root):
        raise FormatError(root, None, "expected a folder")
    names = set(os.listdir(root))

    def find(candidates: tuple[str, ...]) -> str | None:
        hits = [n for c in candidates for n in (c, c + ".gz") if n in names]
        if len(hits) > 1:
            raise FormatError(root, None, f"both {hits[0]} and {hits[1]}: keep one")
        return os.path.join(root, hits[0]) if hits else None

    found = {layout: find(spec[0]) for layout, spec in _FOLDER_LAYOUTS.items()}
    layouts = [layout for layout, path in found.items() if path is not None]
    if not layouts:
        raise FormatError(root, None, "no SMART collection here: expected cran.all.1400 (Cranfield) or CISI.ALL (CISI)")
    if len(layouts) > 1:
        raise FormatError(root, None, "both Cranfield and CISI files here: keep one collection per folder")
    layout = layouts[0]
    _, queries, qrels, default_ids = _FOLDER_LAYOUTS[layout]
    options.setdefault("query_ids", default_ids)
    return read_smart(found[layout], find(queries), find(qrels), **options)  # type: ignore[arg-type]
