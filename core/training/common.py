"""Helpers every trainer shares: seeding, devices, mixed precision, held-out metrics, early stopping, batching.

* :func:`seed_everything` seeds Python, NumPy and torch and asks torch for
  deterministic kernels, so a CPU training run with a given seed is repeatable
  bit for bit.
* :func:`pick_device` / :func:`autocast`: CUDA when present, with bf16
  autocast there (bf16 needs no loss scaling, unlike fp16); plain float32 on
  the CPU, where autocast would only slow things down.
* :func:`ranking_metrics`: held-out nDCG@10 and MRR@10 through
  :func:`core.metrics.evaluate` (trec_eval-exact), the numbers the benchmark
  and the Models page show.
* :class:`EarlyStopping`, :func:`length_sorted_batches` and the training record
  (``pooljudge_training.json``) saved inside a model folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic import atomic_write_bytes
from core.metrics import evaluate
from core.types import Qrels, Run
from core.validators import integer, positive_int

__all__ = [
    "METRICS",
    "PRIMARY_METRIC",
    "TRAINING_RECORD",
    "EarlyStopping",
    "autocast",
    "length_sorted_batches",
    "load_training_record",
    "pick_device",
    "ranking_metrics",
    "save_training_record",
    "seed_everything",
]

TRAINING_RECORD = "pooljudge_training.json"
"""File name of the training record inside a trained model's folder."""
PRIMARY_METRIC = "nDCG@10"
"""The held-out measure that picks the best checkpoint and drives early stopping."""
METRICS = ("nDCG@10", "MRR@10")
"""What :func:`ranking_metrics` reports (``core.metrics`` spellings)."""


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators and make torch's CPU kernels deterministic.

    ``torch.use_deterministic_algorithms(True, warn_only=True)`` is set so that
    an operation without a deterministic implementation warns instead of
    failing (CUDA's scatter-adds, say): results on CUDA then agree with the
    CPU's only up to float tolerance, as the issue allows.
    """
    import torch

    seed = integer(seed, "seed")
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if torch.cuda.is_available():  # pragma: no cover - no GPU in CI
        torch.cuda.manual_seed_all(seed)
    # cuBLAS needs this for deterministic matmuls; harmless on the CPU.
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    torch.use_deterministic_algorithms(True, warn_only=True)


def pick_device(device: Any = None) -> Any:
    """``torch.device(device)``, or CUDA when available and ``device`` is None, else the CPU.

    Raises
    ------
    ValueError
        When ``device`` names CUDA and none is available, or is not a device spelling.
    """
    import torch

    if device is None or device == "":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        picked = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"device: {device!r} is not a torch device ('cpu', 'cuda', 'cuda:1', ...)") from exc
    if picked.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device: {device!r} asked for CUDA but torch sees no CUDA device")
    return picked


def autocast(device: Any, enabled: bool = True) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on CUDA when ``enabled``; a do-nothing context on the CPU or when disabled."""
    import torch

    dev = torch.device(device) if not isinstance(device, torch.device) else device
    if enabled and dev.type == "cuda":  # pragma: no cover - no GPU in CI
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def ranking_metrics(run: Run, qrels: Qrels, level: int = 1) -> dict[str, float]:
    """Held-out nDCG@10 and MRR@10 of ``run``, averaged over the judged queries (trec_eval ``-c``).

    Queries in ``qrels`` the run lacks count as 0 (a trainer must not look
    better by dropping hard queries); run queries without labels are ignored.
    Returns ``{"nDCG@10": x, "MRR@10": y}``; both are 0.0 when ``qrels`` is empty.
    """
    judged = {q: j for q, j in qrels.items() if j}
    if not judged:
        return {m: 0.0 for m in METRICS}
    results = evaluate(judged, {q: r for q, r in run.items() if q in judged}, list(METRICS), level=level)
    return {m: float(results[m].get("all", 0.0)) for m in METRICS}


class EarlyStopping:
    """Stop when the held-out metric has not improved for ``patience`` evaluations in a row.

    Parameters
    ----------
    patience : int
        How many evaluations without a strict improvement are tolerated; the
        next one sets :attr:`stop`.

    Attributes
    ----------
    best : float or None
        The best value so far.
    best_step : int or None
        The step it was seen at.
    stop : bool
        True once ``patience`` evaluations in a row failed to improve.
    """

    def __init__(self, patience: int) -> None:
        self.patience = positive_int(patience, "patience")
        self.best: float | None = None
        self.best_step: int | None = None
        self.bad = 0
        self.stop = False

    def update(self, value: float, step: int) -> bool:
        """Record an evaluation; True when it is a strict improvement (the caller then saves the weights)."""
        if self.best is None or value > self.best:
            self.best, self.best_step, self.bad = float(value), step, 0
            return True
        self.bad += 1
        if self.bad >= self.patience:
            self.stop = True
        return False


def length_sorted_batches(lengths: Sequence[int], batch_size: int, seed: int = 0) -> list[list[int]]:
    """Indices grouped into batches of similar length, the batch order shuffled with ``seed``.

    Sorting by length (stable, so equal lengths keep index order) makes the
    padding within a batch minimal; shuffling the batches keeps training from
    seeing all short inputs first.  Deterministic for a given ``seed``.
    """
    positive_int(batch_size, "batch_size")
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches = [order[i : i + batch_size] for i in range(0, len(order), batch_size)]
    random.Random(seed).shuffle(batches)
    return batches


def save_training_record(folder: str | os.PathLike[str], record: dict[str, Any]) -> Path:
    """Write ``record`` (kind, base_model, params, history, best, seconds, pairs_per_second) as the folder's record.

    Written atomically as UTF-8 JSON; returns the file's path.
    """
    path = Path(folder) / TRAINING_RECORD
    data = json.dumps(record, indent=2, ensure_ascii=False, default=str).encode("utf-8")
    return atomic_write_bytes(path, data)


def load_training_record(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The folder's training record, or None when it has none (a model pooljudge did not train).

    Raises
    ------
    ValueError
        When the record exists but is not a JSON object.
    """
    path = Path(folder) / TRAINING_RECORD
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from exc
    if not isinstance(record, dict):
        raise ValueError(f"{path}: expected a JSON object, got {type(record).__name__}")
    return record
