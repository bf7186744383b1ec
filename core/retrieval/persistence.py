"""What the saving retrievers (BM25, dense) share: their passage ids, JSON files and ``meta.json`` checks.

Each saved index is a folder holding a ``meta.json`` with ``format`` and
``version`` keys besides the retriever's own files.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from core.atomic import atomic_write_bytes

__all__ = ["check_doc_ids", "read_saved_index", "write_json"]


def check_doc_ids(doc_ids: Sequence[object]) -> None:
    """Refuse passage ids that are not non-empty strings, or that repeat.

    Raises
    ------
    ValueError
        ``"doc_ids[3] must be a non-empty str, got ''"`` or ``"duplicate doc id 'p1'"``.

    Examples
    --------
    >>> check_doc_ids(["p1", "p2"])
    >>> check_doc_ids(["p1", "p2", "p1"])
    Traceback (most recent call last):
    ...
    ValueError: duplicate doc id 'p1'
    """
    ids: list[str] = []
    for i, doc_id in enumerate(doc_ids):
        if not isinstance(doc_id, str) or not doc_id:
            raise ValueError(f"doc_ids[{i}] must be a non-empty str, got {doc_id!r}")
        ids.append(doc_id)
    if len(set(ids)) != len(ids):  # the first id seen twice is named
        seen: set[str] = set()
        for doc_id in ids:
            if doc_id in seen:
                raise ValueError(f"duplicate doc id {doc_id!r}")
            seen.add(doc_id)


def write_json(path: Path, obj: Any, *, indent: int | None = None) -> None:
    """Write ``obj`` as UTF-8 JSON (non-ASCII kept as is), atomically."""
    atomic_write_bytes(path, json.dumps(obj, indent=indent, ensure_ascii=False).encode("utf-8"))


def read_saved_index(
    root: Path, kind: str, format: str, version: int, *others: str
) -> tuple[dict[str, Any], list[Any]]:
    """``meta.json`` of a saved index, checked against ``format`` and ``version``, and the JSON files ``others``.

    Parameters
    ----------
    root : Path
        The folder the retriever's ``save()`` wrote.
    kind : str
        The retriever, for the messages (``"BM25"``, ``"dense"``).
    format, version : str, int
        What ``meta.json`` must say.
    *others : str
        Further JSON files of the folder to read (e.g. ``"doc_ids.json"``).

    Raises
    ------
    FileNotFoundError
        ``"{root}: not a saved {kind} index (meta.json is missing)"`` (or the other file missing).
    ValueError
        When ``meta.json`` is not of this ``format`` or of another ``version``.
    """
    try:
        meta, *rest = [json.loads((root / name).read_text(encoding="utf-8")) for name in ("meta.json", *others)]
    except FileNotFoundError as exc:
        missing = Path(exc.filename).name if exc.filename else "a file"
        raise FileNotFoundError(f"{root}: not a saved {kind} index ({missing} is missing)") from exc
    if not isinstance(meta, dict) or meta.get("format") != format:
        raise ValueError(f"{root / 'meta.json'}: not a pooljudge {kind} index")
    if meta.get("version") != version:
        raise ValueError(f"{root / 'meta.json'}: unsupported version {meta.get('version')!r}")
    return meta, rest
