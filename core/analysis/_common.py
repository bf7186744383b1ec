"""Helpers shared by the modules of :mod:`core.analysis`: per-query values and embedding matrices."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from core.metrics import parse_measure
from core.validators import is_real

_ALL = "all"
_DEFAULT_BLOCK = 1 << 23  # elements of one similarity block (64 MiB in float64)


def _measure_key(measure: object) -> str:
    return str(parse_measure(measure))  # type: ignore[arg-type]


def _per_query(results: Mapping[str, Mapping[str, float]], measure: str, what: str) -> Mapping[str, float]:
    try:
        return results[measure]
    except KeyError:
        raise KeyError(
            f"{what} holds no values for {measure!r} (it has {', '.join(map(repr, results)) or 'nothing'})"
        ) from None


def _values(per_query: Mapping[str, float]) -> dict[str, float]:
    """Per-query values without the ``"all"`` mean, checked to be finite numbers."""
    out: dict[str, float] = {}
    for qid, value in per_query.items():
        if qid == _ALL:
            continue
        if not is_real(value):
            raise TypeError(f"query {qid!r}: value must be a number, got {type(value).__name__}")
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"query {qid!r}: value must be finite, got {v}")
        out[qid] = v
    return out


def _matrix(vectors: object, what: str) -> np.ndarray:
    arr = np.asarray(vectors)
    if arr.ndim != 2:
        raise ValueError(f"{what} must be a 2-d array (n, dim), got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise TypeError(f"{what} must hold real numbers, got dtype {arr.dtype}")
    return arr


def _normalised(block: np.ndarray, what: str, offset: int, dtype: type = np.float64) -> np.ndarray:
    x: np.ndarray = np.asarray(block, dtype=dtype)
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{what} holds non-finite values")
    norms = np.linalg.norm(x, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        raise ValueError(f"{what} row {offset + int(zero[0])} is a zero vector (cosine undefined)")
    normalised: np.ndarray = x / norms[:, None]
    return normalised
