"""The relevance scales, defined once: T2Ranking's 4-level scale and the binary scale.

Every module that needs the grades, their names or their definitions imports
them from here (the agreement statistics, label resolution, the store's
checks, the Annotate and Review pages), so the scale cannot drift between
them (DESIGN.md, "The 4-level scale").
"""

from __future__ import annotations

from typing import NamedTuple

from core.validators import is_integer

__all__ = [
    "BINARY",
    "BINARY_GUIDE",
    "BINARY_LEVELS",
    "GRADES",
    "LEVELS",
    "SCALES",
    "Guide",
    "Level",
    "check_guide",
    "default_guide",
    "grade_name",
]


class Level(NamedTuple):
    """One level of a scale: the grade, its name, what it means and an example (binary levels: a key)."""

    grade: int
    name: str
    definition: str
    example: str


LEVELS: tuple[Level, ...] = (
    Level(
        0,
        "No match",
        "The passage has nothing to do with the query.",
        "Query: how tall is the Eiffel Tower. Passage: a recipe for French onion soup.",
    ),
    Level(
        1,
        "On topic, does not meet the need",
        "About the query's subject but does not answer it.",
        "Passage: the Eiffel Tower was built for the 1889 World's Fair (no height).",
    ),
    Level(
        2,
        "Partly satisfies",
        "Answers part of the need, or answers it vaguely or indirectly.",
        "Passage: the tower is taller than any building in Paris at the time.",
    ),
    Level(
        3,
        "Precisely answers",
        "Contains the exact answer to the query.",
        "Passage: the Eiffel Tower is 330 metres tall including its antennas.",
    ),
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
        raise ValueError(
            f"grade must be one of {', '.join(map(str, SCALES[scale]))} on the {scale} scale, got {grade!r}"
        )
    return names[grade]


# --------------------------------------------------------------------------- annotation guides

BINARY_GUIDE: tuple[Level, ...] = (
    Level(
        0,
        BINARY_LEVELS[0][1],
        "The passage does not answer the query: off topic, or on topic without the answer "
        "(T2Ranking's levels 0 and 1).",
        "Query: how tall is the Eiffel Tower. Passage: the Eiffel Tower was built for the 1889 World's Fair.",
    ),
    Level(
        1,
        BINARY_LEVELS[1][1],
        "The passage answers the query, fully or in part (T2Ranking's levels 2 and 3).",
        "Passage: the Eiffel Tower is 330 metres tall including its antennas.",
    ),
)
"""The binary scale's definitions and examples, the built-in guide a binary pool shows its annotators."""

GUIDE_LIMITS = {"name": 100, "definition": 2000, "example": 2000, "examples": 10}
"""The longest name, definition and example (characters) and the most examples per grade a guide may hold."""

Guide = dict[str, list[dict[str, object]]]
"""``{scale: [{"grade": int, "name": str, "definition": str, "examples": [str, ...]}, ...]}``, one entry per grade
of the scale in grade order, for ``"graded"`` and ``"binary"``."""


def default_guide() -> Guide:
    """The built-in guide: T2Ranking's definitions and examples for the graded scale, and the binary ones.

    Returns a fresh copy each call, so callers may change it.
    """
    return {
        scale: [
            {"grade": lv.grade, "name": lv.name, "definition": lv.definition, "examples": [lv.example]} for lv in levels
        ]
        for scale, levels in (("graded", LEVELS), ("binary", BINARY_GUIDE))
    }


def check_guide(guide: object) -> Guide:
    """Validate a collection's guide and return it complete (a scale it leaves out gets the built-in text).

    Parameters
    ----------
    guide : dict
        ``{"graded": [...], "binary": [...]}`` (either may be left out): per scale, one entry per grade in
        grade order, each ``{"grade", "name", "definition", "examples"}``; names and definitions non-empty.

    Raises
    ------
    ValueError
        Naming the first problem found by its place, e.g. ``guide["graded"][1]["name"]``.
    """
    if not isinstance(guide, dict):
        raise ValueError(f"guide must be an object with the keys graded and/or binary, got {type(guide).__name__}")
    unknown = sorted(map(str, set(guide) - set(SCALES)))
    if unknown:
        raise ValueError(f"guide has unknown scale(s) {', '.join(unknown)}; allowed: {', '.join(SCALES)}")
    result = default_guide()
    for scale, entries in guide.items():
        where = f"guide[{scale!r}]"
        grades = SCALES[scale]
        if not isinstance(entries, list) or len(entries) != len(grades):
            raise ValueError(
                f"{where} must be a list of {len(grades)} entries, one per grade {', '.join(map(str, grades))}"
            )
        result[scale] = [
            _check_guide_entry(entry, grade, f"{where}[{grade}]") for grade, entry in zip(grades, entries, strict=True)
        ]
    return result


def _check_guide_entry(entry: object, grade: int, at: str) -> dict[str, object]:
    """One grade's guide entry, checked and stripped (``at`` names it in the errors); blank examples dropped."""
    if not isinstance(entry, dict):
        raise ValueError(f"{at} must be an object with grade, name, definition and examples")
    extra = sorted(map(str, set(entry) - {"grade", "name", "definition", "examples"}))
    if extra:
        raise ValueError(f"{at} has unknown key(s) {', '.join(extra)}")
    if not is_integer(entry.get("grade")) or entry["grade"] != grade:
        raise ValueError(f"{at}['grade'] must be {grade} (grades in order), got {entry.get('grade')!r}")
    fields = {}
    for key in ("name", "definition"):
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{at}[{key!r}] must be a non-empty text")
        if len(value) > GUIDE_LIMITS[key]:
            raise ValueError(f"{at}[{key!r}] is {len(value)} characters long; the limit is {GUIDE_LIMITS[key]}")
        fields[key] = value.strip()
    examples = entry.get("examples", [])
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise ValueError(f"{at}['examples'] must be a list of texts")
    if len(examples) > GUIDE_LIMITS["examples"]:
        raise ValueError(f"{at}['examples'] has {len(examples)} examples; the limit is {GUIDE_LIMITS['examples']}")
    for i, example in enumerate(examples):
        if len(example) > GUIDE_LIMITS["example"]:
            raise ValueError(
                f"{at}['examples'][{i}] is {len(example)} characters long; the limit is {GUIDE_LIMITS['example']}"
            )
    return {"grade": grade, **fields, "examples": [e.strip() for e in examples if e.strip()]}
