"""Reader turning DuReader 2.0 (machine reading comprehension) into a retrieval collection.

Input: DuReader 2.0 JSON lines (``search.train.json``, ``zhidao.dev.json``,
...), one question per line::

    {"question_id": 186358, "question": "...", "question_type": "YES_NO",
     "fact_or_opinion": "OPINION", "answers": ["...", ...],
     "documents": [{"title": "...", "paragraphs": ["...", ...],
                    "is_selected": true, "most_related_para": 0,
                    "bs_rank_pos": 0, ...}, ...], ...}

``answers`` is absent from the test sets, ``is_selected`` too, and
``most_related_para`` only exists in the *preprocessed* release.  Other keys
(segmented fields, ``answer_spans``, ``fake_answers``...) are ignored.

Passages are built the way DuReader-retrieval (Qiu et al., 2022) built its
corpus from DuReader documents:

- each paragraph is stripped of surrounding whitespace; the paragraphs of a
  document are concatenated in order (no separator) into the current passage;
  as soon as the passage is longer than ``max_chars`` characters it is closed
  and a new one starts.  So every passage but the last of a document has more
  than ``max_chars`` characters, and a document of at most ``max_chars``
  characters is one passage.  A document whose paragraphs are all empty gives
  no passage.
- the title is never part of the passage text.  With ``remove_titles=True``
  (the DuReader-retrieval choice) it is dropped; with ``False`` it is kept in
  :attr:`Passage.title`.
- passage ids are content-derived, :func:`~core.formats.qa_jsonl.text_passage_id`
  of the NFC-normalised text (of ``title + "\\n" + text`` when the title is
  kept), so a passage found under two questions (DuReader repeats web pages a
  lot) is stored once, with the ``doc_id``/``position``/``origin`` of its
  first occurrence.
- ``doc_id`` is content-derived too: ``"d"`` + the first 16 hex digits of
  the SHA-1 of the JSON array ``[title, stripped paragraphs...]``, so the same
  web page under two questions is the same document.  ``position`` is the
  passage's 0-based index within its document.

Queries: ``id`` is ``question_id`` as a string, ``type`` the
``question_type`` (``DESCRIPTION``, ``ENTITY`` or ``YES_NO``), ``answers`` the
``answers`` list as given (``None`` when absent), language ``"zh"``.

Qrels: none by default.  DuReader's ``is_selected`` marks *documents* the
annotators used to write answers, and DuReader-retrieval's passage labels came
from a separate annotation, so nothing in a DuReader MRC file is a passage
judgment.  Pass ``selected_grade`` to get weak labels anyway: in every
document with ``is_selected`` true, the passage containing the paragraph
``most_related_para`` gets that grade (once per query and passage).  That
needs the preprocessed files; raw files lack ``most_related_para`` and the
qrels stream raises a :class:`~core.errors.FormatError`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from core.errors import FormatError
from core.formats._io import (
    Source,
    iter_jsonl,
    require_file,
    require_str,
    rewind,
    shown_json,
    source_name,
)
from core.formats._rows import check_id, check_query_text, check_text
from core.formats.qa_jsonl import text_passage_id
from core.limits import GRADE_MAX
from core.types import SPLITS, CollectionSource, Passage, QrelEntry, Query
from core.validators import as_integer, is_integer

QUESTION_TYPES = ("DESCRIPTION", "ENTITY", "YES_NO")
"""The values of ``question_type`` in DuReader 2.0."""


def split_paragraphs(paragraphs: list[str], max_chars: int = 256) -> list[tuple[str, list[int]]]:
    """Concatenate a document's paragraphs into passages of just over ``max_chars``.

    Parameters
    ----------
    paragraphs : list of str
        The document's paragraphs in order.  Each is stripped of surrounding
        whitespace first; empty ones add nothing.
    max_chars : int, optional
        A passage is closed as soon as it is longer than this many characters
        (default 256).

    Returns
    -------
    list of (str, list of int)
        One ``(text, paragraph_indexes)`` per passage, in document order;
        ``paragraph_indexes`` are the indexes (into ``paragraphs``) of the
        non-empty paragraphs concatenated into it.

    Examples
    --------
    >>> split_paragraphs(["aaaa", "bb", "c", "dddddd"], max_chars=5)
    [('aaaabb', [0, 1]), ('cdddddd', [2, 3])]
    >>> split_paragraphs(["abc", " de "], max_chars=5)
    [('abcde', [0, 1])]
    """
    if not is_integer(max_chars) or max_chars < 1:
        raise ValueError(f"max_chars must be a positive integer, got {max_chars!r}")
    passages: list[tuple[str, list[int]]] = []
    parts: list[str] = []
    members: list[int] = []
    length = 0
    for index, paragraph in enumerate(paragraphs):
        text = paragraph.strip()
        if not text:
            continue
        parts.append(text)
        members.append(index)
        length += len(text)
        if length > max_chars:
            passages.append(("".join(parts), members))
            parts, members, length = [], [], 0
    if parts:
        passages.append(("".join(parts), members))
    return passages


@dataclass(slots=True)
class _Document:
    title: str
    paragraphs: list[str]
    is_selected: bool | None
    most_related_para: int | None


@dataclass(slots=True)
class _Question:
    line: int
    question_id: str
    question: str
    question_type: str
    answers: list[str] | None
    documents: list[_Document]


def _document(value: Any, index: int, name: str, line: int) -> _Document:
    where = f"documents[{index}]"
    if not isinstance(value, dict):
        raise FormatError(
            name, line, f"{where} must be an object {{title, paragraphs, ...}}, got {type(value).__name__}"
        )
    if "paragraphs" not in value:
        raise FormatError(name, line, f"{where} has no 'paragraphs' (expected a list of strings)")
    paragraphs = value["paragraphs"]
    if not isinstance(paragraphs, list):
        raise FormatError(name, line, f"{where}.paragraphs must be a list of strings, got {type(paragraphs).__name__}")
    for i, paragraph in enumerate(paragraphs):
        if not isinstance(paragraph, str):
            raise FormatError(name, line, f"{where}.paragraphs[{i}] must be a string, got {type(paragraph).__name__}")
    title = value.get("title", "")
    if not isinstance(title, str):
        raise FormatError(name, line, f"{where}.title must be a string, got {type(title).__name__}")
    check_text(title, f"{where}.title", name, line)
    is_selected = value.get("is_selected")
    if is_selected is not None and not isinstance(is_selected, bool):
        raise FormatError(name, line, f"{where}.is_selected must be true or false, got {shown_json(is_selected)}")
    most_related = value.get("most_related_para")
    if most_related is not None and not is_integer(most_related):
        raise FormatError(name, line, f"{where}.most_related_para must be an integer, got {shown_json(most_related)}")
    return _Document(title.strip(), paragraphs, is_selected, most_related)


def _questions(source: Source) -> Iterator[_Question]:
    name = source_name(source)
    rewind(source)
    seen: dict[str, int] = {}
    for line, obj in iter_jsonl(source):
        if not isinstance(obj, dict):
            raise FormatError(name, line, f"expected a DuReader question object, got {type(obj).__name__}")
        for key in ("question_id", "question", "question_type", "documents"):
            if key not in obj:
                raise FormatError(name, line, f"missing field {key!r}")
        question_id = check_id(require_str(obj["question_id"], "question_id", name, line), "question_id", name, line)
        if question_id in seen:
            raise FormatError(name, line, f"duplicate question_id {question_id!r} (first at line {seen[question_id]})")
        seen[question_id] = line
        question = check_query_text(
            require_str(obj["question"], "question", name, line), "field 'question'", name, line
        )
        question_type = obj["question_type"]
        if question_type not in QUESTION_TYPES:
            raise FormatError(
                name, line, f"question_type must be one of {', '.join(QUESTION_TYPES)}, got {shown_json(question_type)}"
            )
        answers = obj.get("answers")
        if answers is not None:
            if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
                raise FormatError(name, line, "field 'answers' must be a list of strings")
        documents = obj["documents"]
        if not isinstance(documents, list):
            raise FormatError(name, line, f"field 'documents' must be a list, got {type(documents).__name__}")
        docs = [_document(doc, i, name, line) for i, doc in enumerate(documents)]
        yield _Question(line, question_id, question, question_type, answers, docs)


def _doc_id(document: _Document) -> str:
    payload = json.dumps([document.title, *(p.strip() for p in document.paragraphs)], ensure_ascii=False)
    return "d" + hashlib.sha1(unicodedata.normalize("NFC", payload).encode("utf-8")).hexdigest()[:16]


def _split_from_name(name: str) -> str:
    tokens = set(re.split(r"[._\-/\\]+", os.path.basename(name).lower()))
    found = sorted({"test" if t.startswith("test") and t[4:].isdigit() else t for t in tokens} & set(SPLITS))
    return found[0] if len(found) == 1 else "test"


def read_dureader(
    path: Source,
    *,
    remove_titles: bool = True,
    max_chars: int = 256,
    split: str | None = None,
    selected_grade: int | None = None,
) -> CollectionSource:
    """Read DuReader 2.0 MRC JSON lines as a passage-retrieval collection.

    Parameters
    ----------
    path : str, os.PathLike or file object
        A DuReader JSON-lines file, plain or gzip-compressed.  A file object
        must be seekable.
    remove_titles : bool, optional
        Drop document titles (default, as DuReader-retrieval did); ``False``
        keeps them in :attr:`Passage.title`.  Titles are never in the text.
    max_chars : int, optional
        Passage length rule, see :func:`split_paragraphs` (default 256).
    split : str or None, optional
        Split of every question.  ``None`` takes it from the file name
        (``search.train.json`` -> ``train``, ``zhidao.test1.json`` ->
        ``test``) and uses ``"test"`` when the name names no split, or
        more than one.
    selected_grade : int or None, optional
        ``None`` (default): no qrels.  An integer: the passage holding
        ``most_related_para`` of each ``is_selected`` document gets this
        grade (see the module docstring for why this is weak).

    Returns
    -------
    CollectionSource
        Streams of de-duplicated passages, queries and (optional) qrels;
        ``language`` is ``"zh"``.

    Raises
    ------
    FormatError
        At call time for a missing file; while streaming for invalid JSON,
        a missing or mistyped field, an unknown ``question_type``, a duplicate
        ``question_id``, or (qrels with ``selected_grade``) a selected
        document without a usable ``most_related_para``.
    ValueError
        For a bad ``max_chars``, ``split`` or ``selected_grade``.
    """
    _check_options(max_chars, split, selected_grade)
    require_file(path)
    name = source_name(path)
    query_split = split if split is not None else _split_from_name(name)
    return _Reader(path, name, remove_titles, max_chars, query_split, selected_grade).source()


def _check_options(max_chars: object, split: object, selected_grade: object) -> None:
    chars = as_integer(max_chars)
    if chars is None or chars < 1:
        raise ValueError(f"max_chars must be a positive integer, got {max_chars!r}")
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)} or None, got {split!r}")
    grade = as_integer(selected_grade)
    if selected_grade is not None and (grade is None or not 0 <= grade <= GRADE_MAX):
        raise ValueError(f"selected_grade must be None or an integer in 0..{GRADE_MAX}, got {selected_grade!r}")


@dataclass(frozen=True, slots=True)
class _Reader:
    """The streams of :func:`read_dureader` over one file, with its checked options."""

    path: Source
    name: str
    remove_titles: bool
    max_chars: int
    split: str
    selected_grade: int | None

    def source(self) -> CollectionSource:
        return CollectionSource(
            passages=self.passages,
            queries=self.queries,
            qrels=self.qrels,
            language="zh",
            description=f"DuReader 2.0 questions from {self.name}, documents split into passages of > "
            f"{self.max_chars} characters",
        )

    def document_passages(self, document: _Document, line: int) -> Iterator[tuple[Passage, list[int]]]:
        origin = f"{self.name}:{line}"
        doc_id = _doc_id(document)
        title = "" if self.remove_titles else document.title
        for position, (text, members) in enumerate(split_paragraphs(document.paragraphs, self.max_chars)):
            text = check_text(unicodedata.normalize("NFC", text), f"passage {position} of {doc_id}", self.name, line)
            pid = text_passage_id(f"{title}\n{text}" if title else text)
            yield Passage(pid, text, title, doc_id, position, "zh", origin), members

    def passages(self) -> Iterator[Passage]:
        seen: set[str] = set()
        for question in _questions(self.path):
            for document in question.documents:
                for passage, _ in self.document_passages(document, question.line):
                    if passage.id not in seen:
                        seen.add(passage.id)
                        yield passage

    def queries(self) -> Iterator[Query]:
        for question in _questions(self.path):
            yield Query(
                id=question.question_id,
                text=question.question,
                split=self.split,
                type=question.question_type,
                language="zh",
                answers=question.answers,
                origin=f"{self.name}:{question.line}",
            )

    def qrels(self) -> Iterator[QrelEntry]:
        if self.selected_grade is None:
            return
        for question in _questions(self.path):
            origin = f"{self.name}:{question.line}"
            done: set[str] = set()
            for index, document in enumerate(question.documents):
                if not document.is_selected:
                    continue
                pid = self.selected_passage(question, index, document)
                if pid not in done:
                    done.add(pid)
                    yield QrelEntry(question.question_id, pid, self.selected_grade, origin=origin)

    def selected_passage(self, question: _Question, index: int, document: _Document) -> str:
        """Id of the passage holding the selected document's ``most_related_para``."""
        related = document.most_related_para
        if related is None:
            raise FormatError(
                self.name,
                question.line,
                f"documents[{index}] is selected but has no 'most_related_para' "
                "(it is in the preprocessed DuReader release, not the raw one)",
            )
        if not 0 <= related < len(document.paragraphs):
            raise FormatError(
                self.name,
                question.line,
                f"documents[{index}].most_related_para is {related}, expected an index "
                f"into its {len(document.paragraphs)} paragraphs",
            )
        holder = [p for p, members in self.document_passages(document, question.line) if related in members]
        if not holder:
            raise FormatError(
                self.name, question.line, f"documents[{index}].most_related_para {related} is an empty paragraph"
            )
        return holder[0].id
