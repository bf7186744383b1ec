"""The relevance scales are defined once (core.scale) and every user takes them from there."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import core.agreement
import core.resolution
import db.labelling
import db.resolution
import db.review_progress
from core import scale
from core.scale import BINARY, BINARY_LEVELS, GRADES, LEVELS, SCALES, grade_name

REPO = Path(__file__).resolve().parents[2]


def test_graded_scale_names_and_definitions() -> None:
    assert GRADES == (0, 1, 2, 3)
    assert [(lv.grade, lv.name) for lv in LEVELS] == [
        (0, "No match"),
        (1, "On topic, does not meet the need"),
        (2, "Partly satisfies"),
        (3, "Precisely answers"),
    ]
    assert LEVELS[0].definition == "The passage has nothing to do with the query."
    assert LEVELS[3].definition == "Contains the exact answer to the query."
    assert LEVELS[3].example == "Passage: the Eiffel Tower is 330 metres tall including its antennas."
    assert all(lv.definition and lv.example for lv in LEVELS)


def test_binary_scale_and_scales() -> None:
    assert BINARY_LEVELS == ((0, "Not relevant", "n"), (1, "Relevant", "y"))
    assert BINARY == (0, 1)
    assert SCALES == {"graded": (0, 1, 2, 3), "binary": (0, 1)}


def test_grade_name() -> None:
    assert grade_name(2) == "Partly satisfies"
    assert grade_name(1, "binary") == "Relevant"
    with pytest.raises(ValueError, match="grade must be one of 0, 1 on the binary scale, got 2"):
        grade_name(2, "binary")
    with pytest.raises(ValueError, match="grade must be one of"):
        grade_name(True)
    with pytest.raises(ValueError, match="scale must be one of graded, binary, got 'ternary'"):
        grade_name(0, "ternary")


def test_every_module_uses_the_same_objects() -> None:
    assert db.labelling.SCALES is SCALES
    assert db.resolution.SCALES is SCALES
    assert db.review_progress.GRADES is GRADES
    assert core.resolution.GRADES is GRADES
    assert core.resolution.BINARY is BINARY
    assert core.agreement.DEFAULT_CATEGORIES is GRADES


def _literal_scales(path: Path) -> list[int]:
    """Lines of ``path`` that spell out the scale as a literal tuple/list ``(0, 1, 2, 3)`` or a level name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Tuple | ast.List)
            and len(node.elts) in (2, 4)
            and all(isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts)
        ):
            if [e.value for e in node.elts] in ([0, 1, 2, 3], [0, 1]):
                lines.append(node.lineno)
        if isinstance(node, ast.Constant) and node.value in ("No match", "Precisely answers", "Not relevant"):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize(
    "module",
    [
        "core/agreement/statistics.py",
        "core/agreement/report.py",
        "core/resolution.py",
        "db/review.py",
        "db/ranked_lists.py",
        "db/review_progress.py",
        "db/assignments.py",
        "db/labelling.py",
        "db/resolution.py",
        "db/package_qc.py",
        "views/review.py",
        "pooljudge/ui/review_agreement.py",
        "pooljudge/ui/review_tables.py",
        "views/annotate.py",
    ],
)
def test_no_module_defines_its_own_scale(module: str) -> None:
    assert _literal_scales(REPO / module) == [], f"{module} spells out the scale; import it from core.scale"


def test_the_scale_module_defines_it() -> None:
    # the detector of the test above finds the definition in core/scale.py (so it is not vacuous)
    assert _literal_scales(Path(scale.__file__))
