"""Typed values as the JSON the jobs table stores, and back: the one place a value becomes JSON.

A job's parameters and result cross layers as frozen dataclasses (:class:`pooljudge.pool_params.PoolJobParams`,
:class:`pooljudge.pool_job.PoolResult`, :class:`db.importer.ImportSummary`, :class:`core.training.data.TrainResult`);
only :mod:`db.jobs` turns them into the JSON of a ``jobs`` row, through :func:`to_json` and :func:`from_json`.
Pydantic's :class:`~pydantic.TypeAdapter` does the work from the dataclass's own type hints, so a field added
to a dataclass is stored and read back without a codec to update.  A type whose stored JSON has its own shape
(older rows, keys kept at the top level) defines ``to_json(self)`` and ``from_json(cls, data)`` itself; both
functions use them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


_ADAPTERS: dict[type[Any], TypeAdapter[Any]] = {}
"""One adapter per type: building one reads the type's hints, which a job's every read would repeat."""


def _adapter(cls: type[Any]) -> TypeAdapter[Any]:
    adapter = _ADAPTERS.get(cls)
    if adapter is None:
        adapter = _ADAPTERS[cls] = TypeAdapter(cls)
    return adapter


def to_json(value: Any) -> dict[str, Any]:
    """``value`` (a dataclass, or a plain JSON object) as the JSON object a jobs row stores.

    Parameters
    ----------
    value : dataclass instance or mapping
        A mapping is copied as it is (the job kinds whose values are still plain JSON).

    Returns
    -------
    dict
        JSON-ready data: tuples become lists, nested dataclasses objects.
    """
    if isinstance(value, Mapping):
        return dict(value)
    own = getattr(value, "to_json", None)
    if callable(own):
        return own()
    return dataclass_to_json(value)


def dataclass_to_json(value: Any) -> dict[str, Any]:
    """A dataclass instance as JSON by its type hints alone (what a type's own ``to_json`` may start from)."""
    return _adapter(type(value)).dump_python(value, mode="json")


def from_json(cls: type[T], data: Mapping[str, Any]) -> T:
    """The ``cls`` instance that a jobs row's JSON object ``data`` stores (see :func:`to_json`).

    Parameters
    ----------
    cls : type
        A dataclass (or a type with a ``from_json`` class method).
    data : mapping
        The stored JSON object; keys the type does not know are ignored, missing ones take their defaults.

    Returns
    -------
    cls
        The typed value.

    Raises
    ------
    ValueError
        When ``data`` does not fit ``cls`` (the message names the field and what was expected).
    """
    own = getattr(cls, "from_json", None)
    if callable(own):
        return own(data)
    return dataclass_from_json(cls, data)


def dataclass_from_json(cls: type[T], data: Mapping[str, Any]) -> T:
    """A ``cls`` instance from JSON by its type hints alone (what a type's own ``from_json`` may end with).

    Raises
    ------
    ValueError
        When ``data`` does not fit ``cls`` (the message names the field and what was expected).
    """
    try:
        return _adapter(cls).validate_python(dict(data))
    except ValidationError as exc:
        raise ValueError(f"stored {cls.__name__} does not fit its type: {exc}") from None
