"""The qrels readers that read grades, each fed a two-pair file whose second grade is ``g``.

Each builder returns ``(stream, path, line, what)``: a callable that reads the file, its path, the line of the
second pair and how the reader names the grade's field in an error.  Shared by the grade-range and grade-bound
tests.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.beir import iter_beir_qrels
from core.formats.dapr import read_dapr
from core.formats.jsonmaps import iter_json_qrels
from core.formats.msmarco import iter_msmarco_qrels
from core.formats.smart import read_smart
from core.formats.trec import iter_trec_qrels


def _trec(tmp: Path, g: str):
    path = tmp / "t.qrels"
    path.write_text(f"q1 0 d1 1\nq1 0 d2 {g}\n", encoding="utf-8")
    return (lambda: iter_trec_qrels(str(path))), path, 2, "grade (column 4)"


def _json_qrels(tmp: Path, g: str):
    path = tmp / "q.json"
    path.write_text(f'{{"q1": {{"d1": 1,\n"d2": {g}}}}}\n', encoding="utf-8")
    return (lambda: iter_json_qrels(str(path))), path, 2, "query 'q1', document 'd2'"


def _msmarco(tmp: Path, g: str):
    path = tmp / "qrels.dev.tsv"
    path.write_text(f"q1\t0\td1\t1\nq1\t0\td2\t{g}\n", encoding="utf-8")
    return (lambda: iter_msmarco_qrels(str(path))), path, 2, "label (column 4)"


def _beir(tmp: Path, g: str):
    path = tmp / "test.tsv"
    path.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t{g}\n", encoding="utf-8")
    return (lambda: iter_beir_qrels(str(path))), path, 3, "score (column 3)"


def _smart(tmp: Path, g: str):
    docs = tmp / "docs.all"
    docs.write_text(".I 1\n.W\nsome text\n.I 2\n.W\nmore text\n", encoding="utf-8")
    path = tmp / "qrels.trec"
    path.write_text(f"1 0 2 3\n1 0 1 {g}\n", encoding="utf-8")
    return (lambda: read_smart(docs, qrels_path=path).qrels()), path, 2, "relevance grade"


def _dapr(tmp: Path, g: str):
    doc = {"id": "doc", "title": "T", "chunks": [{"id": "c0", "text": "a chunk"}, {"id": "c1", "text": "another"}]}
    (tmp / "corpus.jsonl").write_text(json.dumps(doc) + "\n", encoding="utf-8")
    ok = {
        "query": {"id": "q0", "text": "fine"},
        "judged_chunks": [{"chunk": doc["chunks"][0], "judgement": 1, "belonging_doc": doc}],
    }
    bad = json.dumps(
        {
            "query": {"id": "q1", "text": "huge"},
            "judged_chunks": [{"chunk": doc["chunks"][1], "judgement": 0, "belonging_doc": doc}],
        }
    ).replace('"judgement": 0', f'"judgement": {g}')
    path = tmp / "test.jsonl"
    path.write_text(json.dumps(ok) + "\n" + bad + "\n", encoding="utf-8")
    return (lambda: read_dapr(tmp).qrels()), path, 2, "judged_chunks[0].judgement"


READERS = [_trec, _json_qrels, _msmarco, _beir, _smart, _dapr]


def format_error(stream) -> FormatError:
    with pytest.raises(FormatError) as info:
        list(stream())
    return info.value
