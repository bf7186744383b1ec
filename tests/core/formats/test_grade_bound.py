"""Issue 21, finding 6: a qrels grade beyond the documented bound (|grade| > 1,000) is refused at file:line.

A TREC qrels import accepted grade 2,000,000,000 without a word, and evaluating it allocated 15 GB (trec_eval
keeps 8 bytes per grade level).  Every reader that reads grades refuses such a grade unless the caller allows
large grades explicitly (:func:`core.limits.allow_large_grades`; ``--allow-large-grades`` on the command line).
"""

from __future__ import annotations

import pytest

from core.limits import GRADE_BOUND, allow_large_grades, large_grades_allowed
from tests.core.formats.grade_readers import READERS, format_error


def test_the_bound_is_a_thousand():
    assert GRADE_BOUND == 1_000 and not large_grades_allowed()


@pytest.mark.parametrize("reader", READERS, ids=lambda r: r.__name__.lstrip("_"))
@pytest.mark.parametrize("grade", ["1001", "-1001", "2000000000", "2147483647", "-2147483648"])
def test_a_grade_beyond_the_bound_is_refused_at_its_line(tmp_path, reader, grade):
    stream, path, line, what = reader(tmp_path, grade)
    assert str(format_error(stream)) == (
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
    assert (format_error(stream).path, format_error(stream).line) == (str(path), line)
