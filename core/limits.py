"""Numeric ranges shared by the readers and :mod:`core.metrics`.

Grades are C ``int`` in trec_eval (and so in pytrec_eval): a grade outside
``GRADE_MIN..GRADE_MAX`` is silently truncated there (``2**32 + 1`` becomes
``1``) or crashes the conversion (``10**20``), so every reader and
:func:`core.metrics.evaluate` refuse it instead.  Measure cutoffs and
relevance levels are C ints too.  Positions are stored as 64-bit integers.
"""

from __future__ import annotations

GRADE_MIN = -(2**31)
GRADE_MAX = 2**31 - 1
GRADE_RANGE = f"{GRADE_MIN}..{GRADE_MAX}"

# trec_eval reads cutoffs and relevance levels as C int.
CUTOFF_MAX = GRADE_MAX

# A position (passage index in its document) is stored as a signed 64-bit integer.
POSITION_MAX = 2**63 - 1


def grade_in_range(value: int) -> bool:
    """Whether ``value`` is a grade trec_eval represents exactly."""
    return GRADE_MIN <= value <= GRADE_MAX
