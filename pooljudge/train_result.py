"""What a train job reports (:class:`TrainJobResult`), stored as the job's result.

:func:`pooljudge.training.run_train_job` returns it; the CLI prints it and the Models page shows
it from the stored JSON (:meth:`db.jobs.JobInfo.result_as`).  The stored JSON keeps one flat
object: the ``default`` kind's choice of system adds its keys beside the common ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from db.json_codec import dataclass_from_json, dataclass_to_json

_DEFAULT_ONLY = ("system", "system_label", "spec", "improved", "reason", "dev_ndcg10")
_OTHER_KINDS_ONLY = ("interpolate", "teacher_prior")
_JSON_NAMES = {"dev_ndcg10": "dev_nDCG@10"}
"""Fields whose stored key is not a Python name."""


@dataclass(frozen=True)
class TrainJobResult:
    """A trained and registered model, and (the ``default`` kind) the system chosen on the dev split.

    Attributes
    ----------
    model : str
        The registered model's name.
    kind : str
        The train job's kind (``cross-encoder``, ``dual-encoder``, ``rocketqav2``, ``default``).
    id : int or None
        Its row in the registry (:mod:`db.trained_models`).
    path : str or None
        Its Hugging Face folder.
    best : dict
        The held-out evaluation the saved weights had (:class:`core.training.data.TrainResult`).
    seconds, pairs_per_second : float
        Training time and speed.
    labels : str or None
        Which labels trained it.
    train_queries, held_out_queries : int
        Queries trained on and held out.
    interpolate, teacher_prior : float or None
        A re-ranker's first-stage weight, RocketQAv2's teacher prior weight (other kinds than ``default``).
    total_seconds : float or None
        The whole job's time.
    system, system_label, spec : str or None
        The ``default`` kind's chosen system: its key, its label and the retriever spec to use it with.
    improved : bool or None
        Whether the chosen system uses the trained weights.
    reason : str or None
        Why it was chosen.
    dev_ndcg10 : dict of str to float
        Every candidate's dev nDCG@10 (stored as ``dev_nDCG@10``).
    """

    model: str
    kind: str
    id: int | None = None
    path: str | None = None
    best: dict[str, Any] = field(default_factory=dict)
    seconds: float | None = None
    pairs_per_second: float | None = None
    labels: str | None = None
    train_queries: int = 0
    held_out_queries: int = 0
    interpolate: float | None = None
    teacher_prior: float | None = None
    total_seconds: float | None = None
    system: str | None = None
    system_label: str | None = None
    spec: str | None = None
    improved: bool | None = None
    reason: str | None = None
    dev_ndcg10: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The stored JSON: the ``default`` kind's keys only for that kind, the other kinds' only for them."""
        left_out = _OTHER_KINDS_ONLY if self.spec is not None else _DEFAULT_ONLY
        data = dataclass_to_json(self)
        return {_JSON_NAMES.get(f.name, f.name): data[f.name] for f in fields(self) if f.name not in left_out}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrainJobResult:
        """From a train job's stored result."""
        stored = {name: _JSON_NAMES.get(name, name) for name in (f.name for f in fields(cls))}
        return dataclass_from_json(cls, {name: data[key] for name, key in stored.items() if key in data})
