"""Tests for core.lang.detect_language."""

from __future__ import annotations

import pytest

from core.lang import CJK_RANGES, cjk_share, detect_language, has_cjk_ideograph, is_cjk_ideograph


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("印控克什米尔地区寺庙踩踏事故死亡人数", "zh"),
        ("使用BERT模型进行检索", "zh"),  # 8 ideographs / 12 letters
        ("Nov 10, 2022 ... 年，孟买埃尔芬斯通车站一座狭窄的步行桥发生踩踏事故", "zh"),
        ("what similarity laws must be obeyed when constructing aeroelastic models", "en"),
        ("Beijing (北京) is the capital of China", "en"),  # 2 / 28 letters
        ("Café crème brûlée", "en"),
        ("東京は日本の首都です", "zh"),  # Japanese counts as zh: needs CJK segmentation
        ("서울은 한국의 수도입니다", "en"),  # Hangul is not ideographic
    ],
)
def test_detect_language(text: str, expected: str) -> None:
    assert detect_language(text) == expected


def test_share_counts_letters_only() -> None:
    assert cjk_share("中文abc") == pytest.approx(2 / 5)
    assert cjk_share("中文，。123 !!") == 1.0  # punctuation and digits are not letters
    assert cjk_share("") == 0.0
    assert cjk_share("abcd") == 0.0


def test_threshold_boundary() -> None:
    text = "中abcd"  # share exactly 0.2
    assert detect_language(text) == "zh"
    assert detect_language("中abcde") == "en"  # 1/6 < 0.2
    assert detect_language(text, threshold=0.5) == "en"
    with pytest.raises(ValueError, match="threshold"):
        detect_language(text, threshold=0)


def test_no_letters_gives_default() -> None:
    assert detect_language("") == "en"
    assert detect_language("12.5%，。") == "en"
    assert detect_language("2022", default="zh") == "zh"


def test_is_cjk_ideograph() -> None:
    assert is_cjk_ideograph("中")
    assert is_cjk_ideograph("\U00020000")  # Extension B
    assert is_cjk_ideograph("\uf900")  # Compatibility ideograph
    assert not is_cjk_ideograph("，")
    assert not is_cjk_ideograph("の")
    assert not is_cjk_ideograph("a")


@pytest.mark.parametrize("char", ["\u3400", "\u4dbf", "䶮", "中", "\uf900", "\U00020000", "\U0002a700", "\U00030000"])
def test_every_cjk_block_is_an_ideograph(char: str) -> None:
    # Extension A (U+3400-U+4DBF) and the supplementary blocks count like the basic block
    assert is_cjk_ideograph(char)
    assert has_cjk_ideograph(f"abc {char} def")
    assert any(low <= ord(char) <= high for low, high in CJK_RANGES)
    assert detect_language(char * 3) == "zh"


def test_has_cjk_ideograph_false_without_ideographs() -> None:
    assert not has_cjk_ideograph("")
    assert not has_cjk_ideograph("Café，の 서울 ½")
