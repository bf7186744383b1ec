"""Grades outside trec_eval's C int (-2^31..2^31-1) and positions beyond 64 bits are refused at file:line.

Issue 10: a grade of 4294967297 used to score silently as 1 in pytrec_eval,
10^20 crashed it with a SystemError, and a 2^70 position crashed the import
with an OverflowError.  Every reader that reads grades refuses them here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import FormatError
from core.formats.beir import iter_beir_corpus, iter_beir_qrels
from core.formats.dapr import read_dapr
from core.formats.jsonmaps import iter_json_qrels
from core.formats.msmarco import iter_msmarco_qrels
from core.formats.smart import read_smart
from core.formats.trec import iter_trec_qrels
from core.limits import GRADE_MAX, GRADE_MIN, allow_large_grades

RANGE = "-2147483648..2147483647"
OUT_OF_RANGE = [str(2**31), str(-(2**31) - 1), str(2**32 + 1), str(10**20), str(2**70)]


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


def _error(stream) -> FormatError:
    with pytest.raises(FormatError) as info:
        list(stream())
    return info.value


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
@pytest.mark.parametrize("grade", OUT_OF_RANGE)
def test_out_of_range_grade_is_refused_at_its_line(tmp_path, reader, grade):
    stream, path, line, what = reader(tmp_path, grade)
    assert str(_error(stream)) == f"{path}:{line}: grade {grade} is outside {RANGE} ({what})"


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
def test_float_grade_is_not_an_integer(tmp_path, reader):
    stream, path, line, _ = reader(tmp_path, "1e20")
    exc = _error(stream)
    assert (exc.path, exc.line) == (str(path), line)
    assert "must be an integer" in exc.message


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
@pytest.mark.parametrize("grade", [GRADE_MIN, GRADE_MAX])
def test_range_ends_are_accepted(tmp_path, reader, grade):
    stream, _, _, _ = reader(tmp_path, str(grade))
    with allow_large_grades():  # beyond +-1,000 only when allowed (test_grade_bound.py)
        assert [e.grade for e in stream()][-1] == grade


def test_position_beyond_64_bits(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        f'{{"_id": "p1", "text": "x", "position": 0}}\n{{"_id": "p2", "text": "y", "position": {2**70}}}\n',
        encoding="utf-8",
    )
    exc = _error(lambda: iter_beir_corpus(str(path)))
    assert str(exc) == f"{path}:2: position {2**70} is outside 0..{2**63 - 1} (field 'position')"


def test_largest_position_is_accepted(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(f'{{"_id": "p1", "text": "x", "position": {2**63 - 1}}}\n', encoding="utf-8")
    assert [p.position for p in iter_beir_corpus(str(path))] == [2**63 - 1]
