"""A pooling job's parameters (:class:`PoolJobParams`), built once by the CLI or the Pooling page, and their checks.

The job itself (:func:`pooljudge.pool_job.run_pool_job`) reads the same dataclass back from
the job's stored JSON (:meth:`PoolJobParams.from_json`, used by :meth:`db.jobs.JobInfo.params_as`),
so the three agree on every field.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from core.pooling import DEFAULT_DEPTH
from db.engine import Store
from db.vocab import JobStatus
from pooljudge.models_lookup import reranker_folder
from pooljudge.retrievers import RetrieverSpec

SELECT_METHODS = ("top", "active")
DEFAULT_ACTIVE_BAND = (0.1, 0.9)
DEDUPE_METHODS = ("similarity", "ward")
_OPTIONAL = ("select_by", "select_method", "active_model", "active_band")
"""Selection fields a job's JSON leaves out when unset (the stored rows' shape)."""


@dataclass(frozen=True)
class Dedupe:
    """Near-duplicate removal of a pool's selection (:func:`core.pooling.dedupe_pool`), as the CLI and the page ask.

    Attributes
    ----------
    method : {"similarity", "ward"}
        ``similarity``: drop a passage whose cosine with a kept one reaches ``threshold``; ``ward``: one passage
        per Ward cluster cut at distance ``threshold``.
    threshold : float
        The cosine threshold (similarity) or the distance threshold (ward), at least 0.
    """

    method: str
    threshold: float

    def __post_init__(self) -> None:
        if self.method not in DEDUPE_METHODS:
            raise ValueError(f"near-duplicate removal must be similarity or ward, got {self.method!r}")
        if not (isinstance(self.threshold, (int, float)) and math.isfinite(self.threshold) and self.threshold >= 0):
            raise ValueError(f"the near-duplicate threshold must be a number >= 0, got {self.threshold!r}")

    @classmethod
    def parse(cls, text: str) -> Dedupe:
        """From the CLI's ``METHOD:THRESHOLD`` (``similarity:0.95``, ``ward:0.3``)."""
        method, _, value = text.partition(":")
        try:
            return cls(method, float(value))
        except ValueError:
            raise ValueError("--dedupe must be similarity:THRESHOLD or ward:DISTANCE, e.g. similarity:0.95") from None

    def options(self) -> dict[str, Any]:
        """:func:`core.pooling.dedupe_pool`'s keywords, which are also the job's stored JSON."""
        key = "threshold" if self.method == "similarity" else "distance_threshold"
        return {"method": self.method, key: self.threshold}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Dedupe:
        """From a job's stored ``dedupe`` object (:meth:`options`; the method defaults to ``similarity``)."""
        method = data.get("method", "similarity")
        return cls(method, float(data["threshold" if method == "similarity" else "distance_threshold"]))


@dataclass(frozen=True)
class PoolJobParams:
    """What a pooling job does, stored as the job's JSON parameters (:meth:`to_json`, :meth:`from_json`).

    Attributes
    ----------
    collection, name : str
        The collection and the new pool's name.
    retrievers : list of str
        Retriever specs (:class:`pooljudge.retrievers.RetrieverSpec`) whose new runs are pooled too.
    runs : list of str
        Stored runs to pool.
    k : int
        Hits per new retriever (default 100).
    method : str
        A pooling method of :data:`core.pooling.POOLING_METHODS` (``depth``, ``take``, ``rrf``, ``rbp``).
    depth, size : int
        Depth pooling's depth (:data:`core.pooling.DEFAULT_DEPTH`); the per-query budget of the others
        (default: ``depth``).
    select : int or None
        Keep the top N per query (by the pooled runs, or by the ``select_by`` re-rankers); None: all.
    select_by : list of str or None
        Cross-encoders (folders or registered names) ranking the pool for ``select`` (DuReader-retrieval).
    select_method, active_model, active_band
        ``"active"`` with one cross-encoder and a probability band ``[low, high]`` (T2Ranking 4.4).
    dedupe : Dedupe or None
        Near-duplicate removal of the selection.
    prelabel : bool
        Span-F1 pre-labels for queries with answers.
    split : str or None
        Only that split's queries.
    extra : dict
        Further parameters a pooling method reads (RBP's ``rbp_p``), kept at the JSON's top level.
    """

    collection: str
    name: str
    retrievers: list[str] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    k: int = 100
    method: str = "depth"
    depth: int = DEFAULT_DEPTH
    size: int | None = None
    select: int | None = None
    select_by: list[str] | None = None
    select_method: str | None = None
    active_model: str | None = None
    active_band: list[float] | None = None
    dedupe: Dedupe | None = None
    prelabel: bool = False
    split: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, params: Mapping[str, Any]) -> PoolJobParams:
        """From a job's JSON parameters (a stored job may lack any optional key)."""
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in params.items() if k in known and v is not None}
        for key in ("k", "depth", "size"):
            if key in values:
                values[key] = int(values[key])
        if "dedupe" in values:
            values["dedupe"] = Dedupe.from_json(values["dedupe"])
        return cls(**values, extra={k: v for k, v in params.items() if k not in known})

    def to_json(self) -> dict[str, Any]:
        """The job's JSON parameters: every field, unset selection fields left out, ``extra`` merged in."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or (f.name in _OPTIONAL and value is None):
                continue
            out[f.name] = value.options() if isinstance(value, Dedupe) else copy.deepcopy(value)
        return out | self.extra

    @property
    def band(self) -> tuple[float, float]:
        """The active band, checked (:func:`active_band`)."""
        return active_band(self.active_band)

    def rerankers(self) -> list[str]:
        """The cross-encoders of ``select_by`` (checked, stripped), which rank the pool for ``select``."""
        return _models_param(self.select_by, "select_by")

    def models(self) -> list[str]:
        """The cross-encoders the selection uses, as written: ``select_by``, then ``active_model``."""
        return self.rerankers() + _models_param(self.active_model, "active_model")


def _models_param(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(m, str) and m.strip() for m in value):
        raise ValueError(f"{what} must be a list of model folders or registered model names, got {value!r}")
    return [m.strip() for m in value]


def _select_n(select: int | None) -> int | None:
    try:
        select_n = None if select is None else int(select)
    except (TypeError, ValueError):
        select_n = -1
    if select_n is not None and select_n < 0:
        raise ValueError(f"select must be a number of documents per query (or null), got {select!r}")
    return select_n


def check_selection_params(p: PoolJobParams) -> None:
    """Refuse selection parameters of a pooling job that cannot work together (before any work).

    ``select`` (top N per query) ranks by the pooled runs, or by the re-rankers of
    ``select_by``; ``select_method="active"`` needs ``active_model`` and an ``active_band``
    ``[low, high]`` with ``0 <= low < high <= 1`` and keeps every unsure pair (no ``select``).
    """
    select_n = _select_n(p.select)
    method = p.select_method or "top"
    if method not in SELECT_METHODS:
        raise ValueError(f"unknown select_method {method!r}; expected {' or '.join(SELECT_METHODS)}")
    select_by = _models_param(p.select_by, "select_by")
    if select_by and not select_n:
        raise ValueError("select_by (re-rank the pool with these models) needs select: the top N per query to keep")
    if method == "active":
        if select_n:
            raise ValueError(
                "select_method 'active' keeps every pair the model is unsure about: drop select "
                "(or use select with select_by for a fixed top N)"
            )
        if select_by:
            raise ValueError("select_by goes with select (top N by re-rankers), not with select_method 'active'")
        if not _models_param(p.active_model, "active_model"):
            raise ValueError(
                "select_method 'active' needs active_model: the cross-encoder (folder or registered "
                "name) that scores the pooled pairs"
            )
        active_band(p.active_band)
    else:
        for key, value in (("active_model", p.active_model), ("active_band", p.active_band)):
            if value is not None:
                raise ValueError(f"{key} is only used with select_method 'active'")


def active_band(band: Any) -> tuple[float, float]:
    """A pooling job's ``active_band`` ``[low, high]`` (None: ``[0.1, 0.9]``), checked: ``0 <= low < high <= 1``."""
    if band is None:
        return DEFAULT_ACTIVE_BAND
    try:
        low, high = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ValueError(f"active_band must be two numbers [low, high], got {band!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and 0.0 <= low < high <= 1.0):
        raise ValueError(f"active_band must satisfy 0 <= low < high <= 1, got [{low:g}, {high:g}]")
    return low, high


def _new_run_names(specs: list[RetrieverSpec], run_names: list[str]) -> dict[str, RetrieverSpec]:
    """Each new run's name and its spec; refuses a bad name, or one given twice or also to a stored run."""
    from db.importer import check_run_name

    made_by: dict[str, RetrieverSpec] = {}
    for spec in specs:
        name = check_run_name(spec.default_name())
        if name in made_by:
            raise ValueError(
                f"retrievers {made_by[name].text!r} and {spec.text!r} would both store a run named "
                f"{name!r}: give each its own name option"
            )
        made_by[name] = spec
    for name in run_names:
        if name in made_by:
            raise ValueError(
                f"run name {name!r} is given both to a stored run to pool and to the new run of "
                f"retriever {made_by[name].text!r}"
            )
    return made_by


def _run_status(store: Store, collection: str, pool_name: str) -> dict[str, str]:
    """The status of every run of ``collection`` (``NotFound``), after refusing a taken pool name."""
    from db.runs import pool_name as taken_pool_name
    from db.runs import run_names

    with store.read() as session:
        runs = run_names(session, collection)
        taken = taken_pool_name(session, collection, pool_name)
    if taken is not None:
        hidden = " (archived: restore it, or choose another name)" if taken.archived else ""
        raise ValueError(f"a pool named {pool_name!r} already exists in collection {collection!r}{hidden}")
    return {name: run.status for name, run in runs.items()}


def _check_run_names(
    collection: str, made_by: Mapping[str, RetrieverSpec], run_names: list[str], status: Mapping[str, str]
) -> None:
    from db.queries import NotFound

    for name, spec in made_by.items():
        if status.get(name) == "ready":
            raise ValueError(
                f"run {name!r} already exists in {collection!r}: pool the stored run instead, "
                f"or name the new one, e.g. {spec.kind}:name=my-{spec.kind}"
            )
        if name in status:
            raise ValueError(
                f"run {name!r} is being imported into {collection!r} (or a crashed import left it): "
                f"name the new one, e.g. {spec.kind}:name=my-{spec.kind}"
            )
    for name in run_names:
        if status.get(name) != "ready":
            known = ", ".join(sorted(n for n, st in status.items() if st == "ready")) or "none"
            raise NotFound(f"no run named {name!r} in collection {collection!r} (runs: {known})")


def _check_active_jobs(
    store: Store, p: PoolJobParams, made_by: Mapping[str, RetrieverSpec], job_id: int | None
) -> None:
    """Refuse the names another active pooling job of the collection will store (a second click, a double Enter)."""
    from db.jobs import list_jobs
    from db.queries import collection_id

    with store.read() as session:
        jobs = list_jobs(session, kind="pool", collection_id=collection_id(session, p.collection), limit=50)
    for job in jobs:
        if job.id == job_id or job.status not in (JobStatus.QUEUED, JobStatus.RUNNING) or job.stale:
            continue
        other = job.params_as(PoolJobParams)
        if other.name == p.name:
            raise ValueError(
                f"pooling job {job.id} is already building pool {p.name!r}: wait for it (under Jobs below), "
                "or give this pool another name"
            )
        try:
            theirs = _new_run_names([RetrieverSpec.parse(s) for s in other.retrievers], [])
        except ValueError:  # a job queued with specs that no longer parse fails on its own
            continue
        for name, spec in made_by.items():
            if name in theirs:
                raise ValueError(
                    f"pooling job {job.id} is already making run {name!r}: wait for it and choose the run "
                    f"under 'Stored runs to pool', or name the new one, e.g. {spec.kind}:name=my-{spec.kind}"
                )


def check_pool_params(
    store: Store, params: PoolJobParams | Mapping[str, Any], *, job_id: int | None = None
) -> list[RetrieverSpec]:
    """Check every name a pooling job would use, before any retrieval; returns the parsed retriever specs.

    Refuses (``ValueError``, ``NotFound`` for an unknown collection or stored run) a bad or taken pool
    name (:func:`core.names.check_name`), an unknown pooling method, a retriever spec that does not
    parse, a new run name that is bad (:func:`db.importer.check_run_name`), taken in the collection
    (or being imported), given to two retrievers or also to a stored run, and a stored run that does
    not exist, and a pool name or new run name that another queued or running pooling job of the
    collection will make (``job_id``: the job checking its own params, left out).  Called by
    :func:`pooljudge.pool_job.run_pool_job` and by the CLI and the Pooling page before they queue the
    job, so a duplicate name costs nothing.
    """
    from core.names import check_name
    from core.pooling import pooling_method

    p = params if isinstance(params, PoolJobParams) else PoolJobParams.from_json(params)
    check_name(p.name, "pool name")
    pooling_method(p.method)
    specs = [RetrieverSpec.parse(s) for s in p.retrievers]
    if not specs and not p.runs:
        raise ValueError("a pool needs at least one retriever or stored run")
    made_by = _new_run_names(specs, list(p.runs))
    _check_run_names(p.collection, made_by, list(p.runs), _run_status(store, p.collection, p.name))
    _check_active_jobs(store, p, made_by, job_id)
    check_selection_params(p)
    for model in p.models() + [m for spec in specs for m in spec.models]:
        reranker_folder(store, p.collection, model)  # a registered name or an existing folder, else refused now
    return specs
