"""RocketQAv2 (Ren et al., EMNLP 2021): the dual encoder and the cross-encoder trained jointly.

**Dynamic listwise distillation.**  For every training query :math:`q` a
candidate list :math:`P_q` = its positive and ``config.negatives`` hard
negatives (sampled, seeded, from its candidates not judged relevant; padded
with random passages, then masked when the collection has too few) is scored by
both models: the dual encoder's :math:`s_{de}(q, p) = q \\cdot p / \\tau` (unit
vectors, pooled as :class:`~core.retrieval.encoder.BiEncoder` pools) and the
cross-encoder's logit :math:`s_{ce}(q, p)`.  The loss is the paper's final
one (section 3.3)::

    L = L_KL + L_sup
    L_KL  = 1/B sum_q sum_{p in P_q} s~_ce(q, p) log( s~_ce(q, p) / s~_de(q, p) )        (eq. 3)
    L_sup = -1/B sum_q log( exp(s_ce(q, p+)) / sum_{p in P_q} exp(s_ce(q, p)) )           (eq. 4)

with :math:`\\tilde s` the softmax over :math:`P_q` (eqs. 1-2):
:func:`~core.training.losses.listwise_kl` and
:func:`~core.training.losses.listwise_softmax`.  Both models' parameters are
updated by one AdamW (one learning rate) from the summed loss, so the KL term
moves the cross-encoder too: that is what makes the distillation *dynamic*.

**Training** (:func:`train_rocketqav2`): ``config.batch_size`` queries per
step, each with a list of 1 positive + ``config.negatives`` hard negatives
(a query with several positives gives one list per positive); one AdamW at
``learning_rate`` over both models, linear warmup and decay, clipping at
norm 1, bf16 autocast on CUDA when ``mixed_precision``
(:class:`~core.training.common.TrainingLoop`).  The temperature :math:`\tau`
of the dual scores is 0.05 rather than 1: unit vectors give cosines in
[-1, 1], whose softmax at :math:`\tau = 1` is nearly flat and cannot follow
the cross-encoder's distribution.  The dual encoder is saved to ``output``
(``BiEncoder`` loads it; ``dense:model=PATH``), the co-trained cross-encoder
to ``output / "cross-encoder"`` (``CrossEncoder.save``); each holds a
``pooljudge_training.json``.

**Starting points.**  The dual encoder starts from ``base_model`` (default
the packaged all-MiniLM-L6-v2); the cross-encoder from ``cross_base``: a
trained cross-encoder folder (:func:`core.training.cross_encoder.train_cross_encoder`'s
output; best), or a plain encoder folder (a new head); default the packaged
all-MiniLM-L6-v2 with a new head.  A cross-encoder that cannot yet tell
positives from negatives teaches the dual encoder flat distributions: the
dual's held-out metric then falls before it can rise
(``params["initial_eval"]`` has the starting point to compare).

**Result.**  ``history`` entries ``{"step", "epoch", "loss", "kl", "sup",
"eval"}`` (the terms are means since the previous entry; ``eval`` is the
dual encoder's exact dense retrieval over ``held_out.passages``, which picks
the best step for both models); ``params`` holds the settings,
``"initial_eval"``, ``"cross_base"`` and ``"denoise"`` counts;
``pairs_per_second`` counts the (query, passage) pairs of the lists (each
scored by both models) per second of training steps.

**A teacher with first-stage evidence** (``prior``, ``prior_weight``; not in
the paper): the distillation target becomes
:math:`s_{ce}(q, p) + \\lambda \\hat s_{prior}(q, p)`, the first stage's scores
min-max normalised per query (0 for a passage it did not retrieve), as
:func:`core.retrieval.rerank.add_prior` ranks.  The paper's re-ranker was
pre-trained on far more labels than a benchmark's first rounds give; a
cross-encoder trained on a hundred queries can rank below the dual encoder
it should teach, and distilling it then makes the student worse.  The same
cross-encoder with the first stage's evidence is usually stronger than
either (choose :math:`\\lambda` on a dev split with
:func:`core.retrieval.rerank.choose_prior_weight`).  ``L_sup`` stays on the
cross-encoder's own logits, so the saved re-ranker is still a plain one.

**Hybrid data augmentation** (section 3.4), :func:`denoise_candidates`: the
unlabelled retrieved candidates are scored by a (trained) cross-encoder; those
it finds confidently irrelevant (probability ``<= low``) stay as hard
negatives, confidently relevant ones (``>= high``) become pseudo-positives,
and the uncertain rest are dropped, so likely false negatives of the pool no
longer push relevant passages away.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.fusion import min_max_normalise
from core.retrieval.base import ProgressCallback
from core.training.common import StepFn, TrainingLoop, cpu_state, save_training_record
from core.training.data import LabelledData, TrainConfig, TrainResult
from core.training.dual_encoder import (
    DualEncoder,
    DualPlan,
    Pooling,
    check_dual_inputs,
    dual_params,
    evaluate_dual,
    finish_training,
    held_out_evaluation,
    make_plan,
    seeded_dual,
    trainable_parameters,
)
from core.training.losses import listwise_kl, listwise_softmax
from core.types import Run
from core.validators import real_number

__all__ = ["CROSS_ENCODER_FOLDER", "build_lists", "denoise_candidates", "train_rocketqav2"]

CROSS_ENCODER_FOLDER = "cross-encoder"
"""Where the co-trained cross-encoder is saved, inside the dual encoder's folder."""


# --------------------------------------------------------------------------- hybrid data augmentation


def _check_thresholds(low: Any, high: Any) -> tuple[float, float]:
    low = real_number(low, "low", low=0.0, high=1.0)
    high = real_number(high, "high", low=0.0, high=1.0)
    if low > high:
        raise ValueError(f"low ({low:g}) must not exceed high ({high:g})")
    return low, high


def _denoise(data: LabelledData, encoder: Any, low: float, high: float) -> tuple[LabelledData, dict[str, int]]:
    """:func:`denoise_candidates` and its counts (scored, negatives, pseudo_positives, dropped)."""
    pairs: list[tuple[str, str]] = []  # (qid, pid) of every unlabelled candidate with both texts
    for qid, cands in data.candidates.items():
        if qid not in data.queries:
            continue
        judged = data.qrels.get(qid, {})
        for pid in dict.fromkeys(cands):
            if pid not in judged and pid in data.passages:
                pairs.append((qid, pid))
    probs = encoder.probabilities([(data.queries[q], data.passages[p]) for q, p in pairs]) if pairs else []
    if len(probs) != len(pairs):
        raise ValueError(f"the encoder returned {len(probs)} probabilities for {len(pairs)} pairs")
    # Compared in float32, the precision CrossEncoder.probabilities returns: a probability printed
    # as 0.2 is float32(0.2), which as a float64 is a hair above 0.2 and would miss "<= 0.2".
    low32, high32 = np.float32(low), np.float32(high)
    verdict: dict[tuple[str, str], str] = {}
    for pair, prob in zip(pairs, np.asarray(probs, dtype=np.float32)):
        # low == high is allowed; a probability equal to both is kept as a negative (the cautious side).
        verdict[pair] = "negative" if prob <= low32 else "positive" if prob >= high32 else "dropped"
    qrels = {q: dict(j) for q, j in data.qrels.items()}
    candidates: dict[str, list[str]] = {}
    for qid, cands in data.candidates.items():
        kept = []
        for pid in cands:
            v = verdict.get((qid, pid))
            if v == "dropped":
                continue
            if v == "positive":
                qrels.setdefault(qid, {})[pid] = data.level
            kept.append(pid)  # a pseudo-positive stays a candidate: negatives() leaves it out by its grade
        candidates[qid] = kept
    counts = {
        "scored": len(pairs),
        "negatives": sum(v == "negative" for v in verdict.values()),
        "pseudo_positives": sum(v == "positive" for v in verdict.values()),
        "dropped": sum(v == "dropped" for v in verdict.values()),
    }
    denoised = LabelledData(
        queries=data.queries, passages=data.passages, qrels=qrels, candidates=candidates, level=data.level
    )
    return denoised, counts


def denoise_candidates(data: LabelledData, encoder: Any, low: float, high: float) -> LabelledData:
    """RocketQAv2's hybrid data augmentation: relabel the unlabelled candidates by a cross-encoder's confidence.

    Every ``(query, candidate)`` of ``data.candidates`` without a label is
    scored with ``encoder.probabilities(pairs)`` (the sigmoid of a
    cross-encoder's logit): probability ``<= low`` keeps it as a (denoised)
    hard negative, ``>= high`` makes it a pseudo-positive (added to the qrels
    with grade ``data.level``), anything in between is dropped from the
    candidates (neither a trustworthy positive nor a trustworthy negative).
    Labelled pairs, whatever their grade, are untouched; so are ``data``
    itself, the queries and the passages.

    Parameters
    ----------
    data : LabelledData
    encoder : CrossEncoder
        Anything with ``probabilities(pairs: list[(query text, passage text)])
        -> array``; it should be trained: a new head gives meaningless
        probabilities.
    low, high : float
        Thresholds in [0, 1], ``low <= high`` (``low == high``: a probability
        equal to both stays a negative); compared with the probabilities in
        float32, so ``0.2`` catches a probability of ``float32(0.2)``.

    Returns
    -------
    LabelledData
        A new object with the extra qrels and the filtered candidate lists.
    """
    low, high = _check_thresholds(low, high)
    return _denoise(data, encoder, low, high)[0]


# --------------------------------------------------------------------------- candidate lists


def build_lists(
    data: LabelledData,
    batch: Sequence[tuple[str, str]],
    negatives: int,
    rng: random.Random,
    all_ids: Sequence[str],
) -> tuple[list[list[str]], list[list[bool]]]:
    """Each example's list ``[positive, negative, ...]`` of length ``1 + negatives``, and its mask.

    Negatives are sampled (with ``rng``) from ``data.negatives(qid)``; when a
    query has too few, random passages of ``all_ids`` that are not its
    positives fill the list; when even those run out the remaining slots repeat
    the positive and are masked (``False``).
    """
    lists, masks = [], []
    size = 1 + negatives
    for qid, pos in batch:
        negs = data.negatives(qid)
        chosen = rng.sample(negs, min(negatives, len(negs)))
        if len(chosen) < negatives:
            used = {*chosen, *data.positives(qid), pos}
            eligible = [p for p in all_ids if p not in used]
            need = negatives - len(chosen)
            chosen += rng.sample(eligible, min(need, len(eligible)))
        ids = [pos, *chosen]
        masks.append([True] * len(ids) + [False] * (size - len(ids)))
        lists.append(ids + [pos] * (size - len(ids)))
    return lists, masks


# --------------------------------------------------------------------------- joint training


def _load_cross_encoder(cross_base: Any, config: TrainConfig, device: Any) -> Any:
    # Imported here: denoise_candidates' callers bring their own encoder.
    from core.training.cross_encoder import CrossEncoder

    return CrossEncoder(
        cross_base,
        max_length=config.max_length,
        device=device,
        seed=config.seed,
        mixed_precision=config.mixed_precision,
    )


def _check_denoise(denoise: Any, cross_base: Any) -> tuple[float, float] | None:
    """``denoise``'s ``(low, high)`` checked, or None; denoising needs a trained ``cross_base``."""
    if denoise is None:
        return None
    if not isinstance(denoise, (tuple, list)) or len(denoise) != 2:
        raise ValueError(f"denoise must be a (low, high) pair of probabilities or None, got {denoise!r}")
    thresholds = _check_thresholds(*denoise)
    if cross_base is None:
        raise ValueError(
            "denoise needs a trained cross-encoder as cross_base: the default's new head gives meaningless probabilities"
        )
    return thresholds


@dataclass
class _Joint:
    """The two models trained together and the (possibly denoised) data they train on.

    The loop sees them as one: one snapshot, one train/eval switch, one save
    (the cross-encoder inside the dual encoder's folder).
    """

    dual: DualEncoder
    cross: Any
    train: LabelledData
    plan: DualPlan
    cross_base: Any
    denoised: dict[str, Any] | None
    prior: Run
    prior_weight: float

    def state(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.dual.state(), cpu_state(self.cross.model)

    def train_mode(self, on: bool) -> None:
        self.dual.model.train(on)
        self.cross.model.train(on)

    def save(self, folder: Path) -> None:
        self.dual.save(folder)
        self.cross.save(Path(folder) / CROSS_ENCODER_FOLDER)

    def keep_best(self, loop: TrainingLoop, output: Path) -> None:
        """Load the best evaluation's weights into both models (when there was one) and save them to ``output``."""
        if loop.best_state is not None:
            self.dual.load_state(loop.best_state[0])
            self.cross.model.load_state_dict(loop.best_state[1])
        self.train_mode(False)
        self.save(output)

    def training_loop(
        self, config: TrainConfig, held_out: LabelledData | None, progress: ProgressCallback | None
    ) -> TrainingLoop:
        """One AdamW over both models' parameters; the dual encoder's held-out retrieval picks the best step."""
        return TrainingLoop(
            config,
            trainable_parameters(self.dual.model, self.cross.model),
            self.dual.device,
            evaluate=held_out_evaluation(self.dual, held_out),
            snapshot=self.state,
            train_mode=self.train_mode,
            save=self.save,
            progress=progress,
        )

    def cross_from(self) -> str:
        """Where the cross-encoder started, for the records."""
        return str(self.cross_base) if self.cross_base is not None else "all-MiniLM-L6-v2 (new head)"

    def params(self) -> dict[str, Any]:
        """The training record's joint-only ``params``: the cross-encoder's start and folder, the denoising."""
        return {
            "cross_base": self.cross_from(),
            "cross_encoder": CROSS_ENCODER_FOLDER,
            "denoise": self.denoised,
            "teacher_prior": {"weight": self.prior_weight, "queries": len(self.prior)} if self.prior_weight else None,
        }

    def teacher_prior(self, batch: Sequence[tuple[str, str]], lists: list[list[str]]) -> list[list[float]]:
        """``prior_weight`` times each list entry's normalised first-stage score (0 when absent)."""
        return [
            [self.prior_weight * self.prior.get(qid, {}).get(pid, 0.0) for pid in ids]
            for (qid, _), ids in zip(batch, lists)
        ]


def _prepare(
    train: LabelledData,
    config: TrainConfig,
    base_model: Any,
    cross_base: Any,
    denoise: Any,
    pooling: Pooling,
    temperature: float,
    prior: Run | None,
    prior_weight: Any,
) -> _Joint:
    """Check the arguments, seed, load both models, denoise ``train`` when asked and plan the batches."""
    check_dual_inputs(train, config, temperature)
    thresholds = _check_denoise(denoise, cross_base)
    weight = real_number(prior_weight, "prior_weight", low=0.0)
    if weight and not prior:
        raise ValueError("prior_weight needs a prior run (the first stage's scores of the training queries)")
    normalised = min_max_normalise({q: docs for q, docs in (prior or {}).items() if q in train.queries})
    dual = seeded_dual(base_model, pooling, config)
    cross = _load_cross_encoder(cross_base, config, dual.device)
    denoised = None
    if thresholds is not None:
        low, high = thresholds
        train, counts = _denoise(train, cross, low, high)
        denoised = {"low": low, "high": high, **counts}
    qids = train.trainable()
    if not qids:
        raise ValueError("train has no query with a positive passage left after denoising")
    return _Joint(dual, cross, train, make_plan(train, qids, config), cross_base, denoised, normalised, weight)


def _distillation_step(joint: _Joint, negatives: int, temperature: float) -> StepFn:
    """The joint step: both models score each query's list; loss ``L_KL + L_sup`` (the module docstring)."""
    import torch

    dual, cross, train, rng = joint.dual, joint.cross, joint.train, joint.plan.rng
    all_ids = sorted(train.passages)

    def step_fn(batch: list[tuple[str, str]]) -> tuple[Any, int, dict[str, float]]:
        lists, masks = build_lists(train, batch, negatives, rng, all_ids)
        size = len(lists[0])
        flat = [train.passages[p] for ids in lists for p in ids]
        qtexts = [train.queries[q] for q, _ in batch]
        mask = torch.tensor(masks, dtype=torch.bool, device=dual.device)
        q = dual.embed(qtexts)
        p = dual.embed(flat).view(len(batch), size, -1)
        dual_scores = torch.einsum("bd,bld->bl", q, p) / temperature
        # The cross-encoder's own tokenisation and forward pass, so training sees what CrossEncoder.score sees.
        pairs = cross.collate(cross.features([(qtexts[i // size], text) for i, text in enumerate(flat)]))
        cross_scores = cross.logits(pairs).view(len(batch), size)
        teacher = cross_scores
        if joint.prior_weight:
            prior = joint.teacher_prior(batch, lists)
            teacher = cross_scores + torch.tensor(prior, dtype=cross_scores.dtype, device=cross_scores.device)
        kl = listwise_kl(dual_scores, teacher, mask)
        sup = listwise_softmax(cross_scores, mask)
        return kl + sup, int(mask.sum()), {"kl": float(kl.detach()), "sup": float(sup.detach())}

    return step_fn


def _write_cross_record(output: Path, record: dict[str, Any], joint: _Joint) -> None:
    """The co-trained re-ranker's own record, so it can be registered and used on its own."""
    save_training_record(
        output / CROSS_ENCODER_FOLDER,
        {
            **record,
            "kind": "cross-encoder",
            "base_model": joint.cross_from(),
            # history and best are the dual encoder's held-out retrieval, which picked this step's weights
            "params": {
                **record["params"],
                "co_trained_with": str(output),
                "trainer": "rocketqav2",
                "eval_of": "dual encoder",
            },
        },
    )


def train_rocketqav2(
    train: LabelledData,
    held_out: LabelledData | None,
    config: TrainConfig,
    *,
    output: Any,
    base_model: Any = None,
    cross_base: Any = None,
    denoise: tuple[float, float] | None = None,
    pooling: Pooling = "mean",
    temperature: float = 0.05,
    prior: Run | None = None,
    prior_weight: float = 0.0,
    progress: ProgressCallback | None = None,
) -> TrainResult:
    """Train a dual encoder and a cross-encoder jointly by dynamic listwise distillation (see the module docstring).

    Parameters
    ----------
    train, held_out : LabelledData
        ``held_out`` may be None (no evaluation; the last weights are kept).
    config : TrainConfig
        Reads every field (the module docstring's "Training").
    output : path
        The dual encoder's folder; the cross-encoder goes to ``output / "cross-encoder"``.
    base_model, cross_base : path, optional
        The dual encoder's and the cross-encoder's starting folders (module docstring's "Starting points").
    denoise : (low, high), optional
        :func:`denoise_candidates` on ``train`` with the initial cross-encoder first; needs a trained ``cross_base``.
    pooling : {"mean", "cls"}
        The dual encoder's pooling, as ``BiEncoder``'s.
    temperature : float
        :math:`\\tau` of the dual scores (0.05; the module docstring says why).
    prior : Run, optional
        First-stage scores ``{qid: {pid: score}}`` of the training queries (e.g. BM25's).
    prior_weight : float
        :math:`\\lambda` >= 0 of the module docstring's teacher with first-stage evidence (0: the paper's teacher).
    progress : callable, optional
        ``progress(step, total_steps)``.

    Returns
    -------
    TrainResult
        As the module docstring's "Result" describes.
    """
    started = time.perf_counter()
    joint = _prepare(train, config, base_model, cross_base, denoise, pooling, temperature, prior, prior_weight)
    initial = evaluate_dual(joint.dual, held_out) if held_out is not None else {}
    loop = joint.training_loop(config, held_out, progress)
    loop.run(joint.plan.epoch_batches, _distillation_step(joint, config.negatives, temperature))
    output = Path(output)
    joint.keep_best(loop, output)
    params = {**dual_params(config, joint.dual, temperature, joint.plan, held_out, loop, initial), **joint.params()}
    result, record = finish_training(loop, output, "rocketqav2", str(joint.dual.path), params, started)
    _write_cross_record(output, record, joint)
    return result
