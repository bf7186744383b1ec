"""Reader for DAPR (Document-Aware Passage Retrieval, Wang et al., 2024) JSON lines.

A DAPR dataset folder holds::

    corpus.jsonl   {"id": doc id, "title": str, "chunks": [{"id": chunk id, "text": str}, ...]}
    train.jsonl    {"query": {"id", "text"},
    dev.jsonl       "judged_chunks": [{"chunk": {"id", "text"}, "judgement": int,
    test.jsonl                         "belonging_doc": {"id", "title", "chunks"}}, ...]}

(any of the query files may be absent; each may be gzip-compressed and named
``*.jsonl.gz``).

What the reader makes of it:

- **Passages**: every chunk of every document is a :class:`~core.types.Passage`
  with the chunk id as its id, ``doc_id`` the document id, ``title`` the
  document title stripped of surrounding whitespace (Genomics titles come
  wrapped in ``\\r\\n``), and ``position`` the chunk's 0-based index in the
  document's chunk list (not the number in the chunk id: Genomics chunk ids
  start at ``-1``).  Chunks with blank text exist (Genomics) and are kept so
  that positions match the source.
- Documents given as ``belonging_doc`` of judged chunks are added to the
  corpus as well (the DAPR samples' ``corpus.jsonl`` does not contain them),
  after the documents of ``corpus.jsonl``, in order of first appearance; a
  document is stored once.  The same document id with different content
  (title or chunks), in the corpus or across query lines, is a
  :class:`~core.errors.FormatError`, as is a duplicate id inside
  ``corpus.jsonl`` or a chunk id repeated inside one document.
- **Queries**: the split comes from the file name (``train``/``dev``/``test``);
  language ``"en"``.  A query spread over several lines (the Genomics sample
  repeats query ``160`` on three lines, one judged chunk each) is one query;
  its lines must have the same text and be in the same file.
- **Qrels**: ``judgement`` (an integer) is the grade of ``(query, chunk)``.
  Each judged chunk must be in its ``belonging_doc`` with the same text.
  The same pair judged twice with the same grade counts once; with
  different grades it is an error.

Uniqueness of chunk ids *across* documents is not checked here (it would need
every chunk id of the corpus in memory); the importer's primary key catches it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import FormatError
from core.formats._io import iter_jsonl, require_file, require_path, require_str, shown_json
from core.formats._rows import check_grade_range, check_id, check_query_text, check_text
from core.types import SPLITS, CollectionSource, Passage, QrelEntry, Query
from core.validators import is_integer

PathLike = str | os.PathLike[str]

_CORPUS_NAMES = ("corpus.jsonl", "corpus.jsonl.gz")


@dataclass(slots=True)
class _Doc:
    id: str
    title: str
    chunks: list[tuple[str, str]]  # (chunk id, text)
    path: str
    line: int

    @property
    def origin(self) -> str:
        return f"{self.path}:{self.line}"

    def digest(self) -> str:
        payload = json.dumps([self.id, self.title, self.chunks], ensure_ascii=False)
        return hashlib.sha1(payload.encode("utf-8")).hexdigest()

    def passages(self) -> Iterator[Passage]:
        for position, (chunk_id, text) in enumerate(self.chunks):
            yield Passage(
                id=chunk_id,
                text=text,
                title=self.title,
                doc_id=self.id,
                position=position,
                language="en",
                origin=self.origin,
            )


def _object_with_id(value: Any, what: str, shape: str, key: str, path: str, line: int) -> tuple[dict[str, Any], str]:
    """``value`` checked to be an object ``shape`` with ``"id"`` and ``key``; it and its checked id."""
    if not isinstance(value, dict):
        raise FormatError(path, line, f"{what} must be an object {shape}, got {type(value).__name__}")
    for required in ("id", key):
        if required not in value:
            raise FormatError(path, line, f"{what} has no {required!r}")
    return value, check_id(require_str(value["id"], f"{what}.id", path, line), f"{what}.id", path, line)


def _string(value: Any, what: str, path: str, line: int) -> str:
    """``value`` checked to be a string of valid text (it may be empty)."""
    if not isinstance(value, str):
        raise FormatError(path, line, f"{what} must be a string, got {type(value).__name__}")
    check_text(value, what, path, line)
    return value


def _parse_doc(value: Any, what: str, path: str, line: int) -> _Doc:
    value, doc_id = _object_with_id(value, what, "{id, title, chunks}", "chunks", path, line)
    title = _string(value.get("title", ""), f"{what}.title", path, line)
    chunks = value["chunks"]
    if not isinstance(chunks, list):
        raise FormatError(path, line, f"{what}.chunks must be a list of {{id, text}}, got {type(chunks).__name__}")
    parsed: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, chunk in enumerate(chunks):
        chunk_id, text = _parse_chunk(chunk, f"{what}.chunks[{i}]", path, line)
        if chunk_id in seen:
            raise FormatError(path, line, f"{what}: chunk id {chunk_id!r} appears twice in document {doc_id!r}")
        seen.add(chunk_id)
        parsed.append((chunk_id, text))
    return _Doc(doc_id, title.strip(), parsed, path, line)


def _parse_chunk(value: Any, what: str, path: str, line: int) -> tuple[str, str]:
    value, chunk_id = _object_with_id(value, what, "{id, text}", "text", path, line)
    return chunk_id, _string(value["text"], f"{what}.text", path, line)


@dataclass(slots=True)
class _Judged:
    chunk_id: str
    grade: int
    doc: _Doc


@dataclass(slots=True)
class _QueryLine:
    line: int
    query_id: str
    text: str
    judged: list[_Judged]


def _query_lines(path: str) -> Iterator[_QueryLine]:
    for line, obj in iter_jsonl(path):
        if not isinstance(obj, dict):
            raise FormatError(path, line, f"expected an object {{query, judged_chunks}}, got {type(obj).__name__}")
        for key in ("query", "judged_chunks"):
            if key not in obj:
                raise FormatError(path, line, f"missing field {key!r}")
        query = obj["query"]
        if not isinstance(query, dict):
            raise FormatError(path, line, f"field 'query' must be an object {{id, text}}, got {type(query).__name__}")
        for key in ("id", "text"):
            if key not in query:
                raise FormatError(path, line, f"query has no {key!r}")
        query_id = check_id(require_str(query["id"], "query.id", path, line), "query.id", path, line)
        text = check_query_text(require_str(query["text"], "query.text", path, line), "query.text", path, line)
        judged_chunks = obj["judged_chunks"]
        if not isinstance(judged_chunks, list):
            raise FormatError(path, line, f"field 'judged_chunks' must be a list, got {type(judged_chunks).__name__}")
        judged: list[_Judged] = []
        for i, item in enumerate(judged_chunks):
            what = f"judged_chunks[{i}]"
            if not isinstance(item, dict):
                raise FormatError(path, line, f"{what} must be an object {{chunk, judgement, belonging_doc}}")
            for key in ("chunk", "judgement", "belonging_doc"):
                if key not in item:
                    raise FormatError(path, line, f"{what} has no {key!r}")
            chunk_id, chunk_text = _parse_chunk(item["chunk"], f"{what}.chunk", path, line)
            grade = item["judgement"]
            if not is_integer(grade):
                raise FormatError(path, line, f"{what}.judgement must be an integer grade, got {shown_json(grade)}")
            check_grade_range(grade, f"{what}.judgement", path, line)
            doc = _parse_doc(item["belonging_doc"], f"{what}.belonging_doc", path, line)
            if (chunk_id, chunk_text) not in doc.chunks:
                known = dict(doc.chunks)
                problem = "is not among its chunks" if chunk_id not in known else "has a different text there"
                raise FormatError(path, line, f"{what}: chunk {chunk_id!r} {problem} in belonging_doc {doc.id!r}")
            judged.append(_Judged(chunk_id, grade, doc))
        yield _QueryLine(line, query_id, text, judged)


def _split_of(path: str) -> str:
    base = os.path.basename(path)
    stem = base.split(".", 1)[0]
    if stem not in SPLITS:
        raise FormatError(
            path,
            None,
            f"cannot tell the split from the file name {base!r}: expected train, dev or test "
            "(.jsonl or .jsonl.gz), or pass query files as a mapping {split: path}",
        )
    return stem


def _find_folder_files(folder: str) -> tuple[str, list[tuple[str, str]]]:
    names = sorted(os.listdir(folder))
    corpora = [n for n in names if n in _CORPUS_NAMES]
    if not corpora:
        raise FormatError(folder, None, "no corpus.jsonl (or corpus.jsonl.gz) in this DAPR folder")
    if len(corpora) > 1:
        raise FormatError(folder, None, "both corpus.jsonl and corpus.jsonl.gz: keep one")
    query_files: list[tuple[str, str]] = []
    for split in SPLITS:
        found = [n for n in names if n in (f"{split}.jsonl", f"{split}.jsonl.gz")]
        if len(found) > 1:
            raise FormatError(folder, None, f"both {split}.jsonl and {split}.jsonl.gz: keep one")
        query_files.extend((split, os.path.join(folder, n)) for n in found)
    known = {*_CORPUS_NAMES, *(f"{s}.jsonl" for s in SPLITS), *(f"{s}.jsonl.gz" for s in SPLITS)}
    for n in names:
        if (n.endswith(".jsonl") or n.endswith(".jsonl.gz")) and n not in known:
            raise FormatError(
                os.path.join(folder, n),
                None,
                "unexpected JSON-lines file in a DAPR folder: expected corpus.jsonl, train.jsonl, dev.jsonl, test.jsonl",
            )
    return os.path.join(folder, corpora[0]), query_files


def read_dapr(
    path: PathLike,
    query_files: Sequence[PathLike] | Mapping[str, PathLike] | None = None,
) -> CollectionSource:
    """Read a DAPR dataset: chunked documents and judged chunks.

    Parameters
    ----------
    path : str or os.PathLike
        A DAPR folder (``corpus.jsonl`` plus any of ``train.jsonl``,
        ``dev.jsonl``, ``test.jsonl``, each possibly ``.gz``), or a single
        corpus file.
    query_files : sequence or mapping of paths, optional
        With a corpus file: the query files, as paths named
        ``train``/``dev``/``test`` (``.jsonl``/``.jsonl.gz``), or a mapping
        ``{split: path}`` for other names.  Not allowed with a folder.

    Returns
    -------
    CollectionSource
        Streams of passages (corpus documents, then documents met only as
        ``belonging_doc``), queries and qrels; ``language`` is ``"en"``.

    Raises
    ------
    FormatError
        At call time for a missing file or folder, a folder without
        ``corpus.jsonl``, or a query file whose split cannot be told; while
        streaming for invalid JSON, missing or mistyped fields, a judged chunk
        not in its ``belonging_doc``, a document id with two contents, a
        query with two texts or in two files, or a pair with two grades.
    """
    root = require_path(path, "file or folder not found")
    corpus, queries_by_split = _dapr_files(root, query_files)
    require_file(corpus)
    for _, qpath in queries_by_split:
        require_file(qpath)
    return CollectionSource(
        passages=lambda: _passages(corpus, queries_by_split),
        queries=lambda: _queries(queries_by_split),
        qrels=lambda: _qrels(queries_by_split),
        language="en",
        description=f"DAPR chunked documents from {Path(corpus).parent if os.path.isdir(root) else corpus}",
    )


def _dapr_files(
    root: str, query_files: Sequence[PathLike] | Mapping[str, PathLike] | None
) -> tuple[str, list[tuple[str, str]]]:
    """The corpus file and the ``(split, path)`` query files of :func:`read_dapr`'s arguments."""
    if os.path.isdir(root):
        if query_files is not None:
            raise ValueError("query_files is only for a corpus file; a DAPR folder is searched for them")
        return _find_folder_files(root)
    queries_by_split: list[tuple[str, str]] = []
    if isinstance(query_files, Mapping):
        for split, qpath in query_files.items():
            if split not in SPLITS:
                raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
            queries_by_split.append((split, os.fspath(qpath)))
    elif query_files is not None:
        if isinstance(query_files, (str, os.PathLike)):
            raise TypeError("query_files must be a list of paths or a {split: path} mapping, not one path")
        queries_by_split = [(_split_of(os.fspath(q)), os.fspath(q)) for q in query_files]
    return root, queries_by_split


def _all_query_lines(queries_by_split: list[tuple[str, str]]) -> Iterator[tuple[str, str, _QueryLine]]:
    for split, qpath in queries_by_split:
        for qline in _query_lines(qpath):
            yield split, qpath, qline


def _belonging_docs(queries_by_split: list[tuple[str, str]]) -> dict[str, tuple[str, _Doc]]:
    """Documents met as belonging_doc, by id: (digest, doc); one document id must keep one content."""
    judged_docs: dict[str, tuple[str, _Doc]] = {}
    for _, _, qline in _all_query_lines(queries_by_split):
        for judged in qline.judged:
            doc = judged.doc
            digest = doc.digest()
            if doc.id in judged_docs:
                if judged_docs[doc.id][0] != digest:
                    raise FormatError(
                        doc.path,
                        doc.line,
                        f"document {doc.id!r} differs from the one given at {judged_docs[doc.id][1].origin}",
                    )
            else:
                judged_docs[doc.id] = (digest, doc)
    return judged_docs


def _passages(corpus: str, queries_by_split: list[tuple[str, str]]) -> Iterator[Passage]:
    """The corpus documents' chunks, then those of documents met only as belonging_doc."""
    judged_docs = _belonging_docs(queries_by_split)  # first pass over the query files
    in_corpus: dict[str, int] = {}
    for line, obj in iter_jsonl(corpus):
        doc = _parse_doc(obj, "document", corpus, line)
        if doc.id in in_corpus:
            raise FormatError(corpus, line, f"duplicate document id {doc.id!r} (first at line {in_corpus[doc.id]})")
        in_corpus[doc.id] = line
        if doc.id in judged_docs and judged_docs[doc.id][0] != doc.digest():
            raise FormatError(
                corpus,
                line,
                f"document {doc.id!r} differs from its belonging_doc at {judged_docs[doc.id][1].origin}",
            )
        yield from doc.passages()
    for doc_id, (_, doc) in judged_docs.items():
        if doc_id not in in_corpus:
            yield from doc.passages()


def _queries(queries_by_split: list[tuple[str, str]]) -> Iterator[Query]:
    seen: dict[str, tuple[str, str, str, int]] = {}  # id -> (text, split, path, line)
    for split, qpath, qline in _all_query_lines(queries_by_split):
        if qline.query_id in seen:
            text, first_split, first_path, first_line = seen[qline.query_id]
            if first_path != qpath:
                raise FormatError(
                    qpath,
                    qline.line,
                    f"query {qline.query_id!r} is already in {first_path}:{first_line} ({first_split}); "
                    "a query belongs to one split",
                )
            if text != qline.text:
                raise FormatError(
                    qpath,
                    qline.line,
                    f"query {qline.query_id!r} has a different text at {first_path}:{first_line}",
                )
            continue
        seen[qline.query_id] = (qline.text, split, qpath, qline.line)
        yield Query(id=qline.query_id, text=qline.text, split=split, language="en", origin=f"{qpath}:{qline.line}")


def _qrels(queries_by_split: list[tuple[str, str]]) -> Iterator[QrelEntry]:
    grades: dict[tuple[str, str], tuple[int, str]] = {}
    for _, qpath, qline in _all_query_lines(queries_by_split):
        for judged in qline.judged:
            key = (qline.query_id, judged.chunk_id)
            origin = f"{qpath}:{qline.line}"
            if key in grades:
                grade, first = grades[key]
                if grade != judged.grade:
                    raise FormatError(
                        qpath,
                        qline.line,
                        f"query {key[0]!r}, chunk {key[1]!r} judged {judged.grade} here and {grade} at {first}",
                    )
                continue
            grades[key] = (judged.grade, origin)
            yield QrelEntry(qline.query_id, judged.chunk_id, judged.grade, origin=origin)
