"""The adversarial set: malformed inputs, generated here, that every reader refuses at ``file:line``.

Issue 10 tried 180 adversarial inputs on the readers and ``pooljudge eval``;
37 got through or crashed with a traceback.  :data:`CASES` keeps those and the
refusals that already held as data: each row is one malformed-input *kind*,
the format it is fed to (through :func:`core.formats.read_source`, the call
the importer makes), the files as bytes, and the ``file:line`` and message
fragment of the :class:`~core.errors.FormatError` it must raise.  A sample is
also imported into a store, which must be left unchanged.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats import read_source
from core.limits import ID_MAX_CHARS, PASSAGE_TEXT_MAX_CHARS, QUERY_TEXT_MAX_CHARS


def jl(*records: object) -> bytes:
    """JSON lines, one record per line (non-ASCII kept as UTF-8)."""
    return b"".join(json.dumps(r, ensure_ascii=False).encode("utf-8") + b"\n" for r in records)


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def corrupt_gzip(data: bytes) -> bytes:
    """A gzip member whose deflate stream is garbage (``zlib.error`` while reading)."""
    good = gz(data)
    return good[:10] + b"\xff" * 8 + good[18:]


def bad_crc_gzip(data: bytes) -> bytes:
    good = bytearray(gz(data))
    good[-8] ^= 0xFF  # CRC32 of the trailer
    return bytes(good)


NESTED = "[" * 100_000 + "]" * 100_000
HUGE_DIGITS = "9" * 5000
LONG_ID = "d" * 10_000


# --------------------------------------------------------------------------- valid baselines

DOC = {"id": "D1", "title": "T", "chunks": [{"id": "D1-0", "text": "alpha"}, {"id": "D1-1", "text": "beta"}]}
DUREADER_Q = {
    "question_id": 1,
    "question": "什么是检索",
    "question_type": "ENTITY",
    "answers": ["检索"],
    "documents": [{"title": "t", "paragraphs": ["第一段", "第二段"], "is_selected": True, "most_related_para": 0}],
}


def _dapr_query(**over: object) -> dict:
    q = {
        "query": {"id": "Q1", "text": "a question"},
        "judged_chunks": [{"chunk": {"id": "D1-0", "text": "alpha"}, "judgement": 1, "belonging_doc": DOC}],
    }
    q.update(over)
    return q


BASE: dict[str, tuple[str, dict[str, bytes]]] = {
    # format: (path given to the reader, relative to the case folder; files)
    "trec-qrels": ("t.qrels", {"t.qrels": b"q1 0 d1 1\nq1 0 d2 0\n"}),
    "trec-run": ("r.trec", {"r.trec": b"q1 Q0 d1 1 2.5 x\nq1 Q0 d2 2 1.5 x\n"}),
    "msmarco": (
        ".",
        {
            "collection.tsv": b"0\tfirst passage\n1\tsecond passage\n",
            "queries.dev.tsv": b"5\ta question\n",
            "qrels.dev.tsv": b"5\t0\t0\t1\n",
        },
    ),
    "t2ranking": (
        ".",
        {
            "collection.tsv": "pid\tpara\n0\t第一段\n".encode(),
            "queries.dev.tsv": "qid\ttext\n5\t问题\n".encode(),
            "qrels.dev.tsv": b"qid\t-\tpid\trel\n5\t0\t0\t3\n",
        },
    ),
    "beir": (
        ".",
        {
            "corpus.jsonl": jl(
                {"_id": "d1", "title": "", "text": "first"}, {"_id": "d2", "title": "t", "text": "second"}
            ),
            "queries.jsonl": jl({"_id": "q1", "text": "a question"}),
            "qrels/test.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        },
    ),
    "dureader": ("search.dev.json", {"search.dev.json": jl(DUREADER_Q)}),
    "dapr": (".", {"corpus.jsonl": jl(DOC), "dev.jsonl": jl(_dapr_query())}),
    "json-qrels": ("q.json", {"q.json": b'{"q1": {"d1": 1,\n "d2": 0}}\n'}),
    "json-run": ("r.json", {"r.json": b'{"q1": ["d1", "d2"],\n "q2": ["d3"]}\n'}),
    "lecard": (
        ".",
        {
            "query.json": jl({"ridx": 1, "q": "案情", "crime": [], "path": "x"}),
            "label_top30_dict.json": b'{"1": {"10": 3}}\n',
        },
    ),
    "smart": (
        ".",
        {
            "cran.all.1400": b".I 1\n.T\na title\n.W\ntext one\n.I 2\n.W\ntext two\n",
            "cran.qry": b".I 001\n.W\nquery one\n",
            "cranqrel": b"1 1 2\n1 2 1\n",
        },
    ),
}


@dataclass(frozen=True)
class Case:
    kind: str  # the malformed-input kind (unique)
    format: str
    files: dict[str, bytes]  # files replacing (or added to) the format's baseline
    file: str  # the file the error must name, relative to the case folder
    line: int
    fragment: str
    drop: tuple[str, ...] = field(default=())  # baseline files to leave out


def C(kind: str, fmt: str, file: str, content: bytes, line: int, fragment: str, **extra: bytes) -> Case:
    return Case(kind, fmt, {file: content, **extra}, file, line, fragment)


CASES: list[Case] = [
    # ---- TREC qrels
    C(
        "trec-qrels: NUL in a document id",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 1\nq1 0 d\x001 1\n",
        2,
        "document id (column 3) 'd\\x001' contains the control character U+0000 at character 2",
    ),
    C(
        "trec-qrels: escape code in a query id",
        "trec-qrels",
        "t.qrels",
        b"q\x1b[31m 0 d1 1\n",
        1,
        "query id (column 1) 'q\\x1b[31m' contains the control character U+001B",
    ),
    C(
        "trec-qrels: byte-order mark at the start of line 2",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 1\n\xef\xbb\xbfq1 0 d2 1\n",
        2,
        "byte-order mark (U+FEFF) at the start of the line",
    ),
    C(
        "trec-qrels: 10,000-character id",
        "trec-qrels",
        "t.qrels",
        f"q1 0 {LONG_ID} 1\n".encode(),
        1,
        f"document id (column 3) is 10,000 characters long, the limit is {ID_MAX_CHARS}",
    ),
    C(
        "trec-qrels: 3 columns",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 1\nq1 d2 1\n",
        2,
        "expected 4 whitespace-separated columns 'qid iter docid grade', got 3",
    ),
    C(
        "trec-qrels: grade not an integer",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 high\n",
        1,
        "grade (column 4) must be an integer, got 'high'",
    ),
    C(
        "trec-qrels: decimal grade",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 1.0\n",
        1,
        "grade (column 4) must be an integer, got '1.0'",
    ),
    C(
        "trec-qrels: grade 2^31",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 2147483648\n",
        1,
        "grade 2147483648 is outside -2147483648..2147483647",
    ),
    C(
        "trec-qrels: grade of 5000 digits",
        "trec-qrels",
        "t.qrels",
        f"q1 0 d1 {HUGE_DIGITS}\n".encode(),
        1,
        "is outside -2147483648..2147483647 (grade (column 4))",
    ),
    C(
        "trec-qrels: duplicate pair",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 1\nq1 0 d1 0\n",
        2,
        "duplicate judgment for query 'q1', document 'd1' (already judged at line 1)",
    ),
    C(
        "trec-qrels: blank line inside",
        "trec-qrels",
        "t.qrels",
        b"q1 0 d1 1\n\nq1 0 d2 1\n",
        2,
        "blank line inside the file",
    ),
    C("trec-qrels: empty file", "trec-qrels", "t.qrels", b"", 1, "file is empty"),
    C(
        "trec-qrels: only blank lines",
        "trec-qrels",
        "t.qrels",
        b"\n  \n",
        1,
        "no judgments: the file has only blank lines",
    ),
    C("trec-qrels: invalid UTF-8", "trec-qrels", "t.qrels", b"q1 0 d1 1\nq1 0 d\xff 1\n", 2, "invalid UTF-8"),
    C(
        "trec-qrels: corrupt gzip stream",
        "trec-qrels",
        "t.qrels",
        corrupt_gzip(b"q1 0 d1 1\n" * 50),
        1,
        "cannot read compressed data",
    ),
    C(
        "trec-qrels: truncated gzip",
        "trec-qrels",
        "t.qrels",
        gz(b"q1 0 d1 1\n" * 500)[:-30],
        1,
        "cannot read compressed data",
    ),
    C(
        "trec-qrels: gzip with a bad CRC",
        "trec-qrels",
        "t.qrels",
        bad_crc_gzip(b"q1 0 d1 1\nq1 0 d2 0\n"),
        3,
        "cannot read compressed data (CRC check failed",
    ),
    # ---- TREC run
    C(
        "trec-run: NaN score",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 1 2.5 x\nq1 Q0 d2 2 nan x\n",
        2,
        "score (column 5) must be a finite number, got 'nan'",
    ),
    C(
        "trec-run: infinite score",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 1 -inf x\n",
        1,
        "score (column 5) must be a finite number, got '-inf'",
    ),
    C(
        "trec-run: score overflowing to infinity",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 1 1e999 x\n",
        1,
        "score (column 5) must be a finite number, got '1e999'",
    ),
    C(
        "trec-run: score not a number",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 1 0x1p3 x\n",
        1,
        "score (column 5) must be a number, got '0x1p3'",
    ),
    C(
        "trec-run: rank not an integer",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 first 1.0 x\n",
        1,
        "rank (column 4) must be an integer, got 'first'",
    ),
    C(
        "trec-run: 7 columns",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 1 1.0 x extra\n",
        1,
        "expected 6 whitespace-separated columns 'qid Q0 docid rank score tag', got 7",
    ),
    C(
        "trec-run: document retrieved twice",
        "trec-run",
        "r.trec",
        b"q1 Q0 d1 1 2.0 x\nq1 Q0 d1 2 1.0 x\n",
        2,
        "document 'd1' retrieved twice for query 'q1' (first at line 1)",
    ),
    C(
        "trec-run: DEL character in an id",
        "trec-run",
        "r.trec",
        b"q1 Q0 d\x7f 1 2.0 x\n",
        1,
        "contains the control character U+007F",
    ),
    # ---- MS MARCO / T2Ranking TSV
    C(
        "msmarco: NUL in a passage id",
        "msmarco",
        "collection.tsv",
        b"0\tfirst\n1\x00\tsecond\n",
        2,
        "passage id (column 1) '1\\x00' contains the control character U+0000",
    ),
    C(
        "msmarco: byte-order mark starting a passage line",
        "msmarco",
        "collection.tsv",
        b"0\tfirst\n\xef\xbb\xbf1\tsecond\n",
        2,
        "byte-order mark (U+FEFF) at the start of the line",
    ),
    C(
        "msmarco: id with a trailing space",
        "msmarco",
        "collection.tsv",
        b"0\tfirst\n1 \tsecond\n",
        2,
        "passage id (column 1) '1 ' has leading or trailing whitespace",
    ),
    C(
        "msmarco: empty passage id",
        "msmarco",
        "collection.tsv",
        b"0\tfirst\n\tsecond\n",
        2,
        "passage id (column 1) is empty",
    ),
    C(
        "msmarco: zero-width passage id",
        "msmarco",
        "collection.tsv",
        "0\tfirst\n\u200b\tsecond\n".encode(),
        2,
        "passage id (column 1) '\\u200b' is blank",
    ),
    C(
        "msmarco: duplicate passage id",
        "msmarco",
        "collection.tsv",
        b"0\ta\n1\tb\n0\tc\n",
        3,
        "duplicate passage id '0' (first at line 1)",
    ),
    C(
        "msmarco: passage over the text limit",
        "msmarco",
        "collection.tsv",
        b"0\t" + b"x" * (PASSAGE_TEXT_MAX_CHARS + 1) + b"\n",
        1,
        f"text of passage '0' is {PASSAGE_TEXT_MAX_CHARS + 1:,} characters long, the limit is {PASSAGE_TEXT_MAX_CHARS:,}",
    ),
    C(
        "msmarco: NUL in passage text",
        "msmarco",
        "collection.tsv",
        b"0\tfirst\x00passage\n",
        1,
        "text of passage '0' contains a NUL character (U+0000) at character 6",
    ),
    C(
        "msmarco: three columns in the collection",
        "msmarco",
        "collection.tsv",
        b"0\ta\n1\tb\tc\n",
        2,
        "expected 2 tab-separated columns 'pid<TAB>text', got 3",
    ),
    C(
        "msmarco: query of zero-width spaces",
        "msmarco",
        "queries.dev.tsv",
        "5\t\u200b\u200b\u2060\n".encode(),
        1,
        "query '5' has empty text",
    ),
    C(
        "msmarco: empty query text",
        "msmarco",
        "queries.dev.tsv",
        b"5\ta question\n6\t  \n",
        2,
        "query '6' has empty text",
    ),
    C(
        "msmarco: query over the text limit",
        "msmarco",
        "queries.dev.tsv",
        b"5\t" + b"q" * (QUERY_TEXT_MAX_CHARS + 1) + b"\n",
        1,
        f"text of query '5' is {QUERY_TEXT_MAX_CHARS + 1:,} characters long, the limit is {QUERY_TEXT_MAX_CHARS:,}",
    ),
    C("msmarco: duplicate query id", "msmarco", "queries.dev.tsv", b"5\ta\n5\tb\n", 2, "duplicate query id '5'"),
    C(
        "msmarco: qrels of 3 columns without a header",
        "msmarco",
        "qrels.dev.tsv",
        b"5\t0\t1\n",
        1,
        "3 columns without a header line is ambiguous",
    ),
    C(
        "msmarco: qrels lines of different shapes",
        "msmarco",
        "qrels.dev.tsv",
        b"5\t0\t0\t1\n5\t1\n",
        2,
        "expected 4 tab-separated columns (like line 1), got 2",
    ),
    C(
        "msmarco: negative label beyond C int",
        "msmarco",
        "qrels.dev.tsv",
        b"5\t0\t0\t-2147483649\n",
        1,
        "grade -2147483649 is outside -2147483648..2147483647",
    ),
    C(
        "t2ranking: header row with an extra column",
        "t2ranking",
        "collection.tsv",
        b"pid\tpara\textra\n0\ta\n",
        1,
        "expected 2 tab-separated columns 'pid<TAB>text', got 3",
    ),
    C("t2ranking: header only", "t2ranking", "collection.tsv", b"pid\tpara\n", 2, "no passages after the header line"),
    # ---- BEIR
    C(
        "beir: duplicate JSON key",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": "a"}) + b'{"_id": "d2", "_id": "d9", "text": "b"}\n',
        2,
        "key '_id' appears twice in the same JSON object",
    ),
    C(
        "beir: 100,000-deep nested JSON",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": "a"}) + f'{{"_id": "d2", "text": "b", "metadata": {NESTED}}}\n'.encode(),
        2,
        "invalid JSON: nested too deeply",
    ),
    C(
        "beir: NaN in JSON",
        "beir",
        "corpus.jsonl",
        b'{"_id": "d1", "text": "a", "position": NaN}\n',
        1,
        "invalid JSON: NaN is not valid JSON",
    ),
    C(
        "beir: integer of 5000 digits in JSON",
        "beir",
        "corpus.jsonl",
        f'{{"_id": "d1", "text": "a", "position": {HUGE_DIGITS}}}\n'.encode(),
        1,
        "invalid JSON: Exceeds the limit",
    ),
    C(
        "beir: invalid JSON",
        "beir",
        "corpus.jsonl",
        b'{"_id": "d1", "text": "a"}\n{"_id": "d2", "text": }\n',
        2,
        "invalid JSON: Expecting value (column 23)",
    ),
    C(
        "beir: record that is not an object",
        "beir",
        "corpus.jsonl",
        b'["d1", "text"]\n',
        1,
        "expected a JSON object, got list",
    ),
    C("beir: missing text field", "beir", "corpus.jsonl", jl({"_id": "d1", "title": "t"}), 1, "missing field 'text'"),
    C(
        "beir: text given as a number",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": 42}),
        1,
        "field 'text' must be a string, got 42",
    ),
    C(
        "beir: two-megabyte object where the text belongs",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": {"k": "x" * 2_000_000}}),
        1,
        'field \'text\' must be a string, got {"k": "xxx',
    ),
    C(
        "beir: title given as a list",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "title": ["t"], "text": "a"}),
        1,
        "field 'title' must be a string",
    ),
    C(
        "beir: id given as true",
        "beir",
        "corpus.jsonl",
        jl({"_id": True, "text": "a"}),
        1,
        "field '_id' must be a string, got true",
    ),
    C(
        "beir: byte-order mark inside an id",
        "beir",
        "corpus.jsonl",
        jl({"_id": "\ufeffd1", "text": "a"}),
        1,
        "passage id '_id' '\\ufeffd1' contains a byte-order mark (U+FEFF) at character 1",
    ),
    C(
        "beir: line break inside an id",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d\n1", "text": "a"}),
        1,
        "contains the control character U+000A at character 2",
    ),
    C(
        "beir: negative position",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": "a", "position": -1}),
        1,
        "field 'position' must be an integer >= 0 or null, got -1",
    ),
    C(
        "beir: position beyond 64 bits",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": "a", "position": 2**70}),
        1,
        f"position {2**70} is outside 0..{2**63 - 1}",
    ),
    C(
        "beir: decimal position",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": "a", "position": 1.5}),
        1,
        "field 'position' must be an integer >= 0 or null, got 1.5",
    ),
    C(
        "beir: duplicate passage id",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}),
        2,
        "duplicate passage id 'd1' (first at line 1)",
    ),
    C(
        "beir: passage title over the limit",
        "beir",
        "corpus.jsonl",
        jl({"_id": "d1", "title": "t" * (PASSAGE_TEXT_MAX_CHARS + 1), "text": "a"}),
        1,
        f"field 'title' is {PASSAGE_TEXT_MAX_CHARS + 1:,} characters long",
    ),
    C(
        "beir: query of zero-width characters",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "\u200b\u200c\ufeff"}),
        1,
        "field 'text' is empty",
    ),
    C(
        "beir: unknown split",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "split": "validation"}),
        1,
        "field 'split' must be one of train, dev, test",
    ),
    C(
        "beir: query type longer than its column",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "type": "t" * 65}),
        1,
        "field 'type' is 65 characters long, the limit is 64",
    ),
    C(
        "beir: language code longer than its column",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "language": "x" * 17}),
        1,
        "field 'language' is 17 characters long, the limit is 16",
    ),
    C(
        "beir: answers that are not a list",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "answers": "yes"}),
        1,
        "field 'answers' must be a list, got str",
    ),
    C(
        "beir: answer of the wrong type",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "answers": [1]}),
        1,
        "each answer must be a string or a list of strings, got 1",
    ),
    C(
        "beir: duplicate query id",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a"}, {"_id": "q1", "text": "b"}),
        2,
        "duplicate query id 'q1' (first at line 1)",
    ),
    C(
        "beir: NUL in a query translation",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "translation": "x\x00y"}),
        1,
        "field 'translation' contains a NUL character (U+0000)",
    ),
    C(
        "beir: NUL in an answer",
        "beir",
        "queries.jsonl",
        jl({"_id": "q1", "text": "a", "answers": [["x", "y\x00"]]}),
        1,
        "an answer contains a NUL character (U+0000)",
    ),
    C(
        "beir: qrels score beyond C int",
        "beir",
        "qrels/test.tsv",
        b"query-id\tcorpus-id\tscore\nq1\td1\t4294967297\n",
        2,
        "grade 4294967297 is outside -2147483648..2147483647",
    ),
    C(
        "beir: qrels header spelled differently",
        "beir",
        "qrels/test.tsv",
        b"query-id\tcorpus-id\trelevance\nq1\td1\t1\n",
        1,
        "score (column 3) must be an integer, got 'relevance'",
    ),
    C(
        "beir: qrels duplicate pair",
        "beir",
        "qrels/test.tsv",
        b"q1\td1\t1\nq1\td1\t2\n",
        2,
        "duplicate judgment for query 'q1', document 'd1' (already judged at line 1)",
    ),
    C(
        "beir: gzip corpus with corrupt contents",
        "beir",
        "corpus.jsonl",
        corrupt_gzip(jl(*({"_id": f"d{i}", "text": "a"} for i in range(100)))),
        1,
        "cannot read compressed data",
    ),
    # ---- DuReader
    C(
        "dureader: unknown question_type",
        "dureader",
        "search.dev.json",
        jl({**DUREADER_Q, "question_type": "WHY"}),
        1,
        'question_type must be one of DESCRIPTION, ENTITY, YES_NO, got "WHY"',
    ),
    C(
        "dureader: documents not a list",
        "dureader",
        "search.dev.json",
        jl({**DUREADER_Q, "documents": {"a": 1}}),
        1,
        "field 'documents' must be a list, got dict",
    ),
    C(
        "dureader: paragraph not a string",
        "dureader",
        "search.dev.json",
        jl({**DUREADER_Q, "documents": [{"title": "t", "paragraphs": ["a", 7]}]}),
        1,
        "documents[0].paragraphs[1] must be a string, got int",
    ),
    C(
        "dureader: missing question",
        "dureader",
        "search.dev.json",
        jl({k: v for k, v in DUREADER_Q.items() if k != "question"}),
        1,
        "missing field 'question'",
    ),
    C(
        "dureader: question of zero-width spaces",
        "dureader",
        "search.dev.json",
        jl({**DUREADER_Q, "question": "\u200b"}),
        1,
        "field 'question' is empty",
    ),
    C(
        "dureader: question_id with surrounding spaces",
        "dureader",
        "search.dev.json",
        jl({**DUREADER_Q, "question_id": " 7 "}),
        1,
        "question_id ' 7 ' has leading or trailing whitespace",
    ),
    C(
        "dureader: duplicate question_id",
        "dureader",
        "search.dev.json",
        jl(DUREADER_Q, DUREADER_Q),
        2,
        "duplicate question_id '1' (first at line 1)",
    ),
    C(
        "dureader: duplicate key",
        "dureader",
        "search.dev.json",
        b'{"question_id": 1, "question_id": 2}\n',
        1,
        "key 'question_id' appears twice",
    ),
    C(
        "dureader: 100,000-deep nested JSON",
        "dureader",
        "search.dev.json",
        NESTED.encode() + b"\n",
        1,
        "nested too deeply",
    ),
    # ---- DAPR
    C(
        "dapr: judged chunk not in its document",
        "dapr",
        "dev.jsonl",
        jl(_dapr_query(judged_chunks=[{"chunk": {"id": "D1-9", "text": "x"}, "judgement": 1, "belonging_doc": DOC}])),
        1,
        "judged_chunks[0]: chunk 'D1-9' is not among its chunks in belonging_doc 'D1'",
    ),
    C(
        "dapr: judgement true",
        "dapr",
        "dev.jsonl",
        jl(
            _dapr_query(
                judged_chunks=[{"chunk": {"id": "D1-0", "text": "alpha"}, "judgement": True, "belonging_doc": DOC}]
            )
        ),
        1,
        "judged_chunks[0].judgement must be an integer grade, got true",
    ),
    C(
        "dapr: one query with two texts",
        "dapr",
        "dev.jsonl",
        jl(_dapr_query(), _dapr_query(query={"id": "Q1", "text": "another"})),
        2,
        "query 'Q1' has a different text at",
    ),
    C(
        "dapr: chunk id with a tab",
        "dapr",
        "corpus.jsonl",
        jl({"id": "D2", "title": "", "chunks": [{"id": "D2\t0", "text": "a"}]}),
        1,
        "document.chunks[0].id 'D2\\t0' contains the control character U+0009",
    ),
    C(
        "dapr: chunk id repeated in a document",
        "dapr",
        "corpus.jsonl",
        jl({"id": "D2", "chunks": [{"id": "c", "text": "a"}, {"id": "c", "text": "b"}]}),
        1,
        "chunk id 'c' appears twice in document 'D2'",
    ),
    C(
        "dapr: duplicate document id",
        "dapr",
        "corpus.jsonl",
        jl(DOC, DOC),
        2,
        "duplicate document id 'D1' (first at line 1)",
    ),
    C(
        "dapr: query id of 10,000 characters",
        "dapr",
        "dev.jsonl",
        jl(_dapr_query(query={"id": LONG_ID, "text": "q"})),
        1,
        "query.id is 10,000 characters long",
    ),
    # ---- JSON qrels and ranked runs, LeCaRD
    C(
        "json-qrels: duplicate document key",
        "json-qrels",
        "q.json",
        b'{"q1": {"d1": 1,\n "d1": 0}}\n',
        2,
        "key 'd1' appears twice in the same JSON object",
    ),
    C(
        "json-qrels: 100,000-deep nested JSON",
        "json-qrels",
        "q.json",
        f'{{"q1": {NESTED}}}\n'.encode(),
        1,
        "invalid JSON: nested too deeply",
    ),
    C(
        "json-qrels: grade 1e20",
        "json-qrels",
        "q.json",
        b'{"q1": {"d1": 1,\n "d2": 1e20}}\n',
        2,
        "grade of query 'q1', document 'd2' must be an integer, got 1e+20",
    ),
    C(
        "json-qrels: grade true",
        "json-qrels",
        "q.json",
        b'{"q1": {"d1": true}}\n',
        1,
        "grade of query 'q1', document 'd1' must be an integer, got true",
    ),
    C(
        "json-qrels: judgments not an object",
        "json-qrels",
        "q.json",
        b'{"q1": ["d1"]}\n',
        1,
        "judgments of query 'q1' must be an object {docid: grade}, got list",
    ),
    C(
        "json-qrels: several documents",
        "json-qrels",
        "q.json",
        b'{"q1": {"d1": 1}}\n{"q2": {"d1": 1}}\n',
        2,
        "expected one JSON object {qid: {docid: grade}}, found several",
    ),
    C("json-qrels: empty object", "json-qrels", "q.json", b"{}\n", 1, "no judgments: the JSON object is empty"),
    C(
        "json-qrels: NUL in a document key",
        "json-qrels",
        "q.json",
        b'{"q1": {"d\\u00001": 1}}\n',
        1,
        "document id 'd\\x001' contains the control character U+0000",
    ),
    C(
        "json-run: document listed twice",
        "json-run",
        "r.json",
        b'{"q1": ["d1", "d2", "d1"]}\n',
        1,
        "document 'd1' is listed twice for query 'q1' (positions 1 and 3)",
    ),
    C(
        "json-run: ranking not a list",
        "json-run",
        "r.json",
        b'{"q1": {"d1": 1}}\n',
        1,
        "ranking of query 'q1' must be a list of document ids, got dict",
    ),
    C(
        "json-run: document id that is an object",
        "json-run",
        "r.json",
        b'{"q1": [{"id": "d1"}]}\n',
        1,
        "document id at position 1 of query 'q1' must be a string or an integer",
    ),
    C(
        "json-run: NaN inside a ranking",
        "json-run",
        "r.json",
        b'{"q1": ["d1",\n NaN]}\n',
        1,
        "invalid JSON: NaN is not valid JSON",
    ),
    C(
        "lecard: duplicate key in the labels",
        "lecard",
        "label_top30_dict.json",
        b'{"1": {"10": 3,\n"10": 2}}\n',
        2,
        "key '10' appears twice in the same JSON object",
    ),
    C("lecard: query without ridx", "lecard", "query.json", jl({"q": "案情"}), 1, "missing field 'ridx'"),
    C(
        "lecard: query text of zero-width joiners",
        "lecard",
        "query.json",
        jl({"ridx": 1, "q": "\u200d\u200d"}),
        1,
        "field 'q' (the query text) must be a non-empty string",
    ),
    # ---- SMART
    C(
        "smart: unknown field marker",
        "smart",
        "cran.all.1400",
        b".I 1\n.Z\nx\n.W\ntext\n",
        2,
        "unknown SMART field marker '.Z'",
    ),
    C(
        "smart: text before the first record",
        "smart",
        "cran.all.1400",
        b"preamble\n.I 1\n.W\ntext\n",
        1,
        "expected '.I <id>' to start a record, got text",
    ),
    C(
        "smart: record without .W",
        "smart",
        "cran.all.1400",
        b".I 1\n.T\ntitle only\n.I 2\n.W\ntext\n",
        1,
        "record '1' has no .W field",
    ),
    C(
        "smart: marker followed by text",
        "smart",
        "cran.all.1400",
        b".I 1\n.W text on the marker line\n",
        2,
        "field marker '.W' must be alone on its line",
    ),
    C(
        "smart: bare .I before the end",
        "smart",
        "cran.all.1400",
        b".I\n.I 1\n.W\ntext\n",
        1,
        "'.I' without a record id",
    ),
    C(
        "smart: duplicate record id",
        "smart",
        "cran.all.1400",
        b".I 1\n.W\na\n.I 1\n.W\nb\n",
        4,
        "duplicate record id '1' (first at line 1)",
    ),
    C(
        "smart: control character in a record id",
        "smart",
        "cran.all.1400",
        b".I 1\x07\n.W\ntext\n",
        1,
        "record id '1\\x07' contains the control character U+0007",
    ),
    C(
        "smart: query of zero-width spaces",
        "smart",
        "cran.qry",
        ".I 001\n.W\n\u200b\n".encode(),
        1,
        "text (.W) of query record '001' is empty",
    ),
    C(
        "smart: Cranfield grade outside the mapping",
        "smart",
        "cranqrel",
        b"1 1 2\n1 2 7\n",
        2,
        "relevance grade 7 is not in the grade mapping",
    ),
    C(
        "smart: qrels of 5 columns",
        "smart",
        "cranqrel",
        b"1 1 2 0 0\n",
        1,
        "cannot tell the qrels shape from 5 columns",
    ),
    C(
        "smart: CISI placeholders not zero",
        "smart",
        "cranqrel",
        b"1 1 0 0.000000\n1 2 3 1.5\n",
        2,
        "expected the CISI placeholders '0 0.000000' in columns 3-4",
    ),
    C(
        "smart: qrels grade of 5000 digits",
        "smart",
        "cranqrel",
        f"1 1 {HUGE_DIGITS}\n".encode(),
        1,
        "relevance grade '999999999999999999999999999999'... (5,000 characters) is too large",
    ),
    C(
        "smart: TREC-shape grade of 40 digits",
        "smart",
        "cranqrel",
        f"1 0 1 {'7' * 40}\n".encode(),
        1,
        "relevance grade '777777777777777777777777777777'... (40 characters) is too large",
    ),
]

KINDS = [case.kind for case in CASES]


def _problem(kind: str) -> str:
    """The malformed-input kind without its format (``"trec-qrels: NUL in a document id"`` -> ``"NUL in a document id"``)."""
    return kind.split(": ", 1)[1]


def write_case(root: Path, case: Case) -> str:
    """Write the case's files over its format's baseline under ``root``; return the path to give the reader."""
    target, files = BASE[case.format]
    for rel, data in {**files, **case.files}.items():
        if rel in case.drop:
            continue
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return os.fspath(root / target) if target != "." else os.fspath(root)


def consume(fmt: str, path: str) -> None:
    """Read everything a :class:`CollectionSource` streams, as an import would."""
    source = read_source(fmt, path)
    for stream in (source.passages, source.queries, source.qrels, *source.runs.values()):
        for _ in stream():
            pass


def test_the_set_is_large_and_its_kinds_distinct() -> None:
    assert len(KINDS) == len(set(KINDS))
    assert len({_problem(kind) for kind in KINDS}) >= 60
    assert {case.format for case in CASES} == set(BASE)


@pytest.mark.parametrize("fmt", sorted(BASE))
def test_baselines_read(tmp_path: Path, fmt: str) -> None:
    # each case differs from a baseline that reads without error, so the error is the case's
    consume(fmt, write_case(tmp_path, Case("baseline", fmt, {}, "", 0, "")))


@pytest.mark.parametrize("case", CASES, ids=KINDS)
def test_refused_at_file_line(tmp_path: Path, case: Case) -> None:
    path = write_case(tmp_path, case)
    with pytest.raises(FormatError) as info:
        consume(case.format, path)
    error = info.value
    assert (error.path, error.line) == (os.fspath(tmp_path / case.file), case.line), str(error)
    assert str(error).startswith(f"{tmp_path / case.file}:{case.line}: ")
    assert case.fragment in error.message
    assert len(str(error)) < 500  # a 50 MB or 10,000-character value is never echoed whole


def test_a_50_megabyte_id_is_refused_without_echoing_it(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_bytes(b"q1 Q0 d1 1 2.0 x\nq1 Q0 " + b"d" * 50_000_000 + b" 2 1.0 x\n")
    with pytest.raises(FormatError) as info:
        consume("trec-run", os.fspath(path))
    assert (info.value.path, info.value.line) == (os.fspath(path), 2)
    assert info.value.message.startswith(
        f"document id (column 3) is 50,000,000 characters long, the limit is {ID_MAX_CHARS} ('dddd"
    )
    assert len(str(info.value)) < 300


def test_an_id_of_exactly_the_limit_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "t.qrels"
    path.write_text(f"q1 0 {'d' * ID_MAX_CHARS} 1\n", encoding="utf-8")
    assert [e.doc_id for e in read_source("trec-qrels", path).qrels()] == ["d" * ID_MAX_CHARS]


def test_a_byte_order_mark_at_the_start_of_the_file_is_still_dropped(tmp_path: Path) -> None:
    path = tmp_path / "t.qrels"
    path.write_bytes(b"\xef\xbb\xbfq1 0 d1 1\n")
    assert [(e.query_id, e.doc_id) for e in read_source("trec-qrels", path).qrels()] == [("q1", "d1")]


@pytest.mark.parametrize(
    ("data", "texts"),
    [
        (b"0\tfirst\n1\tsecond\r", ["first", "second"]),  # a lone CR ending the last line
        (b"0\tfirst\r\n1\tsecond\r\n", ["first", "second"]),
        (b"0\tfirst\r\n1\tsecond", ["first", "second"]),
        (b"0\tin\rside\n", ["in\rside"]),  # a CR inside a line is text, not a line end
    ],
)
def test_line_ends(tmp_path: Path, data: bytes, texts: list[str]) -> None:
    path = tmp_path / "collection.tsv"
    path.write_bytes(data)
    assert [p.text for p in read_source("msmarco", path).passages()] == texts


def _loop(path: Path) -> None:
    path.symlink_to(path.name)  # a link to itself


@pytest.mark.parametrize(
    ("fmt", "make", "named", "message"),
    [
        ("trec-qrels", lambda root: _loop(root / "t.qrels"), "t.qrels", "symlink loop"),
        ("json-qrels", lambda root: _loop(root / "q.json"), "q.json", "symlink loop"),
        ("msmarco", lambda root: _loop(root / "collection.tsv"), "collection.tsv", "symlink loop"),
        ("msmarco", lambda root: _loop(root / "qrels.dev.tsv"), "qrels.dev.tsv", "symlink loop"),
        ("beir", lambda root: _loop(root / "corpus.jsonl"), "corpus.jsonl", "symlink loop"),
        ("beir", lambda root: _loop(root / "qrels" / "dev.tsv"), "qrels/dev.tsv", "symlink loop"),
        (
            "trec-run",
            lambda root: (root / "r.trec").symlink_to("gone.trec"),
            "r.trec",
            "broken symlink: it points to 'gone.trec', which does not exist",
        ),
    ],
    ids=[
        "trec-qrels loop",
        "json-qrels loop",
        "msmarco collection loop",
        "msmarco qrels loop",
        "beir corpus loop",
        "beir qrels loop",
        "trec-run broken link",
    ],
)
def test_symlink_loops_are_not_called_missing(tmp_path: Path, fmt, make, named: str, message: str) -> None:
    target, files = BASE[fmt]
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        if rel != named:
            (tmp_path / rel).write_bytes(data)
    make(tmp_path)
    path = os.fspath(tmp_path / target) if target != "." else os.fspath(tmp_path)
    with pytest.raises(FormatError) as info:
        consume(fmt, path)
    assert info.value.path == os.fspath(tmp_path / named)
    assert info.value.line is None
    assert info.value.message.startswith(message)
    assert "not found" not in info.value.message


# --------------------------------------------------------------------------- the store is left unchanged

# one case per reader at least, favouring the kinds that used to get through or crash
STORE_SAMPLE = [
    "trec-qrels: NUL in a document id",
    "trec-qrels: corrupt gzip stream",
    "trec-run: NaN score",
    "msmarco: byte-order mark starting a passage line",
    "msmarco: passage over the text limit",
    "msmarco: query of zero-width spaces",
    "beir: duplicate JSON key",
    "beir: 100,000-deep nested JSON",
    "beir: qrels score beyond C int",
    "dureader: question_id with surrounding spaces",
    "dapr: chunk id with a tab",
    "json-qrels: 100,000-deep nested JSON",
    "smart: query of zero-width spaces",
]


def _counts(store) -> dict[str, int]:
    from sqlalchemy import func, select

    from db.models import (
        Collection,
        ImportRecord,
        Passage,
        QrelsEntry,
        QrelsVersion,
        QueryRecord,
        RunEntryRecord,
        RunRecord,
    )

    tables = (Collection, Passage, QueryRecord, QrelsVersion, QrelsEntry, RunRecord, RunEntryRecord, ImportRecord)
    with store.read() as s:
        return {t.__tablename__: s.scalar(select(func.count()).select_from(t)) for t in tables}


def test_refused_imports_leave_the_store_unchanged(store, tmp_path: Path) -> None:
    from db.importer import import_path

    base = tmp_path / "base"
    write_case(base, Case("baseline", "msmarco", {}, "", 0, ""))
    import_path(store, "msmarco", base, name="base")
    before = _counts(store)
    assert before["passages"] == 2 and before["queries"] == 1 and before["qrels_entries"] == 1
    by_kind = {case.kind: case for case in CASES}
    for number, kind in enumerate(STORE_SAMPLE):
        case = by_kind[kind]
        root = tmp_path / f"case{number}"
        path = write_case(root, case)
        # judgments and runs alone go into the existing collection; whole collections make a new one
        only_judgments = case.format in ("trec-qrels", "trec-run", "json-qrels", "json-run")
        with pytest.raises(FormatError) as info:
            import_path(
                store,
                case.format,
                path,
                name="base" if only_judgments else f"c{number}",
                mode="merge" if only_judgments else "create",
                qrels_name=f"v{number}",
            )
        assert (info.value.path, info.value.line) == (os.fspath(root / case.file), case.line), kind
        assert _counts(store) == before, kind


def test_importing_a_symlink_loop_names_the_loop(store, tmp_path: Path) -> None:
    from db.importer import import_path

    path = tmp_path / "t.qrels"
    _loop(path)
    before = _counts(store)
    with pytest.raises(FormatError) as info:
        import_path(store, "trec-qrels", path, name="c")
    assert str(info.value).startswith(f"{path}: symlink loop")
    assert _counts(store) == before
