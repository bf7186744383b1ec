"""JSON maps of judgments and ranked lists (LeCaRD and similar).

* qrels: one JSON object ``{qid: {docid: grade}}`` with integer grades;
* ranked runs: ``{qid: [docid, ...]}``, best first, without scores.  Each
  document gets the rank-derived score ``n - i`` (``i`` its 0-based index in
  a list of ``n``), so sorting by score (trec_eval) gives back the list
  order.  A file may also hold several such objects, one per line (JSON
  lines); each becomes its own run, named ``{name}_{k}`` for line ``k``.
* LeCaRD folders (:func:`read_lecard`).

Document ids given as JSON integers (LeCaRD's candidate lists) are turned
into strings.  JSON is parsed by :func:`core.formats._io.load_json`: objects
with a repeated key are errors (plain :func:`json.loads` would silently keep
the last value), and so are ``NaN`` and nesting too deep to parse.  Syntax errors are reported at their
line; a problem found after parsing is reported at the line where the
offending key first appears in the text (best effort).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

from core.errors import FormatError
from core.formats._io import (
    KeyCursor,
    is_blank,
    is_existing_file,
    iter_jsonl,
    iter_lines,
    load_json,
    require_file,
    require_path,
    require_str,
    shown_json,
)
from core.formats._rows import check_grade_range, check_id, check_query_text
from core.types import CollectionSource, QrelEntry, Query, RunEntry, empty_stream
from core.validators import is_integer

__all__ = ["LECARD_ASCENDING_RUNS", "iter_json_qrels", "read_json_qrels", "read_json_ranked_run", "read_lecard"]

LECARD_ASCENDING_RUNS = ("bm25_top100", "tfidf_top100")
"""LeCaRD prediction files whose lists run from worst to best.

LeCaRD's own evaluation script (``metrics.py``, ``load_file``) reverses the
BM25 and TF-IDF lists before scoring them; in the released files the query's
own case, the best match, is the *last* element of those lists and the
*first* of ``lm_top100``, and the judged documents cluster at their ends.
"""


def _documents(path: str) -> list[tuple[int, str, Any]]:
    """``[(first_line, text, value)]``: one whole-file JSON document, or one per line (JSON lines)."""
    lines = [text for _, text in iter_lines(path)]
    text = "\n".join(lines)
    if not text.strip():
        raise FormatError(path, 1, "file is empty (blank)")
    try:
        return [(1, text, load_json(text, path))]
    except FormatError as exc:
        if not exc.message.startswith("invalid JSON: Extra data"):
            raise
    # Several documents: JSON lines, each line a whole object.
    return [(lineno, line, load_json(line, path, lineno)) for lineno, line in enumerate(lines, start=1) if line.strip()]


def _doc_id(value: Any, what: str, path: str, line: int) -> str:
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return check_id(str(value), what, path, line)
    raise FormatError(path, line, f"{what} must be a string or an integer, got {shown_json(value)}")


def iter_json_qrels(path: str | os.PathLike[str]) -> Iterator[QrelEntry]:
    """Stream the judgments of a JSON ``{qid: {docid: grade}}`` file (plain or gzip).

    Each entry's ``origin`` is ``file:line`` of its document key (best effort).

    Raises
    ------
    FormatError
        On invalid JSON (at its line), a repeated key, a value that is not
        an object, a grade that is not a JSON integer, or an empty id.
    """
    name = os.fspath(path)
    docs = _documents(name)
    if len(docs) != 1:
        raise FormatError(name, docs[1][0], "expected one JSON object {qid: {docid: grade}}, found several")
    _, text, data = docs[0]
    cursor = KeyCursor(text)
    if not isinstance(data, dict):
        raise FormatError(name, 1, f"expected a JSON object {{qid: {{docid: grade}}}}, got {type(data).__name__}")
    if not data:
        raise FormatError(name, 1, "no judgments: the JSON object is empty")
    for qid, judged in data.items():
        qline = cursor.line_of(qid)
        if not isinstance(judged, dict):
            raise FormatError(
                name,
                qline,
                f"judgments of query {qid!r} must be an object {{docid: grade}}, got {type(judged).__name__}",
            )
        check_id(qid, "query id", name, qline)
        for docid, grade in judged.items():
            line = cursor.line_of(docid)
            if not is_integer(grade):
                raise FormatError(
                    name,
                    line,
                    f"grade of query {qid!r}, document {docid!r} must be an integer, got {shown_json(grade)}",
                )
            check_grade_range(grade, f"query {qid!r}, document {docid!r}", name, line)
            check_id(docid, "document id", name, line)
            yield QrelEntry(qid, docid, grade, origin=f"{name}:{line}")


def _run_entries(name: str, first_line: int, text: str, data: Any) -> Iterator[RunEntry]:
    if not isinstance(data, dict):
        raise FormatError(name, first_line, f"expected a JSON object {{qid: [docid, ...]}}, got {type(data).__name__}")
    cursor = KeyCursor(text, first_line)
    for qid, ranked in data.items():
        qline = cursor.line_of(qid)
        check_id(qid, "query id", name, qline)
        if not isinstance(ranked, list):
            raise FormatError(
                name, qline, f"ranking of query {qid!r} must be a list of document ids, got {type(ranked).__name__}"
            )
        n = len(ranked)
        seen: dict[str, int] = {}
        for index, value in enumerate(ranked):
            docid = _doc_id(value, f"document id at position {index + 1} of query {qid!r}", name, qline)
            if docid in seen:
                raise FormatError(
                    name,
                    qline,
                    f"document {docid!r} is listed twice for query {qid!r} "
                    f"(positions {seen[docid] + 1} and {index + 1})",
                )
            seen[docid] = index
            yield RunEntry(qid, docid, float(n - index), origin=f"{name}:{qline}")


def _ranked_run_streams(
    path: str | os.PathLike[str], *, reverse: bool = False
) -> list[Callable[[], Iterator[RunEntry]]]:
    """One stream per ranked map in ``path`` (one for a JSON document, one per line for JSON lines).

    Parameters
    ----------
    path : str or os.PathLike
        A ``{qid: [docid, ...]}`` JSON file (plain or gzip).
    reverse : bool
        The lists run from worst to best: reverse them before scoring.

    Raises
    ------
    FormatError
        Now, on invalid JSON or a repeated key; while streaming, on a value
        that is not a list, a document id that is not a string or integer,
        or a document listed twice for one query.
    """
    name = os.fspath(path)
    docs = _documents(name)
    if reverse:
        docs = [
            (line, text, {q: list(reversed(v)) if isinstance(v, list) else v for q, v in data.items()})
            if isinstance(data, dict)
            else (line, text, data)
            for line, text, data in docs
        ]

    def stream(line: int, text: str, data: Any) -> Callable[[], Iterator[RunEntry]]:
        return lambda: _run_entries(name, line, text, data)

    return [stream(*doc) for doc in docs]


def read_json_qrels(path: str | os.PathLike[str]) -> CollectionSource:
    """A :class:`CollectionSource` with the judgments of a ``{qid: {docid: grade}}`` JSON file.

    Raises
    ------
    FormatError
        When ``path`` is missing (now) or malformed (when ``qrels()`` is read).
    """
    name = require_file(path)
    return CollectionSource(
        passages=empty_stream,
        queries=empty_stream,
        qrels=lambda: iter_json_qrels(name),
        description=f"JSON qrels {name}",
    )


def _stem(path: str) -> str:
    base = os.path.basename(path)
    if base.endswith(".gz"):
        base = base[:-3]
    for suffix in (".jsonl", ".json"):
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base


def _ranked_runs(path: str, name: str | None, reverse: bool) -> dict[str, Callable[[], Iterator[RunEntry]]]:
    streams = _ranked_run_streams(path, reverse=reverse)
    base = name or _stem(path)
    if len(streams) == 1:
        return {base: streams[0]}
    return {f"{base}_{k}": s for k, s in enumerate(streams, start=1)}


def read_json_ranked_run(
    path: str | os.PathLike[str], name: str | None = None, *, reverse: bool = False
) -> CollectionSource:
    """A :class:`CollectionSource` with the run(s) of a ``{qid: [docid, ...]}`` JSON file.

    Parameters
    ----------
    path : str or os.PathLike
        One JSON object, or JSON lines holding one object per line.
    name : str, optional
        The run name (default: the file stem, e.g. ``bm25_top100``); a JSON
        lines file gives runs ``{name}_1``, ``{name}_2``, ...
    reverse : bool
        The lists run from worst to best (see :data:`LECARD_ASCENDING_RUNS`).

    Raises
    ------
    FormatError
        When ``path`` is missing, is not valid JSON or repeats a key (now),
        or holds a malformed ranking (while streaming).
    """
    file = require_file(path)
    runs = _ranked_runs(file, name, reverse)
    return CollectionSource(
        passages=empty_stream,
        queries=empty_stream,
        qrels=empty_stream,
        runs=runs,
        description=f"JSON ranked run(s) {', '.join(runs)} ({file})",
    )


def _iter_lecard_queries(path: str) -> Iterator[Query]:
    seen: dict[str, int] = {}
    for lineno, rec in iter_jsonl(path):
        if not isinstance(rec, dict):
            raise FormatError(path, lineno, f"expected a JSON object {{ridx, q, ...}}, got {type(rec).__name__}")
        if "ridx" not in rec:
            raise FormatError(path, lineno, "missing field 'ridx' (expected {ridx, q, crime, path})")
        qid = check_id(require_str(rec["ridx"], "ridx", path, lineno), "query id 'ridx'", path, lineno)
        text = rec.get("q")
        if not isinstance(text, str) or is_blank(text):
            shown = shown_json(text)
            raise FormatError(path, lineno, f"field 'q' (the query text) must be a non-empty string, got {shown}")
        check_query_text(text, "field 'q' (the query text)", path, lineno)
        if qid in seen:
            raise FormatError(path, lineno, f"duplicate query ridx {qid!r} (first at line {seen[qid]})")
        seen[qid] = lineno
        yield Query(id=qid, text=text, split="test", language="zh", origin=f"{path}:{lineno}")


def _first_file(root: Path, *candidates: str) -> str:
    for candidate in candidates:
        if is_existing_file(root / candidate):
            return os.fspath(root / candidate)
    raise FormatError(os.fspath(root / candidates[0]), None, f"missing {candidates[0]}: a LeCaRD folder needs it")


def read_lecard(
    folder: str | os.PathLike[str], *, ascending_runs: Collection[str] = LECARD_ASCENDING_RUNS
) -> CollectionSource:
    """Read a LeCaRD folder: queries, graded judgments and the released rankings.

    Parameters
    ----------
    folder : str or os.PathLike
        Holds ``query.json`` (JSON lines ``{ridx, q, crime, path}``; query
        id ``str(ridx)``, text ``q``, language ``"zh"``),
        ``label_top30_dict.json`` (``{qid: {docid: grade}}``, grades 0-3)
        and optionally ``prediction/*.json`` (``{qid: [docid, ...]}``).  The
        repository layout ``query/query.json``, ``label/...`` is accepted
        too.  LeCaRD ships no candidate documents: there are no passages.
    ascending_runs : collection of str
        Prediction files (by stem) whose lists run from worst to best and
        are reversed on reading; default :data:`LECARD_ASCENDING_RUNS`.

    Returns
    -------
    CollectionSource
        One run per prediction file named by its stem (``bm25_top100``);
        ``bert.json``, which holds four rankings as JSON lines, gives runs
        ``bert_1`` .. ``bert_4``.

    Raises
    ------
    FormatError
        When the folder, ``query.json`` or ``label_top30_dict.json`` is
        missing or a prediction file is not valid JSON (now); on a malformed
        record while streaming.
    """
    root = Path(require_path(folder, "LeCaRD folder not found"))
    if not root.is_dir():
        raise FormatError(os.fspath(root), None, "not a folder")
    queries = _first_file(root, "query.json", "query/query.json")
    labels = _first_file(root, "label_top30_dict.json", "label/label_top30_dict.json")
    runs: dict[str, Callable[[], Iterator[RunEntry]]] = {}
    pred = root / "prediction"
    if pred.is_dir():
        for entry in sorted(pred.iterdir()):
            if entry.name.endswith((".json", ".json.gz")) and is_existing_file(entry):
                stem = _stem(entry.name)
                for run_name, stream in _ranked_runs(os.fspath(entry), stem, stem in ascending_runs).items():
                    if run_name in runs:
                        raise FormatError(os.fspath(entry), None, f"two prediction files give run {run_name!r}")
                    runs[run_name] = stream
    return CollectionSource(
        passages=empty_stream,
        queries=lambda: _iter_lecard_queries(queries),
        qrels=lambda: iter_json_qrels(labels),
        runs=runs,
        language="zh",
        description=f"LeCaRD {os.fspath(root)}: {os.path.basename(queries)}, {os.path.basename(labels)}, "
        f"{len(runs)} runs ({', '.join(runs)})",
    )
