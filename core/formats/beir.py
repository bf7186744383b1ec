"""BEIR folders: ``corpus.jsonl``, ``queries.jsonl``, ``qrels/{split}.tsv`` (+ pooljudge extensions).

Layout read by :func:`read_beir` and written by :func:`write_beir`::

    folder/
      corpus.jsonl        {"_id", "title", "text"} [+ "doc_id", "position", "language"]
      queries.jsonl       {"_id", "text"} [+ "split", "type", "domain", "language",
                                            "translation", "answers"]
      qrels/train.tsv     query-id <TAB> corpus-id <TAB> score   (header row optional)
      qrels/dev.tsv
      qrels/test.tsv
      runs/NAME.trec      TREC run files (also .trec.gz, .run, .txt, .gz of those)

``corpus.jsonl`` and ``queries.jsonl`` may also be gzip files named
``corpus.jsonl.gz`` / ``queries.jsonl.gz``.  Fields not listed above (such
as BEIR's ``metadata``) are ignored.

A query's split is its own ``split`` field; without one, the name of the
qrels file it is judged in (``train.tsv`` -> ``"train"``); without
judgments, ``"test"``.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from core.errors import FormatError
from core.formats._io import (
    is_blank,
    is_existing_file,
    iter_jsonl,
    open_text_for_write,
    require_path,
    require_str,
    shown_json,
)
from core.formats._rows import (
    SeenPairs,
    check_grade,
    check_id,
    check_position_range,
    check_query_text,
    check_text,
    check_token,
    check_tsv_field,
    find_line,
    iter_rows,
    parse_grade,
)
from core.formats.trec import RUN_SUFFIXES, iter_trec_run, run_name_from_path, write_run
from core.limits import LABEL_MAX_CHARS, LANGUAGE_MAX_CHARS, QUERY_TEXT_MAX_CHARS
from core.types import (
    SPLITS,
    CollectionSource,
    Passage,
    QrelEntry,
    Qrels,
    Query,
    Run,
    RunEntry,
    empty_stream,
)
from core.validators import is_integer

__all__ = ["iter_beir_corpus", "iter_beir_qrels", "iter_beir_queries", "read_beir", "write_beir"]

QRELS_HEADER = ("query-id", "corpus-id", "score")
QRELS_HEADERS = frozenset(
    {
        QRELS_HEADER,
        ("query_id", "corpus_id", "score"),
        ("query-id", "doc-id", "score"),
        ("qid", "docid", "score"),
        ("qid", "pid", "score"),
        ("qid", "docid", "rel"),
        ("qid", "pid", "rel"),
        ("qid", "pid", "label"),
    }
)
"""Header rows a qrels TSV may start with; the first line is skipped only when it is exactly one of them."""
_QUERY_TEXT_FIELDS = ("type", "domain", "language", "translation")
_FIELD_LIMITS = {
    "type": LABEL_MAX_CHARS,
    "domain": LABEL_MAX_CHARS,
    "language": LANGUAGE_MAX_CHARS,
    "translation": QUERY_TEXT_MAX_CHARS,
}


# --------------------------------------------------------------------------- records


def _optional_str(record: dict[str, Any], key: str, path: str, line: int) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise FormatError(path, line, f"field {key!r} must be a string or null, got {shown_json(value)}")
    limit = _FIELD_LIMITS.get(key)
    if limit is not None and len(value) > limit:
        raise FormatError(path, line, f"field {key!r} is {len(value):,} characters long, the limit is {limit:,}")
    if "\x00" in value:  # PostgreSQL text cannot hold it
        raise FormatError(path, line, f"field {key!r} contains a NUL character (U+0000)")
    return value


def _text(value: Any, key: str, path: str, line: int, *, allow_empty: bool) -> str:
    """A text field: a JSON string (numbers are not silently turned into text)."""
    if not isinstance(value, str):
        raise FormatError(path, line, f"field {key!r} must be a string, got {shown_json(value)}")
    if not allow_empty and is_blank(value):
        raise FormatError(path, line, f"field {key!r} is empty")
    return value


def _record(obj: Any, path: str, line: int) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise FormatError(path, line, f"expected a JSON object, got {type(obj).__name__}")
    return obj


def _json_id(text: str) -> str | None:
    obj = json.loads(text)
    return str(obj.get("_id")) if isinstance(obj, dict) else None


def _record_with_id(obj: Any, name: str, lineno: int, id_what: str, fields: str) -> tuple[dict[str, Any], str]:
    """A corpus or queries record checked to be an object with an ``_id`` and a ``text``; it and its checked id."""
    rec = _record(obj, name, lineno)
    ident = check_id(require_str(rec.get("_id"), "_id", name, lineno), id_what, name, lineno)
    if "text" not in rec:
        raise FormatError(name, lineno, f"missing field 'text' (expected {fields})")
    return rec, ident


def _duplicate_error(path: str, line: int, what: str, ident: str) -> FormatError:
    """The error for a second record with ``_id`` ``ident``, naming the line of the first when it can be re-read."""
    earlier = find_line(path, lambda text: _json_id(text) == ident, before=line)
    where = f" (first at line {earlier})" if earlier is not None else ""
    return FormatError(path, line, f"duplicate {what} {ident!r}{where}")


def iter_beir_corpus(path: str | os.PathLike[str], *, allow_empty: bool = False) -> Iterator[Passage]:
    """Stream the passages of a BEIR ``corpus.jsonl`` (plain or gzip).

    Each record needs ``_id`` (string, or integer stringified) and ``text``
    (string, may be empty); ``title`` is optional (default ``""``).  The
    pooljudge fields ``doc_id`` (string), ``position`` (integer >= 0) and
    ``language`` (string) are read when present.

    Raises
    ------
    FormatError
        On invalid JSON, a record that is not an object, a missing or
        mistyped field, an empty id, or a duplicate ``_id`` (naming the
        earlier line).
    """
    name = os.fspath(path)
    seen: set[str] = set()
    for lineno, obj in iter_jsonl(name, allow_empty=allow_empty):
        rec, pid = _record_with_id(obj, name, lineno, "passage id '_id'", "{'_id', 'title', 'text'}")
        text = check_text(_text(rec["text"], "text", name, lineno, allow_empty=True), "field 'text'", name, lineno)
        title = rec.get("title")
        title = "" if title is None else _text(title, "title", name, lineno, allow_empty=True)
        check_text(title, "field 'title'", name, lineno)
        doc_id = _optional_str(rec, "doc_id", name, lineno)
        if doc_id is not None:
            check_id(doc_id, "field 'doc_id'", name, lineno)
        position = rec.get("position")
        if position is not None and (not is_integer(position) or position < 0):
            raise FormatError(
                name, lineno, f"field 'position' must be an integer >= 0 or null, got {shown_json(position)}"
            )
        if position is not None:
            check_position_range(position, "field 'position'", name, lineno)
        if pid in seen:
            raise _duplicate_error(name, lineno, "passage id", pid)
        seen.add(pid)
        yield Passage(
            id=pid,
            text=text,
            title=title,
            doc_id=doc_id,
            position=position,
            language=_optional_str(rec, "language", name, lineno),
            origin=f"{name}:{lineno}",
        )


def _answers(value: Any, path: str, line: int) -> list[Any] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise FormatError(path, line, f"field 'answers' must be a list, got {type(value).__name__}")
    for element in value:
        if isinstance(element, str) or (isinstance(element, list) and all(isinstance(alt, str) for alt in element)):
            if "\x00" in (element if isinstance(element, str) else "".join(element)):
                raise FormatError(path, line, "an answer contains a NUL character (U+0000)")
            continue
        raise FormatError(
            path,
            line,
            f"each answer must be a string or a list of strings, got {shown_json(element)}",
        )
    return value


def iter_beir_queries(
    path: str | os.PathLike[str],
    split_of: Callable[[str, int], str] | None = None,
) -> Iterator[Query]:
    """Stream the queries of a BEIR ``queries.jsonl`` (plain or gzip).

    Parameters
    ----------
    path : str or os.PathLike
        The queries file.  Records need ``_id`` and a non-empty ``text``;
        ``split`` (one of train/dev/test), ``type``, ``domain``,
        ``language``, ``translation`` (strings) and ``answers`` (list of
        strings or lists of strings) are read when present.
    split_of : callable, optional
        ``split_of(query_id, line)`` gives the split of a query without its
        own ``split`` field (default: always ``"test"``).

    Raises
    ------
    FormatError
        On invalid JSON, a missing or mistyped field, an unknown split or a
        duplicate ``_id`` (naming the earlier line).
    """
    name = os.fspath(path)
    seen: set[str] = set()
    for lineno, obj in iter_jsonl(name):
        rec, qid = _record_with_id(obj, name, lineno, "query id '_id'", "{'_id', 'text'}")
        text = check_query_text(
            _text(rec["text"], "text", name, lineno, allow_empty=False), "field 'text'", name, lineno
        )
        split = rec.get("split")
        if split is not None:
            if split not in SPLITS:
                raise FormatError(
                    name, lineno, f"field 'split' must be one of {', '.join(SPLITS)}, got {shown_json(split)}"
                )
        else:
            split = split_of(qid, lineno) if split_of is not None else "test"
        extras = {key: _optional_str(rec, key, name, lineno) for key in _QUERY_TEXT_FIELDS}
        answers = _answers(rec.get("answers"), name, lineno)
        if qid in seen:
            raise _duplicate_error(name, lineno, "query id", qid)
        seen.add(qid)
        yield Query(id=qid, text=text, split=split, answers=answers, origin=f"{name}:{lineno}", **extras)


def iter_beir_qrels(path: str | os.PathLike[str]) -> Iterator[QrelEntry]:
    """Stream a BEIR qrels TSV: ``query-id <TAB> corpus-id <TAB> score``, header row optional.

    The first line is a header when it is exactly one of
    :data:`QRELS_HEADERS` (``query-id<TAB>corpus-id<TAB>score`` and a few
    spellings), never because of one column.  Every other line needs
    exactly 3 tab-separated columns and an integer score.

    Raises
    ------
    FormatError
        On a wrong column count, a non-integer score, an empty id, a
        duplicate ``(query-id, corpus-id)`` (naming the earlier line), a
        blank line inside the file, or an empty file.
    """
    name = os.fspath(path)
    seen = SeenPairs(
        name, "duplicate judgment for query {qid!r}, document {docid!r} (already judged at line {earlier})"
    )
    first = True
    count = 0
    for lineno, cols in iter_rows(name, sep="\t", what="judgments"):
        if first:
            first = False
            if tuple(col.strip().lower() for col in cols) in QRELS_HEADERS:
                continue
        if len(cols) != 3:
            raise FormatError(
                name, lineno, f"expected 3 tab-separated columns 'query-id corpus-id score', got {len(cols)}"
            )
        qid = check_id(cols[0], "query-id", name, lineno)
        docid = check_id(cols[1], "corpus-id", name, lineno)
        grade = parse_grade(cols[2], "score (column 3)", name, lineno)
        seen.add(qid, docid, lineno)
        count += 1
        yield QrelEntry(qid, docid, grade, origin=f"{name}:{lineno}")
    if not count:
        raise FormatError(name, 2, "no judgments after the header line")


# --------------------------------------------------------------------------- folder


def _find_file(folder: Path, base: str) -> str:
    for candidate in (folder / base, folder / f"{base}.gz"):
        if is_existing_file(candidate):
            return os.fspath(candidate)
    raise FormatError(os.fspath(folder / base), None, f"missing {base}: a BEIR folder needs {base}")


def _qrels_files(folder: Path) -> list[tuple[str, str]]:
    """``[(split, path)]`` for ``qrels/*.tsv[.gz]``, in train/dev/test order."""
    qdir = folder / "qrels"
    if not qdir.is_dir():
        return []
    found: dict[str, str] = {}
    for entry in sorted(qdir.iterdir()):
        if not is_existing_file(entry):
            continue
        base = entry.name[:-3] if entry.name.endswith(".gz") else entry.name
        if not base.endswith(".tsv"):
            continue
        split = base[: -len(".tsv")]
        if split not in SPLITS:
            raise FormatError(
                os.fspath(entry), None, f"qrels file must be named {', '.join(s + '.tsv' for s in SPLITS)}"
            )
        if split in found:
            raise FormatError(os.fspath(entry), None, f"two qrels files for split {split!r} ({found[split]})")
        found[split] = os.fspath(entry)
    return [(split, found[split]) for split in SPLITS if split in found]


def _run_files(folder: Path) -> dict[str, str]:
    rdir = folder / "runs"
    if not rdir.is_dir():
        return {}
    runs: dict[str, str] = {}
    for entry in sorted(rdir.iterdir()):
        if not is_existing_file(entry):
            continue
        base = entry.name[:-3] if entry.name.endswith(".gz") else entry.name
        if not base.endswith(RUN_SUFFIXES):
            continue
        run_name = run_name_from_path(entry.name)
        if run_name in runs:
            raise FormatError(os.fspath(entry), None, f"two files for run {run_name!r} ({runs[run_name]})")
        runs[run_name] = os.fspath(entry)
    return runs


def _iter_all_qrels(files: list[tuple[str, str]]) -> Iterator[QrelEntry]:
    """All split files in turn; a pair judged in two files is an error naming both."""
    seen: dict[str, dict[str, str]] = {}
    for _split, path in files:
        for entry in iter_beir_qrels(path):
            docs = seen.setdefault(entry.query_id, {})
            earlier = docs.get(entry.doc_id)
            if earlier is not None:
                line = int(str(entry.origin).rsplit(":", 1)[1])
                raise FormatError(
                    path,
                    line,
                    f"query {entry.query_id!r}, document {entry.doc_id!r} is also judged at {earlier}",
                )
            docs[entry.doc_id] = str(entry.origin)
            yield entry


def _split_lookup(files: list[tuple[str, str]], queries_path: str) -> Callable[[str, int], str]:
    """Map each judged query to the split of its qrels file (read now, one set of ids per file)."""
    splits_of: dict[str, list[str]] = {}
    for split, path in files:
        for qid in {entry.query_id for entry in iter_beir_qrels(path)}:
            splits_of.setdefault(qid, []).append(split)

    def split_of(qid: str, line: int) -> str:
        splits = splits_of.get(qid)
        if not splits:
            return "test"
        if len(splits) > 1:
            raise FormatError(
                queries_path,
                line,
                f"query {qid!r} is judged in several split qrels files "
                f"({', '.join(s + '.tsv' for s in splits)}) and has no 'split' field to say which split it is",
            )
        return splits[0]

    return split_of


def read_beir(folder: str | os.PathLike[str], *, corpus_optional: bool = False) -> CollectionSource:
    """Read a BEIR folder (with pooljudge's optional extensions) as a :class:`CollectionSource`.

    Parameters
    ----------
    folder : str or os.PathLike
        A folder with ``corpus.jsonl``, ``queries.jsonl`` (each possibly
        ``.gz``), optionally ``qrels/{train,dev,test}.tsv`` and ``runs/``
        holding TREC run files (``*.trec``, ``*.run``, ``*.txt``, each
        possibly ``.gz``), each a run named after its stem.
    corpus_optional : bool, default False
        A merge that only adds queries (and qrels) to a stored collection:
        ``corpus.jsonl`` may then be absent or empty, and the source notes
        which.

    Returns
    -------
    CollectionSource
        Streams re-read the files on every call.  ``language`` is ``None``
        (BEIR does not say).

    Raises
    ------
    FormatError
        Now: when the folder, ``corpus.jsonl`` or ``queries.jsonl`` is
        missing, a file in ``qrels/`` is not named after a split, or two run
        files share a name.  While streaming: any problem in a record, and a
        query without its own ``split`` judged in two split files.
    """
    root = Path(require_path(folder, "BEIR folder not found"))
    if not root.is_dir():
        raise FormatError(os.fspath(root), None, "not a folder")
    corpus, corpus_note = _corpus_file(root, corpus_optional)
    queries = _find_file(root, "queries.jsonl")
    qrels_files = _qrels_files(root)
    run_files = _run_files(root)

    def stream_queries() -> Iterator[Query]:
        return iter_beir_queries(queries, _split_lookup(qrels_files, queries))

    def stream_run(path: str) -> Callable[[], Iterator[RunEntry]]:
        return lambda: iter_trec_run(path)

    parts = [os.path.basename(corpus) if corpus else "no corpus.jsonl", os.path.basename(queries)]
    parts += [f"qrels/{os.path.basename(p)}" for _, p in qrels_files]
    parts += [f"runs/{os.path.basename(p)}" for p in run_files.values()]
    return CollectionSource(
        passages=(lambda: iter_beir_corpus(corpus, allow_empty=corpus_optional)) if corpus else empty_stream,
        queries=stream_queries,
        qrels=(lambda: _iter_all_qrels(qrels_files)) if qrels_files else empty_stream,
        runs={name: stream_run(path) for name, path in run_files.items()},
        language=None,
        description=f"BEIR folder {os.fspath(root)}: {', '.join(parts)}",
        notes=[corpus_note] if corpus_note else [],
    )


def _corpus_file(root: Path, optional: bool) -> tuple[str | None, str]:
    """``(the corpus file or None, a note)``: an optional corpus may be absent or empty, and the note says so."""
    if not optional:
        return _find_file(root, "corpus.jsonl"), ""
    try:
        corpus = _find_file(root, "corpus.jsonl")
    except FormatError:
        return None, "no corpus.jsonl: queries and qrels only, no passage added"
    if os.path.getsize(corpus) == 0:
        return corpus, f"{os.path.basename(corpus)} is empty: queries and qrels only, no passage added"
    return corpus, ""


# --------------------------------------------------------------------------- writing


def _passage_record(p: Passage) -> dict[str, Any]:
    if not isinstance(p.id, str) or not p.id.strip():
        raise ValueError(f"passage id must be a non-empty str, got {p.id!r}")
    if not isinstance(p.text, str) or not isinstance(p.title, str):
        raise ValueError(f"passage {p.id!r}: title and text must be str")
    rec: dict[str, Any] = {"_id": p.id, "title": p.title, "text": p.text}
    if p.doc_id is not None:
        rec["doc_id"] = p.doc_id
    if p.position is not None:
        if not is_integer(p.position) or p.position < 0:
            raise ValueError(f"passage {p.id!r}: position must be an int >= 0, got {p.position!r}")
        rec["position"] = p.position
    if p.language is not None:
        rec["language"] = p.language
    return rec


def _query_record(q: Query) -> dict[str, Any]:
    if not isinstance(q.id, str) or not q.id.strip():
        raise ValueError(f"query id must be a non-empty str, got {q.id!r}")
    if not isinstance(q.text, str) or not q.text.strip():
        raise ValueError(f"query {q.id!r}: text must be a non-empty str")
    if q.split not in SPLITS:
        raise ValueError(f"query {q.id!r}: split must be one of {SPLITS}, got {q.split!r}")
    rec: dict[str, Any] = {"_id": q.id, "text": q.text}
    if q.split != "test":
        rec["split"] = q.split
    for key in _QUERY_TEXT_FIELDS:
        value = getattr(q, key)
        if value is not None:
            rec[key] = value
    if q.answers is not None:
        rec["answers"] = q.answers
    return rec


def write_beir(
    folder: str | os.PathLike[str],
    passages: Iterable[Passage],
    queries: Iterable[Query],
    qrels: Qrels | None,
    runs: dict[str, Run] | None,
) -> None:
    """Write a BEIR folder that :func:`read_beir` reads back to the same records.

    Parameters
    ----------
    folder : str or os.PathLike
        Created if needed; must be absent or empty (stale qrels or run files
        would otherwise be read back).
    passages : iterable of Passage
        Streamed to ``corpus.jsonl``; ``doc_id``, ``position`` and
        ``language`` are written only when not ``None``.
    queries : iterable of Query
        Written to ``queries.jsonl``; ``split`` only when not ``"test"``,
        the other extension fields only when not ``None``.
    qrels : Qrels or None
        Written to ``qrels/{split}.tsv`` (with a header row), each query's
        judgments in the file of its split (``"test"`` for queries not in
        ``queries``); sorted by query then document.
    runs : dict of str to Run, or None
        Each written to ``runs/{name}.trec`` (see
        :func:`core.formats.trec.write_run`).

    Raises
    ------
    FileExistsError
        When ``folder`` exists and is not empty.
    ValueError
        On an empty or duplicate id, no passages or no queries, an id that
        cannot go into a TSV (tab, line break) or TREC file (whitespace), a
        run name that would not survive the round trip, or an empty run.
    """
    root = Path(folder)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise FileExistsError(f"{os.fspath(root)} exists and is not an empty folder")

    # Everything held in memory is checked and rendered before any file is written.
    qrels_lines = _qrels_lines(qrels or {})
    run_texts = _run_texts(runs or {})
    root.mkdir(parents=True, exist_ok=True)
    _write_corpus(root / "corpus.jsonl", passages)
    split_of = _write_queries(root / "queries.jsonl", queries)
    by_split: dict[str, list[str]] = {}
    for qid, lines in qrels_lines.items():
        by_split.setdefault(split_of.get(qid, "test"), []).extend(lines)
    for split in SPLITS:
        if by_split.get(split):
            with open_text_for_write(root / "qrels" / f"{split}.tsv") as fh:
                fh.write("\t".join(QRELS_HEADER) + "\n")
                fh.writelines(by_split[split])
    for run_name, text in run_texts.items():
        with open_text_for_write(root / "runs" / f"{run_name}.trec") as fh:
            fh.write(text)


def _qrels_lines(qrels: Qrels) -> dict[str, list[str]]:
    """``{qid: TSV lines}`` of the qrels, checked, sorted by query then document."""
    qrels_lines: dict[str, list[str]] = {}
    for qid in sorted(qrels):
        check_tsv_field(qid, "query id")
        docs = qrels[qid]
        lines = qrels_lines[qid] = []
        for docid in sorted(docs):
            check_tsv_field(docid, f"document id (query {qid!r})")
            grade = check_grade(docs[docid], f"grade of query {qid!r}, document {docid!r}")
            lines.append(f"{qid}\t{docid}\t{grade}\n")
    return qrels_lines


def _run_texts(runs: dict[str, Run]) -> dict[str, str]:
    """``{run name: TREC run text}``, names checked to survive the round trip as file names."""
    run_texts: dict[str, str] = {}
    for run_name, run in runs.items():
        check_token(run_name, "run name")
        if any(ch in run_name for ch in "/\\") or run_name.startswith("."):
            raise ValueError(f"run name {run_name!r} cannot be used as a file name")
        if not any(run.values()):
            raise ValueError(f"run {run_name!r} is empty")
        buffer = io.StringIO()
        write_run(run, buffer, tag=run_name)
        run_texts[run_name] = buffer.getvalue()
    return run_texts


def _write_corpus(path: Path, passages: Iterable[Passage]) -> None:
    seen: set[str] = set()
    with open_text_for_write(path) as fh:
        for p in passages:
            rec = _passage_record(p)
            if p.id in seen:
                raise ValueError(f"duplicate passage id {p.id!r}")
            seen.add(p.id)
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    if not seen:
        raise ValueError("no passages: a BEIR corpus.jsonl must hold at least one passage")


def _write_queries(path: Path, queries: Iterable[Query]) -> dict[str, str]:
    """Write the queries; returns ``{qid: split}``."""
    split_of: dict[str, str] = {}
    with open_text_for_write(path) as fh:
        for q in queries:
            rec = _query_record(q)
            if q.id in split_of:
                raise ValueError(f"duplicate query id {q.id!r}")
            split_of[q.id] = q.split
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    if not split_of:
        raise ValueError("no queries: a BEIR queries.jsonl must hold at least one query")
    return split_of
