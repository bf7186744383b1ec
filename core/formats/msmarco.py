"""MS MARCO and T2Ranking TSV collections.

Files (tab-separated, UTF-8, plain or gzip):

``collection.tsv``
    ``pid <TAB> text``.  T2Ranking's collection starts with a header line
    ``pid <TAB> para``.
``queries*.tsv``
    ``qid <TAB> text``.  The split comes from the
    file name: the first of its dot-separated parts that is ``train``,
    ``dev`` or ``test`` (``eval`` counts as ``test``), e.g.
    ``queries.dev.small.tsv`` -> ``dev``; ``"test"`` when none is.
``qrels*.tsv``
    One shape per file, detected from the first line:

    * 4 columns ``qid iter pid label`` (MS MARCO, T2Ranking ``qrels.*.tsv``;
      the iter column is ignored);
    * 2 columns ``qid pid`` (T2Ranking ``qrels.retrieval.*.tsv``): every
      listed pair is relevant with grade 1;
    * 3 columns ``qid pid label``, only with a header line.

    A header fixes the column count; every following line must have the
    same number of columns.

Headers: a first line is a header only when *all* its columns are one of the
known header rows below (:data:`COLLECTION_HEADERS`, :data:`QUERIES_HEADERS`,
:data:`QRELS_HEADERS`), never because of one token: a collection whose first
passage id is literally ``pid`` or ``id`` keeps that passage.  ``header=True``
says the first line of every file is a header whatever it holds,
``header=False`` that no file has one.

Blank lines inside a file are errors; trailing blank lines are tolerated.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from core.errors import FormatError
from core.formats._io import is_blank, is_existing_file, require_file, require_path
from core.formats._rows import check_id, check_query_text, check_text, find_line, iter_rows, parse_grade
from core.types import CollectionSource, Passage, QrelEntry, Query, empty_stream

__all__ = [
    "iter_msmarco_collection",
    "iter_msmarco_qrels",
    "iter_msmarco_queries",
    "read_msmarco",
    "read_t2ranking",
    "split_from_name",
]

PathArg = str | os.PathLike[str]
PathsArg = PathArg | Sequence[PathArg] | None

COLLECTION_HEADERS = frozenset(
    {("pid", "para"), ("pid", "text"), ("pid", "passage"), ("id", "text"), ("docid", "text")}
)
"""Header rows of collection files (T2Ranking: ``pid<TAB>para``)."""
QUERIES_HEADERS = frozenset(
    {("qid", "text"), ("qid", "query"), ("id", "text"), ("query_id", "text"), ("query-id", "text")}
)
"""Header rows of query files (T2Ranking: ``qid<TAB>text``)."""
QRELS_HEADERS = frozenset(
    {
        ("qid", "pid"),
        ("qid", "docid"),
        ("qid", "pid", "rel"),
        ("qid", "pid", "label"),
        ("qid", "docid", "rel"),
        ("query-id", "corpus-id", "score"),
        ("query_id", "passage_id", "label"),
        ("qid", "-", "pid", "rel"),
        ("qid", "0", "pid", "rel"),
        ("qid", "iter", "pid", "rel"),
        ("qid", "iter", "docid", "rel"),
        ("qid", "q0", "pid", "label"),
    }
)
"""Header rows of qrels files (T2Ranking: ``qid<TAB>-<TAB>pid<TAB>rel`` and ``qid<TAB>pid``)."""
_SPLIT_WORDS = {"train": "train", "dev": "dev", "test": "test", "eval": "test"}


def split_from_name(path: PathArg) -> str:
    """The split named in a file name (``queries.dev.small.tsv`` -> ``"dev"``), else ``"test"``."""
    for part in os.path.basename(os.fspath(path)).split("."):
        if part in _SPLIT_WORDS:
            return _SPLIT_WORDS[part]
    return "test"


def _is_header(cols: list[str], known: frozenset[tuple[str, ...]], header: bool | None) -> bool:
    if header is not None:
        return header
    return tuple(col.strip().lower() for col in cols) in known


def _first_line_of(name: str, pid: str, before: int) -> int | None:
    return find_line(name, lambda text: text.split("\t", 1)[0] == pid, before=before)


def iter_msmarco_collection(
    path: PathArg, *, language: str | None = None, header: bool | None = None
) -> Iterator[Passage]:
    """Stream ``pid <TAB> text`` passages (optional header ``pid <TAB> para``).

    Parameters
    ----------
    path : str or os.PathLike
        The collection file, plain or gzip.
    language : str, optional
        Stored on every passage.
    header : bool or None, optional
        ``None`` (default): the first line is a header only when it is one
        of :data:`COLLECTION_HEADERS`; ``True``: it is a header;
        ``False``: there is none.

    Raises
    ------
    FormatError
        On a line without exactly 2 tab-separated columns, an empty pid or a
        duplicate pid (naming the earlier line).  Passage text may be empty.
    """
    name = os.fspath(path)
    seen: set[str] = set()
    for lineno, cols in _id_text_rows(name, "passages", "pid", COLLECTION_HEADERS, header):
        pid = check_id(cols[0], "passage id (column 1)", name, lineno)
        check_text(cols[1], f"text of passage {pid!r}", name, lineno)
        if pid in seen:
            earlier = _first_line_of(name, pid, lineno)
            where = f" (first at line {earlier})" if earlier is not None else ""
            raise FormatError(name, lineno, f"duplicate passage id {pid!r}{where}")
        seen.add(pid)
        yield Passage(id=pid, text=cols[1], language=language, origin=f"{name}:{lineno}")
    if not seen:
        raise FormatError(name, 2, "no passages after the header line")


def _id_text_rows(
    path: str, what: str, id_name: str, headers: frozenset[tuple[str, ...]], header: bool | None
) -> Iterator[tuple[int, list[str]]]:
    """The ``(line, [id, text])`` rows of a two-column TSV, its header line (see :func:`_is_header`) skipped."""
    layout = f"'{id_name}<TAB>text'"
    first = True
    for lineno, cols in iter_rows(path, sep="\t", what=what):
        if first:
            first = False
            if _is_header(cols, headers, header):
                if len(cols) != 2:
                    raise FormatError(path, lineno, f"header must have 2 columns {layout}, got {len(cols)}")
                continue
        if len(cols) != 2:
            raise FormatError(path, lineno, f"expected 2 tab-separated columns {layout}, got {len(cols)}")
        yield lineno, cols


def _iter_queries_file(
    path: str, language: str | None, seen: dict[str, str], header: bool | None = None
) -> Iterator[Query]:
    split = split_from_name(path)
    count = 0
    for lineno, cols in _id_text_rows(path, "queries", "qid", QUERIES_HEADERS, header):
        qid = check_id(cols[0], "query id (column 1)", path, lineno)
        if is_blank(cols[1]):
            raise FormatError(path, lineno, f"query {qid!r} has empty text (expected 'qid<TAB>text')")
        check_query_text(cols[1], f"text of query {qid!r}", path, lineno)
        origin = f"{path}:{lineno}"
        earlier = seen.get(qid)
        if earlier is not None:
            raise FormatError(path, lineno, f"duplicate query id {qid!r} (first at {earlier})")
        seen[qid] = origin
        count += 1
        yield Query(id=qid, text=cols[1], split=split, language=language, origin=origin)
    if not count:
        raise FormatError(path, 2, "no queries after the header line")


def iter_msmarco_queries(
    paths: PathsArg, *, language: str | None = None, header: bool | None = None
) -> Iterator[Query]:
    """Stream ``qid <TAB> text`` queries from one or more files (split from each file's name).

    ``header`` as in :func:`iter_msmarco_collection`, with :data:`QUERIES_HEADERS`.

    Raises
    ------
    FormatError
        On a line without exactly 2 tab-separated columns, an empty id or
        text, or a query id given twice (in one file or across files).
    """
    seen: dict[str, str] = {}
    for path in _as_list(paths):
        yield from _iter_queries_file(os.fspath(path), language, seen, header)


def _iter_qrels_file(path: str, seen: dict[str, dict[str, str]], header: bool | None = None) -> Iterator[QrelEntry]:
    shape: int | None = None  # number of columns, fixed by the header or the first line
    shape_origin = ""
    count = 0
    for lineno, cols in iter_rows(path, sep="\t", what="judgments"):
        if shape is None:
            shape = len(cols)
            if _is_header(cols, QRELS_HEADERS, header):
                if shape not in (2, 3, 4):
                    raise FormatError(
                        path,
                        lineno,
                        f"qrels header must have 2 ('qid pid'), 3 ('qid pid rel') or 4 ('qid iter pid rel') "
                        f"columns, got {shape}",
                    )
                shape_origin = f"the header on line {lineno}"
                continue
            if shape == 3:
                raise FormatError(
                    path,
                    lineno,
                    "3 columns without a header line is ambiguous: expected 4 columns 'qid iter pid label', "
                    "2 columns 'qid pid', or a header 'qid<TAB>pid<TAB>rel' before 3 columns",
                )
            if shape not in (2, 4):
                raise FormatError(
                    path,
                    lineno,
                    f"expected 4 tab-separated columns 'qid iter pid label' or 2 columns 'qid pid', got {shape}",
                )
            shape_origin = f"line {lineno}"
        if len(cols) != shape:
            raise FormatError(
                path, lineno, f"expected {shape} tab-separated columns (like {shape_origin}), got {len(cols)}"
            )
        if shape == 4:
            qid, pid, grade_token = cols[0], cols[2], cols[3]
        elif shape == 3:
            qid, pid, grade_token = cols
        else:
            qid, pid, grade_token = cols[0], cols[1], None
        qid = check_id(qid, "query id", path, lineno)
        pid = check_id(pid, "passage id", path, lineno)
        grade = 1 if grade_token is None else parse_grade(grade_token, f"label (column {shape})", path, lineno)
        origin = f"{path}:{lineno}"
        docs = seen.setdefault(qid, {})
        earlier = docs.get(pid)
        if earlier is not None:
            raise FormatError(
                path, lineno, f"duplicate judgment for query {qid!r}, passage {pid!r} (already judged at {earlier})"
            )
        docs[pid] = origin
        count += 1
        yield QrelEntry(qid, pid, grade, origin=origin)
    if not count:
        raise FormatError(path, 2, "no judgments after the header line")


def iter_msmarco_qrels(paths: PathsArg, *, header: bool | None = None) -> Iterator[QrelEntry]:
    """Stream judgments from one or more MS MARCO / T2Ranking qrels TSV files.

    ``header`` as in :func:`iter_msmarco_collection`, with :data:`QRELS_HEADERS`.

    Raises
    ------
    FormatError
        On a shape that is not recognised, a line whose column count
        differs from the file's shape, a non-integer label, an empty id, or
        a ``(qid, pid)`` judged twice (in one file or across files).
    """
    seen: dict[str, dict[str, str]] = {}
    for path in _as_list(paths):
        yield from _iter_qrels_file(os.fspath(path), seen, header)


def _as_list(paths: PathsArg) -> list[str]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def _require_files(paths: list[str]) -> None:
    for path in paths:
        require_file(path)


def _glob(folder: Path, prefix: str) -> list[str]:
    found = []
    for entry in sorted(folder.iterdir()):
        base = entry.name[:-3] if entry.name.endswith(".gz") else entry.name
        if base.startswith(prefix) and base.endswith(".tsv") and is_existing_file(entry):
            found.append(os.fspath(entry))
    return found


def read_msmarco(
    path: PathArg | None = None,
    *,
    queries: PathsArg = None,
    qrels: PathsArg = None,
    language: str | None = None,
    header: bool | None = None,
) -> CollectionSource:
    """Read an MS MARCO-style TSV collection (folder or explicit files).

    Parameters
    ----------
    path : str or os.PathLike, optional
        Either a folder or the collection file.  In a folder the reader
        uses ``collection.tsv`` (or ``.tsv.gz``) when present, every
        ``queries*.tsv`` unless ``queries`` is given, and every
        ``qrels*.tsv`` unless ``qrels`` is given; binary
        ``qrels.retrieval.*.tsv`` files (T2Ranking) are used only when the
        folder has no other qrels file, since they repeat the graded
        judgments.  ``None``: no passages.
    queries, qrels : path or sequence of paths, optional
        Explicit query and qrels files (take precedence over the folder's).
    language : str, optional
        Stored on every passage and query and as the collection language.
    header : bool or None, optional
        ``None`` (default): a file's first line is a header only when it is
        exactly one of the known header rows (:data:`COLLECTION_HEADERS`,
        :data:`QUERIES_HEADERS`, :data:`QRELS_HEADERS`); ``True``: every
        file starts with a header; ``False``: none does.

    Returns
    -------
    CollectionSource
        ``description`` lists the files used.

    Raises
    ------
    FormatError
        Now: a missing file or folder, or a folder with none of the files
        above.  While streaming: see :func:`iter_msmarco_collection`,
        :func:`iter_msmarco_queries` and :func:`iter_msmarco_qrels`.
    """
    collection: str | None = None
    query_files = _as_list(queries)
    qrels_files = _as_list(qrels)
    if path is not None:
        root = Path(require_path(path, "file or folder not found"))
        if root.is_dir():
            collection, found_queries, found_qrels = _folder_files(root)
            query_files = found_queries if queries is None else query_files
            qrels_files = found_qrels if qrels is None else qrels_files
            if collection is None and not query_files and not qrels_files:
                raise FormatError(os.fspath(root), None, "no collection.tsv, queries*.tsv or qrels*.tsv in this folder")
        else:
            collection = os.fspath(root)
    return _msmarco_source(collection, query_files, qrels_files, language, header)


def _msmarco_source(
    collection: str | None, query_files: list[str], qrels_files: list[str], language: str | None, header: bool | None
) -> CollectionSource:
    """:func:`read_msmarco`'s streams over the files found or given, after checking that they exist."""
    _require_files(([collection] if collection else []) + query_files + qrels_files)
    if collection is None and not query_files and not qrels_files:
        raise ValueError("read_msmarco needs a folder, a collection file, queries or qrels")

    parts = [os.fspath(p) for p in ([collection] if collection else []) + query_files + qrels_files]
    passages: Callable[[], Iterator[Passage]] = empty_stream
    if collection is not None:
        coll = collection
        passages = lambda: iter_msmarco_collection(coll, language=language, header=header)  # noqa: E731
    return CollectionSource(
        passages=passages,
        queries=(lambda: iter_msmarco_queries(query_files, language=language, header=header))
        if query_files
        else empty_stream,
        qrels=(lambda: iter_msmarco_qrels(qrels_files, header=header)) if qrels_files else empty_stream,
        language=language,
        description="MS MARCO-style TSV: " + ", ".join(parts),
    )


def _folder_files(root: Path) -> tuple[str | None, list[str], list[str]]:
    """A folder's collection file (or ``None``), its ``queries*.tsv`` and its qrels files.

    Binary ``qrels.retrieval.*.tsv`` files (T2Ranking) count only when the folder
    has no other qrels file, since they repeat the graded judgments.
    """
    collection = None
    for candidate in ("collection.tsv", "collection.tsv.gz"):
        if is_existing_file(root / candidate):
            collection = os.fspath(root / candidate)
            break
    found = _glob(root, "qrels")
    graded = [f for f in found if not os.path.basename(f).startswith("qrels.retrieval.")]
    return collection, _glob(root, "queries"), graded or found


def read_t2ranking(
    path: PathArg | None = None,
    *,
    queries: PathsArg = None,
    qrels: PathsArg = None,
    language: str | None = "zh",
    header: bool | None = None,
) -> CollectionSource:
    """:func:`read_msmarco` for T2Ranking: the same files, with language ``"zh"``.

    T2Ranking's released files are ``collection.tsv`` (header ``pid para``),
    ``queries.{train,dev,test}.tsv`` (header ``qid text``),
    ``qrels.{train,dev}.tsv`` (4-level graded, 0-3) and
    ``qrels.retrieval.{train,dev}.tsv`` (``qid pid``, the pairs graded 2 or
    3).  A folder without ``collection.tsv`` still reads (no passages).
    """
    return read_msmarco(path, queries=queries, qrels=qrels, language=language, header=header)
