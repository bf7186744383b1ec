"""The adversarial set's building blocks: the byte helpers, the formats' valid baselines, :class:`Case`.

The cases themselves are in ``adversarial_cases_tabular`` (TREC, MS MARCO / T2Ranking) and
``adversarial_cases_structured`` (BEIR, DuReader, DAPR, JSON maps, LeCaRD, SMART); the tests that
read them are ``test_adversarial.py`` (refused at ``file:line``) and ``test_adversarial_store.py``
(a refused import leaves the store unchanged).
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from core.formats import read_source


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


def dapr_query(**over: object) -> dict:
    q: dict[str, object] = {
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
    "dapr": (".", {"corpus.jsonl": jl(DOC), "dev.jsonl": jl(dapr_query())}),
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


def loop(path: Path) -> None:
    path.symlink_to(path.name)  # a link to itself
