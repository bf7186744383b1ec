"""Grades outside trec_eval's C int (-2^31..2^31-1) and positions beyond 64 bits are refused at file:line.

Issue 10: a grade of 4294967297 used to score silently as 1 in pytrec_eval,
10^20 crashed it with a SystemError, and a 2^70 position crashed the import
with an OverflowError.  Every reader that reads grades refuses them here.
"""

from __future__ import annotations

import pytest

from core.formats.beir import iter_beir_corpus
from core.limits import GRADE_MAX, GRADE_MIN, allow_large_grades
from tests.core.formats.grade_readers import READERS, format_error

RANGE = "-2147483648..2147483647"
OUT_OF_RANGE = [str(2**31), str(-(2**31) - 1), str(2**32 + 1), str(10**20), str(2**70)]


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
@pytest.mark.parametrize("grade", OUT_OF_RANGE)
def test_out_of_range_grade_is_refused_at_its_line(tmp_path, reader, grade):
    stream, path, line, what = reader(tmp_path, grade)
    assert str(format_error(stream)) == f"{path}:{line}: grade {grade} is outside {RANGE} ({what})"


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
def test_float_grade_is_not_an_integer(tmp_path, reader):
    stream, path, line, _ = reader(tmp_path, "1e20")
    exc = format_error(stream)
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
    exc = format_error(lambda: iter_beir_corpus(str(path)))
    assert str(exc) == f"{path}:2: position {2**70} is outside 0..{2**63 - 1} (field 'position')"


def test_largest_position_is_accepted(tmp_path):
    path = tmp_path / "corpus.jsonl"
    path.write_text(f'{{"_id": "p1", "text": "x", "position": {2**63 - 1}}}\n', encoding="utf-8")
    assert [p.position for p in iter_beir_corpus(str(path))] == [2**63 - 1]
