"""Numeric ranges and sizes shared by the readers and :mod:`core.metrics`.

Grades are C ``int`` in trec_eval (and so in pytrec_eval): a grade outside
``GRADE_MIN..GRADE_MAX`` is silently truncated there (``2**32 + 1`` becomes
``1``) or crashes the conversion (``10**20``), so every reader and
:func:`core.metrics.evaluate` refuse it instead.  Measure cutoffs and
relevance levels are C ints too.  Positions are stored as 64-bit integers.

Sizes are counted in characters (Python ``len``), and every reader refuses a
value beyond them with a ``file:line`` error rather than storing a truncated
or unusable record.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

GRADE_MIN = -(2**31)
GRADE_MAX = 2**31 - 1
GRADE_RANGE = f"{GRADE_MIN}..{GRADE_MAX}"

GRADE_BOUND = 1_000
"""Readers refuse a grade above ``GRADE_BOUND`` or below ``-GRADE_BOUND`` unless :func:`allow_large_grades`.

Real scales are small (0-3 here and in T2Ranking, -2..4 in TREC Web, 0-4 in
TREC-COVID); a grade of millions is a score or an id read as a grade, and
trec_eval allocates 8 bytes per grade level up to the largest one (2e9: 15 GiB).
"""

_LARGE_GRADES: ContextVar[bool] = ContextVar("pooljudge_large_grades", default=False)

# trec_eval reads cutoffs and relevance levels as C int.
CUTOFF_MAX = GRADE_MAX

# A position (passage index in its document) is stored as a signed 64-bit integer.
POSITION_MAX = 2**63 - 1

ID_MAX_CHARS = 512
"""Longest passage, document or query id: the size of the id columns (``String(512)`` in db/models.py).

Real ids are far shorter (MS MARCO and T2Ranking use numbers, BEIR at most a
few dozen characters); anything longer is a column shifted into the id.
"""

PASSAGE_TEXT_MAX_CHARS = 1_000_000
"""Longest passage text (and passage title).

Passages are meant to be read and judged on one screen: MS MARCO passages
average ~330 characters, BEIR's longest corpora (e.g. TREC-COVID abstracts)
stay under 100,000.  A million characters keeps whole web pages and
unsplit documents importable while refusing a missing line break that glued a
corpus into one record (which would also blow up BM25 and the annotation
view).
"""

QUERY_TEXT_MAX_CHARS = 10_000
"""Longest query text.

Queries are questions or keyword lists (T2Ranking, MS MARCO: under 100
characters; LeCaRD's case-description queries: a few thousand).  Ten
thousand leaves room for such long queries and refuses a passage read as a
query because of a swapped column or file.
"""

LABEL_MAX_CHARS = 64
"""Longest query ``type`` or ``domain`` label (``String(64)`` in db/models.py)."""

LANGUAGE_MAX_CHARS = 16
"""Longest language code (``String(16)`` in db/models.py; BCP 47 tags in practice stay under 12)."""


def grade_in_range(value: int) -> bool:
    """Whether ``value`` is a grade trec_eval represents exactly."""
    return GRADE_MIN <= value <= GRADE_MAX


def large_grades_allowed() -> bool:
    """Whether the readers accept grades beyond :data:`GRADE_BOUND` here (inside :func:`allow_large_grades`)."""
    return _LARGE_GRADES.get()


@contextmanager
def allow_large_grades(allow: bool = True) -> Iterator[None]:
    """Let the readers consumed inside the block read grades up to trec_eval's int (:data:`GRADE_RANGE`).

    A context variable rather than a parameter of every reader: the readers are
    generators, so the permission holds where they are consumed (an import, an
    evaluation), in this thread or task only.

    Parameters
    ----------
    allow : bool
        ``False`` keeps the bound (so that a caller can pass its flag through).
    """
    token = _LARGE_GRADES.set(allow)
    try:
        yield
    finally:
        _LARGE_GRADES.reset(token)
