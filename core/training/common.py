"""Helpers every trainer shares: seeding, devices, mixed precision, held-out metrics, early stopping, batching.

* :func:`seed_everything` seeds Python, NumPy and torch and asks torch for
  deterministic kernels, so a CPU training run with a given seed is repeatable
  bit for bit.
* :func:`pick_device` / :func:`autocast`: CUDA when present, with bf16
  autocast there (bf16 needs no loss scaling, unlike fp16); plain float32 on
  the CPU, where autocast would only slow things down.
  :func:`float32_weights`: trained models are loaded as float32 whatever
  their files store (an fp16 folder gave AdamW fp16 weights, which turn NaN).
* :func:`ranking_metrics` (from :mod:`core.held_out`): held-out nDCG@10 and MRR@10 through
  :func:`core.metrics.evaluate` (trec_eval-exact), the numbers the benchmark
  and the Models page show.
* :class:`EarlyStopping`, :func:`length_sorted_batches` and the training record
  (``pooljudge_training.json``) saved inside a model folder.
* :class:`TrainingLoop`: the optimisation every trainer runs (AdamW, linear
  warm-up and decay, clipping, held-out evaluations, early stopping, the best
  weights, checkpoints, history); a trainer brings its batches and its loss.
  A step whose gradients are not finite is skipped, not applied: one such
  step used to turn every weight into NaN (the clipping factor is NaN, and
  AdamW's moments keep it).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from core.atomic import atomic_write_bytes
from core.held_out import METRICS, ranking_metrics
from core.retrieval.base import ProgressCallback
from core.training.data import TrainConfig
from core.validators import integer, positive_int

__all__ = [
    "METRICS",
    "NONFINITE_LIMIT",
    "PRIMARY_METRIC",
    "TRAINING_RECORD",
    "EarlyStopping",
    "TrainingLoop",
    "autocast",
    "cpu_state",
    "float32_weights",
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
NONFINITE_LIMIT = 10
"""Training stops with an error after this many steps in a row with non-finite gradients.

A kernel that fails on some batch shapes costs isolated steps, which
:class:`TrainingLoop` skips; ten in a row means no step can succeed (a
forward pass that overflows, say), and going on would only spend the budget.
"""


def seed_everything(seed: int) -> None:
    """Seed Python's, NumPy's and torch's generators and make torch's CPU kernels deterministic.

    ``torch.use_deterministic_algorithms(True, warn_only=True)`` is set so that
    an operation without a deterministic implementation warns instead of
    failing (CUDA's scatter-adds, say): results on CUDA then agree with the
    CPU's only up to float tolerance.
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
    # torch.use_deterministic_algorithms also sets the flag of torch.compile's backend, importing it (and dynamo)
    # to do so: 1.7 CPU-s of each training job's ~16, for a compiler nothing here calls.  The backend reads the
    # same flag from this variable when something imports it later.
    os.environ.setdefault("TORCHINDUCTOR_DETERMINISTIC", "1")
    set_kernels = getattr(torch._C, "_set_deterministic_algorithms", None)
    if set_kernels is None or "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(True, warn_only=True)
    else:
        set_kernels(True, warn_only=True)


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
        bf16: contextlib.AbstractContextManager[Any] = torch.autocast(device_type="cuda", dtype=torch.bfloat16)
        return bf16
    return contextlib.nullcontext()


def float32_weights() -> dict[str, Any]:
    """The ``from_pretrained`` keyword that loads a model's weights as float32, whatever dtype its files store.

    transformers 5 loads a checkpoint in the dtype it was saved in (its default
    ``dtype="auto"``), so an fp16 or bf16 folder would give half-precision
    weights to AdamW: its ``eps`` (1e-8) is 0 in fp16, its squared gradients
    underflow, and the first steps turn weights into inf and NaN.  Training an
    fp16 copy of all-MiniLM-L6-v2 (smaller to carry to a GPU machine than the
    float32 folder) collapses that way.  Training keeps float32 master weights; bf16 only enters through
    autocast.  transformers before 4.56 names the keyword ``torch_dtype``.
    """
    import torch
    import transformers

    major, minor = (int(part) for part in transformers.__version__.split(".")[:2])
    return {"dtype": torch.float32} if (major, minor) >= (4, 56) else {"torch_dtype": torch.float32}


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


def cpu_state(model: Any) -> dict[str, Any]:
    """A CPU copy of a torch module's weights (to keep the best evaluation's while training goes on)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


StepFn = Callable[[Any], tuple[Any, int, dict[str, float]]]
"""``step_fn(batch) -> (loss tensor, training pairs in the batch, {extra term: float})``: one forward pass."""


def decays_by_shape(name: str, param: Any) -> bool:
    """Weight decay on matrices only: biases and LayerNorm weights (1-d) get none (the BERT recipe)."""
    return bool(param.dim() > 1)


class TrainingLoop:
    """The loop every trainer runs: AdamW + linear warmup, evaluation, early stopping, the best weights.

    ``step_fn(batch)`` (:data:`StepFn`) does one forward pass; the loop does
    backward, clipping at norm 1, the optimizer and scheduler steps (a step
    whose loss or gradient norm is not finite is skipped: no weight changes,
    the schedule moves on, and :data:`NONFINITE_LIMIT` of them in a row
    raise), progress, the held-out evaluations (every ``config.eval_every`` steps,
    else after each epoch, and after the last step), early stopping on
    nDCG@10, and calls ``snapshot()`` at each improvement (without
    ``evaluate``: at the last evaluation), keeping what it returns in
    :attr:`best_state`; with ``config.checkpoint_dir``, ``save(folder)``
    writes each evaluation's weights to ``<dir>/step-<n>``.

    Parameters
    ----------
    config : TrainConfig
        Reads ``learning_rate``, ``weight_decay``, ``warmup_ratio``,
        ``max_steps``, ``eval_every``, ``patience``, ``mixed_precision`` and
        ``checkpoint_dir``.
    params : list of (name, parameter)
        The trained parameters (one AdamW over all of them, clipped together).
    device : torch.device
        Where the steps run (bf16 autocast on CUDA when ``config.mixed_precision``).
    evaluate : callable or None
        ``evaluate() -> {measure: value}`` on held-out data; None: no evaluation.
    snapshot : callable
        Keeps the current weights (a CPU copy, or a folder written).
    train_mode : callable
        ``train_mode(on)`` switches the models between training and eval mode.
    save : callable
        ``save(folder)`` writes a checkpoint.
    progress : callable, optional
        ``progress(step, total_steps)`` after each step.
    decays : callable
        ``decays(name, parameter)``: whether the parameter gets weight decay;
        default :func:`decays_by_shape`.
    warmup_rounding : callable
        Turns ``warmup_ratio * total_steps`` into a step count (``int`` or ``math.ceil``).
    autocast_steps : bool
        Whether ``step_fn`` runs under autocast; False when the model autocasts
        its own forward pass and the loss is meant to run in float32.

    Attributes
    ----------
    history : list of dict
        One ``{"step", "epoch", "loss", <extra terms>, "eval"}`` per evaluation
        (losses are means over the steps applied since the previous entry;
        ``"nonfinite_steps"`` is added when some were skipped).
    best_entry, best_state
        The best evaluation's entry and ``snapshot()`` result (None before one).
    step, pairs, train_seconds
        Steps done, training pairs seen, seconds spent in training steps.
    nonfinite_steps : int
        Steps skipped because their loss or gradients were not finite.
    """

    def __init__(
        self,
        config: TrainConfig,
        params: list[tuple[str, Any]],
        device: Any,
        *,
        evaluate: Callable[[], dict[str, float]] | None,
        snapshot: Callable[[], Any],
        train_mode: Callable[[bool], Any],
        save: Callable[[Path], Any],
        progress: ProgressCallback | None,
        decays: Callable[[str, Any], bool] = decays_by_shape,
        warmup_rounding: Callable[[float], int] = int,
        autocast_steps: bool = True,
    ) -> None:
        self.config = config
        self.named_params = params
        self.params = [p for _, p in params]
        self.device = device
        self.evaluate = evaluate
        self.snapshot = snapshot
        self.train_mode = train_mode
        self.save = save
        self.progress = progress
        self.decays = decays
        self.warmup_rounding = warmup_rounding
        self.autocast_steps = autocast_steps
        self.history: list[dict[str, Any]] = []
        self.best_entry: dict[str, Any] | None = None
        self.best_state: Any = None
        self.train_seconds = 0.0
        self.pairs = 0
        self.step = 0
        self.total = 0
        self.stopper = EarlyStopping(config.patience)
        self.nonfinite_steps = 0
        self._nonfinite_in_a_row = 0
        self._sums: dict[str, float] = {}
        self._since = 0
        self._skipped_since = 0

    @property
    def pairs_per_second(self) -> float:
        """Training pairs per second of training steps (evaluation excluded); 0.0 before any step."""
        return self.pairs / self.train_seconds if self.train_seconds > 0 else 0.0

    def run(self, epoch_batches: Iterable[Sequence[Any]], step_fn: StepFn, *, steps: int | None = None) -> None:
        """Train on ``epoch_batches`` (one sequence of batches per epoch, read an epoch at a time).

        ``steps`` is the number of batches over all epochs, which sizes the
        schedule (capped by ``config.max_steps``); by default the batches are
        counted, which needs every epoch's batches up front.
        """
        config = self.config
        if steps is None:
            epoch_batches = list(epoch_batches)
            steps = sum(len(b) for b in epoch_batches)
        self.total = steps
        if config.max_steps is not None:
            self.total = min(steps, positive_int(config.max_steps, "config.max_steps"))
        eval_every = None if config.eval_every is None else positive_int(config.eval_every, "config.eval_every")
        optimizer, scheduler = self._optimizer()
        for epoch, batches in enumerate(epoch_batches, start=1):
            for batch in batches:
                if self._finished():
                    break
                self._train_step(batch, step_fn, optimizer, scheduler)
                if eval_every is not None and self.step % eval_every == 0:
                    self._record(epoch)
            if self._since and (eval_every is None or self._finished()):
                self._record(epoch)
            if self._finished():
                break
        self.train_mode(False)

    def _optimizer(self) -> tuple[Any, Any]:
        """AdamW (no weight decay where :attr:`decays` says so) and its linear warm-up-and-decay schedule."""
        import torch
        from transformers import get_linear_schedule_with_warmup

        config = self.config
        decay = [p for n, p in self.named_params if self.decays(n, p)]
        no_decay = [p for n, p in self.named_params if not self.decays(n, p)]
        optimizer = torch.optim.AdamW(
            [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
            lr=config.learning_rate,
        )
        # transformers leaves this function unannotated
        schedule = cast(Callable[[Any, int, int], Any], get_linear_schedule_with_warmup)
        return optimizer, schedule(optimizer, self.warmup_rounding(config.warmup_ratio * self.total), self.total)

    def _finished(self) -> bool:
        return self.step >= self.total or self.stopper.stop

    def _train_step(self, batch: Any, step_fn: StepFn, optimizer: Any, scheduler: Any) -> None:
        """One forward pass, backward, clipping and optimizer step (skipped when not finite); terms into the sums."""
        import torch

        started = time.perf_counter()
        self.train_mode(True)
        with autocast(self.device, bool(self.config.mixed_precision) and self.autocast_steps):
            loss, pairs, terms = step_fn(batch)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        # A NaN norm makes the clipping factor NaN for every gradient and AdamW keeps it in its moments:
        # one bad step would poison every weight for good, so such a step changes nothing.
        finite = bool(torch.isfinite(norm) & torch.isfinite(loss.detach()))  # waits for the device
        if finite:
            optimizer.step()
            scheduler.step()
        else:  # the schedule still counts the batch; torch would warn that the optimizer did not step
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Detected call of `lr_scheduler.step")
                scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        loss_value = float(loss.detach())
        self.train_seconds += time.perf_counter() - started
        self.pairs += pairs
        self.step += 1
        self._since += 1
        self._count(finite, {"loss": loss_value, **terms})
        if self.progress is not None:
            self.progress(self.step, self.total)

    def _count(self, applied: bool, terms: dict[str, float]) -> None:
        """Add an applied step's loss terms to the running sums, or count a skipped one (raising after too many)."""
        if applied:
            self._nonfinite_in_a_row = 0
            for k, v in terms.items():
                self._sums[k] = self._sums.get(k, 0.0) + v
            return
        self.nonfinite_steps += 1
        self._skipped_since += 1
        self._nonfinite_in_a_row += 1
        if self._nonfinite_in_a_row >= NONFINITE_LIMIT:
            on_cuda = str(self.device).startswith("cuda")
            precision = "bf16 autocast" if self.config.mixed_precision and on_cuda else "float32"
            raise FloatingPointError(
                f"training step {self.step}: the last {self._nonfinite_in_a_row} steps had a non-finite loss or "
                f"gradient norm (device {self.device}, {precision}; {self.nonfinite_steps} of {self.step} steps "
                "so far); no weight was changed by them. Try mixed_precision=False."
            )

    def _record(self, epoch: int) -> None:
        """Evaluate, append the history entry, keep the best weights, write the checkpoint."""
        entry: dict[str, Any] = {"step": self.step, "epoch": epoch}
        applied = self._since - self._skipped_since
        entry.update({k: v / applied for k, v in self._sums.items()} if applied else {"loss": float("nan")})
        if self._skipped_since:
            entry["nonfinite_steps"] = self._skipped_since
        entry["eval"] = self.evaluate() if self.evaluate is not None else {}
        self.history.append(entry)
        if self.evaluate is not None:
            improved = self.stopper.update(entry["eval"][PRIMARY_METRIC], self.step)
        else:  # nothing to compare: the last weights are the ones kept
            improved = self.step >= self.total
        if improved:
            self.best_entry, self.best_state = entry, self.snapshot()
        if self.config.checkpoint_dir is not None:
            self.save(Path(self.config.checkpoint_dir) / f"step-{self.step}")
        self._sums, self._since, self._skipped_since = {}, 0, 0
