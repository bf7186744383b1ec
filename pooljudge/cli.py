"""The ``pooljudge`` command line: the app's operations, headless.

Exit status 0 on success, 1 on bad input (the message names ``file:line``),
2 on bad usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from core.errors import FormatError
from pooljudge.cli_lexicon import add_lexicon_parser


def _store(args: argparse.Namespace):
    from db.engine import Store, sqlite_url

    target = args.db
    if target and "://" not in target:
        target = sqlite_url(target)
    return Store(target)


# --------------------------------------------------------------------------- import


def cmd_import(args: argparse.Namespace) -> int:
    from core.limits import allow_large_grades
    from db.importer import check_regular_input, import_path

    check_regular_input(args.path)  # a FIFO is refused before the store is even opened
    store = _store(args)
    with tqdm(unit=" records", desc="reading", disable=args.quiet, mininterval=0.5) as bar:
        current = ["reading"]

        def progress(stage: str, done: int, total: int | None) -> None:
            if stage != current[0]:  # reading, checking (merges), writing: a bar each
                current[0] = stage
                bar.reset(total=total)
                bar.set_description(stage, refresh=False)
            bar.update(done - bar.n)

        # Parsed and validated outside the write lock, then written in short transactions: annotators
        # labelling meanwhile wait at most one chunk; on any error nothing is visible.
        with allow_large_grades(args.allow_large_grades):  # the readers are consumed inside import_path
            summary = import_path(
                store,
                args.format,
                args.path,
                name=args.collection,
                mode="merge" if args.merge else "create",
                qrels_name=args.qrels_name,
                progress=progress,
                allow_unknown_ids=args.allow_unknown_ids,
                level=args.level,
                run_name=args.run_name,
            )
    s = summary.as_dict()
    runs = ", ".join(f"{name!r} ({n} entries)" for name, n in s["runs"].items()) or "none"
    unknown = [
        f"{n} {kind} id{'s' * (n != 1)}"
        for kind, n in (("query", s["unknown_query_ids"]), ("passage", s["unknown_passage_ids"]))
        if n
    ]
    print(
        f"collection {s['collection']!r}: {s['passages_added']} passages, {s['queries_added']} queries, "
        f"{s['qrels_added']} qrels entries added"
        + (
            f" ({s['passages_skipped']} passages, {s['queries_skipped']} queries, {s['qrels_skipped']} qrels "
            "already present)"
            if args.merge
            else ""
        )
        + f"; runs: {runs}; relevance level {s['relevance_level']}"
        + (f"; kept unknown {' and '.join(unknown)}" if unknown else "")
    )
    for note in s["notes"]:
        print(f"note: {note}")
    return 0


# --------------------------------------------------------------------------- export


def _output(path: str | None):
    from core.formats._io import open_text_for_write

    return open_text_for_write(path) if path and path != "-" else _Stdout()


class _Stdout:
    def __enter__(self):
        return sys.stdout

    def __exit__(self, *exc):
        sys.stdout.flush()
        return False


def cmd_export(args: argparse.Namespace) -> int:
    from core.formats import trec
    from db import queries as q

    store = _store(args)
    with store.read() as session:
        _archived_notice(session, args.collection, run=args.run, qrels=args.version)
        if args.what == "qrels":
            # binary only when asked: the graded labels are the data, the level is how measures read them
            level = None if args.level is None else q.check_relevance_level(args.level, "--level")
            qrels = q.load_qrels(session, args.collection, args.version)
            with _output(args.output) as out:
                trec.write_qrels(qrels, out, level=level)
            _report_unresolved(args, session, qrels)
        elif args.what == "run":
            run = q.load_run(session, args.collection, args.run)
            with _output(args.output) as out:
                trec.write_run(run, out, tag=args.tag or args.run, depth=args.depth)
        elif args.what == "judgments":
            with _output(args.output) as out:
                for row in q.iter_judgments(session, args.collection):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
        elif args.what == "beir":
            from core.formats.beir import write_beir

            q.collection_id(session, args.collection)  # raises NotFound naming the known collections
            info = next(c for c in q.list_collections(session) if c.name == args.collection)
            runs = {name: q.load_run(session, args.collection, name) for name in info.runs} if args.with_runs else None
            write_beir(
                args.output,
                q.iter_passages(session, args.collection),
                q.iter_queries(session, args.collection),
                q.load_qrels(session, args.collection, args.version),
                runs,
            )
            print(f"wrote BEIR folder {args.output}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- eval


def cmd_eval(args: argparse.Namespace) -> int:
    from core import metrics

    measures = [metrics.parse_measure(m) for m in (args.measure or ["MAP", "MRR@10", "nDCG@10", "R@100", "P@10"])]
    if args.collection:
        from db import queries as q
        from db.annotation import live_qrels

        with _store(args).read() as session:
            _archived_notice(session, args.collection, run=args.run, qrels=args.qrels)
            if args.qrels == "live":
                qrels = live_qrels(session, args.collection)
            else:
                qrels = q.load_qrels(session, args.collection, None if args.qrels in ("-", "latest") else args.qrels)
            run = q.load_run(session, args.collection, args.run)
            level = q.relevance_level(session, args.collection) if args.level is None else args.level
        if args.level is None and not args.quiet:
            # the pages show the same numbers at this level: say which one the numbers count from
            print(f"binary measures count grade >= {level} as relevant (the collection's level)", file=sys.stderr)
    else:
        from core.formats.trec import load_qrels, load_run
        from core.limits import allow_large_grades
        from db.importer import check_regular_input

        for path in (args.qrels, args.run):
            check_regular_input(path)  # as import: a FIFO would block forever
        with allow_large_grades(args.allow_large_grades):
            qrels = load_qrels(args.qrels)
        run = load_run(args.run)
        level = 1 if args.level is None else args.level  # trec_eval's default
    import warnings

    # evaluate's warnings (e.g. a grade that makes trec_eval allocate gigabytes) as one line, not Python's format
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = metrics.evaluate(qrels, run, measures, level=level, intersection=args.intersection)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if args.format == "json":
        print(metrics.format_json(results, per_query=args.per_query))
    else:
        sys.stdout.write(metrics.format_tsv(results, per_query=args.per_query, digits=args.digits))
    return 0


def cmd_level(args: argparse.Namespace) -> int:
    from db import queries as q

    store = _store(args)
    if args.level is None:
        with store.read() as session:
            print(q.relevance_level(session, args.collection))
        return 0
    with store.write() as session:
        previous = q.set_relevance_level(session, args.collection, args.level)
    print(
        f"relevance level of {args.collection!r}: {previous} -> {args.level} (binary measures count grade >= "
        f"{args.level} as relevant)"
    )
    return 0


# --------------------------------------------------------------------------- retrieval and pooling


class _StageBars:
    """tqdm bars for the stages of a long operation: one bar per stage label."""

    def __init__(self, quiet: bool):
        self.quiet = quiet
        self.bars: dict[str, tqdm] = {}

    def __call__(self, label: str):
        def update(done: int, total: int | None) -> None:
            bar = self.bars.get(label)
            if bar is None:
                bar = self.bars[label] = tqdm(total=total, desc=label, disable=self.quiet, mininterval=0.5)
            if total is not None and bar.total != total:
                bar.total = total
            bar.n = done
            bar.refresh()

        return update

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


def cmd_index(args: argparse.Namespace) -> int:
    from pooljudge.corpus import load_corpus
    from pooljudge.encoders import models_text, resolve_model
    from pooljudge.retrievers import RetrieverSpec, build_retriever, index_retriever

    store = _store(args)
    spec = RetrieverSpec.parse(args.retriever)
    corpus = load_corpus(store, args.collection)
    bars = _StageBars(args.quiet)
    retriever = build_retriever(
        spec, corpus.language, resolve=lambda model: resolve_model(store, args.collection, model)
    )
    index_retriever(retriever, corpus, progress=bars(f"indexing {retriever.name}"))
    bars.close()
    models = models_text(retriever.describe())
    print(
        f"indexed {len(corpus.doc_ids)} passages of {args.collection!r} with {spec.text}"
        + (f" ({models})" if models else "")
        + " (cached for reuse)"
    )
    return 0


def cmd_retrieve(args: argparse.Namespace) -> int:
    from core.formats.trec import write_run
    from db.importer import store_run
    from pooljudge.encoders import models_text
    from pooljudge.pipeline import check_new_run_name, retrieve
    from pooljudge.retrievers import RetrieverSpec

    store = _store(args)
    spec = RetrieverSpec.parse(args.retriever)
    if not args.no_store:  # a taken or bad name is refused before minutes of indexing, not after
        check_new_run_name(store, args.collection, args.name or spec.default_name())
    bars = _StageBars(args.quiet)
    name, run, config = retrieve(
        store, args.collection, spec, k=args.hits, name=args.name, split=args.split, progress=bars
    )
    bars.close()
    if args.output:
        with _output(args.output) as out:
            write_run(run, out, tag=name)
    if not args.no_store:
        store_run(
            store,
            args.collection,
            name,
            run,
            params={"spec": spec.text, "k": args.hits, "split": args.split, "config": config},
        )
    models = models_text(config)
    print(
        f"run {name!r}: {sum(len(d) for d in run.values())} hits for {len(run)} queries"
        + ("" if args.no_store else f", stored in {args.collection!r}")
        + (f"; {models}" if models else ""),
        file=sys.stderr,
    )
    return 0


def _pool_params(args: argparse.Namespace):
    """The pooling job's :class:`pooljudge.pool_params.PoolJobParams` from the command line."""
    from pooljudge.pool_params import PoolJobParams

    dedupe = None
    if args.dedupe:
        method, _, value = args.dedupe.partition(":")
        if method not in ("similarity", "ward") or not value:
            raise ValueError("--dedupe must be similarity:THRESHOLD or ward:DISTANCE, e.g. similarity:0.95")
        key = "threshold" if method == "similarity" else "distance_threshold"
        dedupe = {"method": method, key: float(value)}
    return PoolJobParams(
        collection=args.collection,
        name=args.name,
        retrievers=args.retriever or [],
        runs=args.run or [],
        k=args.hits,
        method=args.method,
        depth=args.depth,
        size=args.size,
        select=args.select,
        dedupe=dedupe,
        prelabel=args.prelabel,
        split=args.split,
        **_selection_params(args),
    )


def _selection_params(args: argparse.Namespace) -> dict:
    """--select-model / --select-method active --active-model --active-band as pooling job parameters."""
    params: dict = {}
    if args.select_model:
        params["select_by"] = args.select_model
    if args.select_method == "active":
        params |= {"select_method": "active", "active_model": args.active_model}
        if args.active_band:
            try:
                low, high = (float(v) for v in args.active_band.split(","))
            except ValueError:
                raise ValueError(f"--active-band must be LOW,HIGH, e.g. 0.1,0.9; got {args.active_band!r}") from None
            params["active_band"] = [low, high]
    elif args.active_model or args.active_band:
        raise ValueError("--active-model and --active-band go with --select-method active")
    return params


def cmd_pool(args: argparse.Namespace) -> int:
    from db.jobs import create_job
    from db.queries import collection_id
    from pooljudge.jobs import run_job
    from pooljudge.pool_params import check_pool_params

    store = _store(args)
    params = _pool_params(args)
    check_pool_params(store, params)  # every name, before a job is queued (the job checks them again)
    with store.write() as session:
        job_id = create_job(session, "pool", params.as_dict(), collection_id=collection_id(session, args.collection))
    result = run_job(store, job_id, echo=None if args.quiet else (lambda m: print(m, file=sys.stderr)))
    print(
        f"pool {result['pool']!r} (job {job_id}): {result['pairs']} pairs over {result['queries']} queries from "
        f"{', '.join(result['runs'])}; {result['selected']} selected for annotation, {result['duplicates']} near-duplicates "
        f"removed, {result['prelabels']} pre-labels"
        + (
            f"; {result['missing_documents']} pooled documents are not in the store"
            if result["missing_documents"]
            else ""
        )
    )
    if "active" in result:
        a = result["active"]
        print(
            f"active selection: kept {a['kept']} of {a['pairs']} pairs, saved {a['saved']} "
            f"({a['confident_relevant']} confidently relevant, {a['confident_irrelevant']} confidently not; "
            f"band [{a['band'][0]:g}, {a['band'][1]:g}])"
        )
    return 0


def cmd_job(args: argparse.Namespace) -> int:
    from db.jobs import list_jobs
    from pooljudge.jobs import run_job

    store = _store(args)
    if args.action == "run":
        if args.id is None:
            raise ValueError("job run needs a job id")
        run_job(store, args.id)
        return 0
    with store.read() as session:
        for job in list_jobs(session, limit=args.limit):
            state = "stale" if job.stale else job.status
            print(f"{job.id}\t{job.kind}\t{state}\t{job.done}/{job.total or '?'}\t{job.message}\t{job.error or ''}")
    return 0


# --------------------------------------------------------------------------- training


def _train_params(args: argparse.Namespace) -> dict:
    """The ``train`` job's JSON parameters from the command line (checked by pooljudge.training.TrainParams)."""
    import getpass

    denoise = None
    if args.denoise is not None:
        try:
            denoise = [float(x) for x in args.denoise.split(",")]
        except ValueError:
            raise ValueError(
                f"--denoise must be two probabilities LOW,HIGH, e.g. 0.1,0.9; got {args.denoise!r}"
            ) from None
    teacher_prior = args.teacher_prior
    if teacher_prior is not None and teacher_prior != "auto":
        try:
            teacher_prior = float(teacher_prior)
        except ValueError:
            raise ValueError(f"--teacher-prior must be a weight >= 0 or auto, got {args.teacher_prior!r}") from None
    config = {
        key: getattr(args, key)
        for key in (
            "epochs",
            "batch_size",
            "learning_rate",
            "max_length",
            "negatives",
            "max_steps",
            "seed",
            "device",
            "eval_every",
            "patience",
        )
        if getattr(args, key) is not None
    }
    return {
        "collection": args.collection,
        "name": args.name,
        "kind": args.kind,
        "split": args.split,
        "eval_split": args.eval_split,
        "held_out": args.held_out,
        "labels": args.labels,
        "candidates": args.candidates,
        "depth": args.depth,
        "base_model": args.base,
        "cross_base": args.cross_base,
        "loss": args.loss,
        "denoise": denoise,
        "teacher_prior": teacher_prior,
        "config": config,
        "created_by": f"{getpass.getuser()} (cli)",
    }


def cmd_train(args: argparse.Namespace) -> int:
    from db.jobs import create_job
    from pooljudge.jobs import run_job
    from pooljudge.training import TrainParams, check_train_params

    store = _store(args)
    params = TrainParams.from_params(_train_params(args)).as_params()
    checked = check_train_params(store, params)  # name, folder, labels, candidates, bases: before a job is queued
    with store.write() as session:
        job_id = create_job(session, "train", params, collection_id=checked.collection_id)
    result = run_job(store, job_id, echo=None if args.quiet else (lambda m: print(m, file=sys.stderr)))
    measures = (result.get("best") or {}).get("eval") or {}
    shown = ", ".join(f"{k} {v:.4f}" for k, v in measures.items() if isinstance(v, (int, float))) or "no evaluation"
    print(
        f"{result['kind']} {result['model']!r} (job {job_id}): best held-out {shown} "
        f"(step {(result.get('best') or {}).get('step', '?')}) on {result['held_out_queries']} queries, trained on "
        f"{result['train_queries']} in {result['seconds']:.1f} s ({result['pairs_per_second']:.1f} pairs/s); "
        f"saved to {result['path']}"
    )
    if result.get("interpolate"):  # 0: the re-ranker alone was best
        print(
            f"blend in the first stage at the weight the held-out queries chose: "
            f"rerank:model={result['model']},interpolate={result['interpolate']:g}"
        )
    if result.get("teacher_prior") is not None:
        print(f"the teacher's first-stage weight: {result['teacher_prior']:g}")
    if result.get("spec"):  # the default kind: what the held-out queries chose, and why
        _print_default_system(result)
    return 0


def _print_default_system(result: dict) -> None:
    """The default kind's choice: every candidate's held-out nDCG@10, the reason, the spec to retrieve with."""
    scores = ", ".join(f"{k} {v:.4f}" for k, v in (result.get("dev_nDCG@10") or {}).items())
    print(f"held-out (dev) nDCG@10 of the candidates: {scores}")
    print(result["reason"])
    print(f"the default system: {result['system_label']}; retrieve or pool with -r '{result['spec']}'")


def cmd_models(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.trained_models import list_models

    with _store(args).read() as session:
        models = list_models(session, args.collection)
    if not models:
        print("no trained models (train one with `pooljudge train`)")
    for m in models:  # names are checked when stored, but print them escaped as every listing does
        ndcg = m.best_eval.get("nDCG@10")
        print(
            f"{display_name(m.name)}\t{m.kind}\t{display_name(m.collection)}\t"
            f"nDCG@10 {'-' if ndcg is None else f'{ndcg:.4f}'}\t{display_name(m.path)}"
        )
    return 0


# --------------------------------------------------------------------------- annotation


def cmd_assign(args: argparse.Namespace) -> int:
    from db.annotation import create_assignments

    annotators = [a.strip() for a in args.annotators.split(",")] if args.annotators else None
    with _store(args).write() as session:
        summary = create_assignments(
            session,
            args.collection,
            args.pool,
            annotators=annotators,
            per_pair=args.per_pair,
            seed=args.seed,
            package_size=args.package_size,
            group_by_query=args.group_by_query,
            scale="binary" if args.binary else "graded",
        )
    loads = ", ".join(f"{name} {n}" for name, n in sorted(summary.per_annotator.items())) or "nothing new"
    print(
        f"{summary.pairs} selected pairs; {summary.tasks} new assignments ({loads}) in {len(summary.packages)} packages"
    )
    return 0


def _leakage_lexical_threshold(args: argparse.Namespace) -> float:
    """Check the thresholds before minutes of encoding, not after; the lexical one with its default."""
    from core.analysis import LEXICAL_LEAKAGE_THRESHOLD

    if not -1.0 <= args.threshold <= 1.0:
        raise ValueError(f"threshold must be a number in [-1, 1], got {args.threshold}")
    lexical_threshold = LEXICAL_LEAKAGE_THRESHOLD if args.lexical_threshold is None else args.lexical_threshold
    if not 0.0 < lexical_threshold <= 1.0:
        raise ValueError(f"--lexical-threshold must be a number in (0, 1], got {lexical_threshold}")
    return float(lexical_threshold)


def _leakage_vectors(args: argparse.Namespace, queries: list, eval_splits: Sequence[str], chinese: str):
    """One embedding row per query; zeros for the queries the encoder does not compare (None if it compares none).

    Only the queries the encoder compares are encoded: no model is loaded for an all-Chinese collection.
    """
    import numpy as np

    from core.leakage import is_chinese
    from pooljudge.encoders import encoder_for, query_vectors

    encoded = [
        i
        for i, q in enumerate(queries)
        if (q.split == args.train_split or q.split in eval_splits) and not (chinese == "char-bigram" and is_chinese(q))
    ]
    if not encoded:
        return None
    bars = _StageBars(args.quiet)
    found = query_vectors(
        [queries[i] for i in encoded],
        encoder_for({"model": args.model} if args.model else {}),
        progress=bars("encoding queries"),
    )
    bars.close()
    vectors = np.zeros((len(queries), found.shape[1]), dtype=found.dtype)
    vectors[encoded] = found
    return vectors


def _write_leaks(args: argparse.Namespace, leaks: list[dict]) -> list[str]:
    """Write the matches (or only the flagged training ids) to ``--output``; return the flagged ids."""
    flagged = sorted({row["train_id"] for row in leaks})
    with _output(args.output) as out:
        if args.ids_only:
            out.writelines(f"{qid}\n" for qid in flagged)
            return flagged
        out.write("train_id\teval_id\teval_split\tsimilarity\ttrain_query\teval_query\tmethod\n")
        for row in leaks:
            texts = [" ".join(row[k].split()) for k in ("train_query", "eval_query")]  # one line per match
            out.write(
                f"{row['train_id']}\t{row['eval_id']}\t{row['eval_split']}\t{row['similarity']:.4f}\t"
                f"{texts[0]}\t{texts[1]}\t{row['method']}\n"
            )
    return flagged


def cmd_leakage(args: argparse.Namespace) -> int:
    from core.leakage import chinese_leakage_method, leakage_method_text, leaked_training_queries
    from db.queries import iter_queries

    lexical_threshold = _leakage_lexical_threshold(args)
    chinese = chinese_leakage_method(bool(args.model)) if args.chinese == "auto" else args.chinese
    store = _store(args)
    with store.read() as session:
        queries = list(iter_queries(session, args.collection))
    eval_splits = args.eval_split or ("dev", "test")
    leaks = leaked_training_queries(
        queries,
        _leakage_vectors(args, queries, eval_splits, chinese),
        threshold=args.threshold,
        train_split=args.train_split,
        eval_splits=eval_splits,
        chinese=chinese,
        lexical_threshold=lexical_threshold,
    )
    flagged = _write_leaks(args, leaks)
    n_train = sum(q.split == args.train_split for q in queries)
    model_name = Path(args.model).name if args.model else "all-MiniLM-L6-v2"
    print(
        f"{len(flagged)} of {n_train} {args.train_split} queries have a dev/test query at or above the threshold "
        f"({len(leaks)} matches); "
        + leakage_method_text(
            queries,
            chinese=chinese,
            threshold=args.threshold,
            lexical_threshold=lexical_threshold,
            model_name=model_name,
            train_split=args.train_split,
        ),
        file=sys.stderr,
    )
    return 0


def _split_list(text: str | None, option: str) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise ValueError(f"{option}: expected comma-separated names, got {text!r}")
    return items


def _simulation_options(args: argparse.Namespace) -> tuple[list[str], tuple[float, float] | None]:
    """The checked ``--strategies`` and ``--band`` (and the positive counts), before any work starts."""
    from core.simulation import ACTIVE_STRATEGIES, STRATEGIES

    strategies = _split_list(args.strategies, "--strategies") or []  # the option has a default: never None
    unknown = [s for s in strategies if s not in STRATEGIES]
    if unknown:
        raise ValueError(f"--strategies: unknown {', '.join(map(repr, unknown))}; known: {', '.join(STRATEGIES)}")
    active = [s for s in strategies if s in ACTIVE_STRATEGIES]
    if active and not args.model:
        raise ValueError(
            f"--model: the {active[0]} strategy needs a cross-encoder (a registered model name or a folder)"
        )
    band = None
    if args.band is not None:
        try:
            values = tuple(float(v) for v in args.band.split(","))
        except ValueError:
            values = ()
        if len(values) != 2:
            raise ValueError(f"--band must be two probabilities LOW,HIGH, e.g. 0.1,0.9; got {args.band!r}")
        band = (values[0], values[1])
    for option, value in (
        ("--depth", args.depth),
        ("--batch", args.batch),
        ("--resamples", args.resamples),
        ("--retrain-steps", args.retrain_steps),
        ("--retrain-batch", args.retrain_batch),
        ("--max-length", args.max_length),
    ):
        if value < 1:
            raise ValueError(f"{option} must be a positive integer, got {value}")
    if not args.retrain_lr > 0:
        raise ValueError(f"--retrain-lr must be a positive number, got {args.retrain_lr}")
    return strategies, band


def _print_simulation(args: argparse.Namespace, result) -> None:
    """The summary on stdout: Kendall tau per batch and strategy, pairs to reach the target, the model's savings."""
    from core.simulation import TAU_TARGET

    print(
        f"{args.collection}: {result.queries} judged queries, {result.pool_pairs} pooled pairs (depth "
        f"{result.depth}), {len(result.runs)} runs, {result.measure}, batches of {result.batch_size}; "
        f"Kendall tau against all labels:"
    )
    columns = result.strategies
    taus = {s: result.taus(s) for s in columns}
    print("\t".join(["batch", "pairs", *columns]))
    for b in range(max(len(t) for t in taus.values())):
        pairs = max(t[b][0] for t in taus.values() if b < len(t))
        cells = ["" if b >= len(taus[s]) else f"{taus[s][b][1]:.4f}" for s in columns]
        print("\t".join([str(b + 1), str(pairs), *cells]))
    reached = result.pairs_to_reach(TAU_TARGET)
    print(
        f"pairs to reach tau >= {TAU_TARGET}: "
        + ", ".join(f"{s} {'never' if n is None else n}" for s, n in reached.items())
    )
    _print_recall(result)
    for s, saved in result.saved.items():
        print(f"{s}: {saved} pairs labelled by the model instead of annotators ({result.model_wrong[s]} of them wrong)")
    for s, rounds in result.training_rounds.items():
        print(f"{s}: the model was fine-tuned {rounds} times (after every batch but the last; rule {result.rule})")


def _print_recall(result) -> None:
    """Recall of the pool's relevant pairs per batch and strategy, and the labels spent to find 90% of them."""
    print(f"recall of the {result.pool_relevant} relevant pooled pairs (found / relevant):")
    columns = result.strategies
    recalls = {s: result.recalls(s) for s in columns}
    print("\t".join(["batch", "pairs", *columns]))
    for b in range(max(len(r) for r in recalls.values())):
        pairs = max(r[b][0] for r in recalls.values() if b < len(r))
        cells = ["" if b >= len(recalls[s]) else f"{recalls[s][b][1]:.4f}" for s in columns]
        print("\t".join([str(b + 1), str(pairs), *cells]))
    found = result.pairs_to_recall(0.9)
    print("pairs to find 90% of them: " + ", ".join(f"{s} {'never' if n is None else n}" for s, n in found.items()))


def cmd_simulate_labelling(args: argparse.Namespace) -> int:
    from core.simulation import ACTIVE_STRATEGIES
    from pooljudge.simulation import RetrainSettings, simulate_collection

    strategies, band = _simulation_options(args)
    retrain = RetrainSettings(
        steps=args.retrain_steps,
        batch_size=args.retrain_batch,
        learning_rate=args.retrain_lr,
        max_length=args.max_length,
        from_base=args.from_base,
    )
    bar = tqdm(desc="simulating batches", disable=args.quiet, mininterval=0.5)
    model_bar = tqdm(
        desc="scoring pairs (active)",
        disable=args.quiet or not any(s in ACTIVE_STRATEGIES for s in strategies),
        mininterval=0.5,
    )

    def update(target: tqdm, done: int, total: int) -> None:
        target.total = total
        target.n = done
        target.refresh()

    try:
        result = simulate_collection(
            _store(args),
            args.collection,
            qrels=args.qrels,
            runs=_split_list(args.runs, "--runs"),
            depth=args.depth,
            batch_size=args.batch,
            strategies=strategies,
            model=args.model,
            band=band,
            rule=args.rule,
            retrain=retrain,
            measure=args.measure,
            level=args.level,
            seed=args.seed,
            resamples=args.resamples,
            progress=lambda d, t: update(bar, d, t),
            model_progress=lambda d, t: update(model_bar, d, t),
        )
    finally:
        model_bar.close()
        bar.close()
    if args.output:
        with _output(args.output) as out:
            out.write(result.to_csv())
    _print_simulation(args, result)
    if args.output and args.output != "-":
        print(f"wrote {len(result.rows) * len(result.runs)} rows to {args.output}", file=sys.stderr)
    return 0


def cmd_freeze(args: argparse.Namespace) -> int:
    from db.annotation import freeze_qrels

    with _store(args).write() as session:
        n = freeze_qrels(session, args.collection, args.name, note=args.note or "")
    print(f"qrels version {args.name!r}: {n} final labels")
    with _store(args).read() as session:
        _report_unresolved(args, session, None)
    return 0


def _report_unresolved(args: argparse.Namespace, session, qrels) -> None:
    """On stderr: the judged pairs left out (no final label), by reason; listed or median-labelled when asked."""
    from pooljudge.unresolved_report import report

    kept = sum(len(docs) for docs in qrels.values()) if qrels is not None else None
    if kept is None:
        from db.annotation import live_qrels

        kept = sum(len(docs) for docs in live_qrels(session, args.collection).values())
    report(
        session,
        args.collection,
        qrels,
        kept,
        listing=args.list_unresolved,
        median_path=getattr(args, "unresolved_median", None),
    )


def _archived_notice(session, collection: str, *, run: str | None = None, qrels: str | None = None) -> None:
    """A note on stderr when the collection (or the run or qrels version) read by name is archived."""
    from db.archive_state import archived_note

    note = archived_note(session, collection, run=run, qrels=qrels)
    if note:
        print(f"note: {note}", file=sys.stderr)


# --------------------------------------------------------------------------- users


def cmd_user(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.users import add_user, list_users, set_active, set_password, set_role

    store = _store(args)
    if args.action == "list":
        with store.read() as session:
            for account in list_users(session):
                # names stored before they were checked may hold newlines or escape codes
                print(f"{display_name(account.username)}\t{account.role}\t{'active' if account.active else 'disabled'}")
        return 0
    if not args.username:
        raise ValueError(f"user {args.action} needs a username")
    if args.action == "add":  # a bad name is refused before the password is asked for, twice
        from core.names import USERNAME_MAX_CHARS, check_name

        check_name(args.username, "username", limit=USERNAME_MAX_CHARS)
    with store.write() as session:
        if args.action == "add":
            role = args.role or "annotator"
            added = add_user(session, args.username, _password(), role)
            print(f"added {role} {added.username!r}")  # the stored (NFKC) name, the one to sign in with
        elif args.action == "passwd":
            set_password(session, args.username, _password())
            print(f"password of {args.username!r} changed; its sessions are signed out")
        elif args.action == "role":
            if not args.role:  # no default here: a forgotten --role must not demote anyone
                raise ValueError("user role needs --role")
            set_role(session, args.username, args.role)
            print(f"{args.username!r} is now {args.role}; its sessions are signed out")
        else:
            set_active(session, args.username, args.action == "enable")
            print(
                f"{args.action}d {args.username!r}"
                + ("; its sessions are signed out" if args.action == "disable" else "")
            )
    return 0


def _password() -> str:
    """The new password: $POOLJUDGE_PASSWORD (for scripts), else asked twice on the terminal."""
    import getpass

    password = os.environ.get("POOLJUDGE_PASSWORD")
    if password:
        return password
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise ValueError("the passwords differ")
    return first


# --------------------------------------------------------------------------- archive, restore, rename


def cmd_archive(args: argparse.Namespace) -> int:
    import getpass

    from core.names import display_name
    from db.archive import archive, rename, restore

    label = "qrels version" if args.kind == "qrels" else args.kind
    with _store(args).write() as session:
        if args.command == "archive":
            # no account signs a CLI call: the system user is recorded, marked as such
            item = archive(session, args.kind, args.name, collection=args.collection, by=f"{getpass.getuser()} (cli)")
            print(
                f"archived {label} '{display_name(item.name)}' (hidden, nothing deleted; undo with `pooljudge restore`)"
            )
        elif args.command == "restore":
            item = restore(session, args.kind, args.name, collection=args.collection)
            print(f"restored {label} '{display_name(item.name)}'")
        else:
            rename(session, args.kind, args.name, args.new, collection=args.collection)
            print(f"renamed {label} '{display_name(args.name)}' to '{display_name(args.new)}'")
    return 0


def cmd_archived(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.archive import list_items

    with _store(args).read() as session:
        items = list_items(session, archived_only=True)
    if not items:
        print("nothing is archived")
    for i in items:  # stored names may hold control characters: printed escaped
        print(
            f"{i.kind}\t{display_name(i.collection or i.name)}\t{display_name(i.name)}\t"
            f"{display_name(i.archived_by or '')}\t{i.archived_at:%Y-%m-%d %H:%M} UTC"
        )
    return 0


# --------------------------------------------------------------------------- small commands


def cmd_collections(args: argparse.Namespace) -> int:
    from core.names import display_name
    from db.queries import list_collections

    with _store(args).read() as session:
        rows = list_collections(session)
    if not rows:
        print("no collections (import one with `pooljudge import`, or load the demo with `pooljudge demo`)")
    for c in rows:
        # names stored before they were checked may hold newlines or terminal escape codes: never print them raw
        runs = ", ".join(display_name(r) for r in c.runs)
        versions = ", ".join(display_name(v) for v in c.qrels_versions)
        print(
            f"{display_name(c.name)}\t{c.language or '?'}\t{c.passages} passages\t{c.queries} queries\t"
            f"level {c.relevance_level}\truns: {runs or '-'}\tqrels: {versions or '-'}"
        )
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from pooljudge.seed import DEMO_NAME, ensure_demo

    store = _store(args)
    loaded = ensure_demo(store, force=True)
    print(f"demo collection {DEMO_NAME!r} " + ("loaded" if loaded else "already present"))
    return 0


def cmd_formats(_args: argparse.Namespace) -> int:
    from core.formats import FORMATS

    for spec in FORMATS.values():
        print(f"{spec.name:12s} {spec.help}")
    return 0


def cmd_db(args: argparse.Namespace) -> int:
    store = _store(args)  # upgrading is part of opening the store
    print(f"store at {store.engine.url.render_as_string(hide_password=True)} is at the newest schema")
    return 0


# --------------------------------------------------------------------------- parser


RETRIEVER_HELP = (
    "retriever spec: bm25, bm25:chinese=bigram,k1=1.2, bm25:backend=rank_bm25, dense, "
    "dense:model=PATH,pooling=cls,index=hnsw, hybrid:fusion=rrf, "
    "rerank:model=PATH,first=bm25,depth=100 (a cross-encoder re-ranking the first stage; "
    "model=PATH1;PATH2 an ensemble; a model may be a registered model's name)"
)


def _add_import_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `import` command: a collection, qrels or runs."""
    from core.formats import FORMATS

    p = sub.add_parser("import", help="import a collection, qrels or runs (all or nothing, never blocking annotators)")
    p.add_argument("path", type=Path, help="file or folder to read (plain or .gz)")
    p.add_argument(
        "--format", "-f", required=True, choices=sorted(FORMATS), help="input format (see `pooljudge formats`)"
    )
    p.add_argument("--collection", "-c", required=True, help="collection to create (or merge into with --merge)")
    p.add_argument(
        "--merge",
        action="store_true",
        help="add to an existing collection: new records are added, identical ones skipped, conflicting ones refused",
    )
    p.add_argument(
        "--qrels-name", default="imported", help="qrels version that receives the judgments (default: imported)"
    )
    p.add_argument("--run-name", help="name of the run of a single-run file (default: the file name without extension)")
    p.add_argument(
        "--allow-unknown-ids",
        action="store_true",
        help="accept qrels and run entries naming queries or passages the collection lacks (TREC qrels may "
        "judge documents outside the corpus); by default they are refused, with their counts",
    )
    p.add_argument("--allow-large-grades", action="store_true", help=_LARGE_GRADES_HELP)
    p.add_argument(
        "--level",
        type=int,
        help="relevance level of the new collection: binary measures count grade >= "
        "LEVEL as relevant (default: 1 when the qrels are binary 0/1, else 2)",
    )
    p.set_defaults(func=cmd_import)


def _add_export_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `export` command: qrels, a run, judgments or a BEIR folder."""
    p = sub.add_parser("export", help="export qrels, a run, judgments or a BEIR folder")
    p.add_argument("what", choices=["qrels", "run", "judgments", "beir"])
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--output", "-o", help="output file or folder ('-' or omitted: stdout; required for beir)")
    p.add_argument("--version", help="qrels version (default: the newest)")
    p.add_argument(
        "--level",
        type=int,
        help="qrels: write binary labels, 1 where grade >= LEVEL (default: the "
        "graded labels as stored; `pooljudge level -c NAME` prints the level the measures use)",
    )
    p.add_argument("--run", help="run: the run's name")
    p.add_argument("--tag", help="run: the tag column (default: the run name)")
    p.add_argument("--depth", type=int, help="run: keep the top DEPTH per query")
    p.add_argument("--with-runs", action="store_true", help="beir: also write runs/*.trec")
    _add_unresolved_flags(p)
    p.add_argument(
        "--unresolved-median",
        metavar="PATH",
        help="qrels: also write the judged pairs without a final label, each with the lower median of its labels "
        "so far, to this separate qrels file (the qrels written above keep resolved pairs only)",
    )
    p.set_defaults(func=cmd_export)


def _add_unresolved_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--list-unresolved",
        action="store_true",
        help="list the judged pairs without a final label on stderr (query id, doc id, reason, labels, detail)",
    )


_LARGE_GRADES_HELP = (
    "read qrels grades beyond -1000..1000 (by default refused at file:line: such a grade is usually a score or an "
    "id in the grade column); eval still refuses grades whose levels trec_eval could not allocate"
)


def _add_eval_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `eval` command: a run against qrels, as trec_eval."""
    p = sub.add_parser("eval", help="evaluate a run against qrels exactly as trec_eval would")
    p.add_argument(
        "qrels",
        help="TREC qrels file (or, with --collection, a qrels version name, 'latest', "
        "or 'live' for the current final labels)",
    )
    p.add_argument("run", help="TREC run file (or, with --collection, a run name)")
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        help="MAP, MRR@k, RR, P@k, R@k, nDCG@k, nDCG_exp@k, Rprec, Success@k (= Accuracy@k), Judged@k; repeatable",
    )
    p.add_argument(
        "--level",
        type=int,
        help="binary measures count grade >= LEVEL as relevant (default: with "
        "--collection the collection's level, see `pooljudge level`; for files 1, as trec_eval; nDCG "
        "ignores it)",
    )
    # -p, not -q: the top-level -q is --quiet, and `pooljudge -q eval ... -q` read as two meanings of one flag
    p.add_argument("--per-query", "-p", action="store_true", help="also print one line per query")
    p.add_argument(
        "--intersection",
        action="store_true",
        help="evaluate only queries present in both qrels and run "
        "(default: qrels queries missing from the run score 0)",
    )
    p.add_argument("--format", choices=["tsv", "json"], default="tsv")
    p.add_argument("--digits", type=int, default=4, help="tsv: decimals (default 4, like trec_eval)")
    p.add_argument("--collection", "-c", help="read qrels and run from the store instead of files")
    p.add_argument("--allow-large-grades", action="store_true", help=_LARGE_GRADES_HELP)
    p.set_defaults(func=cmd_eval)


def _add_level_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `level` command: show or set a collection's relevance level."""
    p = sub.add_parser("level", help="show or set a collection's relevance level (the default of eval and the pages)")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument(
        "level",
        nargs="?",
        type=int,
        help="the new level: binary measures count grade >= LEVEL as "
        "relevant (TREC-style binary qrels 1, 0-3 graded 2); omitted: print the current one",
    )
    p.set_defaults(func=cmd_level)


def _add_index_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `index` command: build a retriever's index."""
    p = sub.add_parser("index", help="build (and cache) a retriever's index over a collection")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--retriever", "-r", default="bm25", help=RETRIEVER_HELP)
    p.set_defaults(func=cmd_index)


def _add_retrieve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `retrieve` command: run a retriever over the queries."""
    p = sub.add_parser("retrieve", help="run a retriever over a collection's queries")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--retriever", "-r", default="bm25", help=RETRIEVER_HELP)
    p.add_argument("--hits", type=int, default=100, help="hits per query (default 100)")
    p.add_argument("--name", help="run name (default derived from the retriever)")
    p.add_argument("--split", help="only the queries of this split")
    p.add_argument("--output", "-o", help="also write the run as a TREC file")
    p.add_argument("--no-store", action="store_true", help="do not store the run in the collection")
    p.set_defaults(func=cmd_retrieve)


def _add_pool_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `pool` command: pooling, selection, de-duplication and pre-labels."""
    from core.pooling import POOLING_METHODS  # read when the parser is built: a registered method is a choice

    p = sub.add_parser("pool", help="pool runs (and new retrievers) into pairs to annotate, with provenance")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--name", required=True, help="pool name")
    p.add_argument("--retriever", "-r", action="append", help=RETRIEVER_HELP + "; repeatable")
    p.add_argument("--run", action="append", help="a stored run to pool; repeatable")
    p.add_argument("--hits", type=int, default=100, help="hits per new retriever (default 100)")
    p.add_argument(
        "--method",
        choices=list(POOLING_METHODS),
        default="depth",
        help="depth: top-k union (TREC); take: Take@N, a budget of --size per query filled rank by rank; "
        "rrf/rbp: the --size best documents by fused priority",
    )
    p.add_argument("--depth", type=int, default=50, help="depth pooling: top DEPTH of every run (default 50)")
    p.add_argument("--size", type=int, help="take/rrf/rbp pooling: pool size per query (default: --depth)")
    p.add_argument(
        "--select",
        type=int,
        help="keep the top N per query by the ensemble of the pooled runs (default: annotate everything)",
    )
    p.add_argument(
        "--select-model",
        action="append",
        metavar="MODEL",
        help="with --select: rank the pool by this cross-encoder (folder or registered name) instead of "
        "the runs; repeatable, an ensemble of min-max normalised scores (DuReader-retrieval)",
    )
    p.add_argument(
        "--select-method",
        choices=["top", "active"],
        default="top",
        help="active: annotate only the pairs --active-model is unsure about (T2Ranking 4.4)",
    )
    p.add_argument(
        "--active-model", metavar="MODEL", help="the cross-encoder of active selection (folder or registered name)"
    )
    p.add_argument(
        "--active-band",
        metavar="LOW,HIGH",
        help="active selection keeps pairs with probability in [LOW, HIGH] (default 0.1,0.9)",
    )
    p.add_argument("--dedupe", help="near-duplicate removal: similarity:0.95 (cosine) or ward:0.3 (distance)")
    p.add_argument("--prelabel", action="store_true", help="span-F1 pre-labels for queries with answers")
    p.add_argument("--split", help="only the queries of this split")
    p.set_defaults(func=cmd_pool)


def _add_job_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `job` command: background jobs."""
    p = sub.add_parser("job", help="background jobs")
    p.add_argument("action", choices=["run", "list"])
    p.add_argument("id", nargs="?", type=int)
    p.add_argument("--limit", type=int, default=20)
    p.set_defaults(func=cmd_job)


def _add_rocketqav2_arguments(p: argparse.ArgumentParser) -> None:
    """The `train` options only RocketQAv2 reads: its cross-encoder's start, denoising and teacher prior."""
    p.add_argument("--cross-base", help="rocketqav2: the cross-encoder's starting model (name or folder)")
    p.add_argument(
        "--denoise",
        help="rocketqav2: LOW,HIGH cross-encoder probabilities: unlabelled candidates <= LOW "
        "stay negatives, >= HIGH become positives, the rest are dropped",
    )
    p.add_argument(
        "--teacher-prior",
        metavar="W|auto",
        help="rocketqav2: the distillation target is the cross-encoder's logits plus W times the candidates' "
        "min-max normalised first-stage scores; auto chooses W on the held-out queries with --cross-base "
        "(a trained cross-encoder); default: the cross-encoder alone, as in the paper",
    )


def _add_train_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `train` command: a re-ranker or dense encoder."""
    p = sub.add_parser("train", help="train a re-ranker or dense encoder on a collection's labels (a job, run here)")
    p.add_argument(
        "kind",
        nargs="?",
        default="default",
        choices=["default", "cross-encoder", "dual-encoder", "rocketqav2"],
        help="default (the default): fine-tune the base encoder, then offer the best on the held-out queries of "
        "BM25, base dense, their hybrid and the fine-tuned encoder (alone or with BM25); or one trainer",
    )
    p.add_argument("--collection", "-c", required=True)
    p.add_argument(
        "--name", required=True, help="the model's name in the collection (`pooljudge models`; rerank:model=NAME)"
    )
    p.add_argument("--split", help="training queries' split (default train)")
    held = p.add_mutually_exclusive_group()
    held.add_argument("--eval-split", help="held-out queries' split (default dev)")
    held.add_argument(
        "--held-out",
        type=float,
        help="hold out this share of the --split queries instead (seeded); "
        "the default, 0.2, when all queries are in one split",
    )
    p.add_argument(
        "--labels",
        help="'final' (the annotation's final labels) or a qrels version name (default: the "
        "final labels if any, else the newest version)",
    )
    p.add_argument(
        "--candidates",
        help="hard negatives from a stored run (its name) or a retriever spec (default bm25): " + RETRIEVER_HELP,
    )
    p.add_argument("--depth", type=int, help="candidates per query (default 100)")
    p.add_argument(
        "--base",
        help="starting model: a registered model name or a folder (default: the packaged "
        "all-MiniLM-L6-v2, a new scoring head for a cross-encoder)",
    )
    p.add_argument(
        "--loss",
        choices=["listwise", "pointwise"],
        help="cross-encoder: listwise softmax over a query's candidates (default) or pointwise BCE on grade >= level",
    )
    _add_rocketqav2_arguments(p)
    p.add_argument("--epochs", type=int)
    p.add_argument("--batch-size", type=int, help="queries per step (pairs for --loss pointwise)")
    p.add_argument("--lr", dest="learning_rate", type=float, help="learning rate (default 2e-5)")
    p.add_argument("--max-length", type=int, help="tokens per text or pair (default 256)")
    p.add_argument("--negatives", type=int, help="hard negatives per query (default 7)")
    p.add_argument("--max-steps", type=int, help="stop after this many optimiser steps")
    p.add_argument(
        "--eval-every", type=int, help="evaluate on the held-out queries every N steps (default: each epoch)"
    )
    p.add_argument("--patience", type=int, help="early stopping: evaluations without improvement (default 2)")
    p.add_argument("--seed", type=int)
    p.add_argument("--device", help="cpu, cuda, cuda:N (default: CUDA when present)")
    p.set_defaults(func=cmd_train)


def _add_models_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `models` command: list trained models."""
    p = sub.add_parser("models", help="list trained models (name, kind, collection, best held-out nDCG@10, path)")
    p.add_argument("--collection", "-c", help="only this collection's")
    p.set_defaults(func=cmd_models)


def _add_assign_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `assign` command: give a pool's pairs to annotators."""
    p = sub.add_parser("assign", help="give a pool's selected pairs to annotators (3 each by default), in packages")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--pool", required=True)
    p.add_argument("--annotators", help="comma-separated usernames (default: every active annotator)")
    p.add_argument("--per-pair", type=int, default=3)
    p.add_argument("--package-size", type=int, default=1000)
    p.add_argument("--group-by-query", action="store_true", help="show one query's passages consecutively")
    p.add_argument("--binary", action="store_true", help="binary scale (relevant or not) instead of 0-3")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_assign)


def _add_freeze_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `freeze` command: snapshot the final labels."""
    p = sub.add_parser("freeze", help="snapshot the current final labels as a named qrels version")
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--note")
    _add_unresolved_flags(p)
    p.set_defaults(func=cmd_freeze)


def _add_leakage_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `leakage` command: training queries near-duplicating dev/test ones."""
    p = sub.add_parser(
        "leakage",
        help="training queries that near-duplicate a dev/test query (query embedding cosine; "
        "character bigrams for Chinese without a Chinese encoder)",
    )
    p.add_argument("--collection", "-c", required=True)
    p.add_argument(
        "--threshold",
        type=float,
        default=0.5,
        help="cosine at or above which a pair leaks (default 0.5, as DuReader-retrieval)",
    )
    p.add_argument("--model", help="local encoder folder (default: the bundled all-MiniLM-L6-v2, English only)")
    p.add_argument(
        "--chinese",
        choices=("auto", "char-bigram", "encoder"),
        default="auto",
        help="how Chinese queries are compared: char-bigram (lexical, Chinese against Chinese only), "
        "encoder (the model's cosine); auto (default): encoder when --model is given, else char-bigram",
    )
    p.add_argument(
        "--lexical-threshold",
        type=float,
        help="character-bigram cosine at or above which a Chinese pair "
        "leaks (default 0.4, calibrated on the demo: see core.analysis.LEXICAL_LEAKAGE_THRESHOLD)",
    )
    p.add_argument("--train-split", default="train")
    p.add_argument("--eval-split", action="append", help="split to protect; repeatable (default: dev and test)")
    p.add_argument("--ids-only", action="store_true", help="write only the ids of the training queries to remove")
    p.add_argument("--output", "-o", help="output file ('-' or omitted: stdout)")
    p.set_defaults(func=cmd_leakage)


def _add_simulate_labelling_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `simulate-labelling` command: how many labels are enough."""
    p = sub.add_parser(
        "simulate-labelling",
        help="how many labels are enough: replay labelling with the qrels as the "
        "oracle in each strategy's order; Kendall tau of the run ranking and each run's metric with a "
        "bootstrap interval after every batch",
    )
    p.add_argument("--collection", "-c", required=True)
    p.add_argument("--qrels", help="the oracle's qrels version (default: the newest)")
    p.add_argument("--runs", help="comma-separated stored runs to rank (default: every run, at least two)")
    p.add_argument("--depth", type=int, default=20, help="pool: the top DEPTH of every run per query (default 20)")
    p.add_argument("--batch", type=int, default=50, help="pairs labelled per batch (default 50)")
    p.add_argument(
        "--strategies",
        default="depth,top-n,random",
        help="comma-separated: depth, top-n, random, active (a fixed model), active-retrain (the model is "
        "fine-tuned on the labels after every batch, T2Ranking's loop) (default depth,top-n,random)",
    )
    p.add_argument("--model", help="active, active-retrain: the cross-encoder (a registered model name or a folder)")
    p.add_argument(
        "--band", help="active strategies: LOW,HIGH; pairs the model scores outside the band take its label for free"
    )
    p.add_argument(
        "--rule",
        choices=["uncertain", "relevant"],
        default="uncertain",
        help="active strategies' order: the most uncertain pairs first (T2Ranking, default) or the most "
        "probably relevant first (continuous active learning)",
    )
    p.add_argument("--retrain-steps", type=int, default=10, help="active-retrain: optimiser steps per round (10)")
    p.add_argument("--retrain-batch", type=int, default=16, help="active-retrain: labelled pairs per step (16)")
    p.add_argument("--retrain-lr", type=float, default=1e-4, help="active-retrain: learning rate (1e-4)")
    p.add_argument(
        "--from-base",
        action="store_true",
        help="active-retrain: restart every round from the base weights (default: from the previous round's)",
    )
    p.add_argument("--max-length", type=int, default=256, help="active strategies: tokens per pair (256)")
    p.add_argument("--measure", default="nDCG@10", help="the measure runs are ranked by (default nDCG@10)")
    p.add_argument("--level", type=int, help="relevance level (default: the collection's)")
    p.add_argument("--seed", type=int, default=0, help="seeds the random order and the bootstrap (default 0)")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    p.add_argument("--output", "-o", help="write the per-batch, per-run rows as CSV ('-': stdout)")
    p.set_defaults(func=cmd_simulate_labelling)


def _add_user_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `user` command: accounts."""
    p = sub.add_parser(
        "user", help="accounts: add, list, disable, enable, passwd, role (the last three sign the account out)"
    )
    p.add_argument("action", choices=["add", "list", "disable", "enable", "passwd", "role"])
    p.add_argument("username", nargs="?")
    p.add_argument(
        "--role",
        choices=["admin", "reviewer", "annotator"],
        help="the role of a new account (default annotator), or the new role for `user role`",
    )
    p.set_defaults(func=cmd_user)


def _add_archive_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `archive`, `restore` and `rename` commands (one shape, one handler)."""
    for command, text in (
        ("archive", "hide a collection, pool, run or qrels version (nothing is deleted)"),
        ("restore", "show an archived collection, pool, run or qrels version again"),
        ("rename", "rename a collection, pool, run or qrels version"),
    ):
        p = sub.add_parser(command, help=text)
        p.add_argument("kind", choices=["collection", "pool", "run", "qrels"])
        p.add_argument("name", help="its current name")
        if command == "rename":
            p.add_argument("new", help="the new name")
        p.add_argument("--collection", "-c", help="the collection a pool, run or qrels version belongs to")
        p.set_defaults(func=cmd_archive)


def _add_listing_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the argument-less commands: `archived`, `collections`, `demo`, `formats`."""
    sub.add_parser(
        "archived", help="list archived collections, pools, runs and qrels versions (kind, collection, name, by, at)"
    ).set_defaults(func=cmd_archived)
    sub.add_parser("collections", help="list collections in the store").set_defaults(func=cmd_collections)
    sub.add_parser("demo", help="load the bundled bilingual demo collection").set_defaults(func=cmd_demo)
    sub.add_parser("formats", help="list import formats").set_defaults(func=cmd_formats)


def _add_db_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `db` command: store administration."""
    p = sub.add_parser("db", help="store administration")
    p.add_argument("action", choices=["upgrade"])
    p.set_defaults(func=cmd_db)


def build_parser() -> argparse.ArgumentParser:
    """The ``pooljudge`` parser: global options, then one ``_add_*_parser`` per command (in ``--help`` order)."""
    parser = argparse.ArgumentParser(prog="pooljudge", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--db",
        help="SQLite file or SQLAlchemy URL (default: $POOLJUDGE_DB_URL, $POOLJUDGE_DB, ~/.pooljudge/pooljudge.db)",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (
        _add_import_parser,
        _add_export_parser,
        _add_eval_parser,
        _add_level_parser,
        _add_index_parser,
        _add_retrieve_parser,
        _add_pool_parser,
        _add_job_parser,
        _add_train_parser,
        _add_models_parser,
        _add_assign_parser,
        _add_freeze_parser,
        _add_leakage_parser,
        _add_simulate_labelling_parser,
        _add_user_parser,
        _add_archive_parsers,
        _add_listing_parsers,
        _add_db_parser,
        add_lexicon_parser,
    ):
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "export" and args.what == "run" and not args.run:
        parser.error("export run needs --run NAME")
    if args.command == "export" and args.what == "beir" and not args.output:
        parser.error("export beir needs --output FOLDER")
    try:
        return args.func(args)
    except FormatError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (LookupError, ValueError) as exc:
        print(f"error: {exc.args[0] if exc.args else exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except OSError as exc:  # an output folder that exists, a path we cannot write
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
