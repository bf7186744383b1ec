"""Option helpers every retriever kind's module shares: conversion, the common checks, nested options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def convert(kind: str, key: str, value: str, allowed: Mapping[str, type]) -> Any:
    """A spec option's text as the type its kind's option table gives (``ValueError`` naming the options)."""
    if key not in allowed:
        raise ValueError(f"unknown option {key!r} for a {kind} retriever; options: {', '.join(sorted(allowed))}")
    typ = allowed[key]
    if typ is bool:
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"option {key!r} must be true or false, got {value!r}")
        return value.lower() in ("true", "1", "yes")
    try:
        return typ(value)
    except ValueError:
        raise ValueError(f"option {key!r} must be {typ.__name__}, got {value!r}") from None


def option_text(value: Any) -> str:
    """An option's value as a spec writes it (a bool as true/false, as :func:`convert` reads it)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def check_positive(options: Mapping[str, Any], *keys: str) -> None:
    """Refuse an integer option among ``keys`` below 1."""
    for key in keys:
        if key in options and options[key] < 1:
            raise ValueError(f"option {key!r} must be a positive integer, got {options[key]!r}")


def check_fusion(kind: str, options: Mapping[str, Any], text: str, fusions: tuple[str, ...], default: str) -> None:
    """Refuse a ``fusion`` not in ``fusions``, and an ``alpha`` without ``fusion=convex`` or outside [0, 1]."""
    fusion = options.get("fusion", default)
    if fusion not in fusions:
        raise ValueError(f"option 'fusion' of a {kind} retriever must be one of {', '.join(fusions)}, got {fusion!r}")
    if "alpha" in options:
        if fusion != "convex":
            raise ValueError(f"option 'alpha' in {text!r} needs fusion=convex")
        if not 0.0 <= options["alpha"] <= 1.0:
            raise ValueError(f"option 'alpha' must be in [0, 1], got {options['alpha']!r}")


def prefixed(options: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """The options that start with ``prefix`` (a member's ``bm25_k1``), without it (``k1``)."""
    return {k[len(prefix) :]: v for k, v in options.items() if k.startswith(prefix)}
