"""Long lists that the server's background worker hands over in slices (:func:`in_slices`).

The worker's result is unpickled in the server by one C call that holds the interpreter's lock throughout:
the Review page's pairs table of a 20,000-pair collection (12.7 MB) took 330 ms, and a page drawn meanwhile
waited as long.  Pickled in slices, it crosses as bytes (a copy), and the server decodes the slices one at a
time (``pooljudge.ui.background.Decoding``), letting page runs in between.

Standard library only: the worker is spawned bare and imports this module to unpickle its task.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SLICE_ITEMS = 500
"""Items per slice: 500 rows of the pairs table unpickle in about 8 ms, shorter than a page run's own steps."""


@dataclass(frozen=True)
class Sliced:
    """A list pickled in slices of at most :data:`SLICE_ITEMS` items, in order."""

    slices: tuple[bytes, ...]


def in_slices(compute: Callable[[], Any]) -> Any:
    """``compute()``, as :class:`Sliced` when it is a list longer than :data:`SLICE_ITEMS` (else as it is)."""
    value = compute()
    if not isinstance(value, list) or len(value) <= SLICE_ITEMS:
        return value
    return Sliced(
        tuple(
            pickle.dumps(value[start : start + SLICE_ITEMS], protocol=pickle.HIGHEST_PROTOCOL)
            for start in range(0, len(value), SLICE_ITEMS)
        )
    )
