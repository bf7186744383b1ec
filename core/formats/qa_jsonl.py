"""Reader for query + candidate-passages JSON lines (the RGB benchmark layout).

One JSON object per line::

    {"id": 0, "query": "...", "answer": ["12人"],
     "positive": ["passage text", ...], "negative": ["passage text", ...]}

as in RGB's ``zh_refine.json`` / ``en_refine.json`` (Chen et al., 2024,
"Benchmarking Large Language Models in Retrieval-Augmented Generation").

What the reader makes of it:

- **Passages** have no ids in the source.  Each distinct text becomes one
  :class:`~core.types.Passage` whose id is content-derived,
  ``"p" + sha1(NFC(text))[:16]`` (see :func:`text_passage_id`), and whose
  text is the NFC-normalised text.  A text listed under several queries, or
  twice under one, is stored once (rgb-zh: 7,715 listed texts, 7,337
  distinct).  ``origin`` is the line where the text first appears; passages
  have no document structure (``doc_id`` and ``position`` are ``None``).
- **Queries** keep ``answer`` exactly as given in :attr:`Query.answers`
  (each element a string or a list of alternative strings); a line without
  ``answer`` gives ``answers=None``.
- **Qrels** are per query: every distinct positive text gets
  ``positive_grade``, every distinct negative text grade 0, each pair once.
  A text that is positive for one query and negative for another is fine; the
  same text both positive and negative for *one* query is a
  :class:`~core.errors.FormatError`.
- **Language** of each query and passage comes from
  :func:`core.lang.detect_language` (``"zh"`` when CJK ideographs make up at
  least 20 % of the letters, else ``"en"``).

Other keys on a line (RGB's ``fakeanswer``, ``positive_wrong``) are ignored.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterator
from typing import Any

from core.errors import FormatError
from core.formats._io import (
    Source,
    iter_jsonl,
    require_file,
    require_str,
    rewind,
    source_name,
)
from core.lang import detect_language
from core.limits import GRADE_MAX
from core.types import SPLITS, CollectionSource, Passage, QrelEntry, Query


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






class _Record:
    """One validated line of the file."""

    __slots__ = ("line", "query_id", "query", "answers", "positive", "negative")

    def __init__(
        self,
        line: int,
        query_id: str,
        query: str,
        answers: list[Any] | None,
        positive: list[str],
        negative: list[str],
    ) -> None:
        self.line = line
        self.query_id = query_id
        self.query = query
        self.answers = answers
        self.positive = positive
        self.negative = negative


def _text_list(obj: dict[str, Any], key: str, name: str, line: int) -> list[str]:
    if key not in obj:
        raise FormatError(name, line, f"missing field {key!r} (expected a list of passage texts)")
    value = obj[key]
    if not isinstance(value, list):
        raise FormatError(name, line, f"field {key!r} must be a list of passage texts, got {type(value).__name__}")
    texts = []
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise FormatError(name, line, f"{key}[{i}] must be a string, got {type(text).__name__}")
        if not text.strip():
            raise FormatError(name, line, f"{key}[{i}] is an empty passage text")
        texts.append(unicodedata.normalize("NFC", text))
    return texts


def _answers(obj: dict[str, Any], name: str, line: int) -> list[Any] | None:
    if "answer" not in obj:
        return None
    value = obj["answer"]
    if not isinstance(value, list):
        raise FormatError(
            name, line, f"field 'answer' must be a list of strings or lists of strings, got {type(value).__name__}"
        )
    for i, item in enumerate(value):
        if isinstance(item, str):
            continue
        if isinstance(item, list) and all(isinstance(alt, str) for alt in item):
            continue
        raise FormatError(name, line, f"answer[{i}] must be a string or a list of strings, got {item!r}")
    return value


def _records(source: Source) -> Iterator[_Record]:
    """Validate every line; duplicate query ids and contradictory labels are errors."""
    name = source_name(source)
    rewind(source)
    seen_queries: dict[str, int] = {}
    for line, obj in iter_jsonl(source):
        if not isinstance(obj, dict):
            raise FormatError(name, line, f"expected a JSON object {{id, query, answer, positive, negative}}, got {type(obj).__name__}")
        for key in ("id", "query"):
            if key not in obj:
                raise FormatError(name, line, f"missing field {key!r}")
        query_id = require_str(obj["id"], "id", name, line)
        if query_id in seen_queries:
            raise FormatError(name, line, f"duplicate query id {query_id!r} (first at line {seen_queries[query_id]})")
        seen_queries[query_id] = line
        query = require_str(obj["query"], "query", name, line)
        answers = _answers(obj, name, line)
        positive = _text_list(obj, "positive", name, line)
        negative = _text_list(obj, "negative", name, line)
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
        yield _Record(line, query_id, query, answers, positive, negative)


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
        At call time for a missing file; while streaming for invalid JSON or
        UTF-8, a missing or mistyped field, a duplicate query id, an empty
        passage text, or a text both positive and negative for one query.
    ValueError
        If ``positive_grade`` is not a positive integer or ``split`` is not
        one of ``train``, ``dev``, ``test``.
    """
    if isinstance(positive_grade, bool) or not isinstance(positive_grade, int) or not 1 <= positive_grade <= GRADE_MAX:
        raise ValueError(f"positive_grade must be an integer in 1..{GRADE_MAX}, got {positive_grade!r}")
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
    require_file(path)
    name = source_name(path)

    def passages() -> Iterator[Passage]:
        seen: set[str] = set()
        for record in _records(path):
            for text in record.positive + record.negative:
                pid = text_passage_id(text)
                if pid in seen:
                    continue
                seen.add(pid)
                yield Passage(id=pid, text=text, language=detect_language(text), origin=f"{name}:{record.line}")

    def queries() -> Iterator[Query]:
        for record in _records(path):
            yield Query(
                id=record.query_id,
                text=record.query,
                split=split,
                language=detect_language(record.query),
                answers=record.answers,
                origin=f"{name}:{record.line}",
            )

    def qrels() -> Iterator[QrelEntry]:
        for record in _records(path):
            done: set[str] = set()
            for texts, grade in ((record.positive, positive_grade), (record.negative, 0)):
                for text in texts:
                    pid = text_passage_id(text)
                    if pid in done:
                        continue
                    done.add(pid)
                    yield QrelEntry(record.query_id, pid, grade, origin=f"{name}:{record.line}")

    return CollectionSource(
        passages=passages,
        queries=queries,
        qrels=qrels,
        language=None,
        description=f"query + candidate passages JSON lines from {name}",
    )
