"""The pooling job: named stages from retrieval to the saved pool.

:func:`run_pool_job` retrieves with new retrievers (:func:`retrieve_new_runs`), loads the
stored runs (:func:`load_runs`), pools them with the job's method from
:data:`core.pooling.POOLING_METHODS` (:func:`pool_runs`), selects what gets annotated
(:func:`select_pairs`), removes near-duplicates (:func:`dedupe_selection`), pre-labels
(:func:`prelabel_pairs`) and saves the pool with the new runs (:func:`save_pool_and_runs`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.types import Run
from db.engine import Store
from pooljudge.corpus import Corpus, load_corpus
from pooljudge.encoders import cross_encoder_for, encoder_for
from pooljudge.models_lookup import reranker_folder
from pooljudge.pipeline import Progress, retrieve
from pooljudge.pool_params import PoolJobParams, check_pool_params

NewRuns = dict[str, tuple[Run, dict[str, Any]]]
"""The job's new runs by name, each with the parameters stored with it."""


@dataclass(frozen=True)
class PoolStatisticsSummary:
    """The pooled runs' contributions and overlap (:func:`core.pooling.pool_statistics`) kept in a job's result.

    Attributes
    ----------
    runs : list of str
        The pooled runs, the rows and columns of ``overlap``.
    contributed, unique : dict of str to int
        Per run, the pooled pairs it contributed, and those only it contributed.
    overlap : list of list of float or None
        Mean Jaccard overlap of two runs' pooled documents (None where undefined).
    """

    runs: list[str] = field(default_factory=list)
    contributed: dict[str, int] = field(default_factory=dict)
    unique: dict[str, int] = field(default_factory=dict)
    overlap: list[list[float | None]] = field(default_factory=list)


@dataclass(frozen=True)
class ActiveCounts:
    """What active selection kept and saved (:meth:`core.pooling.ActiveReport.as_dict`), in a job's result.

    Attributes
    ----------
    kept : int
        Pairs the model was unsure about (sent to annotation).
    confident_relevant, confident_irrelevant : int
        Pairs above and below the band (not annotated).
    saved : int
        Annotations saved: ``confident_relevant + confident_irrelevant``.
    pairs : int
        Pairs scored.
    band : tuple of float
        ``(low, high)``.
    """

    kept: int
    confident_relevant: int
    confident_irrelevant: int
    saved: int
    pairs: int
    band: tuple[float, float]


@dataclass(frozen=True)
class PoolResult:
    """What a pooling job made (:func:`run_pool_job`), stored as the job's result (a count it lacks reads as 0).

    Attributes
    ----------
    pool : str
        The saved pool's name.
    runs : list of str
        The pooled runs: the stored ones, then the new ones.
    queries, pairs, selected, duplicates : int
        Pooled queries and pairs, pairs selected for annotation, near-duplicates removed.
    missing_documents : int
        Pooled documents that are not in the store.
    prelabels : int
        Span-F1 pre-labels stored.
    statistics : PoolStatisticsSummary
        The runs' contributions and overlap.
    active : ActiveCounts or None
        Active selection's counts (None without active selection).
    """

    pool: str
    runs: list[str] = field(default_factory=list)
    queries: int = 0
    pairs: int = 0
    selected: int = 0
    duplicates: int = 0
    missing_documents: int = 0
    prelabels: int = 0
    statistics: PoolStatisticsSummary = field(default_factory=PoolStatisticsSummary)
    active: ActiveCounts | None = None


@dataclass
class Selected:
    """What :func:`select_pairs` chose: the pairs, their selection scores (or None), the active report."""

    selection: dict[str, list[str]]
    scores: Run | None = None
    active: Any = None


def _finite(value: float) -> float | None:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


def _pool_pairs(pool, corpus: Corpus) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each pool query's pooled documents that have a text, and those texts (what a cross-encoder reads)."""
    text_of = dict(zip(corpus.doc_ids, corpus.texts))
    candidates = {q: [d for d in docs if d in text_of] for q, docs in pool.items()}
    return candidates, {d: text_of[d] for docs in candidates.values() for d in docs}


def rerank_pool(
    store: Store, collection: str, pool, corpus: Corpus, models: Sequence[str], *, progress: Progress | None = None
) -> Run:
    """The pooled pairs scored by the cross-encoder ensemble ``models`` (:func:`core.training.cross_encoder.rerank`)."""
    from core.training.cross_encoder import rerank

    encoders = [cross_encoder_for(reranker_folder(store, collection, m)) for m in models]
    candidates, passages = _pool_pairs(pool, corpus)
    return rerank(encoders, {q: corpus.queries[q] for q in candidates}, candidates, passages, progress=progress)


def pool_probabilities(
    store: Store, collection: str, pool, corpus: Corpus, model: str, *, progress: Progress | None = None
) -> Run:
    """Every pooled pair's relevance probability by one cross-encoder (``CrossEncoder.probabilities``)."""
    encoder = cross_encoder_for(reranker_folder(store, collection, model))
    candidates, passages = _pool_pairs(pool, corpus)
    pairs = [(q, d) for q, docs in candidates.items() for d in docs]
    probabilities = (
        encoder.probabilities([(corpus.queries[q], passages[d]) for q, d in pairs], progress=progress) if pairs else []
    )
    run: Run = {q: {} for q in candidates}
    for (q, d), p in zip(pairs, probabilities):
        run[q][d] = float(p)
    return run


def retrieve_new_runs(store: Store, p: PoolJobParams, specs, reporter) -> NewRuns:
    """Stage 1: every new retriever's run, kept in memory until the pool is saved."""
    new_runs: NewRuns = {}
    for spec in specs:
        name, run, config = retrieve(store, p.collection, spec, k=p.k, split=p.split, progress=reporter.stage_callback)
        new_runs[name] = (run, {"spec": spec.text, "k": p.k, "split": p.split, "config": config})
    return new_runs


def load_runs(store: Store, p: PoolJobParams, new_runs: NewRuns) -> dict[str, Run]:
    """Stage 2: the stored runs to pool, then the new ones."""
    from db.queries import stored_run

    with store.read() as session:
        runs = {name: stored_run(session, p.collection, name) for name in dict.fromkeys(p.runs)}
    runs.update((name, run) for name, (run, _params) in new_runs.items())
    return runs


def pool_runs(p: PoolJobParams, runs: Mapping[str, Run], queries: Sequence[str]):
    """Stage 3: the pool, by the job's method (:func:`core.pooling.pooling_method`)."""
    from core.pooling import pooling_method

    return pooling_method(p.method)(runs, depth=p.depth, size=p.size, options=p.extra, queries=queries)


def select_pairs(store: Store, p: PoolJobParams, pool, runs: Mapping[str, Run], corpus: Corpus, reporter) -> Selected:
    """Stage 4: the pairs to annotate (top N by runs or re-rankers, active selection, or all) and their scores."""
    from core import pooling

    select_by = p.rerankers()
    if p.select and select_by:  # DuReader-retrieval: the pool re-ranked by a cross-encoder ensemble, its top N
        reranked = rerank_pool(
            store, p.collection, pool, corpus, select_by, progress=reporter.stage_callback("re-ranking the pool")
        )
        return Selected(pooling.select_top(pool, [reranked], int(p.select)), pooling.ensemble_scores(pool, [reranked]))
    if p.select:
        return Selected(pooling.select_top(pool, runs, int(p.select)), pooling.ensemble_scores(pool, runs))
    if p.select_method == "active":  # T2Ranking 4.4: only the pairs the model is unsure about
        if p.active_model is None:  # the params' check refuses this first; kept for the type checker's sake
            raise ValueError("select_method 'active' needs active_model")
        probabilities = pool_probabilities(
            store,
            p.collection,
            pool,
            corpus,
            p.active_model,
            progress=reporter.stage_callback("scoring the pool for active selection"),
        )
        low, high = p.band
        selection, active = pooling.select_uncertain(pool, probabilities, low, high)
        scores = {
            q: {d: probabilities[q][d] for d in docs if d in probabilities.get(q, {})} for q, docs in selection.items()
        }
        return Selected(selection, scores, active)
    return Selected(pooling.select_all(pool))


def dedupe_selection(p: PoolJobParams, selection, corpus: Corpus, reporter):
    """Stage 5: the selection without near-duplicates (embedded by the bundled encoder), and the duplicates."""
    if not p.dedupe:
        return selection, None
    from core.pooling import dedupe_pool
    from core.retrieval.encoder import encode_cached

    text_of = dict(zip(corpus.doc_ids, corpus.texts))
    wanted = sorted({d for docs in selection.values() for d in docs if d in text_of})
    vectors = encode_cached(
        encoder_for({}),
        [text_of[d] for d in wanted],
        kind="passage",
        progress=reporter.stage_callback("embedding for near-duplicate removal"),
    )
    lookup = dict(zip(wanted, vectors))
    selection = {q: [d for d in docs if d in lookup] for q, docs in selection.items()}
    return dedupe_pool(selection, lookup, **p.dedupe.options())


def prelabel_pairs(p: PoolJobParams, pool, corpus: Corpus, reporter) -> list[tuple[str, str, float, dict[str, Any]]]:
    """Stage 6: span-F1 pre-labels of the pooled pairs of queries with answers (if the job asks)."""
    from core.prelabel import prelabel

    prelabels: list[tuple[str, str, float, dict[str, Any]]] = []
    if p.prelabel and corpus.answers:
        reporter(0, None, "pre-labelling")
        text_of = dict(zip(corpus.doc_ids, corpus.texts))
        for qid, answers in corpus.answers.items():
            candidates = {d: text_of[d] for d in pool.get(qid, {}) if d in text_of}
            for hit in prelabel(answers, candidates):
                prelabels.append((qid, hit.doc_id, hit.f1, {"answer": hit.answer, "method": "span_f1"}))
    return prelabels


def _stage_runs(store: Store, collection: str, new_runs: Mapping[str, tuple[Run, dict[str, Any]]]) -> list[int]:
    """Write the job's new runs, still invisible (``importing``); returns their ids for the final flip.

    Each earlier staged run's heartbeat is refreshed after every run written, so a long write never
    makes them look like a crashed import's leftovers (:func:`db.importer.drop_stale_imports`).
    """
    from db.importer import ImportConflict, drop_staged_runs, refresh_staged_runs, stage_run

    ids: list[int] = []
    try:
        for name, (run, params) in new_runs.items():
            try:
                ids.append(stage_run(store, collection, name, run, params=params))
            except ImportConflict as exc:  # the import's own advice would send the user to the Import page
                raise ValueError(
                    f"run {name!r} was stored in {collection!r} while this job ran (by another pooling job or an "
                    f"import): pool the stored run (Stored runs to pool), or name the new one, e.g. name=my-{name}"
                ) from exc
            refresh_staged_runs(store, ids)
    except BaseException:
        drop_staged_runs(store, ids)
        raise
    return ids


def save_pool_and_runs(
    store: Store,
    p: PoolJobParams,
    pool,
    runs: Mapping[str, Run],
    new_runs: NewRuns,
    chosen: Selected,
    duplicates,
    prelabels,
    reporter,
):
    """Stage 7: the new runs staged invisible, then made visible in the transaction that saves the pool.

    A failure at any point (even a pool name taken meanwhile) drops the staged runs, so a retry can
    use the same names.  Returns the saved pool's summary and the number of pre-labels stored.
    """
    from db.importer import drop_staged_runs, publish_staged_runs
    from db.pools import save_pool, save_prelabels

    reporter(0, None, "saving the pool")
    as_tuples = {q: {d: [(c.run, c.rank, c.score) for c in cs] for d, cs in docs.items()} for q, docs in pool.items()}
    params = {k: v for k, v in p.to_json().items() if k not in ("collection", "name")} | {"runs": list(runs)}
    if new_runs:
        reporter(0, None, "storing the new runs")
    staged = _stage_runs(store, p.collection, new_runs)
    try:
        with store.write() as session:
            if staged:  # visible in the transaction that saves the pool: both or neither
                publish_staged_runs(session, staged)
            summary = save_pool(
                session,
                p.collection,
                p.name,
                as_tuples,
                method=p.method,
                params=params,
                selection=chosen.selection,
                selection_scores=chosen.scores,
                duplicates=duplicates,
            )
            n_prelabels = save_prelabels(session, p.collection, prelabels) if prelabels else 0
    except BaseException:
        drop_staged_runs(store, staged)
        raise
    return summary, n_prelabels


def pool_result(p: PoolJobParams, pool, runs: Mapping[str, Run], summary, n_prelabels: int, active: Any) -> PoolResult:
    """The job's result: the saved pool's sizes and its statistics (:func:`core.pooling.pool_statistics`)."""
    from core.pooling import pool_statistics

    stats = pool_statistics(pool, runs)
    return PoolResult(
        pool=p.name,
        runs=list(runs),
        queries=summary.queries,
        pairs=summary.pairs,
        selected=summary.selected,
        duplicates=summary.duplicates,
        missing_documents=summary.missing_documents,
        prelabels=n_prelabels,
        statistics=PoolStatisticsSummary(
            runs=stats.runs,
            contributed=stats.contributed,
            unique=stats.unique,
            overlap=[[_finite(v) for v in row] for row in stats.overlap],
        ),
        active=None if active is None else ActiveCounts(**{**active.as_dict(), "band": (active.low, active.high)}),
    )


def run_pool_job(store: Store, info, reporter) -> PoolResult:
    """Retrieve with new retrievers, pool them with stored runs, select, de-duplicate, pre-label, save.

    ``info`` is the job (:class:`db.jobs.JobInfo`) whose parameters are a
    :class:`pooljudge.pool_params.PoolJobParams`.  Every name is checked first
    (:func:`pooljudge.pool_params.check_pool_params`).  The result's ``active`` counts active
    selection; selection scores (the ensemble's normalised scores, or the active model's
    probabilities) are stored with the selection.
    """
    p = info.params_as(PoolJobParams)
    specs = check_pool_params(store, p, job_id=info.id)
    new_runs = retrieve_new_runs(store, p, specs, reporter)
    reporter(0, None, "pooling")
    runs = load_runs(store, p, new_runs)
    corpus = load_corpus(store, p.collection, split=p.split)
    pool = pool_runs(p, runs, sorted(corpus.queries))
    chosen = select_pairs(store, p, pool, runs, corpus, reporter)
    selection, duplicates = dedupe_selection(p, chosen.selection, corpus, reporter)
    chosen.selection = selection
    prelabels = prelabel_pairs(p, pool, corpus, reporter)
    summary, n_prelabels = save_pool_and_runs(store, p, pool, runs, new_runs, chosen, duplicates, prelabels, reporter)
    return pool_result(p, pool, runs, summary, n_prelabels, chosen.active)


def stored_pool_statistics(store: Store, collection: str, pool_name: str):
    """:func:`core.pooling.pool_statistics` of a stored pool, plus its selection size per query."""
    from core import pooling
    from db.pools import load_pool

    with store.read() as session:
        stored, selection = load_pool(session, collection, pool_name)
    # a stored score may be NULL (a run stored without scores); the statistics read runs and ranks only
    pool = {
        q: {
            d: [pooling.Contribution(run, rank, math.nan if score is None else score) for run, rank, score in cs]
            for d, cs in docs.items()
        }
        for q, docs in stored.items()
    }
    run_names = sorted({c[0] for docs in stored.values() for cs in docs.values() for c in cs})
    stats = pooling.pool_statistics(pool, {name: {} for name in run_names})
    return stats, {q: len(docs) for q, docs in selection.items()}
