"""The shapes every trainer takes and returns.

:class:`LabelledData` is what the store gives a trainer (``db.training`` builds
it from a collection's final labels or a qrels version, and from its stored runs
or pools for the hard negatives); :class:`TrainConfig` the knobs every trainer
shares; :class:`TrainResult` what it reports.  Query ids, not split names, pick
the training and held-out queries, so a benchmark can split a collection that
has one split only (:func:`split_queries`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from core.types import Qrels

__all__ = ["LabelledData", "TrainConfig", "TrainResult", "split_queries"]


@dataclass(frozen=True)
class LabelledData:
    """Queries, passages, graded labels and candidate lists of one collection.

    Parameters
    ----------
    queries : dict
        ``{query_id: text}``.
    passages : dict
        ``{passage_id: text}`` (with its document context, e.g. the title).
    qrels : Qrels
        The graded labels ``{query_id: {passage_id: grade}}``.
    candidates : dict
        ``{query_id: [passage_id, ...]}`` best first: what a first-stage system
        (a stored run, a pool) retrieved for the query.  Hard negatives are
        drawn from here, and a re-ranker is evaluated by re-ranking them.
    level : int
        A passage is relevant when its grade is ``>= level``.
    """

    queries: dict[str, str]
    passages: dict[str, str]
    qrels: Qrels
    candidates: dict[str, list[str]] = field(default_factory=dict)
    level: int = 1

    def positives(self, qid: str) -> list[str]:
        """The query's relevant passages (grade >= level) that have a text, best grade first, then by id."""
        judged = self.qrels.get(qid, {})
        return sorted(
            (d for d, g in judged.items() if g >= self.level and d in self.passages), key=lambda d: (-judged[d], d)
        )

    def negatives(self, qid: str) -> list[str]:
        """Hard negatives: the query's candidates not judged relevant, in candidate order.

        A candidate judged below ``level`` is a sure negative; an unjudged one is
        assumed negative (the usual pooling assumption, and what RocketQAv2's
        denoising corrects).  Passages without a text are left out.
        """
        judged = self.qrels.get(qid, {})
        return [d for d in self.candidates.get(qid, []) if judged.get(d, 0) < self.level and d in self.passages]

    def trainable(self) -> list[str]:
        """Query ids with a text and at least one positive, sorted."""
        return sorted(q for q in self.queries if self.positives(q))

    def subset(self, query_ids: Iterable[str]) -> LabelledData:
        """The same passages, only ``query_ids``' queries, labels and candidates."""
        keep = [q for q in query_ids if q in self.queries]
        return LabelledData(
            queries={q: self.queries[q] for q in keep},
            passages=self.passages,
            qrels={q: dict(self.qrels[q]) for q in keep if q in self.qrels},
            candidates={q: list(self.candidates[q]) for q in keep if q in self.candidates},
            level=self.level,
        )


def split_queries(query_ids: Sequence[str], held_out: float = 0.2, *, seed: int = 0) -> tuple[list[str], list[str]]:
    """A seeded random split of query ids into (training, held-out), each sorted.

    ``held_out`` is the held-out share in (0, 1); at least one query lands on
    each side when there are two or more.
    """
    if not 0.0 < held_out < 1.0:
        raise ValueError(f"held_out must be in (0, 1), got {held_out!r}")
    ids = sorted(set(query_ids))
    if len(ids) < 2:
        raise ValueError(f"need at least 2 queries to split, got {len(ids)}")
    random.Random(seed).shuffle(ids)
    n_out = min(len(ids) - 1, max(1, round(len(ids) * held_out)))
    return sorted(ids[n_out:]), sorted(ids[:n_out])


@dataclass
class TrainConfig:
    """Settings every trainer shares; each trainer documents which it reads.

    ``batch_size`` counts queries for listwise and contrastive training (each
    brings its positive and ``negatives`` hard negatives) and pairs for
    pointwise training.  ``device=None`` picks CUDA when present (with bf16
    autocast when ``mixed_precision``), else the CPU.  Training is
    deterministic on the CPU for a given ``seed``.
    """

    seed: int = 0
    epochs: int = 2
    batch_size: int = 8
    learning_rate: float = 2e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    max_length: int = 256
    negatives: int = 7
    eval_every: int | None = None
    patience: int = 2
    max_steps: int | None = None
    device: str | None = None
    mixed_precision: bool = True
    checkpoint_dir: Path | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready settings (stored with the model)."""
        out = asdict(self)
        out["checkpoint_dir"] = str(self.checkpoint_dir) if self.checkpoint_dir else None
        return out


@dataclass
class TrainResult:
    """What a trainer reports.

    ``history`` has one entry per evaluation: ``{"step", "epoch", "loss"
    (mean training loss since the previous entry), "eval": {measure: value}}``;
    ``best`` is the entry whose held-out ``ndcg_cut_10`` was highest (the saved
    weights are that step's); ``path`` the saved Hugging Face folder.
    """

    path: Path
    history: list[dict[str, Any]]
    best: dict[str, Any]
    seconds: float
    pairs_per_second: float
    params: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready data, the path as text (the training record saved beside the weights)."""
        return asdict(self) | {"path": str(self.path)}
