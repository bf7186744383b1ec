"""Token batches for encoders: packed token ids, token-budget batches, numpy padding, a prefetching thread.

The encoding loop of :class:`~core.retrieval.encoder.BiEncoder` spends its
host time here, so the pieces are built to keep a GPU busy:

* :class:`PackedTokens` holds every text's token ids in one flat ``int64``
  array with offsets (no Python list per text once packed), so a batch is
  padded by one vectorised gather instead of a Python loop over rows.
* :func:`token_budget_batches` groups texts that are already ordered by length
  into batches whose padded size ``rows x longest`` stays within a token
  budget: short texts travel many to a batch, long ones few, and every batch
  costs the device about the same.
* :func:`prefetch` runs a batch producer in a background thread so that
  padding and pinning the next batches overlap the device's work on the
  current one (PyTorch releases the GIL inside its kernels and copies).

Padding a batch of rows ``R`` to width ``W = max_r len_r``::

    ids[r, j]  = flat[offset_r + j]   if j < len_r else pad_id
    mask[r, j] = 1                    if j < len_r else 0
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from core.validators import positive_int

__all__ = ["PackedTokens", "prefetch", "token_budget_batches"]

T = TypeVar("T")


@dataclass(frozen=True)
class PackedTokens:
    """Token ids of ``n`` texts packed into one flat array.

    Attributes
    ----------
    flat : numpy.ndarray
        ``int64``, the concatenated ids of all texts.
    offsets : numpy.ndarray
        ``int64``, shape ``(n + 1,)``: text ``i`` is ``flat[offsets[i]:offsets[i + 1]]``.
    types : numpy.ndarray or None
        Token type ids packed like ``flat``; ``None`` when the model takes none.
    pad_id : int
        The id that fills the padding.
    """

    flat: np.ndarray
    offsets: np.ndarray
    types: np.ndarray | None
    pad_id: int

    @classmethod
    def from_lists(
        cls, ids: Sequence[Sequence[int]], types: Sequence[Sequence[int]] | None = None, *, pad_id: int = 0
    ) -> PackedTokens:
        """Pack per-text id lists (what a Hugging Face tokenizer returns without padding).

        >>> packed = PackedTokens.from_lists([[101, 7, 102], [101, 102]], pad_id=0)
        >>> packed.lengths.tolist(), packed.flat.tolist()
        ([3, 2], [101, 7, 102, 101, 102])
        """
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        offsets = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        flat = _concat(ids, int(offsets[-1]))
        packed_types = None if types is None else _concat(types, int(offsets[-1]))
        return cls(flat, offsets, packed_types, int(pad_id))

    @property
    def lengths(self) -> np.ndarray:
        """``int64`` token count of each text."""
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def pad(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The model inputs of texts ``rows``, padded to the longest of them.

        Returns ``input_ids`` and ``attention_mask`` (``int64``, ``(len(rows), W)``),
        and ``token_type_ids`` when the texts have types.

        >>> packed = PackedTokens.from_lists([[5, 6, 7], [8]], pad_id=1)
        >>> inputs = packed.pad(np.array([1, 0]))
        >>> inputs["input_ids"].tolist(), inputs["attention_mask"].tolist()
        ([[8, 1, 1], [5, 6, 7]], [[1, 0, 0], [1, 1, 1]])
        """
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.lengths[rows]
        width = int(lengths.max()) if len(rows) else 0
        columns = np.arange(width, dtype=np.int64)
        mask = columns[None, :] < lengths[:, None]
        # Positions past a text's end read some other text's token (clipped into range); the mask hides them.
        index = np.minimum(self.offsets[rows][:, None] + columns[None, :], max(len(self.flat) - 1, 0))
        inputs = {
            "input_ids": np.where(mask, self.flat[index], self.pad_id) if len(self.flat) else _full(rows, width, 0),
            "attention_mask": mask.astype(np.int64),
        }
        if self.types is not None:
            inputs["token_type_ids"] = np.where(mask, self.types[index], 0) if len(self.flat) else _full(rows, 0, 0)
        return inputs


def _concat(lists: Sequence[Sequence[int]], total: int) -> np.ndarray:
    flat = np.empty(total, dtype=np.int64)
    at = 0
    for ids in lists:
        flat[at : at + len(ids)] = ids
        at += len(ids)
    return flat


def _full(rows: np.ndarray, width: int, value: int) -> np.ndarray:
    return np.full((len(rows), width), value, dtype=np.int64)


def token_budget_batches(lengths: np.ndarray, order: np.ndarray, max_tokens: int, max_rows: int) -> list[np.ndarray]:
    """Cut ``order`` (text indices, longest first) into batches of at most ``max_tokens`` padded tokens.

    A batch is padded to its first (longest) text, so it takes texts while
    ``rows x longest <= max_tokens`` and ``rows <= max_rows``; a text longer
    than the budget goes alone.  The order is kept: concatenating the batches
    gives ``order`` back.

    Parameters
    ----------
    lengths : numpy.ndarray
        Token count of every text.
    order : numpy.ndarray
        The texts to batch, longest first (for any other order the budget
        still holds: the width of a batch is the longest of its texts).
    max_tokens : int
        Padded tokens per batch (the device's work per step).
    max_rows : int
        Texts per batch at most (bounds the host memory of tiny texts).

    >>> lengths = np.array([8, 2, 5, 2, 1])
    >>> order = np.argsort(-lengths, kind="stable")
    >>> [b.tolist() for b in token_budget_batches(lengths, order, max_tokens=10, max_rows=4)]
    [[0], [2, 1], [3, 4]]
    """
    positive_int(max_tokens, "max_tokens")
    positive_int(max_rows, "max_rows")
    batches: list[np.ndarray] = []
    start, n = 0, len(order)
    while start < n:
        width = int(lengths[order[start]])
        stop = start + 1
        while stop < n and stop - start < max_rows:
            width = max(width, int(lengths[order[stop]]))
            if width * (stop - start + 1) > max_tokens:
                break
            stop += 1
        batches.append(np.asarray(order[start:stop]))
        start = stop
    return batches


_DONE = object()


def prefetch(produce: Callable[[], Iterator[T]], depth: int = 2) -> Iterator[T]:
    """Items of ``produce()``, made by a background thread up to ``depth`` ahead of the consumer.

    An exception in the producer is raised in the consumer at the item where
    it happened; a consumer that stops early releases the producer.

    >>> list(prefetch(lambda: iter(range(5))))
    [0, 1, 2, 3, 4]
    """
    positive_int(depth, "depth")
    items: queue.Queue[object] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for item in produce():
                if not put(item):
                    return
            put(_DONE)
        except BaseException as exc:  # handed to the consumer, which re-raises it
            put(exc)

    worker = threading.Thread(target=run, name="pooljudge-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            item = items.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        worker.join(timeout=5)
