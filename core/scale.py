"""The relevance scales, defined once: T2Ranking's 4-level scale and the binary scale.

Every module that needs the grades, their names or their definitions imports
them from here (the agreement statistics, label resolution, the store's
checks, the Annotate and Review pages), so the scale cannot drift between
them (DESIGN.md, "The 4-level scale").
"""

from __future__ import annotations

from typing import NamedTuple

from core.validators import is_integer

__all__ = ["BINARY", "BINARY_LEVELS", "GRADES", "LEVELS", "SCALES", "Level", "grade_name"]


class Level(NamedTuple):
    """One level of a scale: the grade, its name, what it means and an example (binary levels: a key)."""

    grade: int
    name: str
    definition: str
    example: str


LEVELS: tuple[Level, ...] = (
    Level(0, "No match", "The passage has nothing to do with the query.",
          "Query: how tall is the Eiffel Tower. Passage: a recipe for French onion soup."),
    Level(1, "On topic, does not meet the need", "About the query's subject but does not answer it.",
          "Passage: the Eiffel Tower was built for the 1889 World's Fair (no height)."),
    Level(2, "Partly satisfies", "Answers part of the need, or answers it vaguely or indirectly.",
          "Passage: the tower is taller than any building in Paris at the time."),
    Level(3, "Precisely answers", "Contains the exact answer to the query.",
          "Passage: the Eiffel Tower is 330 metres tall including its antennas."),
)
"""T2Ranking's 4-level scale, with the texts the Annotate page shows annotators."""

GRADES: tuple[int, ...] = tuple(level.grade for level in LEVELS)
"""The graded labels, ``(0, 1, 2, 3)``."""

BINARY_LEVELS: tuple[tuple[int, str, str], ...] = ((0, "Not relevant", "n"), (1, "Relevant", "y"))
"""The binary scale as ``(grade, name, keyboard key)``: its own keys, so a pool graded 0-3 is never labelled by a slip."""

BINARY: tuple[int, ...] = tuple(grade for grade, _name, _key in BINARY_LEVELS)
"""The binary labels, ``(0, 1)``."""

SCALES: dict[str, tuple[int, ...]] = {"graded": GRADES, "binary": BINARY}
"""The allowed labels of each scale a pool can be assigned on."""


def grade_name(grade: int, scale: str = "graded") -> str:
    """The name of ``grade`` on ``scale`` (``"graded"`` or ``"binary"``).

    Raises
    ------
    ValueError
        If ``scale`` is unknown or ``grade`` is not one of its labels (the message names the argument).
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {', '.join(SCALES)}, got {scale!r}")
    names = {lv.grade: lv.name for lv in LEVELS} if scale == "graded" else {g: n for g, n, _k in BINARY_LEVELS}
    if not is_integer(grade) or grade not in names:
        raise ValueError(f"grade must be one of {', '.join(map(str, SCALES[scale]))} on the {scale} scale, got {grade!r}")
    return names[grade]
