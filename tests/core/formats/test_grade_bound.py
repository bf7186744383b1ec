"""Issue 21, finding 6: a qrels grade beyond the documented bound (|grade| > 1,000) is refused at file:line.

A TREC qrels import accepted grade 2,000,000,000 without a word, and evaluating it allocated 15 GB (trec_eval
keeps 8 bytes per grade level).  Every reader that reads grades refuses such a grade unless the caller allows
large grades explicitly (:func:`core.limits.allow_large_grades`; ``--allow-large-grades`` on the command line).
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
from core.limits import GRADE_BOUND, allow_large_grades, large_grades_allowed


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


def test_the_bound_is_a_thousand():
    assert GRADE_BOUND == 1_000 and not large_grades_allowed()


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
@pytest.mark.parametrize("grade", ["1001", "-1001", "2000000000", "2147483647", "-2147483648"])
def test_a_grade_beyond_the_bound_is_refused_at_its_line(tmp_path, reader, grade):
    stream, path, line, what = reader(tmp_path, grade)
    assert str(_error(stream)) == (
        f"{path}:{line}: grade {grade} is outside -1000..1000 ({what}); "
        "larger grades are read only when allowed (--allow-large-grades)"
    )


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
@pytest.mark.parametrize("grade", [-1000, 1000])
def test_the_bound_itself_is_accepted(tmp_path, reader, grade):
    stream, _, _, _ = reader(tmp_path, str(grade))
    assert [e.grade for e in stream()][-1] == grade


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
def test_allowed_large_grades_are_read_and_the_permission_ends_with_the_block(tmp_path, reader):
    stream, path, line, _ = reader(tmp_path, "2000000000")
    with allow_large_grades():
        assert large_grades_allowed()
        assert [e.grade for e in stream()][-1] == 2_000_000_000
    assert not large_grades_allowed()
    assert (_error(stream).path, _error(stream).line) == (str(path), line)
