"""Reader for query + candidate-passages JSON lines (the RGB benchmark layout).

One JSON object per line::

    {"id": 0, "query": "...", "answer": ["12人"],
     "positive": ["passage text", ...], "negative": ["passage text", ...]}

as in RGB's ``zh_refine.json`` / ``en_refine.json`` (Chen et al., 2024,
"Benchmarking Large Language Models in Retrieval-Augmented Generation").
RGB's other published files use documented variants of the same record, and
are read too:

- the counterfactual files (``en_fact.json``, ``zh_fact.json``) give a single
  ``answer`` as a plain string and add ``fakeanswer`` and ``positive_wrong``
  (the positive texts edited to state the fake answer);
- the information-integration files (``zh_int.json``, ``en_int.json``) give
  ``positive`` as one list of texts per part of a multi-part answer, and
  ``answer`` as one element per part; their lines also carry keys the
  benchmark does not document (``asnwer1``, ``answer2``).

What the reader makes of it:

- **Passages** have no ids in the source.  Each distinct text becomes one
  :class:`~core.types.Passage` whose id is content-derived,
  ``"p" + sha1(NFC(text))[:16]`` (see :func:`text_passage_id`), and whose
  text is the NFC-normalised text.  A text listed under several queries, or
  twice under one, is stored once (rgb-zh: 7,715 listed texts, 7,337
  distinct).  ``origin`` is the line where the text first appears
  (``"file:line positive_wrong"`` when it first appears there); passages
  have no document structure (``doc_id`` and ``position`` are ``None``).
- **Queries** keep ``answer`` as given in :attr:`Query.answers`: a list whose
  elements are strings or lists of alternative strings (one element per part
  of a multi-part answer); a plain-string answer becomes a one-element list,
  and a line without ``answer`` gives ``answers=None``.
  :func:`core.prelabel.answer_strings` flattens them for span-F1 pre-labels
  and the false-negative detector.
- **Qrels** are per query: every distinct positive text (the per-part lists
  flattened) gets ``positive_grade``, every distinct negative or
  ``positive_wrong`` text grade 0, each pair once; the ``positive_wrong``
  pairs' origin is ``"file:line positive_wrong"``.  A text that is positive
  for one query and negative for another is fine; the same text both
  positive and negative for *one* query is a
  :class:`~core.errors.FormatError`.  A ``positive_wrong`` text identical to
  a positive one of the same query (an edit that changed nothing, as on two
  lines of ``en_fact.json``) keeps its positive grade, and a note says so.
- **Language** of each query and passage comes from
  :func:`core.lang.detect_language` (``"zh"`` when CJK ideographs make up at
  least 20 % of the letters, else ``"en"``).

``fakeanswer`` is known but not stored.  Any other key is ignored, and
:attr:`CollectionSource.notes` gets one line per such key after the first
complete pass over the file (``"ignored key 'asnwer1' on 100 lines (first:
zh_int.json:1)"``).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from core.errors import FormatError
from core.formats._io import (
    Source,
    is_blank,
    iter_jsonl,
    require_file,
    require_str,
    rewind,
    shown_json,
    source_name,
)
from core.formats._rows import check_id, check_query_text, check_text
from core.lang import detect_language
from core.limits import GRADE_MAX
from core.types import SPLITS, CollectionSource, Passage, QrelEntry, Query
from core.validators import is_integer


def text_passage_id(text: str, *, prefix: str = "p") -> str:
    """The content-derived id of a passage text.

    Parameters
    ----------
    text : str
        The passage text.  It is NFC-normalised before hashing, so the same
        text in composed and decomposed form gets the same id.
    prefix : str, optional
        Put in front of the digest (``"p"`` by default) so that ids never
        look like numbers.

    Returns
    -------
    str
        ``prefix`` followed by the first 16 hex digits of the SHA-1 of the
        UTF-8 bytes of the NFC-normalised text.

    Examples
    --------
    >>> text_passage_id("hello")
    'paaf4c61ddcc5e8a2'
    """
    normalised = unicodedata.normalize("NFC", text)
    return prefix + hashlib.sha1(normalised.encode("utf-8")).hexdigest()[:16]


KNOWN_KEYS = ("id", "query", "answer", "fakeanswer", "positive", "positive_wrong", "negative")
"""Keys the reader knows; any other key is ignored and reported once in :attr:`CollectionSource.notes`.

``fakeanswer`` (the counterfactual answer that ``positive_wrong`` texts
state) is known but not stored: :class:`~core.types.Query` has no place for
a wrong answer, and the ``positive_wrong`` passages keep what it says.
"""

WRONG = "positive_wrong"


class _Record:
    """One validated line of the file."""

    __slots__ = (
        "line",
        "query_id",
        "query",
        "answers",
        "positive",
        "negative",
        "wrong",
        "wrong_also_positive",
        "unknown",
    )

    def __init__(
        self,
        line: int,
        query_id: str,
        query: str,
        answers: list[Any] | None,
        positive: list[str],
        negative: list[str],
        wrong: list[str],
        unknown: list[str],
    ) -> None:
        self.line = line
        self.query_id = query_id
        self.query = query
        self.answers = answers
        self.positive = positive
        self.negative = negative
        # a positive_wrong text that is also a positive one keeps its positive grade: RGB's counterfactual
        # edit left two en_fact passages unchanged, and the text as written does state the right answer
        positive_set = set(positive)
        self.wrong = [t for t in wrong if t not in positive_set]
        self.wrong_also_positive = len(set(wrong) & positive_set)
        self.unknown = unknown


def _texts(value: Any, label: str, name: str, line: int) -> list[str]:
    """The NFC texts of one list of passage texts; ``label`` names it in messages (``positive[1]``)."""
    if not isinstance(value, list):
        raise FormatError(name, line, f"{_field(label)} must be a list of passage texts, got {type(value).__name__}")
    texts = []
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise FormatError(name, line, f"{label}[{i}] must be a string, got {type(text).__name__}")
        if is_blank(text):
            raise FormatError(name, line, f"{label}[{i}] is an empty passage text")
        texts.append(check_text(unicodedata.normalize("NFC", text), f"{label}[{i}]", name, line))
    return texts


def _field(label: str) -> str:
    return f"field {label!r}" if "[" not in label else label


def _text_list(obj: dict[str, Any], key: str, name: str, line: int) -> list[str]:
    if key not in obj:
        raise FormatError(name, line, f"missing field {key!r} (expected a list of passage texts)")
    return _texts(obj[key], key, name, line)


def _positive(obj: dict[str, Any], name: str, line: int) -> list[str]:
    """Positive texts: one flat list, or (RGB's integration files) one list per part of the answer, flattened."""
    if "positive" not in obj:
        raise FormatError(name, line, "missing field 'positive' (expected a list of passage texts)")
    value = obj["positive"]
    if not isinstance(value, list) or not any(isinstance(item, list) for item in value):
        return _texts(value, "positive", name, line)
    for i, item in enumerate(value):
        if not isinstance(item, list):
            # a text among the per-part lists is a list left out or a shape mixed by hand
            raise FormatError(
                name,
                line,
                f"positive[{i}] must be a list of passage texts like the other parts, got {type(item).__name__} "
                "(give either a list of texts or one list of texts per part of the answer)",
            )
    return [text for i, part in enumerate(value) for text in _texts(part, f"positive[{i}]", name, line)]


def _answers(obj: dict[str, Any], name: str, line: int) -> list[Any] | None:
    if "answer" not in obj:
        return None
    value = obj["answer"]
    if isinstance(value, str):
        # RGB's counterfactual files give a single answer as a plain string; Query.answers is always a list
        return [check_text(value, "field 'answer'", name, line)]
    if not isinstance(value, list):
        raise FormatError(
            name,
            line,
            f"field 'answer' must be a string, or a list of strings or lists of strings, got {type(value).__name__}",
        )
    for i, item in enumerate(value):
        if isinstance(item, str):
            check_text(item, f"answer[{i}]", name, line)
        elif isinstance(item, list) and all(isinstance(alt, str) for alt in item):
            for j, alt in enumerate(item):
                check_text(alt, f"answer[{i}][{j}]", name, line)
        else:
            raise FormatError(name, line, f"answer[{i}] must be a string or a list of strings, got {shown_json(item)}")
    return value


def _records(source: Source) -> Iterator[_Record]:
    """Validate every line; duplicate query ids and contradictory labels are errors."""
    name = source_name(source)
    rewind(source)
    seen_queries: dict[str, int] = {}
    for line, obj in iter_jsonl(source):
        if not isinstance(obj, dict):
            raise FormatError(
                name,
                line,
                f"expected a JSON object {{id, query, answer, positive, negative}}, got {type(obj).__name__}",
            )
        for key in ("id", "query"):
            if key not in obj:
                raise FormatError(name, line, f"missing field {key!r}")
        query_id = check_id(require_str(obj["id"], "id", name, line), "query id", name, line)
        if query_id in seen_queries:
            raise FormatError(name, line, f"duplicate query id {query_id!r} (first at line {seen_queries[query_id]})")
        seen_queries[query_id] = line
        query = check_query_text(require_str(obj["query"], "query", name, line), "field 'query'", name, line)
        answers = _answers(obj, name, line)
        positive = _positive(obj, name, line)
        negative = _text_list(obj, "negative", name, line)
        wrong = _texts(obj[WRONG], WRONG, name, line) if WRONG in obj else []
        clash = set(positive) & set(negative)
        if clash:
            example = min(clash)
            short = example if len(example) <= 40 else example[:40] + "..."
            raise FormatError(
                name,
                line,
                f"the same text is both positive and negative for query {query_id!r} "
                f"({len(clash)} text(s), e.g. {short!r})",
            )
        unknown = [key for key in obj if key not in KNOWN_KEYS]
        yield _Record(line, query_id, query, answers, positive, negative, wrong, unknown)


class _Notes:
    """Counts over one complete pass what the user should hear about, and reports it once."""

    def __init__(self, name: str, notes: list[str]) -> None:
        self.name = name
        self.notes = notes
        self.done = False

    def watch(self, records: Iterator[_Record]) -> Iterator[_Record]:
        """Pass ``records`` through; at the end of a complete first pass add the summary lines."""
        if self.done:
            yield from records
            return
        ignored: dict[str, list[int]] = {}  # key -> [lines, first line]
        overlap = [0, 0, 0]  # texts, lines, first line
        for record in records:
            for key in record.unknown:
                seen = ignored.setdefault(key, [0, record.line])
                seen[0] += 1
            if record.wrong_also_positive:
                overlap[0] += record.wrong_also_positive
                overlap[1] += 1
                overlap[2] = overlap[2] or record.line
            yield record
        if self.done:  # another stream finished its pass while this one was paused
            return
        self.done = True
        for key, (lines, first) in ignored.items():
            self.notes.append(f"ignored key {key!r} on {_count(lines, 'line')} (first: {self.name}:{first})")
        if overlap[0]:
            self.notes.append(
                f"{WRONG} texts also listed as positive for the same query keep their positive grade: "
                f"{_count(overlap[0], 'text')} on {_count(overlap[1], 'line')} (first: {self.name}:{overlap[2]})"
            )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def read_qa_jsonl(path: Source, *, positive_grade: int = 1, split: str = "test") -> CollectionSource:
    """Read a query + positive/negative passages JSON-lines file.

    Parameters
    ----------
    path : str, os.PathLike or file object
        The JSON-lines file, plain or gzip-compressed.  A file object must be
        seekable (each stream reads it again).
    positive_grade : int, optional
        Grade given to positive passages (default 1); negatives get 0.
    split : str, optional
        Split of every query (default ``"test"``).

    Returns
    -------
    CollectionSource
        Streams of de-duplicated passages, queries and per-query qrels;
        ``language`` is ``None`` (each record carries its own).

    Raises
    ------
    FormatError
        At call time for a missing file; while streaming for invalid JSON
        (a key repeated in one object included, see
        :func:`core.formats._io.load_json`) or UTF-8, a missing or mistyped
        field, an id the id rule refuses (:func:`core.formats._rows.check_id`:
        surrounding whitespace, control characters, byte-order marks, over
        :data:`core.limits.ID_MAX_CHARS`), a duplicate query id, a query,
        passage or answer text the text rule refuses (blank, NUL, over
        :data:`core.limits.QUERY_TEXT_MAX_CHARS` or
        :data:`core.limits.PASSAGE_TEXT_MAX_CHARS`), positives mixing texts
        and per-part lists, or a text both positive and negative for one query.
    ValueError
        If ``positive_grade`` is not a positive integer or ``split`` is not
        one of ``train``, ``dev``, ``test``.
    """
    if not is_integer(positive_grade) or not 1 <= positive_grade <= GRADE_MAX:
        raise ValueError(f"positive_grade must be an integer in 1..{GRADE_MAX}, got {positive_grade!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    require_file(path)
    name = source_name(path)
    notes: list[str] = []
    reader = _Reader(path, name, _Notes(name, notes), positive_grade, split)
    return CollectionSource(
        passages=reader.passages,
        queries=reader.queries,
        qrels=reader.qrels,
        language=None,
        description=f"query + candidate passages JSON lines from {name}",
        notes=notes,
    )


@dataclass(frozen=True)
class _Reader:
    """The streams of :func:`read_qa_jsonl` over one file; each stream reads it again."""

    path: Source
    name: str
    watcher: _Notes
    positive_grade: int
    split: str

    def records(self) -> Iterator[_Record]:
        return self.watcher.watch(_records(self.path))

    def passages(self) -> Iterator[Passage]:
        seen: set[str] = set()
        for record in self.records():
            for texts, where in ((record.positive + record.negative, ""), (record.wrong, f" {WRONG}")):
                for text in texts:
                    pid = text_passage_id(text)
                    if pid in seen:
                        continue
                    seen.add(pid)
                    yield Passage(
                        id=pid, text=text, language=detect_language(text), origin=f"{self.name}:{record.line}{where}"
                    )

    def queries(self) -> Iterator[Query]:
        for record in self.records():
            yield Query(
                id=record.query_id,
                text=record.query,
                split=self.split,
                language=detect_language(record.query),
                answers=record.answers,
                origin=f"{self.name}:{record.line}",
            )

    def qrels(self) -> Iterator[QrelEntry]:
        for record in self.records():
            done: set[str] = set()
            for texts, grade, where in (
                (record.positive, self.positive_grade, ""),
                (record.negative, 0, ""),
                (record.wrong, 0, f" {WRONG}"),
            ):
                for text in texts:
                    pid = text_passage_id(text)
                    if pid in done:
                        continue
                    done.add(pid)
                    yield QrelEntry(record.query_id, pid, grade, origin=f"{self.name}:{record.line}{where}")
