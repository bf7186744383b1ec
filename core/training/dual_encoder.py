"""Dense retriever training: a shared-weights bi-encoder with in-batch and hard negatives.

:func:`train_dual_encoder` fine-tunes one ``AutoModel`` that encodes queries
and passages alike (DPR with shared weights, as sentence-transformers' bi-encoders
are trained), pooled exactly as :class:`core.retrieval.encoder.BiEncoder` pools
(masked mean by default, or CLS) and L2-normalised, so a query-passage score is
a cosine, sharpened by a temperature :math:`\\tau`.  The loss is
:func:`core.training.losses.in_batch_contrastive`: each query's own positive
against every other positive of the batch and every hard negative of the batch.

**Training** (:func:`train_dual_encoder`).  Each training example is a query
with one of its positives (``train.positives(qid)``: a query with several
positives gives several examples, never two in one batch); batches hold
``config.batch_size`` examples, each bringing up to ``config.negatives`` hard
negatives sampled (seeded) from ``train.negatives(qid)`` (its candidates not
judged relevant, so never one of its own positives).  With
``sim(q, p) = q . p / temperature`` on unit vectors::

    L = -1/B sum_i log( exp(sim(q_i, p_i+)) / (sum_j exp(sim(q_i, p_j+)) + sum_{j,h} exp(sim(q_i, p_{j,h}-))) )

Every hard negative of the batch is a candidate for every query (the
queries may have different numbers of them).  AdamW (``learning_rate``,
``weight_decay``) with a linear warmup over ``warmup_ratio`` of the steps
and linear decay, gradient norm clipped at 1, bf16 autocast on CUDA when
``mixed_precision``; ``max_steps`` caps the steps.

Held-out metric (after each epoch, or every ``eval_every`` steps, and
after the last step): exact dense retrieval of ``held_out``'s labelled
queries over all ``held_out.passages``, scored by
:func:`~core.training.common.ranking_metrics`; early stopping after
``patience`` evaluations without a better nDCG@10.

The best held-out weights are saved as a plain Hugging Face folder
(``config.json``, ``model.safetensors``, tokenizer files) plus
``pooljudge_training.json``; :class:`~core.retrieval.encoder.BiEncoder` loads it
as is and gives the vectors training evaluated, so ``dense:model=PATH`` works
(add ``pooling=cls`` when trained with CLS pooling: ``BiEncoder`` does not read
the pooling from the folder, and the record keeps it).

:class:`DualEncoder` (the trainable model), :func:`dense_run` and
:func:`evaluate_dual` are shared with :mod:`core.training.rocketqav2`.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from core.retrieval.base import ProgressCallback
from core.retrieval.encoder import default_model_path
from core.training.common import (
    StepFn,
    TrainingLoop,
    cpu_state,
    float32_weights,
    pick_device,
    ranking_metrics,
    save_training_record,
    seed_everything,
)
from core.training.data import LabelledData, TrainConfig, TrainResult
from core.training.losses import in_batch_contrastive
from core.types import Run
from core.validators import int_in_range, positive_int, real_number

__all__ = ["DualEncoder", "dense_run", "evaluate_dual", "train_dual_encoder"]

Pooling = Literal["mean", "cls"]
_POOLINGS = ("mean", "cls")
_EVAL_BATCH = 64  # texts per forward pass when encoding for evaluation
_QUERY_CHUNK = 256  # held-out queries scored at once
_EVAL_DEPTH = 100  # hits kept per held-out query (nDCG@10 and MRR@10 need 10; more is harmless)


class DualEncoder:
    """A trainable bi-encoder: one ``AutoModel`` for queries and passages, pooled like ``BiEncoder``.

    Parameters
    ----------
    model_path : str or os.PathLike, optional
        A local Hugging Face folder; default the packaged all-MiniLM-L6-v2
        (:func:`core.retrieval.encoder.default_model_path`).
    pooling : {"mean", "cls"}, default "mean"
        As ``BiEncoder``: the attention-masked mean of the last hidden states,
        or the first token's; then L2 normalisation.
    max_length : int, default 256
        Token limit (special tokens included), capped by the model's
        ``max_position_embeddings`` as ``BiEncoder`` caps it.
    device : torch.device or str, optional
        Default :func:`core.training.common.pick_device`.

    Attributes
    ----------
    model, tokenizer
        The ``transformers`` objects (``model`` is what the optimizer trains).
    path : Path
        The folder the weights came from.
    """

    def __init__(
        self, model_path: Any = None, *, pooling: Pooling = "mean", max_length: int = 256, device: Any = None
    ) -> None:
        from transformers import AutoModel, AutoTokenizer

        path = Path(model_path) if model_path is not None else default_model_path()
        if not (path / "config.json").is_file():
            raise FileNotFoundError(f"base_model: {path} is not a local Hugging Face model folder (no config.json)")
        if pooling not in _POOLINGS:
            raise ValueError(f"pooling must be one of {_POOLINGS}, got {pooling!r}")
        int_in_range(max_length, "max_length", 2)
        self.path = path
        self.pooling: Pooling = pooling
        self.device = pick_device(device)
        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        # float32 whatever the folder stores: AdamW on fp16 weights turns them NaN (common.float32_weights)
        self.model = AutoModel.from_pretrained(path, local_files_only=True, **float32_weights()).to(self.device)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        self.max_length = min(max_length, limit) if isinstance(limit, int) and limit > 0 else max_length
        self.dim = int(self.model.config.hidden_size)

    def embed(self, texts: Sequence[str]) -> Any:
        """``(len(texts), dim)`` unit vectors as a float32 tensor, with gradients (one forward pass).

        The caller chooses train or eval mode and any autocast; pooling runs in
        float32 as in ``BiEncoder._pool``.
        """
        import torch

        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        ).to(self.device)
        hidden = self.model(**batch)[0].float()
        if self.pooling == "cls":
            pooled = hidden[:, 0]
        else:
            m = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1)

    def encode(
        self, texts: Sequence[str], *, batch_size: int = _EVAL_BATCH, progress: ProgressCallback | None = None
    ) -> np.ndarray:
        """``(len(texts), dim)`` float32 unit vectors in input order: eval mode, no gradients, length-sorted batches.

        The model's train/eval mode is restored afterwards.
        """
        import torch

        texts = list(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        # Longest first (as BiEncoder), so batches hold texts of similar length.
        lengths = [len(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: -lengths[i])
        was_training = self.model.training
        self.model.eval()
        try:
            with torch.inference_mode():
                for start in range(0, len(order), batch_size):
                    rows = order[start : start + batch_size]
                    out[rows] = self.embed([texts[i] for i in rows]).cpu().numpy()
                    if progress is not None:
                        progress(min(start + batch_size, len(order)), len(order))
        finally:
            self.model.train(was_training)
        return out

    def state(self) -> dict[str, Any]:
        """A CPU copy of the weights (to keep the best evaluation's)."""
        return cpu_state(self.model)

    def load_state(self, state: dict[str, Any]) -> None:
        self.model.load_state_dict(state)

    def save(self, folder: Any) -> Path:
        """Write the model and tokenizer as a Hugging Face folder that ``BiEncoder(folder)`` loads."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(out)
        self.tokenizer.save_pretrained(out)
        return out


def dense_run(encoder: DualEncoder, data: LabelledData, *, k: int = _EVAL_DEPTH) -> Run:
    """Exact dense retrieval of every labelled query of ``data`` over all ``data.passages``.

    The top ``k`` passages by inner product (= cosine) per query, as a
    :data:`~core.types.Run`; the metrics rank them in trec_eval order.
    """
    positive_int(k, "k")
    qids = sorted(q for q in data.queries if data.qrels.get(q))
    pids = sorted(data.passages)
    if not qids or not pids:
        return {}
    p_vecs = encoder.encode([data.passages[p] for p in pids])
    q_vecs = encoder.encode([data.queries[q] for q in qids])
    k = min(k, len(pids))
    run: Run = {}
    for start in range(0, len(qids), _QUERY_CHUNK):  # bounds the (queries x passages) score matrix
        scores = q_vecs[start : start + _QUERY_CHUNK] @ p_vecs.T
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        for i, row in enumerate(top):
            run[qids[start + i]] = {pids[j]: float(scores[i, j]) for j in row}
    return run


def evaluate_dual(encoder: DualEncoder, held_out: LabelledData) -> dict[str, float]:
    """Held-out ``{"nDCG@10", "MRR@10"}`` of exact dense retrieval over all ``held_out.passages``."""
    return ranking_metrics(dense_run(encoder, held_out), held_out.qrels, held_out.level)


# --------------------------------------------------------------------------- what the dual-encoder trainers share


def check_dual_inputs(train: LabelledData, config: TrainConfig, temperature: float) -> list[str]:
    """Checks both trainers make; returns the trainable query ids."""
    if not isinstance(train, LabelledData):
        raise TypeError(f"train must be a LabelledData, got {type(train).__name__}")
    if not isinstance(config, TrainConfig):
        raise TypeError(f"config must be a TrainConfig, got {type(config).__name__}")
    real_number(temperature, "temperature", low=0.0, low_open=True)
    positive_int(config.batch_size, "config.batch_size")
    positive_int(config.epochs, "config.epochs")
    int_in_range(config.negatives, "config.negatives", 0)
    qids = train.trainable()
    if not qids:
        raise ValueError("train has no query with a text and a positive passage: nothing to train on")
    return qids


def examples(data: LabelledData, qids: Sequence[str]) -> list[tuple[str, str]]:
    """``(query id, positive id)`` training examples: one per positive, so a query with several yields several."""
    return [(q, p) for q in qids for p in data.positives(q)]


def pack_batches(items: list[tuple[str, str]], batch_size: int, rng: random.Random) -> list[list[tuple[str, str]]]:
    """Shuffle ``(qid, pid)`` examples and group them into batches in which no query appears twice.

    A query's second positive in the same batch would be one of its in-batch
    negatives, so examples that would repeat a query wait for a later batch
    (greedily, in shuffled order).
    """
    pending = list(items)
    rng.shuffle(pending)
    batches = []
    while pending:
        batch: list[tuple[str, str]] = []
        seen: set[str] = set()
        rest = []
        for ex in pending:
            if len(batch) < batch_size and ex[0] not in seen:
                batch.append(ex)
                seen.add(ex[0])
            else:
                rest.append(ex)
        batches.append(batch)
        pending = rest
    return batches


@dataclass
class DualPlan:
    """What a dual-encoder training run iterates over: its examples, every epoch's batches, the seeded generator.

    ``rng`` packed the batches and then samples each step's negatives, in that order.
    """

    qids: list[str]
    items: list[tuple[str, str]]
    epoch_batches: list[list[list[tuple[str, str]]]]
    rng: random.Random


def seeded_dual(base_model: Any, pooling: Pooling, config: TrainConfig) -> DualEncoder:
    """Seed every generator (dropout masks draw from torch's), then load the dual encoder to train."""
    seed_everything(config.seed)
    return DualEncoder(base_model, pooling=pooling, max_length=config.max_length, device=config.device)


def make_plan(train: LabelledData, qids: list[str], config: TrainConfig) -> DualPlan:
    """Every epoch's batches of a dual-encoder run, drawn from a generator seeded with ``config.seed``.

    Parameters
    ----------
    train : LabelledData
        The training data.
    qids : list of str
        Its trainable queries (:func:`check_dual_inputs`).
    config : TrainConfig
        ``seed``, ``batch_size`` and ``epochs`` are read.

    Returns
    -------
    DualPlan
        Its ``rng`` goes on to sample each step's negatives.
    """
    items = examples(train, qids)
    rng = random.Random(config.seed)
    epoch_batches = [pack_batches(items, config.batch_size, rng) for _ in range(config.epochs)]
    return DualPlan(qids, items, epoch_batches, rng)


def trainable_parameters(*models: Any) -> list[tuple[str, Any]]:
    """The named parameters of ``models`` that need gradients, model after model."""
    return [(n, p) for m in models for n, p in m.named_parameters() if p.requires_grad]


def held_out_evaluation(dual: DualEncoder, held_out: LabelledData | None) -> Callable[[], dict[str, float]] | None:
    """The loop's ``evaluate``: the dual encoder's exact dense retrieval on ``held_out`` (None without it)."""
    if held_out is None:
        return None
    return lambda: evaluate_dual(dual, held_out)


def dual_params(
    config: TrainConfig,
    dual: DualEncoder,
    temperature: float,
    plan: DualPlan,
    held_out: LabelledData | None,
    loop: TrainingLoop,
    initial: dict[str, float],
) -> dict[str, Any]:
    """The ``params`` of a dual encoder's training record: settings, example counts, steps, initial metrics."""
    return {
        **config.as_dict(),
        "pooling": dual.pooling,
        "normalize": True,
        "temperature": float(temperature),
        "max_length": dual.max_length,
        "train_queries": len(plan.qids),
        "examples": len(plan.items),
        "held_out_queries": sum(1 for q in held_out.queries if held_out.qrels.get(q)) if held_out else 0,
        "steps": loop.history[-1]["step"] if loop.history else 0,
        "initial_eval": initial,
    }


def finish_training(
    loop: TrainingLoop, output: Path, kind: str, base_model: str, params: dict[str, Any], started: float
) -> tuple[TrainResult, dict[str, Any]]:
    """Write the training record of ``loop``'s run to ``output``; the result and the record."""
    seconds = time.perf_counter() - started
    best = loop.best_entry or {}
    rate = loop.pairs_per_second
    record = {
        "kind": kind,
        "base_model": base_model,
        "params": params,
        "history": loop.history,
        "best": best,
        "seconds": seconds,
        "pairs_per_second": rate,
    }
    save_training_record(output, record)
    result = TrainResult(
        path=output, history=loop.history, best=best, seconds=seconds, pairs_per_second=rate, params=params
    )
    return result, record


# --------------------------------------------------------------------------- the dual encoder alone


def _keep_best(loop: TrainingLoop, dual: DualEncoder, output: Any) -> None:
    """Load the best evaluation's weights (when there was one) and save them to ``output``."""
    if loop.best_state is not None:
        dual.load_state(loop.best_state)
    dual.model.eval()
    dual.save(output)


def _contrastive_step(
    dual: DualEncoder, train: LabelledData, negatives: int, rng: random.Random, temperature: float
) -> StepFn:
    """The dual encoder's training step: in-batch contrastive loss with each query's sampled hard negatives."""

    def step_fn(batch: list[tuple[str, str]]) -> tuple[Any, int, dict[str, float]]:
        hard_ids: list[str] = []
        for qid, _ in batch:
            candidates = train.negatives(qid)
            hard_ids += rng.sample(candidates, min(negatives, len(candidates)))
        q = dual.embed([train.queries[qid] for qid, _ in batch])
        p = dual.embed([train.passages[pid] for _, pid in batch] + [train.passages[pid] for pid in hard_ids])
        positives, hard = p[: len(batch)], p[len(batch) :]
        # All hard negatives are shared by the whole batch, so one (1, total, d) block
        # serves queries with different numbers of them.
        loss = in_batch_contrastive(q, positives, hard.unsqueeze(0) if len(hard_ids) else None, temperature=temperature)
        return loss, len(batch) + len(hard_ids), {}

    return step_fn


def train_dual_encoder(
    train: LabelledData,
    held_out: LabelledData | None,
    config: TrainConfig,
    *,
    output: Any,
    base_model: Any = None,
    pooling: Pooling = "mean",
    temperature: float = 0.05,
    progress: ProgressCallback | None = None,
) -> TrainResult:
    """Train a bi-encoder on labelled queries with in-batch and hard negatives (DPR's contrastive loss).

    Examples, loss and held-out metric: the module docstring's "Training"; the
    optimisation is :class:`~core.training.common.TrainingLoop`'s.  The best
    evaluation's weights (the last ones without ``held_out``) go to ``output``.

    Parameters
    ----------
    train, held_out : LabelledData
        Training and held-out data (``held_out`` may be None: no evaluation).
    config : TrainConfig
        Reads every field; ``batch_size`` counts queries.
    output : path
        The folder to write (created; files in it are overwritten), which
        :class:`~core.retrieval.encoder.BiEncoder` loads.
    base_model : path, optional
        A local Hugging Face encoder folder; default the packaged all-MiniLM-L6-v2.
    pooling : {"mean", "cls"}
        ``BiEncoder``'s pooling (give ``dense:`` specs ``pooling=cls`` for a CLS-trained model).
    temperature : float
        :math:`\\tau` > 0 (0.05: cosines in [-1, 1] need sharpening).
    progress : callable, optional
        ``progress(step, total_steps)`` after each training step.

    Returns
    -------
    TrainResult
        ``history`` entries ``{"step", "epoch", "loss", "eval"}``; ``params``: settings, example counts, ``"initial_eval"``
        (the base model's held-out metrics); ``pairs_per_second``: positives + hard negatives per training second.
    """
    started = time.perf_counter()
    qids = check_dual_inputs(train, config, temperature)
    dual = seeded_dual(base_model, pooling, config)
    plan = make_plan(train, qids, config)
    initial = evaluate_dual(dual, held_out) if held_out is not None else {}
    loop = TrainingLoop(
        config,
        trainable_parameters(dual.model),
        dual.device,
        evaluate=held_out_evaluation(dual, held_out),
        snapshot=dual.state,
        train_mode=dual.model.train,
        save=dual.save,
        progress=progress,
    )
    loop.run(plan.epoch_batches, _contrastive_step(dual, train, config.negatives, plan.rng, temperature))
    _keep_best(loop, dual, output)
    params = dual_params(config, dual, temperature, plan, held_out, loop, initial)
    return finish_training(loop, Path(output), "dual-encoder", str(dual.path), params, started)[0]
