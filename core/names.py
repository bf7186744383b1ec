"""Names people give things: collections, runs, qrels versions and accounts.

One rule for all of them (:func:`check_name`), checked wherever a name is
stored (the importer, :func:`db.importer.store_run`, qrels versions, accounts):

* a ``str`` that is not empty;
* no leading or trailing whitespace: it is **refused, not stripped**, so the
  name stored is exactly the name given and a later lookup with the same
  string finds it (forms in the app strip their fields before calling);
* printable: no control characters (Unicode category ``Cc``: newlines, tabs,
  NUL, the ESC that starts terminal escape codes), no format characters
  (``Cf``: zero-width spaces and joiners, bidirectional overrides, the BOM),
  no lone surrogates (``Cs``: undecodable bytes of a file name) and no line or
  paragraph separators (``Zl``, ``Zp``);
* at most :data:`NAME_MAX_CHARS` characters (:data:`USERNAME_MAX_CHARS` for
  usernames), the sizes of their columns in ``db/models.py``.

Names stored before these checks existed may break them: print any stored
name through :func:`display_name`.
"""

from __future__ import annotations

import unicodedata

NAME_MAX_CHARS = 200
"""Longest collection, run or qrels-version name (``String(200)`` in db/models.py)."""

USERNAME_MAX_CHARS = 100
"""Longest username (``String(100)`` in db/models.py)."""

REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})
"""Unicode general categories a name must not contain (see the module docstring)."""

_SHORT_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape(ch: str) -> str:
    if ch in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[ch]
    code = ord(ch)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _refused(ch: str) -> bool:
    return unicodedata.category(ch) in REFUSED_CATEGORIES


def display_name(name: str) -> str:
    """``name`` with every character :func:`check_name` refuses written as a Python escape (``\\n``, ``\\x1b``).

    A name that passes :func:`check_name` is returned unchanged; one stored
    before the check existed can no longer break a line, a tab-separated
    column or the terminal that prints it.
    """
    if not any(_refused(ch) for ch in name):
        return name
    return "".join(_escape(ch) if _refused(ch) else ch for ch in name)


def check_name(name: object, what: str = "name", *, limit: int = NAME_MAX_CHARS) -> str:
    """Return ``name`` unchanged when it is a valid name, else raise ``ValueError`` saying why.

    Parameters
    ----------
    name : object
        The name to check.
    what : str
        How the message calls it: ``"collection name"``, ``"run name"``, ``"username"``.
    limit : int
        The most characters allowed (:data:`NAME_MAX_CHARS`, :data:`USERNAME_MAX_CHARS`).

    Raises
    ------
    ValueError
        ``"{what} must not be empty"``, ``"{what} ' x' has leading or trailing whitespace; remove it"``,
        ``"{what} 'a\\nb' contains a control character (U+000A) at position 2; names must be printable"``,
        ``"{what} is 5000 characters long; the limit is 200"``.
    """
    if not isinstance(name, str):
        raise ValueError(f"{what} must be a string, got {type(name).__name__}")
    if not name.strip():
        raise ValueError(f"{what} must not be empty" + (f", got '{display_name(name)}'" if name else ""))
    # the length first: a 5,000-character name is not worth echoing
    if len(name) > limit:
        raise ValueError(f"{what} is {len(name):,} characters long; the limit is {limit}")
    for position, ch in enumerate(name, start=1):
        if _refused(ch):
            kind = {
                "Cc": "a control character",
                "Cf": "an invisible format character",
                "Cs": "an undecodable character (lone surrogate)",
            }.get(unicodedata.category(ch), "a line separator")
            raise ValueError(
                f"{what} '{display_name(name)}' contains {kind} (U+{ord(ch):04X}) at position {position}; "
                "names must be printable"
            )
    if name != name.strip():
        raise ValueError(f"{what} {name!r} has leading or trailing whitespace; remove it")
    return name
