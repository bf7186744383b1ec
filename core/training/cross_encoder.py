"""Cross-encoder re-rankers: score (query, passage) pairs jointly, train them on graded labels, ensemble them.

A cross-encoder reads ``[CLS] query [SEP] passage [SEP]`` and maps the first
token's representation to one relevance logit (Nogueira & Cho 2019, "Passage
Re-ranking with BERT").  It is far more accurate than a bi-encoder and far
slower, so it re-ranks a first stage's top candidates.

* :class:`CrossEncoder` wraps any local Hugging Face encoder folder as
  ``AutoModelForSequenceClassification`` with ``num_labels=1``.  A plain
  encoder (the packaged all-MiniLM-L6-v2 by default) gets a new scoring head,
  initialised from the seed, so two trainings start from identical weights.
* :func:`train_cross_encoder` trains one on a :class:`~core.training.data.LabelledData`:
  listwise (softmax cross-entropy of the positive over itself and hard
  negatives, T2Ranking / RocketQAv2's ``L_sup``) or pointwise (BCE on
  ``grade >= level``), keeping the weights that re-rank the held-out queries'
  candidates best.
* :func:`~core.training.reranking.rerank` (in :mod:`core.training.reranking`,
  importable from here too) scores candidate lists with one re-ranker, or with
  several whose per-query min-max normalised scores are averaged
  (DuReader-retrieval's ensemble of re-rankers).

**Training** (:func:`train_cross_encoder`).  For every labelled (query,
positive) pair, the positive and ``config.negatives`` hard negatives (the
query's candidates not judged relevant, drawn anew each epoch with the seed;
random passages fill in when there are too few).

* ``loss="listwise"``: ``batch_size`` such lists per step, loss
  :func:`core.training.losses.listwise_softmax` of each list's scores
  (the positive's softmax probability over its list).
* ``loss="pointwise"``: the lists' pairs, ``batch_size`` pairs per step,
  loss :func:`core.training.losses.pointwise_bce` on ``grade >= level``
  (grades from the qrels, 0 for unjudged).

Batches hold examples of similar token length, in a seeded order.  AdamW
with a linear warm-up (``warmup_ratio`` of the steps) and decay
(``transformers.get_linear_schedule_with_warmup``), gradients clipped to
norm 1 (:class:`~core.training.common.TrainingLoop`).  Every
``config.eval_every`` steps (default: each epoch) and at the last step, the
model re-ranks each held-out query's first 100 candidates; when nDCG@10
improves, the weights are saved to ``output`` (and to
``config.checkpoint_dir/step-N`` when set); training stops after
``config.patience`` evaluations without improvement or ``config.max_steps``
steps.  Without ``held_out`` the final weights are saved.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

import numpy as np

from core.cache import content_key
from core.retrieval.base import ProgressCallback
from core.retrieval.encoder import default_model_path, model_files_digest
from core.training import losses
from core.training.common import (
    StepFn,
    TrainingLoop,
    autocast,
    float32_weights,
    length_sorted_batches,
    pick_device,
    save_training_record,
    seed_everything,
)
from core.training.data import LabelledData, TrainConfig, TrainResult
from core.training.reranking import EVAL_DEPTH, evaluate_reranker, rerank
from core.validators import int_in_range, positive_int

# rerank, evaluate_reranker and EVAL_DEPTH live in core.training.reranking; importable from here as they always were
__all__ = ["EVAL_DEPTH", "KIND", "CrossEncoder", "evaluate_reranker", "rerank", "train_cross_encoder"]

KIND = "cross-encoder"
"""The ``kind`` of a trained cross-encoder in its training record and the model registry."""
Loss = Literal["listwise", "pointwise"]
_LOSSES = ("listwise", "pointwise")


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' loading/saving progress bars and its "newly initialized" warning for a while.

    Both are meant for interactive use; here a new head is expected (it is
    recorded in :attr:`CrossEncoder.new_head`) and saving the best weights
    happens at every improvement, which would print a bar each time.
    """
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    # transformers leaves these three unannotated
    silence, hide_bars, show_bars = (
        cast(Callable[[], None], f)
        for f in (hf_logging.set_verbosity_error, hf_logging.disable_progress_bar, hf_logging.enable_progress_bar)
    )
    silence()
    hide_bars()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            show_bars()


class CrossEncoder:
    """A local Hugging Face encoder with a one-logit head, scoring (query, passage) pairs.

    Parameters
    ----------
    model_path : str or os.PathLike, optional
        A local model folder: a trained cross-encoder (``num_labels=1``) or a
        plain encoder, which gets a new head.  None: the packaged
        all-MiniLM-L6-v2 (:func:`core.retrieval.encoder.default_model_path`)
        with a new head.  Never a hub name: nothing is downloaded.
    max_length : int, default 256
        Pairs are truncated to this many tokens (longest side first), capped
        by the model's ``max_position_embeddings``.
    batch_size : int, default 32
        Pairs per forward pass when scoring.
    device : str or torch.device, optional
        CUDA when available, else the CPU (see :func:`core.training.common.pick_device`).
    seed : int, default 0
        Seeds the new head's initialisation (in a forked copy of torch's
        generator), so the same folder and seed give the same model.
    mixed_precision : bool, default True
        bf16 autocast on CUDA; no effect on the CPU.

    Attributes
    ----------
    model, tokenizer
        The ``transformers`` objects (joint training uses them directly).
    path : Path
        The folder loaded.
    new_head : bool
        True when the scoring head was initialised here rather than loaded.
    fingerprint : str
        Identifies the scores: the folder's files, the head's seed when it is
        new, and ``max_length``.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None = None,
        *,
        max_length: int = 256,
        batch_size: int = 32,
        device: Any = None,
        seed: int = 0,
        mixed_precision: bool = True,
    ) -> None:
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        path = Path(model_path) if model_path is not None else default_model_path()
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"model_path {path}: not a local Hugging Face model folder (no config.json)")
        int_in_range(max_length, "max_length", 2)
        self.batch_size = positive_int(batch_size, "batch_size")
        self.path = path
        self.device = pick_device(device)
        self.mixed_precision = bool(mixed_precision)
        self.seed = int(seed)

        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        # A new head's initial weights come from torch's CPU generator (the model is built on the
        # CPU): seed it, inside fork_rng so that loading a model leaves the caller's generator alone.
        with torch.random.fork_rng(devices=[]), _quiet_transformers():
            torch.manual_seed(self.seed)
            model, info = AutoModelForSequenceClassification.from_pretrained(
                path,
                num_labels=1,
                local_files_only=True,
                output_loading_info=True,
                ignore_mismatched_sizes=True,  # a classifier with another label count gets a fresh 1-logit head
                **float32_weights(),  # an fp16/bf16 folder too: AdamW needs float32 weights, autocast does the rest
            )
        head = ("classifier", "score", "out_proj")
        missing = [
            *info.get("missing_keys", ()),
            *(k[0] if isinstance(k, tuple) else k for k in info.get("mismatched_keys", ())),
        ]
        self.new_head = any(part in key for key in missing for part in head)
        self.model = model.to(self.device).eval()

        limit = getattr(model.config, "max_position_embeddings", None)
        self.max_length = min(max_length, limit) if isinstance(limit, int) and limit > 0 else max_length
        self._uses_token_types = "token_type_ids" in getattr(self.tokenizer, "model_input_names", ())
        self.fingerprint = content_key(
            [],
            params={
                "files": model_files_digest(path),
                "max_length": self.max_length,
                "head_seed": self.seed if self.new_head else None,
            },
        )

    def __repr__(self) -> str:
        return (
            f"CrossEncoder({str(self.path)!r}, max_length={self.max_length}, device={str(self.device)!r}, "
            f"new_head={self.new_head})"
        )

    @property
    def params(self) -> dict[str, Any]:
        """What defines the scores (for run metadata)."""
        return {"model": str(self.path), "max_length": self.max_length, "fingerprint": self.fingerprint}

    # ------------------------------------------------------------------ features

    def features(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, list[int]]]:
        """Tokenise pairs once, unpadded: one ``{"input_ids", "token_type_ids"?}`` per pair."""
        if not pairs:
            return []
        queries = [q for q, _ in pairs]
        texts = [p for _, p in pairs]
        enc = self.tokenizer(
            queries,
            texts,
            truncation=True,
            max_length=self.max_length,
            padding=False,
            return_attention_mask=False,
            return_token_type_ids=self._uses_token_types,
        )
        types = enc.get("token_type_ids") if self._uses_token_types else None
        return [
            {"input_ids": ids, **({"token_type_ids": types[i]} if types is not None else {})}
            for i, ids in enumerate(enc["input_ids"])
        ]

    def collate(self, rows: Sequence[Mapping[str, list[int]]]) -> dict[str, Any]:
        """Pad tokenised pairs to the longest one and move them to the model's device."""
        import torch

        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        width = max(len(r["input_ids"]) for r in rows)
        ids = torch.full((len(rows), width), int(pad_id), dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        types = torch.zeros((len(rows), width), dtype=torch.long) if self._uses_token_types else None
        for r, row in enumerate(rows):
            n = len(row["input_ids"])
            ids[r, :n] = torch.tensor(row["input_ids"])
            mask[r, :n] = 1
            if types is not None:
                types[r, :n] = torch.tensor(row["token_type_ids"])
        batch = {"input_ids": ids.to(self.device), "attention_mask": mask.to(self.device)}
        if types is not None:
            batch["token_type_ids"] = types.to(self.device)
        return batch

    def logits(self, batch: Mapping[str, Any]) -> Any:
        """The model's scores of a collated batch, shape ``(n,)``, float32 (gradients flow in train mode)."""
        with autocast(self.device, self.mixed_precision):
            out = self.model(**batch).logits
        return out.reshape(-1).float()

    # ------------------------------------------------------------------ scoring

    def score(self, pairs: Sequence[tuple[str, str]], *, progress: ProgressCallback | None = None) -> np.ndarray:
        """Relevance logits of ``(query, passage)`` pairs, float32, in input order.

        Pairs are tokenised once and scored in batches of similar length
        (longest first: little padding, and a memory problem shows on the
        first batch), in eval mode without gradients.  ``progress(done,
        total)`` is called after each batch.
        """
        import torch

        rows = self.features(pairs)
        n = len(rows)
        out = np.empty(n, dtype=np.float32)
        if n == 0:
            if progress is not None:
                progress(0, 0)
            return out
        lengths = np.fromiter((len(r["input_ids"]) for r in rows), dtype=np.int64, count=n)
        order = np.argsort(-lengths, kind="stable")
        was_training = self.model.training
        self.model.eval()
        done = 0
        try:
            with torch.inference_mode():
                for start in range(0, n, self.batch_size):
                    idx = order[start : start + self.batch_size]
                    out[idx] = self.logits(self.collate([rows[i] for i in idx])).cpu().numpy()
                    done += len(idx)
                    if progress is not None:
                        progress(done, n)
        finally:
            self.model.train(was_training)
        return out

    def probabilities(
        self, pairs: Sequence[tuple[str, str]], *, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """``sigmoid(score)``: the probability of relevance under the pointwise (BCE) reading of the logit."""
        scores = self.score(pairs, progress=progress).astype(np.float64)
        return (1.0 / (1.0 + np.exp(-scores))).astype(np.float32)

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Save as a standard Hugging Face folder (``config.json``, ``model.safetensors``, tokenizer files).

        ``AutoModelForSequenceClassification.from_pretrained(folder)`` and
        ``CrossEncoder(folder)`` load it as is, with identical scores.
        """
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        with _quiet_transformers():
            self.model.save_pretrained(out)
            self.tokenizer.save_pretrained(out)
        return out


# --------------------------------------------------------------------------- training


def _groups(data: LabelledData, negatives: int, rng: random.Random) -> list[tuple[str, list[str]]]:
    """One ``(query_id, [positive, negative, ...])`` list per labelled positive pair.

    Up to ``negatives`` hard negatives are drawn (seeded, without replacement)
    from the query's candidates not judged relevant; when there are fewer, the
    list is filled with random passages that are not relevant to the query
    (so every list has the same length unless the collection is too small).
    """
    pool = sorted(data.passages)
    out = []
    for qid in data.trainable():
        positives = data.positives(qid)
        relevant = {d for d, g in data.qrels.get(qid, {}).items() if g >= data.level}
        hard = data.negatives(qid)
        for pos in positives:
            chosen = rng.sample(hard, min(negatives, len(hard)))
            taken = set(chosen)
            if len(chosen) < negatives:
                # Rejection sampling is fast when most passages are free; fall back to a scan otherwise.
                for _ in range(4 * negatives):
                    if len(chosen) >= negatives:
                        break
                    d = pool[rng.randrange(len(pool))]
                    if d not in taken and d not in relevant:
                        chosen.append(d)
                        taken.add(d)
                if len(chosen) < negatives:
                    free = [d for d in pool if d not in taken and d not in relevant]
                    chosen.extend(rng.sample(free, min(negatives - len(chosen), len(free))))
            out.append((qid, [pos, *chosen]))
    return out


def _check_training_args(train: LabelledData, held_out: LabelledData | None, config: TrainConfig, loss: str) -> None:
    """Reject a loss, a config or data that :func:`train_cross_encoder` cannot train with."""
    if loss not in _LOSSES:
        raise ValueError(f"loss must be one of {_LOSSES}, got {loss!r}")
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    positive_int(config.epochs, "config.epochs")
    positive_int(config.batch_size, "config.batch_size")
    int_in_range(config.negatives, "config.negatives", 1 if loss == "listwise" else 0)
    if config.eval_every is not None:
        positive_int(config.eval_every, "config.eval_every")
    if config.max_steps is not None:
        positive_int(config.max_steps, "config.max_steps")
    if not train.trainable():
        raise ValueError("train: no query with a text and a relevant passage with a text; nothing to learn from")
    if held_out is not None and not any(held_out.qrels.get(q) and held_out.candidates.get(q) for q in held_out.queries):
        # every evaluation would score 0, and early stopping would end training after `patience` of them
        raise ValueError(
            "held_out: no query with both labels and candidates to re-rank; pass None to train "
            "without a held-out evaluation"
        )


def _seeded_cross_encoder(base_model: str | os.PathLike[str] | None, config: TrainConfig) -> CrossEncoder:
    """Seed every generator, then load the cross-encoder to train (a new head is initialised from the seed)."""
    seed_everything(config.seed)  # dropout masks draw from torch's generator: seeded, training repeats exactly
    return CrossEncoder(
        base_model,
        max_length=config.max_length,
        batch_size=max(32, config.batch_size),
        device=config.device,
        seed=config.seed,
        mixed_precision=config.mixed_precision,
    )


def _decays_by_name(name: str, param: Any) -> bool:
    """Weight decay on everything but biases and LayerNorm weights, told apart by their names."""
    return not name.endswith("bias") and "LayerNorm" not in name


@dataclass
class _Batch:
    """One training step's input: its examples' tokenised pairs, example after example.

    ``sizes`` holds each example's number of pairs (its list's length; 1 when
    pointwise), ``grades`` each pair's label when pointwise (0 when unjudged).
    """

    rows: list[dict[str, list[int]]]
    sizes: list[int]
    grades: list[float]


def _epoch_batches(
    encoder: CrossEncoder, train: LabelledData, groups: list[tuple[str, list[str]]], loss: Loss, seed: int, size: int
) -> list[_Batch]:
    """One epoch's batches of ``size`` examples of similar token length, in an order shuffled with ``seed``.

    Listwise, an example is a group (a positive and its negatives); pointwise, each pair of a group.
    """
    examples = groups if loss == "listwise" else [(qid, [d]) for qid, docs in groups for d in docs]
    feats = [encoder.features([(train.queries[qid], train.passages[d]) for d in docs]) for qid, docs in examples]
    lengths = [sum(len(f["input_ids"]) for f in fs) for fs in feats]
    batches = []
    for ids in length_sorted_batches(lengths, size, seed=seed):
        grades = []
        if loss == "pointwise":
            grades = [float(train.qrels.get(examples[i][0], {}).get(examples[i][1][0], 0)) for i in ids]
        batches.append(_Batch([f for i in ids for f in feats[i]], [len(feats[i]) for i in ids], grades))
    return batches


def _epochs(
    encoder: CrossEncoder,
    train: LabelledData,
    config: TrainConfig,
    loss: Loss,
    rng: random.Random,
    first_groups: list[tuple[str, list[str]]],
) -> Iterator[list[_Batch]]:
    """Every epoch's batches, built when training reaches the epoch: each draws new negatives with ``rng``."""
    for epoch in range(1, config.epochs + 1):
        groups = first_groups if epoch == 1 else _groups(train, config.negatives, rng)
        yield _epoch_batches(encoder, train, groups, loss, config.seed * 1000 + epoch, config.batch_size)


def _schedule_steps(first_groups: list[tuple[str, list[str]]], loss: Loss, config: TrainConfig) -> int:
    """Steps over all epochs.

    Each epoch draws new negatives, but always as many (the counts depend on
    the data only), so the first epoch's lists fix the number of steps.
    """
    n_examples = len(first_groups) if loss == "listwise" else sum(len(docs) for _, docs in first_groups)
    return math.ceil(n_examples / config.batch_size) * config.epochs


def _as_lists(scores: Any, sizes: Sequence[int]) -> tuple[Any, Any]:
    """Flat scores, list after list, as a ``(lists, longest)`` grid and its mask (None when every list is full)."""
    import torch

    width = max(sizes)
    grid = scores.new_zeros((len(sizes), width))
    mask = torch.zeros((len(sizes), width), dtype=torch.bool, device=scores.device)
    at = 0
    for r, n in enumerate(sizes):
        grid[r, :n] = scores[at : at + n]
        mask[r, :n] = True
        at += n
    return grid, mask if not bool(mask.all()) else None


def _cross_step(encoder: CrossEncoder, loss: Loss, level: int) -> StepFn:
    """The training step: score a batch's pairs; listwise softmax over each list, or BCE on each pair's grade."""
    import torch

    def step_fn(batch: _Batch) -> tuple[Any, int, dict[str, float]]:
        scores = encoder.logits(encoder.collate(batch.rows))
        if loss == "listwise":
            value = losses.listwise_softmax(*_as_lists(scores, batch.sizes))
        else:
            value = losses.pointwise_bce(scores, torch.tensor(batch.grades, device=scores.device), level)
        return value, len(batch.rows), {}

    return step_fn


def _reranker_evaluation(encoder: CrossEncoder, held_out: LabelledData | None) -> Callable[[], dict[str, float]] | None:
    """The loop's ``evaluate``: re-ranking ``held_out``'s candidates (None without held-out data)."""
    if held_out is None:
        return None
    return lambda: evaluate_reranker(encoder, held_out)


def _training_loop(
    encoder: CrossEncoder, config: TrainConfig, held_out: LabelledData | None, out_dir: Path, progress: Any
) -> TrainingLoop:
    """The shared loop, set as this trainer has always trained.

    Every improvement is saved to ``out_dir`` at once (not kept in memory);
    decay is chosen by parameter name; the warm-up is rounded up; the forward
    pass autocasts itself (:meth:`CrossEncoder.logits`), the loss runs in float32.
    """
    return TrainingLoop(
        config,
        list(encoder.model.named_parameters()),
        encoder.device,
        evaluate=_reranker_evaluation(encoder, held_out),
        snapshot=lambda: encoder.save(out_dir),
        train_mode=encoder.model.train,
        save=encoder.save,
        progress=progress,
        decays=_decays_by_name,
        warmup_rounding=math.ceil,
        autocast_steps=False,
    )


def _write_result(
    loop: TrainingLoop, encoder: CrossEncoder, out_dir: Path, params: dict[str, Any], started: float
) -> TrainResult:
    """The result of ``loop``'s run, its training record written to ``out_dir``."""
    if loop.best_entry is None:  # no evaluation improved (every metric nan): keep the last weights
        encoder.save(out_dir)
    result = TrainResult(
        path=out_dir,
        history=loop.history,
        best=loop.best_entry or loop.history[-1],
        seconds=time.perf_counter() - started,
        pairs_per_second=loop.pairs_per_second,
        params=params,
    )
    save_training_record(out_dir, {"kind": KIND, "base_model": str(encoder.path), **result.as_dict()})
    return result


def train_cross_encoder(
    train: LabelledData,
    held_out: LabelledData | None,
    config: TrainConfig,
    *,
    output: str | os.PathLike[str],
    base_model: str | os.PathLike[str] | None = None,
    loss: Loss = "listwise",
    progress: ProgressCallback | None = None,
) -> TrainResult:
    """Train a cross-encoder re-ranker on graded labels; the best held-out weights end up in ``output``.

    The examples, the losses, the batching and the evaluations are the module
    docstring's "Training"; deterministic on the CPU for a given ``config.seed``.

    Parameters
    ----------
    train, held_out : LabelledData
        Training queries and the held-out queries (may be None: the final weights are saved).
    config : TrainConfig
    output : path
        Folder for the trained model (a Hugging Face folder plus ``pooljudge_training.json``).
    base_model : path, optional
        Starting folder; None = the packaged all-MiniLM-L6-v2 with a new head.
    loss : {"listwise", "pointwise"}
    progress : callable, optional
        ``progress(step, total_steps)`` after every optimiser step.

    Returns
    -------
    TrainResult
        ``pairs_per_second`` counts training pairs scored (forward and
        backward) per second of training steps, evaluation excluded.
    """
    _check_training_args(train, held_out, config, loss)
    out_dir = Path(output)
    started = time.perf_counter()
    encoder = _seeded_cross_encoder(base_model, config)
    rng = random.Random(config.seed)
    first_groups = _groups(train, config.negatives, rng)
    initial = evaluate_reranker(encoder, held_out) if held_out is not None else None
    loop = _training_loop(encoder, config, held_out, out_dir, progress)
    steps = _schedule_steps(first_groups, loss, config)
    loop.run(
        _epochs(encoder, train, config, loss, rng, first_groups), _cross_step(encoder, loss, train.level), steps=steps
    )
    params = {
        "loss": loss,
        "config": config.as_dict(),
        "base_model": str(encoder.path),
        "train_queries": len(train.trainable()),
        "held_out_queries": len(held_out.queries) if held_out else 0,
        "lists": len(first_groups),
        "steps": loop.step,
        "initial_eval": initial,
    }
    return _write_result(loop, encoder, out_dir, params, started)
