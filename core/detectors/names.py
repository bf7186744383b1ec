"""Kinded names for ``entity_mismatch``: a packaged list of Chinese names jieba misses, and a collection's lexicon.

jieba's part-of-speech tags (``nr``/``ns``/``nt``/``nz``) miss many brand,
product and site names: 茅台酒 and 五粮液 are common nouns (``n``), 小米 is
``n``, 三星堆 a numeral (``m``).  ``data/zh_names.tsv`` lists such names with a
*kind* (``liquor``, ``phone``, ``site``, ``car``, ``app``...), and a
collection's admin may add names of their own (a *lexicon*, ``{name: kind}``,
read from a file by :func:`load_lexicon`).  An entity mismatch is then a
query name of kind K absent from the passage while the passage names another
name of kind K: two liquor brands, two phone makers, two sites.

The names are matched in the text directly (longest first, Latin names
case-insensitively as whole words) rather than added to the segmenter:
``core.text``'s jieba tokenizer also cuts the BM25 terms, which a detector's
list must not change.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from importlib import resources
from pathlib import Path

from core.detectors.base import Norm, Span

NAMES_FILE = "zh_names.tsv"
"""The packaged name list, in ``core/detectors/data/``."""

Name = tuple[str, str, Span, bool]
"""``(name as written in the text, kind, original span, from the lexicon)``."""


def _parse(text: str, source: str) -> dict[str, str]:
    """``{name: kind}`` of a ``name<TAB>kind`` file (``#`` comments, blank lines skipped)."""
    out: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = [p.strip() for p in line.split("\t")]
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{source} line {number}: expected name<TAB>kind, got {line.strip()[:40]!r}")
        out[parts[0]] = parts[1]
    return out


@functools.cache
def name_kinds() -> dict[str, str]:
    """The packaged names, ``{name: kind}`` (read once)."""
    text = resources.files("core.detectors").joinpath("data", NAMES_FILE).read_text(encoding="utf-8")
    return _parse(text, NAMES_FILE)


def load_lexicon(path: str | Path) -> dict[str, str]:
    """A collection's own names from a ``name<TAB>kind`` file (UTF-8, ``#`` comments).

    Parameters
    ----------
    path : str or Path
        The file; errors name its file name and line, not its folder.

    Returns
    -------
    dict
        ``{name: kind}``, for :func:`core.detectors.suggest`'s ``lexicon``.

    Raises
    ------
    ValueError
        A line that is not a name and a kind separated by a tab.
    """
    path = Path(path)
    return _parse(path.read_text(encoding="utf-8"), path.name)


def _pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = []
    for name in sorted(names, key=len, reverse=True):
        escaped = re.escape(name)
        alternatives.append(rf"(?<![A-Za-z0-9]){escaped}(?![A-Za-z0-9])" if name.isascii() else escaped)
    return re.compile("|".join(alternatives), re.IGNORECASE)


@functools.lru_cache(maxsize=32)
def _matcher(lexicon: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, tuple[str, str, bool]]]:
    """The pattern over the packaged names plus ``lexicon``, and ``{casefolded: (name, kind, from lexicon)}``."""
    table = {n.casefold(): (n, k, False) for n, k in name_kinds().items()}
    table.update({n.casefold(): (n, k, True) for n, k in lexicon})
    return _pattern(tuple(n for n, _, _ in table.values())), table


def find_names(text: str, lexicon: Mapping[str, str] | None = None) -> list[Name]:
    """The listed names (and ``lexicon``'s) in ``text``, in text order, longest match first."""
    extra = tuple(sorted((n, k) for n, k in (lexicon or {}).items() if isinstance(n, str) and n.strip()))
    pattern, table = _matcher(extra)
    norm = Norm(text)
    out: list[Name] = []
    for m in pattern.finditer(norm.text):
        _, kind, own = table[m.group().casefold()]
        start, end = norm.span(*m.span())
        out.append((text[start:end], kind, (start, end), own))
    return out
