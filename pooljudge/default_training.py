"""The ``train`` job's default kind: fine-tune the base encoder, then offer what the dev split says is best.

``pooljudge train`` without a kind (and the Models page's first kind) runs
:func:`train_default`.  The held-out queries of the job (its ``--eval-split``
or ``--held-out`` share) are the dev split: they stop the fine-tuning early
and choose the system, so no number here is a held-out number
(``benchmarks/bench_default_training.py`` measures those).

Stages (the reporter's messages), after the train job's ``loading labels``
and ``retrieving candidates``:

* ``scoring BM25 and the base encoder``: the top 100 of ``bm25`` and of
  ``dense`` (the collection language's default encoder, or ``--base``) for
  every query, through :func:`pooljudge.pipeline.retrieve` (the embeddings
  are cached, so pooling with the chosen system later reuses them);
* ``training``: :func:`core.training.default_system.fine_tune_bi_encoder`
  from the base encoder (the dev evaluations search the pool of what BM25
  and the base encoder retrieved for the dev queries);
* ``scoring the fine-tuned encoder``: ``dense:model=<trained folder>``'s top 100;
* ``choosing the default system``: :func:`core.training.default_system.choose_default_system`
  among BM25, base dense, their hybrid, the fine-tuned dense retriever and its
  hybrid with BM25 (the fine-tuned hybrid's BM25 weight chosen on the dev split,
  the base hybrid's on the training and dev queries, whose labels neither base
  system saw);
* ``registering``: the fine-tuned encoder is registered as a ``dual-encoder``
  model whose record holds the choice (``params["default_system"]``: the
  chosen system, its retriever spec, every candidate's dev nDCG@10 and the
  reason), whether or not the choice uses it.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from db.engine import Store
from pooljudge.pipeline import retrieve
from pooljudge.retrievers import RetrieverSpec
from pooljudge.train_result import TrainJobResult

DEFAULT_KIND = "default"
"""The ``train`` kind that chooses among the base retrievers and the fine-tuned encoder on the dev split."""
REGISTERED_KIND = "dual-encoder"
"""What the default kind trains and registers (the registry's kinds are what the weights are)."""
DEPTH = 100
"""Each component run's depth: what the ``hybrid`` retriever fuses by default."""


def _model_path(config: Any) -> Path | None:
    """The bi-encoder folder a dense retriever's description names (``describe()["encoder"]["model_path"]``)."""
    if isinstance(config, dict):
        encoder = config.get("encoder")
        if isinstance(encoder, dict) and encoder.get("model_path"):
            return Path(str(encoder["model_path"]))
        for value in config.values():
            found = _model_path(value)
            if found is not None:
                return found
    return None


def _top(run: dict[str, dict[str, float]], depth: int) -> dict[str, dict[str, float]]:
    from core.ranking import trec_ranking

    return {q: {d: docs[d] for d in trec_ranking(docs)[:depth]} for q, docs in run.items()}


def _base_runs(store: Store, checked: Any, data: Any, reporter: Any) -> tuple[dict[str, Any], Path, str]:
    """The stage ``scoring BM25 and the base encoder``: BM25's and the base encoder's runs, its folder, its spec."""

    p = checked.params
    stage = reporter.stage_callback("scoring BM25 and the base encoder")
    progress = lambda label: lambda done, total: stage(done, total)  # noqa: E731
    if p.candidates == "bm25" and not checked.candidates_run and p.depth >= DEPTH:
        bm25 = _top(data.first_stage, DEPTH)  # the job's candidates are BM25's own run
    else:
        bm25 = retrieve(store, p.collection, RetrieverSpec.parse("bm25"), k=DEPTH, progress=progress)[1]
    base_spec = f"dense:model={checked.base}" if checked.base else "dense"
    _, dense, config = retrieve(store, p.collection, RetrieverSpec.parse(base_spec), k=DEPTH, progress=progress)
    base = checked.base or _model_path(config)
    if base is None:
        raise ValueError(f"the base dense retriever's description names no model folder: {json.dumps(config)[:200]}")
    return {"bm25": bm25, "dense": dense}, Path(base), base_spec


def _fine_tune(checked: Any, data: Any, dense: dict[str, Any], base: Path, reporter: Any) -> Any:
    """The stage ``training``: fine-tune into a hidden folder, renamed into place only when training succeeded."""
    from core.atomic import atomic_folder
    from core.training.default_system import evaluation_pool, fine_tune_bi_encoder

    progress = reporter.stage_callback("training")
    dev = evaluation_pool(data.held, [dense])
    checked.output.parent.mkdir(parents=True, exist_ok=True)
    trained: list[Any] = []
    published = atomic_folder(
        checked.output,
        lambda staging: trained.append(
            fine_tune_bi_encoder(
                data.train, dev, checked.params.config, output=staging, base_model=base, progress=progress
            )
        ),
    )
    if not published:
        raise ValueError(f"model folder {str(checked.output)!r} appeared while training; choose another name")
    return trained[0]


def offered_spec(key: str, alpha: float | None, base_spec: str, base: Path | None, tuned: Path) -> str:
    """The retriever spec that searches with system ``key`` (``pooljudge retrieve -r SPEC``, pooling).

    ``base`` is the ``--base`` folder (None: the collection language's default encoder).

    >>> offered_spec("hybrid", 0.3, "dense", None, Path("/m/t"))
    'hybrid:fusion=convex,alpha=0.3'
    >>> offered_spec("tuned-hybrid", 0.5, "dense", None, Path("/m/t"))
    'hybrid:fusion=convex,alpha=0.5,dense_model=/m/t'
    """
    from core.training.default_system import BM25, DENSE, HYBRID, TUNED

    if key == BM25:
        return "bm25"
    if key == DENSE:
        return base_spec
    if key == TUNED:
        return f"dense:model={tuned}"
    model = base if key == HYBRID else tuned
    return f"hybrid:fusion=convex,alpha={alpha:g}" + (f",dense_model={model}" if model is not None else "")


def _register(store: Store, checked: Any, data: Any, result: Any, system: dict[str, Any], job_id: Any) -> int:
    """The stage ``registering``: the fine-tuned encoder with the choice in its record (folder removed on failure)."""
    from db.trained_models import register_model

    p = checked.params
    params = {
        **p.as_params(),
        "labels": data.labels,
        "candidates_source": data.source,
        **data.split_info,
        "train_queries": len(data.train_ids),
        "held_out_queries": len(data.held_ids),
        "base_path": system["base_path"],
        "seconds": result.seconds,
        "pairs_per_second": result.pairs_per_second,
        "trainer": result.params,
        "default_system": system,
    }
    try:
        with store.write() as session:
            return register_model(
                session,
                p.collection,
                name=p.name,
                kind=REGISTERED_KIND,
                path=str(checked.output),
                base_model=str(checked.base) if checked.base else None,
                params=json.loads(json.dumps(params, default=str)),
                history=json.loads(json.dumps(result.history, default=str)),
                best=json.loads(json.dumps(result.best, default=str)),
                created_by=p.created_by,
                job_id=job_id,
            )
    except BaseException:  # the folder is nobody's
        shutil.rmtree(checked.output, ignore_errors=True)
        raise


def choose(runs: dict[str, Any], data: Any, base_spec: str, base: Path, checked: Any) -> dict[str, Any]:
    """The stage ``choosing the default system`` on the job's held-out (dev) queries, as the record stores it."""
    from core.training.default_system import choose_default_system

    # the base hybrid's weight is chosen on the training queries too: BM25 and the base encoder never saw them
    seen = [*data.train_ids, *data.held_ids]
    dev_runs = {k: {q: r.get(q, {}) for q in seen} for k, r in runs.items()}
    weight_qrels = {**data.train.qrels, **data.held.qrels}
    choice = choose_default_system(dev_runs, data.held.qrels, data.held.level, weight_qrels=weight_qrels)
    record = choice.as_dict()
    for system in record["systems"]:  # every candidate as a retriever spec, to pool with or compare
        system["spec"] = offered_spec(system["key"], system["alpha"], base_spec, checked.base, checked.output)
    spec = offered_spec(choice.chosen.key, choice.chosen.alpha, base_spec, checked.base, checked.output)
    return {**record, "spec": spec, "base_spec": base_spec, "base_path": str(base)}


def train_default(store: Store, checked: Any, data: Any, reporter: Any, job_id: Any) -> TrainJobResult:
    """Fine-tune the base encoder and choose the default system on the dev split; register and report both.

    ``checked`` and ``data`` are the train job's checked parameters and loaded data
    (:func:`pooljudge.training.run_train_job`).

    Returns
    -------
    TrainJobResult
        The registered model (``kind`` = ``"default"``) and the chosen system: ``system`` (its
        key), ``system_label``, ``spec`` (its retriever spec), ``improved`` (whether it uses the
        trained weights), ``reason`` and ``dev_ndcg10`` (every candidate's dev nDCG@10).
    """

    started = time.monotonic()
    runs, base, base_spec = _base_runs(store, checked, data, reporter)
    result = _fine_tune(checked, data, runs["dense"], base, reporter)
    stage = reporter.stage_callback("scoring the fine-tuned encoder")
    tuned_spec = RetrieverSpec.parse(f"dense:model={checked.output}")
    try:
        runs["tuned"] = retrieve(store, checked.params.collection, tuned_spec, k=DEPTH, progress=lambda _l: stage)[1]
        reporter(0, None, "choosing the default system")
        system = choose(runs, data, base_spec, base, checked)
    except BaseException:
        shutil.rmtree(checked.output, ignore_errors=True)
        raise
    reporter(0, None, "registering")
    model_id = _register(store, checked, data, result, system, job_id)
    return TrainJobResult(
        model=checked.params.name,
        id=model_id,
        path=str(checked.output),
        kind=DEFAULT_KIND,
        best=json.loads(json.dumps(result.best, default=str)),
        seconds=result.seconds,
        pairs_per_second=result.pairs_per_second,
        labels=data.labels,
        train_queries=len(data.train_ids),
        held_out_queries=len(data.held_ids),
        system=system["chosen"],
        system_label=system["label"],
        spec=system["spec"],
        improved=system["improved"],
        reason=system["reason"],
        dev_ndcg10=system["dev_nDCG@10"],
        total_seconds=time.monotonic() - started,
    )
