"""The `train` command: a re-ranker or dense encoder."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pooljudge.cli.common import RETRIEVER_HELP, open_store

if TYPE_CHECKING:
    from pooljudge.train_result import TrainJobResult


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.set_defaults(func=run)


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


def _print_default_system(result: TrainJobResult) -> None:
    """The default kind's choice: every candidate's held-out nDCG@10, the reason, the spec to retrieve with."""
    scores = ", ".join(f"{k} {v:.4f}" for k, v in result.dev_ndcg10.items())
    print(f"held-out (dev) nDCG@10 of the candidates: {scores}")
    print(result.reason)
    print(f"the default system: {result.system_label}; retrieve or pool with -r '{result.spec}'")


def run(args: argparse.Namespace) -> int:
    from db.jobs import create_job
    from pooljudge.jobs import run_job
    from pooljudge.training import TrainParams, check_train_params

    store = open_store(args)
    params = TrainParams.from_params(_train_params(args)).as_params()
    checked = check_train_params(store, params)  # name, folder, labels, candidates, bases: before a job is queued
    with store.write() as session:
        job_id = create_job(session, "train", params, collection_id=checked.collection_id)
    result = run_job(store, job_id, echo=None if args.quiet else (lambda m: print(m, file=sys.stderr)))
    _print_result(result, job_id)
    return 0


def _print_result(result: TrainJobResult, job_id: int) -> None:
    measures = result.best.get("eval") or {}
    shown = ", ".join(f"{k} {v:.4f}" for k, v in measures.items() if isinstance(v, (int, float))) or "no evaluation"
    print(
        f"{result.kind} {result.model!r} (job {job_id}): best held-out {shown} "
        f"(step {result.best.get('step', '?')}) on {result.held_out_queries} queries, trained on "
        f"{result.train_queries} in {result.seconds:.1f} s ({result.pairs_per_second:.1f} pairs/s); "
        f"saved to {result.path}"
    )
    if result.interpolate:  # 0: the re-ranker alone was best
        print(
            f"blend in the first stage at the weight the held-out queries chose: "
            f"rerank:model={result.model},interpolate={result.interpolate:g}"
        )
    if result.teacher_prior is not None:
        print(f"the teacher's first-stage weight: {result.teacher_prior:g}")
    if result.spec:  # the default kind: what the held-out queries chose, and why
        _print_default_system(result)
