"""Argument checks shared by every module of :mod:`core`.

Each function returns the checked value (converted to a plain ``int``,
``float`` or ``tuple``) or raises an error whose message names the argument,
e.g. ``"k must be a positive integer, got 0"``.

``bool`` is refused wherever an integer or a number is expected: it is an
``int`` subclass, so ``True`` would otherwise pass as ``1`` and a flag
passed in the wrong position would go unnoticed.

A value of the wrong type raises :class:`ArgumentTypeError`, which is both a
``TypeError`` and a ``ValueError``: callers and tests written against either
keep working, while a value of the right type outside its range raises a
plain ``ValueError``.
"""

from __future__ import annotations

import math
import numbers

__all__ = [
    "ArgumentTypeError",
    "as_integer",
    "int_in_range",
    "integer",
    "is_integer",
    "is_real",
    "non_negative_int",
    "optional_positive_int",
    "pair",
    "positive_int",
    "real_number",
]


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a ``TypeError`` that ``except ValueError`` also catches)."""


def is_integer(value: object) -> bool:
    """Whether ``value`` is an integer (Python or NumPy) and not a ``bool``."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """Whether ``value`` is a real number (int, float, NumPy scalar) and not a ``bool``."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def integer(value: object, what: str) -> int:
    """``value`` as an ``int``; any integer is accepted.

    Raises
    ------
    ArgumentTypeError
        ``"{what} must be an integer, got {value!r}"`` for a non-integer or a bool.
    """
    number = as_integer(value)
    if number is None:
        raise ArgumentTypeError(f"{what} must be an integer, got {value!r}")
    return number


def as_integer(value: object) -> int | None:
    """``value`` as an ``int`` when :func:`is_integer` accepts it, else ``None`` (a check that narrows the type).

    >>> as_integer(3), as_integer(True), as_integer(2.0)
    (3, None, None)
    """
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)
    return None


def _bounded_int(value: object, message: str, low: int, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``low..high``, else ``message`` as the error (its type says which check failed)."""
    number = as_integer(value)
    if number is None:
        raise ArgumentTypeError(message)
    if number < low or (high is not None and number > high):
        raise ValueError(message)
    return number


def positive_int(value: object, what: str) -> int:
    """``value`` as an ``int >= 1``.

    Raises
    ------
    ValueError
        ``"{what} must be a positive integer, got {value!r}"`` (an
        :class:`ArgumentTypeError` for a non-integer or a bool).
    """
    return _bounded_int(value, f"{what} must be a positive integer, got {value!r}", 1)


def optional_positive_int(value: object, what: str) -> int | None:
    """``None``, or ``value`` as an ``int >= 1``.

    Raises
    ------
    ValueError
        ``"{what} must be a positive integer or None, got {value!r}"``.
    """
    if value is None:
        return None
    return _bounded_int(value, f"{what} must be a positive integer or None, got {value!r}", 1)


def non_negative_int(value: object, what: str) -> int:
    """``value`` as an ``int >= 0``.

    Raises
    ------
    ValueError
        ``"{what} must be a non-negative integer, got {value!r}"``.
    """
    return _bounded_int(value, f"{what} must be a non-negative integer, got {value!r}", 0)


def int_in_range(value: object, what: str, low: int, high: int | None = None) -> int:
    """``value`` as an ``int`` in ``low..high`` (``high=None``: no upper bound).

    Raises
    ------
    ValueError
        ``"{what} must be an integer >= {low}, got {value!r}"``, or with an
        upper bound ``"{what} must be an integer >= {low} (at most {high}), got {value!r}"``.
    """
    bound = f">= {low}" if high is None else f">= {low} (at most {high})"
    return _bounded_int(value, f"{what} must be an integer {bound}, got {value!r}", low, high)


def _interval(low: float | None, high: float | None, low_open: bool, high_open: bool) -> str:
    if low is not None and high is not None:
        if low_open and high_open:
            return f"strictly between {low:g} and {high:g}"
        return f"in {'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"
    if low is not None:
        return f"{'>' if low_open else '>='} {low:g}"
    if high is not None:
        return f"{'<' if high_open else '<='} {high:g}"
    return ""


def real_number(
    value: object,
    what: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    high_open: bool = False,
    finite: bool = True,
) -> float:
    """``value`` as a ``float``, optionally finite and within bounds.

    Parameters
    ----------
    value : object
        The argument.
    what : str
        Its name, for the message.
    low, high : float, optional
        Bounds; ``None`` leaves that side open-ended.
    low_open, high_open : bool
        Exclude the bound itself.
    finite : bool
        Refuse NaN and infinities (a bounded interval refuses NaN anyway).

    Raises
    ------
    ValueError
        E.g. ``"alpha must be a number in [0, 1], got 2"``,
        ``"k must be a finite number >= 0, got inf"``,
        ``"p must be a number strictly between 0 and 1, got 1"``.
    """
    where = _interval(low, high, low_open, high_open)
    # a finite check is implied by a two-sided bound, so the message only says "finite" when it matters
    kind = "a finite number" if finite and (low is None or high is None) else "a number"
    message = f"{what} must be {kind}{' ' + where if where else ''}, got {value!r}"
    if not isinstance(value, numbers.Real) or isinstance(value, bool):  # is_real, spelt out for the type checker
        raise ArgumentTypeError(message)
    v = float(value)
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(message)
    if low is not None and (v < low or (low_open and v == low)):
        raise ValueError(message)
    if high is not None and (v > high or (high_open and v == high)):
        raise ValueError(message)
    return v


def pair(value: object, what: str = "a pair") -> tuple[str, str]:
    """``value`` as a ``(query_id, doc_id)`` tuple of two strings.

    Raises
    ------
    ArgumentTypeError
        ``"{what} must be a (query_id, doc_id) tuple of str, got {value!r}"``;
        a list is refused too, since pairs are used as dict keys.
    """
    if isinstance(value, tuple) and len(value) == 2:
        query_id, doc_id = value
        if isinstance(query_id, str) and isinstance(doc_id, str):
            return query_id, doc_id
    raise ArgumentTypeError(f"{what} must be a (query_id, doc_id) tuple of str, got {value!r}")
