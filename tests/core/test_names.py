"""core.names: one rule for collection, run, qrels-version names and usernames; stored names printed escaped."""

from __future__ import annotations

import pytest

from core.names import NAME_MAX_CHARS, USERNAME_MAX_CHARS, check_name, display_name


@pytest.mark.parametrize("name", ["c", "my collection", "中文 集合", "a" * NAME_MAX_CHARS, "run.dense", "naïve-v2"])
def test_printable_names_pass_unchanged(name):
    assert check_name(name, "collection name") is name
    assert display_name(name) == name


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("", "collection name must not be empty"),
        ("   ", "collection name must not be empty, got '   '"),
        (" c", "collection name ' c' has leading or trailing whitespace; remove it"),
        ("c\u3000", r"collection name 'c\u3000' has leading or trailing whitespace; remove it"),
        (
            "a\nb",
            r"collection name 'a\nb' contains a control character (U+000A) at position 2; names must be printable",
        ),
        (
            "a\tb",
            r"collection name 'a\tb' contains a control character (U+0009) at position 2; names must be printable",
        ),
        (
            "x\x1b[31mred",
            r"collection name 'x\x1b[31mred' contains a control character (U+001B) at position 2; "
            "names must be printable",
        ),
        (
            "nul\x00",
            r"collection name 'nul\x00' contains a control character (U+0000) at position 4; names must be printable",
        ),
        (
            "zw\u200bsp",
            r"collection name 'zw\u200bsp' contains an invisible format character (U+200B) at position 3; "
            "names must be printable",
        ),
        (
            "evil\u202etxt",
            r"collection name 'evil\u202etxt' contains an invisible format character (U+202E) at position 5; "
            "names must be printable",
        ),
        (
            "a\u2028b",
            r"collection name 'a\u2028b' contains a line separator (U+2028) at position 2; names must be printable",
        ),
        (
            "f\udcff",
            r"collection name 'f\udcff' contains an undecodable character (lone surrogate) (U+DCFF) at position 2; "
            "names must be printable",
        ),
        (
            "\u200b",
            r"collection name '\u200b' contains an invisible format character (U+200B) at position 1; "
            "names must be printable",
        ),
        ("a" * 5_000, "collection name is 5,000 characters long; the limit is 200"),
        (None, "collection name must be a string, got NoneType"),
    ],
)
def test_bad_names_are_refused_with_the_reason(name, message):
    with pytest.raises(ValueError) as raised:
        check_name(name, "collection name")
    assert str(raised.value) == message


def test_usernames_have_their_own_limit():
    assert check_name("u" * USERNAME_MAX_CHARS, "username", limit=USERNAME_MAX_CHARS)
    with pytest.raises(ValueError, match="^username is 101 characters long; the limit is 100$"):
        check_name("u" * 101, "username", limit=USERNAME_MAX_CHARS)


def test_display_name_escapes_what_check_name_refuses_and_nothing_else():
    assert display_name("evil\n\x1b[2Jname\tx\u200b\U000e0001") == r"evil\n\x1b[2Jname\tx\u200b\U000e0001"
    assert display_name("back\\slash 'quoted'") == "back\\slash 'quoted'"
