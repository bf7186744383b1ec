"""Train re-rankers and dense encoders on a collection's labels: the ``train`` job, run by the CLI and the app.

One job trains one model (:func:`run_train_job`): the labels come from the
store (:func:`db.training.labelled_data`), the hard-negative candidates from a
stored run or a retriever run now (BM25 by default), the trainer from
:mod:`core.training`; the saved Hugging Face folder goes to
``models_dir()/<collection id>/<name slug>`` and is registered by name in the
collection (:mod:`db.trained_models`), so ``rerank:model=NAME``,
``dense:model=PATH`` and the Models page find it.

Job parameters (JSON), all but ``collection``, ``name`` and ``kind`` optional::

    collection, name, kind          "default", "cross-encoder", "dual-encoder" or "rocketqav2" ("default": the
                                    base encoder fine-tuned, then the best on the held-out queries of BM25, base
                                    dense, their hybrid and the fine-tuned encoder alone or with BM25 is offered,
                                    :mod:`pooljudge.default_training`)
    split, eval_split               training and held-out splits (default "train" and "dev")
    held_out                        a held-out share in (0, 1) of the ``split`` queries instead of eval_split
                                    (the default, 0.2, when the collection's queries are all in one split)
    labels                          "final", a qrels version name, or null (final labels if any, else the newest version)
    candidates, depth               a stored run name or a retriever spec (default "bm25"); its top ``depth`` (100)
    base_model, cross_base          a registered model name or a folder (null: the packaged all-MiniLM-L6-v2);
                                    cross_base is RocketQAv2's cross-encoder
    loss                            cross-encoder: "listwise" (default) or "pointwise"
    denoise                         rocketqav2: [low, high] probabilities, or null (no hybrid data augmentation)
    teacher_prior                   rocketqav2: the weight (>= 0) of the candidates' first-stage scores in the
                                    distillation target, "auto" (chosen on the held-out queries with cross_base,
                                    a trained cross-encoder) or null (the paper's: the cross-encoder alone)
    config                          TrainConfig fields (epochs, batch_size, learning_rate, max_length, negatives, ...)
    created_by                      who asked (recorded with the model)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.training.data import LabelledData, TrainConfig, TrainResult
from core.types import Run
from db.engine import Store
from db.models import MODEL_KINDS
from pooljudge.default_training import DEFAULT_KIND, train_default
from pooljudge.models_lookup import registered_model_folder
from pooljudge.pipeline import retrieve
from pooljudge.retrievers import RetrieverSpec
from pooljudge.train_result import TrainJobResult

DEFAULT_CANDIDATES = "bm25"
DEFAULT_DEPTH = 100
DEFAULT_HELD_OUT = 0.2
LOSSES = ("listwise", "pointwise")
Loss = Literal["listwise", "pointwise"]
STAGES = ("loading labels", "retrieving candidates", "training", "registering")
"""The job's progress stages, in order (the reporter's messages)."""
TRAIN_KINDS = (DEFAULT_KIND, *MODEL_KINDS)
"""What ``kind`` may be: the default (a choice on the held-out queries) or a trainer of :data:`db.models.MODEL_KINDS`."""

_CONFIG_FIELDS = {f.name for f in dataclasses.fields(TrainConfig)} - {"checkpoint_dir"}
_PARAM_KEYS = {
    "collection",
    "name",
    "kind",
    "split",
    "eval_split",
    "held_out",
    "labels",
    "candidates",
    "depth",
    "base_model",
    "cross_base",
    "loss",
    "denoise",
    "teacher_prior",
    "config",
    "created_by",
}


def models_dir() -> Path:
    """Where trained models are saved: ``$POOLJUDGE_MODELS``, else ``~/.pooljudge/models``."""
    return Path(os.environ.get("POOLJUDGE_MODELS") or Path.home() / ".pooljudge" / "models").expanduser()


def slug(name: str) -> str:
    """A folder name for a model name: word characters (any script) kept, every other run of characters one ``-``.

    >>> slug("My re-ranker v2 / 中文")
    'My-re-ranker-v2-中文'
    """
    return re.sub(r"[^\w.]+", "-", name).strip("-.") or "model"


def model_folder(collection_id: int, name: str) -> Path:
    """``models_dir()/<collection id>/<slug of name>``."""
    return models_dir() / str(collection_id) / slug(name)


# --------------------------------------------------------------------------- parameters


def _number(params: Mapping[str, Any], key: str, flag: str, typ: type, default: Any) -> Any:
    value = params.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (typ is int and int(value) != value):
        raise ValueError(f"{flag} must be {'an integer' if typ is int else 'a number'}, got {value!r}")
    return typ(value)


def _checked_kind(params: Mapping[str, Any]) -> str:
    """The model kind, after refusing parameters the job does not know."""
    unknown = sorted(set(params) - _PARAM_KEYS)
    if unknown:
        raise ValueError(f"unknown train parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(_PARAM_KEYS))}")
    kind = params.get("kind")
    if kind not in TRAIN_KINDS:
        raise ValueError(f"kind must be one of {', '.join(TRAIN_KINDS)}, got {kind!r}")
    return str(kind)


def _checked_loss(params: Mapping[str, Any], kind: str) -> Loss:
    """``--loss`` (default listwise); only a cross-encoder may be trained pointwise."""
    loss = params.get("loss") or "listwise"
    if loss not in LOSSES:
        raise ValueError(f"--loss must be listwise or pointwise, got {loss!r}")
    if loss != "listwise" and kind != "cross-encoder":
        raise ValueError(f"--loss applies to cross-encoder training only (a {kind} is trained listwise)")
    return "pointwise" if loss == "pointwise" else "listwise"


def _checked_denoise(params: Mapping[str, Any], kind: str) -> tuple[float, float] | None:
    """``--denoise LOW,HIGH`` as two floats with ``0 <= LOW < HIGH <= 1``, RocketQAv2 only; None when absent."""
    denoise = params.get("denoise")
    if denoise is None:
        return None
    if kind != "rocketqav2":
        raise ValueError(f"--denoise applies to rocketqav2 only, not {kind}")
    if (
        not isinstance(denoise, (list, tuple))
        or len(denoise) != 2
        or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in denoise)
    ):
        raise ValueError(f"--denoise must be two probabilities LOW,HIGH, got {denoise!r}")
    low, high = float(denoise[0]), float(denoise[1])
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"--denoise must satisfy 0 <= LOW < HIGH <= 1, got {low:g},{high:g}")
    return low, high


def _checked_teacher_prior(params: Mapping[str, Any], kind: str) -> float | str | None:
    """``--teacher-prior W|auto``: a finite weight >= 0 or "auto" (which needs ``--cross-base``), RocketQAv2 only."""
    prior = params.get("teacher_prior")
    if prior is None:
        return None
    if kind != "rocketqav2":
        raise ValueError(f"--teacher-prior applies to rocketqav2 only, not {kind}")
    if prior == "auto":
        if params.get("cross_base") is None:
            raise ValueError(
                "--teacher-prior auto chooses the weight with a trained cross-encoder's scores: give it as --cross-base"
            )
        return "auto"
    weight = _number(params, "teacher_prior", "--teacher-prior", float, None)
    if not math.isfinite(weight) or weight < 0:
        raise ValueError(f"--teacher-prior must be a weight >= 0 or auto, got {prior!r}")
    return weight


def _check_evaluation_split(params: Mapping[str, Any], held_out: float | None) -> None:
    """Held-out queries come from ``--held-out`` or from ``--eval-split`` (another split than ``--split``)."""
    if held_out is not None and params.get("eval_split") is not None:
        raise ValueError(
            "--eval-split and --held-out exclude each other: evaluate on a split or on a held-out "
            "share of the training split"
        )
    if held_out is None and (params.get("eval_split") or "dev") == (params.get("split") or "train"):
        raise ValueError(
            f"--eval-split must differ from --split (both {params.get('split') or 'train'!r}): the "
            "held-out queries pick the best step; or hold out a share with --held-out"
        )


def _strings(params: Mapping[str, Any]) -> dict[str, Any]:
    """The optional string parameters (None when absent); a present one must be a non-empty string."""
    strings = {}
    for key in ("split", "eval_split", "labels", "candidates", "base_model", "cross_base", "created_by"):
        value = params.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"--{key.replace('_', '-')} must be a non-empty string, got {value!r}")
        strings[key] = value
    return strings


@dataclass(frozen=True)
class TrainParams:
    """A ``train`` job's parameters, checked (built by :meth:`from_params` from the job's JSON or the CLI's).

    Every message names the CLI flag of the bad value (the JSON key is the flag without ``--``,
    dashes as underscores).
    """

    collection: str
    name: str
    kind: str
    split: str = "train"
    eval_split: str | None = "dev"
    held_out: float | None = None
    labels: str | None = None
    candidates: str = DEFAULT_CANDIDATES
    depth: int = DEFAULT_DEPTH
    base_model: str | None = None
    cross_base: str | None = None
    loss: Loss = "listwise"
    denoise: tuple[float, float] | None = None
    teacher_prior: float | str | None = None
    config: TrainConfig = field(default_factory=TrainConfig)
    created_by: str | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TrainParams:
        """Check and convert the job's JSON parameters (see the module docstring)."""
        from core.names import check_name

        kind = _checked_kind(params)
        collection = params.get("collection")
        if not isinstance(collection, str) or not collection:
            raise ValueError("--collection is required")
        name = check_name(params.get("name"), "model name (--name)")
        held_out = _number(params, "held_out", "--held-out", float, None)
        if held_out is not None and not 0.0 < held_out < 1.0:
            raise ValueError(f"--held-out must be a fraction in (0, 1), got {held_out!r}")
        depth = _number(params, "depth", "--depth", int, DEFAULT_DEPTH)
        if depth is None or depth < 1:
            raise ValueError(f"--depth must be a positive integer, got {params.get('depth')!r}")
        loss = _checked_loss(params, kind)
        denoise = _checked_denoise(params, kind)
        teacher_prior = _checked_teacher_prior(params, kind)
        _check_evaluation_split(params, held_out)
        if params.get("cross_base") is not None and kind != "rocketqav2":
            raise ValueError(f"--cross-base applies to rocketqav2 only, not {kind}")
        strings = _strings(params)
        return cls(
            collection=collection,
            name=name,
            kind=kind,
            split=strings["split"] or "train",
            eval_split=None if held_out is not None else (strings["eval_split"] or "dev"),
            held_out=held_out,
            labels=strings["labels"],
            candidates=strings["candidates"] or DEFAULT_CANDIDATES,
            depth=depth,
            base_model=strings["base_model"],
            cross_base=strings["cross_base"],
            loss=loss,
            denoise=denoise,
            teacher_prior=teacher_prior,
            config=_config(params.get("config") or {}),
            created_by=strings["created_by"],
        )

    def as_params(self) -> dict[str, Any]:
        """The JSON parameters these were built from (checked and with defaults filled in)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["config"] = {k: v for k, v in self.config.as_dict().items() if k != "checkpoint_dir"}
        out["denoise"] = list(self.denoise) if self.denoise else None
        return out


def _config(values: Mapping[str, Any]) -> TrainConfig:
    """A TrainConfig from the job's ``config`` object, each value checked and named."""
    if not isinstance(values, Mapping):
        raise ValueError(f"config must be an object of TrainConfig fields, got {values!r}")
    unknown = sorted(set(values) - _CONFIG_FIELDS)
    if unknown:
        raise ValueError(
            f"unknown training setting(s) {', '.join(unknown)}; known: {', '.join(sorted(_CONFIG_FIELDS))}"
        )
    defaults = TrainConfig()
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        flag = f"--{key.replace('_', '-')}"
        if value is None:
            if key not in ("eval_every", "max_steps", "device"):
                raise ValueError(f"{flag} must be given a value, got null")
            kwargs[key] = None
            continue
        default = getattr(defaults, key)
        if key == "device":
            if not isinstance(value, str) or not re.fullmatch(r"cpu|cuda(:\d+)?|mps", value):
                raise ValueError(f"--device must be cpu, cuda, cuda:N or mps, got {value!r}")
            kwargs[key] = value
        elif key == "mixed_precision":
            if not isinstance(value, bool):
                raise ValueError(f"{flag} must be true or false, got {value!r}")
            kwargs[key] = value
        else:
            typ = float if isinstance(default, float) else int
            number = _number(values, key, flag, typ, None)
            positive = key not in ("seed", "weight_decay", "warmup_ratio", "negatives", "patience")
            if number < 0 or (positive and number == 0):
                raise ValueError(f"{flag} must be {'positive' if positive else 'non-negative'}, got {value!r}")
            if key == "warmup_ratio" and number >= 1:
                raise ValueError(f"{flag} must be in [0, 1), got {value!r}")
            kwargs[key] = number
    return TrainConfig(**kwargs)


# --------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class _Checked:
    """What :func:`check_train_params` found: everything training needs that could be refused before it starts."""

    params: TrainParams
    collection_id: int
    output: Path
    base: Path | None
    cross_base: Path | None
    candidates_run: bool
    """True: ``candidates`` names a stored run; False: it is a retriever spec to run."""


def check_train_params(store: Store, params: Mapping[str, Any] | TrainParams) -> _Checked:
    """Refuse a ``train`` job's parameters before any work: bad values, a taken name or folder, unknown models.

    Called by the CLI before it queues the job and by the job itself, so a duplicate name costs
    nothing.  Checks the collection, the model name (free in the collection, and no folder at
    its place), ``labels`` (a known qrels version), ``candidates`` (a stored run, else a retriever
    spec that parses), ``base_model`` / ``cross_base`` (:func:`pooljudge.models_lookup.registered_model_folder`).
    """
    from db.queries import NotFound, collection_id
    from db.runs import run_name
    from db.trained_models import check_new_model_name
    from db.training import FINAL, resolve_labels

    p = params if isinstance(params, TrainParams) else TrainParams.from_params(params)
    with store.read() as session:
        cid = collection_id(session, p.collection)
        check_new_model_name(session, p.collection, p.name)
        if p.labels not in (None, FINAL):
            resolve_labels(session, p.collection, p.labels)
        stored = run_name(session, p.collection, p.candidates)
        is_run = stored is not None and stored.ready
    output = model_folder(cid, p.name)
    if output.exists():
        raise ValueError(
            f"model folder {str(output)!r} already exists (another model's name has the same slug, or "
            "an earlier model was removed from the registry but not from disk); choose another name"
        )
    if not is_run:
        try:
            RetrieverSpec.parse(p.candidates)
        except ValueError as exc:
            raise NotFound(
                f"--candidates: no run named {p.candidates!r} in collection {p.collection!r}, and not a "
                f"retriever spec ({exc})"
            ) from None
    base = registered_model_folder(store, p.collection, p.base_model) if p.base_model else None
    cross = registered_model_folder(store, p.collection, p.cross_base, role="cross-encoder") if p.cross_base else None
    return _Checked(p, cid, output, base, cross, is_run)


def _candidates(store: Store, checked: _Checked, reporter) -> tuple[Run, dict[str, Any]]:
    """Each query's top ``depth`` candidates with their scores, in trec order, and where they came from."""
    from core.ranking import trec_ranking
    from db.queries import stored_run

    p = checked.params
    reporter(0, None, "retrieving candidates")
    if checked.candidates_run:
        with store.read() as session:
            run = stored_run(session, p.collection, p.candidates)
        source: dict[str, Any] = {"run": p.candidates, "depth": p.depth}
    else:
        spec = RetrieverSpec.parse(p.candidates)
        stage = lambda label: reporter.stage_callback(f"retrieving candidates: {label}")  # noqa: E731
        name, run, config = retrieve(store, p.collection, spec, k=p.depth, progress=stage)
        source = {"retriever": spec.text, "depth": p.depth, "config": config}
    return {qid: {d: docs[d] for d in trec_ranking(docs)[: p.depth]} for qid, docs in run.items()}, source


def _split(
    data: LabelledData, splits: Mapping[str, str], p: TrainParams
) -> tuple[list[str], list[str], dict[str, Any]]:
    """Training and held-out query ids (each with a relevant label), and how they were chosen."""
    from core.training.data import split_queries

    trainable = data.trainable()
    present = sorted(set(splits.values()))
    held_out = p.held_out
    if held_out is None and len(present) <= 1:
        held_out = DEFAULT_HELD_OUT  # one split only: hold out a seeded share of it
    if held_out is not None:
        # several splits: a share of the training split; one split: a share of all the queries, whatever it is called
        pool = [q for q in trainable if splits.get(q) == p.split] if len(present) > 1 else trainable
        if len(pool) < 2:
            where = f" in split {p.split!r} (splits: {', '.join(repr(s) for s in present)})" if len(present) > 1 else ""
            raise ValueError(f"--held-out needs at least 2 queries with a relevant label{where}, found {len(pool)}")
        train, held = split_queries(pool, held_out, seed=p.config.seed)
        return train, held, {"held_out": held_out, "split": p.split if len(present) > 1 else None}
    listed = ", ".join(repr(s) for s in present)
    train = [q for q in trainable if splits.get(q) == p.split]
    held = [q for q in trainable if splits.get(q) == p.eval_split]
    if not train:
        raise ValueError(f"--split: no query of split {p.split!r} has a relevant label (splits: {listed})")
    if not held:
        raise ValueError(
            f"--eval-split: no query of split {p.eval_split!r} has a relevant label (splits: {listed}); "
            "or hold out a share of the training split with --held-out"
        )
    return train, held, {"split": p.split, "eval_split": p.eval_split}


def _train(kind: str, data: _Data, checked: _Checked, output: Path, progress, prior_weight: float = 0.0):
    p = checked.params
    train, held = data.train, data.held
    base = str(checked.base) if checked.base else None
    if kind == "cross-encoder":
        from core.training.cross_encoder import train_cross_encoder

        return train_cross_encoder(
            train, held, p.config, output=output, base_model=base, loss=p.loss, progress=progress
        )
    if kind == "dual-encoder":
        from core.training.dual_encoder import train_dual_encoder

        return train_dual_encoder(train, held, p.config, output=output, base_model=base, progress=progress)
    from core.training.rocketqav2 import train_rocketqav2

    return train_rocketqav2(
        train,
        held,
        p.config,
        output=output,
        base_model=base,
        cross_base=str(checked.cross_base) if checked.cross_base else None,
        denoise=p.denoise,
        prior=data.first_stage if prior_weight else None,
        prior_weight=prior_weight,
        progress=progress,
    )


def _json(value: Any) -> Any:
    """``value`` as JSON gives it back (paths and other objects as strings), as the registry stores it."""
    return json.loads(json.dumps(value, default=str))


@dataclass
class _Data:
    """What a job trains on: the label version, the training and held-out data, how both were chosen."""

    labels: Any
    train: LabelledData
    held: LabelledData
    train_ids: list[str]
    held_ids: list[str]
    split_info: dict[str, Any]
    source: dict[str, Any]
    """Where the candidates came from (a run, or a retriever spec run for the job)."""
    first_stage: Run
    """The candidates with their first-stage scores (what a re-ranker is interpolated with)."""


def _load_data(store: Store, checked: _Checked, reporter) -> _Data:
    """The stages ``loading labels`` and ``retrieving candidates``: the labelled data, split and with candidates."""
    from db.training import labelled_data, resolve_labels

    p = checked.params
    reporter(0, None, "loading labels")
    with store.read() as session:
        labels, _qrels = resolve_labels(session, p.collection, p.labels)
        data, splits = labelled_data(session, p.collection, labels=labels)
    train_ids, held_ids, split_info = _split(data, splits, p)
    first_stage, source = _candidates(store, checked, reporter)
    data = dataclasses.replace(data, candidates={q: list(c) for q, c in first_stage.items() if q in data.queries})
    train, held = data.subset(train_ids), data.subset(held_ids)
    return _Data(labels, train, held, train_ids, held_ids, split_info, source, first_stage)


def _held_out_scores(folder: Path, checked: _Checked, data: _Data) -> Run:
    """A cross-encoder's raw scores of the held-out queries' candidates."""
    from core.training.cross_encoder import CrossEncoder, rerank

    config = checked.params.config
    encoder = CrossEncoder(folder, max_length=config.max_length, device=config.device)
    return rerank([encoder], data.held.queries, data.held.candidates, data.held.passages)


def _teacher_prior(checked: _Checked, data: _Data, reporter) -> dict[str, Any] | None:
    """RocketQAv2's teacher prior weight: the given one, or (``auto``) the stage ``choosing the teacher's prior weight``.

    :func:`core.retrieval.rerank.choose_prior_weight` over the starting cross-encoder's logits of the
    held-out candidates plus the weighted first-stage scores; None when there is no prior.
    """
    prior = checked.params.teacher_prior
    if prior is None:
        return None
    if prior != "auto":
        return {"weight": float(prior)}
    assert checked.cross_base is not None  # TrainParams refuses auto without --cross-base
    from core.retrieval.rerank import choose_prior_weight

    reporter(0, None, "choosing the teacher's prior weight")
    logits = _held_out_scores(checked.cross_base, checked, data)
    weight, scores = choose_prior_weight(data.first_stage, logits, data.held.qrels, data.held.level)
    return {"weight": weight, "held_out_nDCG@10": {f"{w:g}": v for w, v in scores.items()}}


def _interpolation(checked: _Checked, data: _Data, reporter) -> dict[str, Any] | None:
    """The stage ``choosing the interpolation weight``: a re-ranker's first-stage weight, chosen on the held-out queries.

    :func:`core.retrieval.rerank.choose_interpolation` over the trained re-ranker's scores of the
    held-out candidates and their first-stage scores; ``None`` for a kind that is not a re-ranker.
    The held-out queries also chose the best step, so the weight is a suggestion for the next
    pool, not a held-out number.
    """
    if checked.params.kind != "cross-encoder" or not data.held.qrels:
        return None
    from core.retrieval.rerank import choose_interpolation

    reporter(0, None, "choosing the interpolation weight")
    reranked = _held_out_scores(checked.output, checked, data)
    weight, scores = choose_interpolation(data.first_stage, reranked, data.held.qrels, data.held.level)
    return {"weight": weight, "held_out_nDCG@10": {f"{w:g}": v for w, v in scores.items()}}


def _train_into_place(checked: _Checked, data: _Data, reporter, prior_weight: float = 0.0) -> TrainResult:
    """The stage ``training``: train into a hidden staging folder, renamed into place only when training succeeded."""
    from core.atomic import atomic_folder

    checked.output.parent.mkdir(parents=True, exist_ok=True)
    trained: list[TrainResult] = []
    # a failed job leaves no folder behind
    published = atomic_folder(
        checked.output,
        lambda staging: trained.append(
            _train(checked.params.kind, data, checked, staging, reporter.stage_callback("training"), prior_weight)
        ),
    )
    if not published:
        raise ValueError(f"model folder {str(checked.output)!r} appeared while training; choose another name")
    return trained[0]


def _model_params(checked: _Checked, data: _Data, result: TrainResult, chosen: Mapping[str, Any]) -> dict[str, Any]:
    """The registry's ``params`` of the model: the job's parameters, where the data came from, the trainer's."""
    return _json(
        {
            **checked.params.as_params(),
            "labels": data.labels,
            "candidates_source": data.source,
            **data.split_info,
            "train_queries": len(data.train_ids),
            "held_out_queries": len(data.held_ids),
            "base_path": str(checked.base) if checked.base else None,
            "cross_base_path": str(checked.cross_base) if checked.cross_base else None,
            "seconds": result.seconds,
            "pairs_per_second": result.pairs_per_second,
            "trainer": result.params,
            "interpolation": chosen.get("interpolation"),
            "teacher_prior_weight": chosen.get("teacher_prior"),
        }
    )


def _register(
    store: Store, checked: _Checked, data: _Data, result: TrainResult, chosen: Mapping[str, Any], job_id: Any
) -> int:
    """The stage ``registering``; when the name was taken meanwhile the trained folder is removed."""
    from db.trained_models import register_model

    p = checked.params
    params = _model_params(checked, data, result, chosen)
    try:
        with store.write() as session:
            return register_model(
                session,
                p.collection,
                name=p.name,
                kind=p.kind,
                path=str(checked.output),
                base_model=str(checked.base) if checked.base else None,
                params=params,
                history=_json(result.history),
                best=_json(result.best),
                created_by=p.created_by,
                job_id=job_id,
            )
    except BaseException:  # the folder is nobody's
        shutil.rmtree(checked.output, ignore_errors=True)
        raise


def run_train_job(store: Store, info, reporter) -> TrainJobResult:
    """Train one model on a collection's labels and register it (see the module docstring for the parameters).

    The ``default`` kind goes on in :func:`pooljudge.default_training.train_default` after the
    candidates (its own stages and result fields).  Other kinds' stages (the reporter's messages):
    ``loading labels``, ``retrieving candidates``, for RocketQAv2 with
    ``teacher_prior`` auto ``choosing the teacher's prior weight``, ``training`` (done/total steps), for a
    re-ranker ``choosing the interpolation weight``, ``registering``.  Everything that can be refused is checked first
    (:func:`check_train_params`).  The model is trained into a hidden folder beside its final
    place and moved there only when training succeeded, so a failed job leaves no folder behind
    and can be retried with the same name.

    Returns
    -------
    TrainJobResult
        The registered model, its held-out evaluation and speed; ``interpolate``: a re-ranker's
        first-stage weight chosen on the held-out queries, else None; ``teacher_prior``: RocketQAv2's
        teacher prior weight, given or chosen, else None.
    """
    started = time.monotonic()
    checked = check_train_params(store, info.params)
    data = _load_data(store, checked, reporter)
    if checked.params.kind == DEFAULT_KIND:
        chosen_default = train_default(store, checked, data, reporter, info.id)
        return dataclasses.replace(chosen_default, total_seconds=time.monotonic() - started)
    prior = _teacher_prior(checked, data, reporter)
    result = _train_into_place(checked, data, reporter, prior["weight"] if prior else 0.0)
    interpolation = _interpolation(checked, data, reporter)
    reporter(0, None, "registering")
    chosen = {"interpolation": interpolation, "teacher_prior": prior}
    model_id = _register(store, checked, data, result, chosen, info.id)
    return TrainJobResult(
        model=checked.params.name,
        id=model_id,
        path=str(checked.output),
        kind=checked.params.kind,
        best=_json(result.best),
        seconds=result.seconds,
        pairs_per_second=result.pairs_per_second,
        labels=data.labels,
        train_queries=len(data.train_ids),
        held_out_queries=len(data.held_ids),
        interpolate=interpolation["weight"] if interpolation else None,
        teacher_prior=prior["weight"] if prior else None,
        total_seconds=time.monotonic() - started,
    )
