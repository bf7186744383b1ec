"""The model of active selection that learns between batches (T2Ranking's loop).

T2Ranking section 4.4 sends annotators the pairs its cross-encoder is
unsure about; its loop then retrains the model on the labels gathered so far
before it picks the next pairs.  :class:`RetrainingSelector` is that model
for :func:`core.simulation.simulate_labelling`'s ``active-retrain``
strategy (it follows :class:`core.simulation.selector.Selector`): a
:class:`~core.training.cross_encoder.CrossEncoder` whose
``probabilities`` are ``sigmoid(logit)``, fine-tuned by
:meth:`RetrainingSelector.update` with pointwise BCE on ``grade >= level``
(:func:`core.training.losses.pointwise_bce`, the reading of the logit that
makes it a probability) over every label so far.

**Each round** runs ``steps`` optimiser steps of ``batch_size`` labelled
pairs, drawn from seeded shuffles of all the labels (cycled when there are
fewer than ``steps * batch_size``), through the shared
:class:`~core.training.common.TrainingLoop` (AdamW, linear warm-up and
decay, clipping at norm 1).  A fixed number of steps keeps a round's cost
flat however many labels there are, which is what a 2-core CPU affords.

**Warm start** (the default, ``from_base=False``): a round continues from the
previous round's weights.  Every round trains on *all* labels so far, so no
earlier label is forgotten in favour of the newest batch, and the model
has seen ``rounds * steps`` steps by the last batch at the price of
``steps`` per round; restarting from the base (``from_base=True``) would
need the step count to grow with the labels to fit them as well.  The
README's simulation section measures both on Cranfield.

The unlabelled pairs are never trained on: treating them as negatives would
teach the model that the relevant pairs it has not yet shown are irrelevant.
"""

from __future__ import annotations

import math
import os
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from core.retrieval.base import ProgressCallback
from core.training.data import TrainConfig
from core.validators import int_in_range, positive_int, real_number

__all__ = ["RetrainingSelector"]

Pair = tuple[str, str]


class RetrainingSelector:
    """A cross-encoder that scores pooled pairs and is fine-tuned on the labels between batches.

    Parameters
    ----------
    model_path : str or os.PathLike, optional
        The base model: a trained cross-encoder folder, or a plain encoder
        (a new head, seeded); None: the packaged all-MiniLM-L6-v2 with a new head.
    queries, passages : Mapping[str, str]
        ``{qid: text}`` and ``{docid: text}`` (the passage with its title);
        every pair scored or labelled needs both.
    steps : int, default 10
        Optimiser steps per round.
    batch_size : int, default 16
        Labelled pairs per step.
    learning_rate : float, default 1e-4
        AdamW's peak rate (10% warm-up, then linear decay, every round); as
        high as the CPU cross-encoder training's (``bench_training``'s
        ``--cross-lr``), for the same reason: a new head and few steps.
    max_length : int, default 256
        Tokens per pair (longest side truncated first).
    from_base : bool, default False
        Restart every round from the base weights instead of the previous round's.
    seed : int, default 0
        Seeds the new head (when the folder has none) and every round's
        shuffles and dropout: equal arguments and labels give equal scores.
    device : str, optional
        CUDA when available, else the CPU.
    mixed_precision : bool, default True
        bf16 autocast on CUDA; no effect on the CPU.
    progress : callable, optional
        ``progress(done, total)`` while scoring pairs.

    Attributes
    ----------
    rounds : int
        Rounds of fine-tuning since the last :meth:`reset`.
    steps_done : int
        Optimiser steps since the last :meth:`reset`.
    encoder : CrossEncoder
        The model being fine-tuned.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str] | None,
        queries: Mapping[str, str],
        passages: Mapping[str, str],
        *,
        steps: int = 10,
        batch_size: int = 16,
        learning_rate: float = 1e-4,
        max_length: int = 256,
        from_base: bool = False,
        seed: int = 0,
        device: str | None = None,
        mixed_precision: bool = True,
        progress: ProgressCallback | None = None,
    ) -> None:
        from core.training.common import cpu_state
        from core.training.cross_encoder import CrossEncoder

        self.steps = positive_int(steps, "steps")
        self.batch_size = positive_int(batch_size, "batch_size")
        self.learning_rate = real_number(learning_rate, "learning_rate", low=0.0, low_open=True)
        self.seed = int_in_range(seed, "seed", 0)
        self.from_base = bool(from_base)
        self.queries, self.passages, self.progress = queries, passages, progress
        self.encoder = CrossEncoder(
            model_path,
            max_length=max_length,
            batch_size=max(32, self.batch_size),
            device=device,
            seed=self.seed,
            mixed_precision=mixed_precision,
        )
        self._base = cpu_state(self.encoder.model)  # what reset() and from_base return to
        self.rounds = 0
        self.steps_done = 0

    def __repr__(self) -> str:
        return (
            f"RetrainingSelector({str(self.encoder.path)!r}, steps={self.steps}, batch_size={self.batch_size}, "
            f"learning_rate={self.learning_rate:g}, from_base={self.from_base}, rounds={self.rounds})"
        )

    def reset(self) -> None:
        """Back to the base weights, the round count to 0."""
        self.encoder.model.load_state_dict(self._base)
        self.rounds = 0
        self.steps_done = 0

    def texts(self, pairs: Sequence[Pair]) -> list[tuple[str, str]]:
        """``(query text, passage text)`` of each pair; ValueError naming a query or passage without a text."""
        out = []
        for qid, doc in pairs:
            if qid not in self.queries:
                raise ValueError(f"selector: query {qid!r} has no text (active selection scores texts)")
            if doc not in self.passages:
                raise ValueError(f"selector: passage {doc!r} has no text (active selection scores texts)")
            out.append((self.queries[qid], self.passages[doc]))
        return out

    def probabilities(self, pairs: Sequence[Pair]) -> np.ndarray:
        """``sigmoid(logit)`` of each pair under the current weights, float32, in order."""
        return self.encoder.probabilities(self.texts(pairs), progress=self.progress)

    def update(self, labels: Mapping[Pair, int], level: int) -> None:
        """One round: ``steps`` steps of pointwise BCE on every label so far (relevant when ``grade >= level``).

        Raises
        ------
        ValueError
            With no labels, or a labelled pair without a text.
        """
        level = int_in_range(level, "level", 1)
        if not labels:
            raise ValueError("labels: a round of fine-tuning needs at least one labelled pair")
        examples = sorted(labels)  # the mapping's order must not matter: the same labels, the same round
        texts = dict(zip(examples, self.texts(examples)))
        if self.from_base:
            self.encoder.model.load_state_dict(self._base)
        round_seed = self.seed * 1_000_003 + self.rounds + 1
        batches = _batches(examples, self.steps, self.batch_size, random.Random(round_seed))
        rows = [
            (self.encoder.features([texts[pair] for pair in batch]), [float(labels[pair]) for pair in batch])
            for batch in batches
        ]
        self._train(rows, level, round_seed)
        self.rounds += 1
        self.steps_done += len(rows)

    def _train(self, rows: list[tuple[list[dict[str, list[int]]], list[float]]], level: int, seed: int) -> None:
        """Run the shared training loop over ``rows`` (tokenised batches and their grades), dropout seeded."""
        import torch

        from core.training import losses
        from core.training.common import TrainingLoop, decays_by_shape

        encoder = self.encoder
        config = TrainConfig(seed=seed, learning_rate=self.learning_rate, mixed_precision=encoder.mixed_precision)

        def step_fn(batch: tuple[list[dict[str, list[int]]], list[float]]) -> tuple[Any, int, dict[str, float]]:
            features, grades = batch
            scores = encoder.logits(encoder.collate(features))
            return losses.pointwise_bce(scores, torch.tensor(grades, device=scores.device), level), len(grades), {}

        loop = TrainingLoop(
            config,
            list(encoder.model.named_parameters()),
            encoder.device,
            evaluate=None,
            snapshot=lambda: None,  # the weights stay in the model: the next round goes on from them
            train_mode=encoder.model.train,
            save=encoder.save,
            progress=None,
            decays=decays_by_shape,
            warmup_rounding=math.ceil,
            autocast_steps=False,  # CrossEncoder.logits autocasts its forward pass; the loss stays float32
        )
        devices = [encoder.device] if encoder.device.type == "cuda" else []
        with torch.random.fork_rng(devices=devices):  # seeded dropout that leaves the caller's generators alone
            torch.manual_seed(seed)
            loop.run([rows], step_fn, steps=len(rows))


def _batches(examples: list[Pair], steps: int, size: int, rng: random.Random) -> list[list[Pair]]:
    """``steps`` batches of ``size`` pairs: seeded shuffles of ``examples``, one after another."""
    stream: list[Pair] = []
    while len(stream) < steps * size:
        shuffled = list(examples)
        rng.shuffle(shuffled)
        stream += shuffled
    return [stream[i * size : (i + 1) * size] for i in range(steps)]
