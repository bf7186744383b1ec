"""The annotation guide's shape (core.scale.check_guide) and the built-in T2Ranking and binary texts."""

from __future__ import annotations

import pytest

from core.scale import BINARY_GUIDE, LEVELS, check_guide, default_guide


def test_the_built_in_guide_is_t2rankings_text_and_the_binary_one() -> None:
    guide = default_guide()
    assert [(e["grade"], e["name"], e["definition"], e["examples"]) for e in guide["graded"]] == [
        (lv.grade, lv.name, lv.definition, [lv.example]) for lv in LEVELS
    ]
    assert [(e["grade"], e["name"]) for e in guide["binary"]] == [(0, "Not relevant"), (1, "Relevant")]
    assert guide["binary"][1]["definition"] == BINARY_GUIDE[1].definition
    assert "levels 2 and 3" in guide["binary"][1]["definition"]
    guide["graded"][0]["name"] = "changed"  # a fresh copy each call
    assert default_guide()["graded"][0]["name"] == LEVELS[0].name


def test_a_guide_for_one_scale_is_completed_with_the_built_in_other() -> None:
    binary = [
        {"grade": 0, "name": " Nein ", "definition": "off", "examples": ["x", "  "]},
        {"grade": 1, "name": "Ja", "definition": "on"},
    ]
    guide = check_guide({"binary": binary})
    assert guide["binary"] == [
        {"grade": 0, "name": "Nein", "definition": "off", "examples": ["x"]},
        {"grade": 1, "name": "Ja", "definition": "on", "examples": []},
    ]
    assert guide["graded"] == default_guide()["graded"]


@pytest.mark.parametrize(
    ("guide", "message"),
    [
        ([], "guide must be an object with the keys graded and/or binary, got list"),
        ({"ternary": []}, "guide has unknown scale(s) ternary; allowed: graded, binary"),
        ({"binary": [{}]}, "guide['binary'] must be a list of 2 entries, one per grade 0, 1"),
        ({"binary": ["x", "y"]}, "guide['binary'][0] must be an object with grade, name, definition and examples"),
        (
            {"binary": [{"grade": 1, "name": "a", "definition": "b"}, {}]},
            "guide['binary'][0]['grade'] must be 0 (grades in order), got 1",
        ),
        (
            {"binary": [{"grade": True, "name": "a", "definition": "b"}, {}]},
            "guide['binary'][0]['grade'] must be 0 (grades in order), got True",
        ),
        (
            {"binary": [{"grade": 0, "name": " ", "definition": "b"}, {}]},
            "guide['binary'][0]['name'] must be a non-empty text",
        ),
        (
            {"binary": [{"grade": 0, "name": "a", "definition": "b", "colour": "red"}, {}]},
            "guide['binary'][0] has unknown key(s) colour",
        ),
        (
            {"binary": [{"grade": 0, "name": "a" * 101, "definition": "b"}, {}]},
            "guide['binary'][0]['name'] is 101 characters long; the limit is 100",
        ),
        (
            {"binary": [{"grade": 0, "name": "a", "definition": "b", "examples": "one"}, {}]},
            "guide['binary'][0]['examples'] must be a list of texts",
        ),
        (
            {"binary": [{"grade": 0, "name": "a", "definition": "b", "examples": ["e"] * 11}, {}]},
            "guide['binary'][0]['examples'] has 11 examples; the limit is 10",
        ),
        (
            {"binary": [{"grade": 0, "name": "a", "definition": "b", "examples": ["e" * 2001]}, {}]},
            "guide['binary'][0]['examples'][0] is 2001 characters long; the limit is 2000",
        ),
    ],
)
def test_an_invalid_guide_names_the_field(guide, message) -> None:
    with pytest.raises(ValueError) as info:
        check_guide(guide)
    assert str(info.value) == message
