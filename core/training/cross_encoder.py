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
* :func:`rerank` scores candidate lists with one re-ranker, or with several
  whose per-query min-max normalised scores are averaged (DuReader-retrieval's
  ensemble of re-rankers).
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from core.cache import content_key
from core.retrieval.base import ProgressCallback
from core.retrieval.encoder import default_model_path, model_files_digest
from core.training import losses
from core.training.common import (
    PRIMARY_METRIC,
    EarlyStopping,
    autocast,
    length_sorted_batches,
    pick_device,
    ranking_metrics,
    save_training_record,
    seed_everything,
)
from core.training.data import LabelledData, TrainConfig, TrainResult
from core.types import Run
from core.validators import int_in_range, positive_int

__all__ = ["EVAL_DEPTH", "KIND", "CrossEncoder", "evaluate_reranker", "rerank", "train_cross_encoder"]

KIND = "cross-encoder"
"""The ``kind`` of a trained cross-encoder in its training record and the model registry."""
EVAL_DEPTH = 100
"""How many of each held-out query's candidates the held-out evaluation re-ranks."""
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
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        hf_logging.set_verbosity(verbosity)
        if bars:
            hf_logging.enable_progress_bar()


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


# --------------------------------------------------------------------------- ensembles


def _minmax(scores: np.ndarray) -> np.ndarray:
    """Min-max normalise to [0, 1]; all-equal scores carry no preference and become 0."""
    low, high = float(scores.min()), float(scores.max())
    if high == low:
        return np.zeros_like(scores, dtype=np.float64)
    return (scores.astype(np.float64) - low) / (high - low)


def rerank(
    encoders: Sequence[CrossEncoder],
    queries: Mapping[str, str],
    candidates: Mapping[str, Sequence[str]],
    passages: Mapping[str, str],
    *,
    progress: ProgressCallback | None = None,
) -> Run:
    """Score each query's candidates with one re-ranker, or an ensemble of several.

    One encoder: its raw logits.  Several: for each query, each encoder's
    scores are min-max normalised over the query's candidates and the
    normalised scores are averaged (DuReader-retrieval's ensemble; logits of
    different models are on different scales, so they are not averaged raw)::

        s(q, p) = 1/M * sum_m (s_m(q, p) - min_p' s_m(q, p')) / (max_p' s_m(q, p') - min_p' s_m(q, p'))

    Parameters
    ----------
    encoders : sequence of CrossEncoder
        At least one (anything with ``score(pairs, progress=)`` works).
    queries : mapping
        ``{query_id: text}``; every query of ``candidates`` needs one.
    candidates : mapping
        ``{query_id: [passage_id, ...]}`` (duplicates are scored once).
    passages : mapping
        ``{passage_id: text}``; every candidate needs one.
    progress : callable, optional
        ``progress(done, total)`` over pairs scored, ``total`` = pairs times encoders.

    Returns
    -------
    Run
        ``{query_id: {passage_id: score}}`` for every query of ``candidates``.

    Raises
    ------
    ValueError
        With no encoders, or a query or passage without a text (the message names them).
    """
    if not encoders:
        raise ValueError("encoders: need at least one cross-encoder")
    missing_q = [q for q in candidates if q not in queries]
    if missing_q:
        raise ValueError(f"queries: no text for {len(missing_q)} candidate queries, e.g. {missing_q[:3]}")
    keys: list[tuple[str, str]] = []
    for qid, docs in candidates.items():
        keys.extend((qid, d) for d in dict.fromkeys(docs))
    missing_p = sorted({d for _, d in keys if d not in passages})
    if missing_p:
        raise ValueError(f"passages: no text for {len(missing_p)} candidates, e.g. {missing_p[:3]}")
    pairs = [(queries[q], passages[d]) for q, d in keys]
    total = len(pairs) * len(encoders)
    all_scores = []
    for m, encoder in enumerate(encoders):

        def enc_progress(done: int, _total: int, offset: int = m * len(pairs)) -> None:
            if progress is not None:
                progress(offset + done, total)

        all_scores.append(np.asarray(encoder.score(pairs, progress=enc_progress if progress else None)))
    if progress is not None:
        progress(total, total)

    run: Run = {q: {} for q in candidates}
    start = 0
    for qid in candidates:
        n = len(dict.fromkeys(candidates[qid]))
        rows = keys[start : start + n]
        if len(encoders) == 1:
            values = all_scores[0][start : start + n].astype(np.float64)
        else:
            values = np.mean([_minmax(s[start : start + n]) for s in all_scores], axis=0) if n else np.empty(0)
        run[qid] = {d: float(v) for (_, d), v in zip(rows, values, strict=True)}
        start += n
    return run


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


def evaluate_reranker(
    encoder: CrossEncoder, data: LabelledData, depth: int = EVAL_DEPTH, progress: ProgressCallback | None = None
) -> dict[str, float]:
    """nDCG@10 and MRR@10 of ``encoder`` re-ranking each query's first ``depth`` candidates."""
    candidates = {
        q: [d for d in data.candidates.get(q, [])[:depth] if d in data.passages]
        for q in data.queries
        if q in data.qrels
    }
    run = rerank([encoder], data.queries, candidates, data.passages, progress=progress)
    return ranking_metrics(run, data.qrels, data.level)


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

    Training examples: for every labelled (query, positive) pair, the positive
    and ``config.negatives`` hard negatives (the query's candidates not judged
    relevant, drawn anew each epoch with the seed; random passages fill in
    when there are too few).

    * ``loss="listwise"``: ``batch_size`` such lists per step, loss
      :func:`core.training.losses.listwise_softmax` of each list's scores
      (the positive's softmax probability over its list).
    * ``loss="pointwise"``: the lists' pairs, ``batch_size`` pairs per step,
      loss :func:`core.training.losses.pointwise_bce` on ``grade >= level``
      (grades from the qrels, 0 for unjudged).

    Batches hold examples of similar token length, in a seeded order.  AdamW
    with a linear warm-up (``warmup_ratio`` of the steps) and decay
    (``transformers.get_linear_schedule_with_warmup``), gradients clipped to
    norm 1.  Every ``config.eval_every`` steps (default: each epoch) and at the
    last step, the model re-ranks each held-out query's first 100 candidates;
    when nDCG@10 improves, the weights are saved to ``output`` (and to
    ``config.checkpoint_dir/step-N`` when set); training stops after
    ``config.patience`` evaluations without improvement or ``config.max_steps``
    steps.  Without ``held_out`` the final weights are saved.  Deterministic
    on the CPU for a given ``config.seed``.

    Parameters
    ----------
    train, held_out : LabelledData
        Training queries and the held-out queries (may be None).
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
    import torch
    from transformers import get_linear_schedule_with_warmup

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
    out_dir = Path(output)
    started = time.perf_counter()
    seed_everything(config.seed)  # dropout masks draw from torch's generator: seeded, training repeats exactly

    encoder = CrossEncoder(
        base_model,
        max_length=config.max_length,
        batch_size=max(32, config.batch_size),
        device=config.device,
        seed=config.seed,
        mixed_precision=config.mixed_precision,
    )
    model = encoder.model
    rng = random.Random(config.seed)

    # Each epoch draws new negatives, but always as many (the counts depend on the data only),
    # so the first epoch's lists fix the number of steps for the schedule.
    first_groups = _groups(train, config.negatives, rng)
    n_lists = len(first_groups)
    n_examples = n_lists if loss == "listwise" else sum(len(docs) for _, docs in first_groups)
    per_epoch = math.ceil(n_examples / config.batch_size)
    total_steps = per_epoch * config.epochs
    if config.max_steps is not None:
        total_steps = min(total_steps, config.max_steps)

    decay = [p for n, p in model.named_parameters() if not n.endswith("bias") and "LayerNorm" not in n]
    no_decay = [p for n, p in model.named_parameters() if n.endswith("bias") or "LayerNorm" in n]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": config.weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=config.learning_rate,
    )
    scheduler = get_linear_schedule_with_warmup(optimizer, math.ceil(config.warmup_ratio * total_steps), total_steps)
    eval_every = config.eval_every or per_epoch

    initial = evaluate_reranker(encoder, held_out) if held_out is not None else None
    stopper = EarlyStopping(config.patience)
    history: list[dict[str, Any]] = []
    best: dict[str, Any] = {}
    step = 0
    pairs_seen = 0
    train_seconds = 0.0
    loss_sum, loss_count = 0.0, 0
    done = False

    for epoch in range(1, config.epochs + 1):
        groups = first_groups if epoch == 1 else _groups(train, config.negatives, rng)
        if loss == "listwise":
            examples: list[tuple[str, list[str]]] = groups
        else:
            examples = [(qid, [d]) for qid, docs in groups for d in docs]
        feats = [encoder.features([(train.queries[qid], train.passages[d]) for d in docs]) for qid, docs in examples]
        lengths = [sum(len(f["input_ids"]) for f in fs) for fs in feats]
        for batch_ids in length_sorted_batches(lengths, config.batch_size, seed=config.seed * 1000 + epoch):
            tick = time.perf_counter()
            model.train()
            rows = [f for i in batch_ids for f in feats[i]]
            scores = encoder.logits(encoder.collate(rows))
            if loss == "listwise":
                width = max(len(feats[i]) for i in batch_ids)
                grid = scores.new_zeros((len(batch_ids), width))
                mask = torch.zeros((len(batch_ids), width), dtype=torch.bool, device=scores.device)
                at = 0
                for r, i in enumerate(batch_ids):
                    n = len(feats[i])
                    grid[r, :n] = scores[at : at + n]
                    mask[r, :n] = True
                    at += n
                value = losses.listwise_softmax(grid, mask if not bool(mask.all()) else None)
            else:
                grades = torch.tensor(
                    [float(train.qrels.get(examples[i][0], {}).get(examples[i][1][0], 0)) for i in batch_ids],
                    device=scores.device,
                )
                value = losses.pointwise_bce(scores, grades, train.level)
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            pairs_seen += len(rows)
            loss_sum += float(value.detach())
            loss_count += 1
            train_seconds += time.perf_counter() - tick
            if progress is not None:
                progress(step, total_steps)

            last = step >= total_steps
            if step % eval_every == 0 or last:
                entry: dict[str, Any] = {
                    "step": step,
                    "epoch": epoch,
                    "loss": loss_sum / max(loss_count, 1),
                    "eval": evaluate_reranker(encoder, held_out) if held_out is not None else {},
                }
                loss_sum, loss_count = 0.0, 0
                history.append(entry)
                improved = stopper.update(entry["eval"][PRIMARY_METRIC], step) if held_out is not None else last
                if improved:
                    best = entry
                    encoder.save(out_dir)
                if config.checkpoint_dir is not None:
                    encoder.save(Path(config.checkpoint_dir) / f"step-{step}")
                if last or stopper.stop:
                    done = True
                    break
        if done:
            break

    if not best:  # no evaluation improved (held_out given but every metric nan): keep the last weights
        best = history[-1]
        encoder.save(out_dir)
    seconds = time.perf_counter() - started
    params = {
        "loss": loss,
        "config": config.as_dict(),
        "base_model": str(encoder.path),
        "train_queries": len(train.trainable()),
        "held_out_queries": len(held_out.queries) if held_out else 0,
        "lists": n_lists,
        "steps": step,
        "initial_eval": initial,
    }
    result = TrainResult(
        path=out_dir,
        history=history,
        best=best,
        seconds=seconds,
        pairs_per_second=pairs_seen / train_seconds if train_seconds > 0 else 0.0,
        params=params,
    )
    save_training_record(out_dir, {"kind": KIND, "base_model": str(encoder.path), **result.as_dict()})
    return result
