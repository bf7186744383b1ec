"""TREC qrels and run files: strict streaming readers and deterministic writers.

Qrels lines are ``qid iter docid grade`` and run lines ``qid Q0 docid rank
score tag``, columns separated by runs of spaces or tabs (the way trec_eval
reads them).  The ``iter`` and ``Q0`` columns are read and ignored; the rank
column of a run must be an integer but is ignored too (trec_eval ranks by
score, see DESIGN.md "Semantics").

Blank lines: a blank line followed by more content is an error; blank lines
at the very end of a file are tolerated (many tools end files with one).

Examples
--------
>>> qrels = load_qrels("qrels.test.txt")          # doctest: +SKIP
>>> run = load_run("bm25.trec.gz")                # doctest: +SKIP
>>> write_run(run, "bm25.copy.trec", tag="bm25")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import IO

from core.errors import FormatError
from core.formats._io import Source, require_file, source_name
from core.formats._rows import (
    SeenPairs,
    check_grade,
    check_id,
    check_score,
    check_token,
    iter_rows,
    open_for_write,
    parse_grade,
    parse_score,
)
from core.ranking import trec_ranking
from core.types import CollectionSource, QrelEntry, Qrels, Run, RunEntry, empty_stream

__all__ = [
    "iter_trec_qrels",
    "iter_trec_run",
    "load_qrels",
    "load_run",
    "read_trec_qrels",
    "read_trec_run",
    "run_name_from_path",
    "write_qrels",
    "write_run",
]

RUN_SUFFIXES = (".trec", ".run", ".txt")
"""Suffixes dropped (after an optional ``.gz``) when a run is named after its file."""


def iter_trec_qrels(source: Source) -> Iterator[QrelEntry]:
    """Stream the judgments of a TREC qrels file.

    Parameters
    ----------
    source : str, os.PathLike or file object
        A qrels file, plain or gzip; lines ``qid iter docid grade``
        separated by spaces or tabs.  ``grade`` is an integer (negative
        grades are allowed, as in trec_eval).

    Yields
    ------
    QrelEntry
        One per line, with ``origin = "file:line"``.

    Raises
    ------
    FormatError
        On a line without exactly 4 columns, an id that
        :func:`~core.formats._rows.check_id` refuses (a control character
        such as NUL, over 512 characters), a non-integer grade, a
        duplicate ``(qid, docid)`` (naming both lines), a blank line in the
        middle of the file, an empty file or bad UTF-8.
    """
    name = source_name(source)
    seen = SeenPairs(
        name, "duplicate judgment for query {qid!r}, document {docid!r} (already judged at line {earlier})"
    )
    for lineno, cols in iter_rows(source, sep=None, what="judgments"):
        if len(cols) != 4:
            raise FormatError(
                name, lineno, f"expected 4 whitespace-separated columns 'qid iter docid grade', got {len(cols)}"
            )
        qid, _iteration, docid, token = cols
        check_id(qid, "query id (column 1)", name, lineno)
        check_id(docid, "document id (column 3)", name, lineno)
        grade = parse_grade(token, "grade (column 4)", name, lineno)
        seen.add(qid, docid, lineno)
        yield QrelEntry(qid, docid, grade, origin=f"{name}:{lineno}")


def iter_trec_run(source: Source) -> Iterator[RunEntry]:
    """Stream the entries of a TREC run file.

    Parameters
    ----------
    source : str, os.PathLike or file object
        A run file, plain or gzip; lines ``qid Q0 docid rank score tag``
        separated by spaces or tabs.  ``rank`` must be an integer but is
        ignored (trec_eval orders by score); ``score`` must be a finite
        number.  The ``Q0`` and ``tag`` columns are not checked.

    Yields
    ------
    RunEntry
        One per line, in file order, with ``origin = "file:line"``.

    Raises
    ------
    FormatError
        On a line without exactly 6 columns, an id that
        :func:`~core.formats._rows.check_id` refuses, a non-integer rank, a
        non-numeric or non-finite score, a document retrieved twice for the
        same query (naming both lines), a blank line in the middle of the
        file, an empty file or bad UTF-8.
    """
    name = source_name(source)
    seen = SeenPairs(name, "document {docid!r} retrieved twice for query {qid!r} (first at line {earlier})")
    for lineno, cols in iter_rows(source, sep=None, what="run entries"):
        if len(cols) != 6:
            raise FormatError(
                name,
                lineno,
                f"expected 6 whitespace-separated columns 'qid Q0 docid rank score tag', got {len(cols)}",
            )
        qid, _q0, docid, rank, token, _tag = cols
        check_id(qid, "query id (column 1)", name, lineno)
        check_id(docid, "document id (column 3)", name, lineno)
        parse_grade(rank, "rank (column 4)", name, lineno, bounded=False)
        score = parse_score(token, "score (column 5)", name, lineno)
        seen.add(qid, docid, lineno)
        yield RunEntry(qid, docid, score, origin=f"{name}:{lineno}")


def load_qrels(source: Source) -> Qrels:
    """Read a whole TREC qrels file into ``{qid: {docid: grade}}`` (see :func:`iter_trec_qrels`)."""
    qrels: Qrels = {}
    for entry in iter_trec_qrels(source):
        qrels.setdefault(entry.query_id, {})[entry.doc_id] = entry.grade
    return qrels


def load_run(source: Source) -> Run:
    """Read a whole TREC run file into ``{qid: {docid: score}}`` (see :func:`iter_trec_run`)."""
    run: Run = {}
    for entry in iter_trec_run(source):
        run.setdefault(entry.query_id, {})[entry.doc_id] = entry.score
    return run


def write_qrels(
    qrels: Qrels,
    path_or_fileobj: str | os.PathLike[str] | IO[str] | IO[bytes],
    *,
    level: int | None = None,
) -> None:
    """Write qrels as TREC lines ``qid 0 docid grade``.

    Queries are written in sorted order and, within a query, documents in
    sorted order, so the output is deterministic.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}`` with integer grades.
    path_or_fileobj : path or file object
        Destination; a path ending in ``.gz`` is gzip-compressed.  A file
        object is written to and left open.
    level : int, optional
        When given, write binary qrels: ``1`` if ``grade >= level`` else ``0``.

    Raises
    ------
    ValueError
        On an id that is empty or contains whitespace (it could not be read
        back) or a grade that is not an int.  Nothing is written then.
    """
    if level is not None:
        level = check_grade(level, "level")
    lines: list[str] = []
    for qid in sorted(qrels):
        check_token(qid, "query id")
        docs = qrels[qid]
        for docid in sorted(docs):
            check_token(docid, f"document id (query {qid!r})")
            grade = check_grade(docs[docid], f"grade of query {qid!r}, document {docid!r}")
            if level is not None:
                grade = 1 if grade >= level else 0
            lines.append(f"{qid} 0 {docid} {grade}\n")
    with open_for_write(path_or_fileobj) as fh:
        fh.writelines(lines)


def write_run(
    run: Run,
    path_or_fileobj: str | os.PathLike[str] | IO[str] | IO[bytes],
    tag: str = "pooljudge",
    depth: int | None = None,
) -> None:
    """Write a run as TREC lines ``qid Q0 docid rank score tag``.

    Queries come in sorted order; within a query documents are in
    trec_eval's order (:func:`core.ranking.trec_ranking`: score descending
    compared as 32-bit floats, ties by doc id descending) and ranked
    ``1..n``, so the rank column and a ``depth`` cut agree with the ranks
    the measures use.
    Scores are written with :func:`repr`, which round-trips every float
    exactly, so reading the file back gives the same run.

    Parameters
    ----------
    run : Run
        ``{qid: {docid: score}}`` with finite scores.
    path_or_fileobj : path or file object
        Destination; a path ending in ``.gz`` is gzip-compressed.
    tag : str
        The run tag (6th column); no whitespace.
    depth : int, optional
        Keep only the top ``depth`` documents of each query.

    Raises
    ------
    ValueError
        On an id or tag that is empty or contains whitespace, a score that
        is not a finite number, or a depth below 1.  Nothing is written then.
    """
    check_token(tag, "run tag")
    if depth is not None:
        depth = check_grade(depth, "depth")
        if depth < 1:
            raise ValueError(f"depth must be at least 1, got {depth}")
    lines: list[str] = []
    for qid in sorted(run):
        check_token(qid, "query id")
        scores: dict[str, float] = {}
        for docid, score in run[qid].items():
            check_token(docid, f"document id (query {qid!r})")
            scores[docid] = check_score(score, f"score of query {qid!r}, document {docid!r}")
        ranked = trec_ranking(scores)
        if depth is not None:
            ranked = ranked[:depth]
        for rank, docid in enumerate(ranked, start=1):
            lines.append(f"{qid} Q0 {docid} {rank} {scores[docid]!r} {tag}\n")
    with open_for_write(path_or_fileobj) as fh:
        fh.writelines(lines)


def run_name_from_path(path: str | os.PathLike[str]) -> str:
    """The default run name for a file: its name without ``.gz`` and then one of ``.trec/.run/.txt``.

    ``runs/bm25.trec.gz`` -> ``bm25``; ``run.dense.txt`` -> ``run.dense``.
    """
    base = os.path.basename(os.fspath(path))
    if base.endswith(".gz"):
        base = base[: -len(".gz")]
    for suffix in RUN_SUFFIXES:
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)]
    return base


def read_trec_qrels(path: str | os.PathLike[str], name: str | None = None) -> CollectionSource:
    """A :class:`CollectionSource` holding only the judgments of a TREC qrels file.

    Parameters
    ----------
    path : str or os.PathLike
        The qrels file (plain or ``.gz``); checked to exist now, parsed
        lazily each time ``qrels()`` is called.
    name : str, optional
        A label for the description (defaults to the file name).

    Raises
    ------
    FormatError
        When ``path`` does not exist or is a folder.
    """
    file = require_file(path)
    label = name or os.path.basename(file)
    return CollectionSource(
        passages=empty_stream,
        queries=empty_stream,
        qrels=lambda: iter_trec_qrels(file),
        description=f"TREC qrels {label} ({file})",
    )


def read_trec_run(path: str | os.PathLike[str], name: str | None = None) -> CollectionSource:
    """A :class:`CollectionSource` holding one run read from a TREC run file.

    Parameters
    ----------
    path : str or os.PathLike
        The run file (plain or ``.gz``); checked to exist now, parsed lazily.
    name : str, optional
        The run name; defaults to :func:`run_name_from_path` (the file stem
        without ``.gz`` and ``.trec``/``.run``/``.txt``).

    Raises
    ------
    FormatError
        When ``path`` does not exist or is a folder.
    """
    file = require_file(path)
    run_name = name or run_name_from_path(file)
    return CollectionSource(
        passages=empty_stream,
        queries=empty_stream,
        qrels=empty_stream,
        runs={run_name: lambda: iter_trec_run(file)},
        description=f"TREC run {run_name} ({file})",
    )
