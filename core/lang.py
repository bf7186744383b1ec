"""Tell Chinese text from everything else, by counting CJK ideographs.

pooljudge only needs to know whether a text must be segmented like Chinese
(jieba or CJK character bigrams) or can be tokenised on word boundaries, so
:func:`detect_language` answers ``"zh"`` or ``"en"`` and nothing else.

The rule is the share of CJK ideographs among the *letters* of the text
(characters whose Unicode category starts with ``L``; digits, punctuation,
spaces and symbols are not counted).  A CJK ideograph carries about as much
as a whole English word, so a Chinese passage that quotes a few Latin words
(``"使用BERT模型进行检索"``: 8 ideographs, 4 Latin letters, share 0.67) stays
Chinese, while an English sentence that mentions one Chinese name
(``"Beijing (北京) is the capital of China"``: share 0.07) stays English.

Limits, on purpose: Japanese (kana plus kanji) usually crosses the threshold
and is reported as ``"zh"``, which is what a tokeniser needs anyway (it must
not split on spaces); Korean Hangul is not ideographic and is reported as
``"en"``.
"""

from __future__ import annotations

import re

DEFAULT_THRESHOLD = 0.2
"""Minimum share of CJK ideographs among letters for a text to count as ``"zh"``."""

# Unicode blocks of CJK ideographs: Unified (basic, extensions A to I) and
# Compatibility Ideographs.  The one definition: core.text and core.detectors build on it.
CJK_RANGES: tuple[tuple[int, int], ...] = (
    (0x3400, 0x4DBF),  # Extension A
    (0x4E00, 0x9FFF),  # Unified Ideographs
    (0xF900, 0xFAFF),  # Compatibility Ideographs
    (0x20000, 0x2A6DF),  # Extension B
    (0x2A700, 0x2EE5F),  # Extensions C, D, E, F, I
    (0x2F800, 0x2FA1F),  # Compatibility Ideographs Supplement
    (0x30000, 0x323AF),  # Extensions G, H
)
"""Code point ranges (inclusive) of the CJK ideograph blocks."""

CJK_IDEOGRAPH_CLASS = "".join(f"{chr(low)}-{chr(high)}" for low, high in CJK_RANGES)
"""The body of a regex character class matching a CJK ideograph (:data:`CJK_RANGES`)."""

_IDEOGRAPH = re.compile(f"[{CJK_IDEOGRAPH_CLASS}]")
# \w minus digits and underscore: the characters str.isalnum() accepts that are not digits,
# i.e. letters (categories L*) plus the rare non-decimal numerals such as "½".
_LETTER = re.compile(r"[^\W\d_]")


def is_cjk_ideograph(char: str) -> bool:
    """Whether ``char`` (one character) is a CJK ideograph.

    Parameters
    ----------
    char : str
        A single character.

    Returns
    -------
    bool
        ``True`` for characters in the CJK Unified or Compatibility
        Ideographs blocks (``"中"``, ``"𠀀"``); ``False`` for kana, Hangul,
        CJK punctuation (``"，"``) and everything else.
    """
    code = ord(char)
    if code < 0x3400:
        return False
    return any(low <= code <= high for low, high in CJK_RANGES)


def has_cjk_ideograph(text: str) -> bool:
    """Whether ``text`` contains at least one CJK ideograph (any block of :data:`CJK_RANGES`, Extension A included)."""
    return _IDEOGRAPH.search(text) is not None


def cjk_share(text: str) -> float:
    """Share of CJK ideographs among the letters of ``text``.

    Parameters
    ----------
    text : str
        Any text.

    Returns
    -------
    float
        ``ideographs / letters`` in ``[0, 1]``, where letters are the
        characters whose Unicode category starts with ``L`` (CJK ideographs
        are category ``Lo``); ``0.0`` when the text has no letters.
    """
    # Counted with compiled regexes rather than a Python loop over characters:
    # the importer calls this once per passage, a million times for a big corpus.
    letters = len(_LETTER.findall(text))
    if not letters:
        return 0.0
    return len(_IDEOGRAPH.findall(text)) / letters


def detect_language(text: str, *, threshold: float = DEFAULT_THRESHOLD, default: str = "en") -> str:
    """Say whether ``text`` is Chinese (``"zh"``) or not (``"en"``).

    Parameters
    ----------
    text : str
        The text to classify (a query, a passage, a title).
    threshold : float, optional
        A text is ``"zh"`` when ``cjk_share(text) >= threshold`` (default
        0.2, see the module docstring for why a low share suffices).
    default : str, optional
        Returned for a text with no letters at all (empty, digits or
        punctuation only); ``"en"`` by default.

    Returns
    -------
    str
        ``"zh"``, ``"en"``, or ``default`` for a text without letters.

    Raises
    ------
    ValueError
        If ``threshold`` is not in ``(0, 1]``.

    Examples
    --------
    >>> detect_language("印控克什米尔地区寺庙踩踏事故死亡人数")
    'zh'
    >>> detect_language("what similarity laws must be obeyed")
    'en'
    >>> detect_language("Beijing (北京) is the capital of China")
    'en'
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    if not _LETTER.search(text):
        return default
    if text.isascii():
        return "en"
    if not _IDEOGRAPH.search(text):  # the common case for English corpora, decided without counting
        return "en"
    return "zh" if cjk_share(text) >= threshold else "en"
