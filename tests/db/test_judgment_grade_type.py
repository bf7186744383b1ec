"""record_judgment refuses a grade that is not an integer: True == 1 and 2.0 == 2 passed the scale check."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select

from db.labelling import next_item, record_judgment
from db.models import Judgment
from tests.db.test_annotation import _assign, world, world_seed  # noqa: F401 - world and world_seed are fixtures


@pytest.mark.parametrize("grade", [True, False, 2.0, "2", None])
def test_a_grade_that_is_not_an_integer_is_refused_and_nothing_stored(world, grade):  # noqa: F811
    store, users = world
    _assign(store)
    with store.read() as s:
        item = next_item(s, users["ann1"])
    with pytest.raises(ValueError) as raised:
        with store.write() as s:
            record_judgment(s, users["ann1"], item.assignment_id, grade)
    assert str(raised.value) == f"grade must be an integer, got {grade!r}"
    with store.read() as s:
        assert s.scalar(select(func.count()).select_from(Judgment)) == 0


def test_a_numpy_integer_grade_is_stored_as_an_int(world):  # noqa: F811
    store, users = world
    _assign(store)
    with store.read() as s:
        item = next_item(s, users["ann1"])
    with store.write() as s:
        record_judgment(s, users["ann1"], item.assignment_id, np.int64(2))
    with store.read() as s:
        grades = s.scalars(select(Judgment.grade)).all()
    assert grades == [2] and type(grades[0]) is int
