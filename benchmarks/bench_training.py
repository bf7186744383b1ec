"""Learning from the labels on real collections: trained re-rankers and dual encoders against BM25 and MiniLM.

Not a test.  Run from the repository root::

    .venv/bin/python benchmarks/bench_training.py                      # both collections, CPU defaults
    .venv/bin/python benchmarks/bench_training.py --collections cranfield --epochs 2 --output /tmp/train.json

Collections (each skipped with a message when its files are absent):

* ``cranfield``: ``../shared/data/cranfield`` read with the project's SMART
  reader (:func:`core.formats.smart.read_smart_folder`), which maps
  Cleverdon's codes (1 = most relevant) onto pooljudge's grades 1->3, 2->2,
  3->1, 4->1.  Relevance level 1: every listed pair is relevant (the common
  practice with Cranfield); nDCG@10 uses the mapped grades.  The two empty
  placeholder documents (471, 995) are left out.
* ``rgb-zh``: ``../shared/data/rgb-zh/zh_refine.json`` read with the RGB
  reader (:func:`core.formats.qa_jsonl.read_qa_jsonl`): each distinct passage
  text gets a stable content id, a query's ``positive`` texts grade 1, its
  ``negative`` texts grade 0; level 1.  The corpus is every passage of the
  queries used (``--max-queries`` caps them with a seeded sample; the cap
  keeps the CPU run short, the passages of the queries left out are left out
  too, as if the file had only the sampled lines).

Per collection: a seeded held-out query split
(:func:`core.training.data.split_queries`, ``held_out=0.3``); candidates =
BM25's top 100 (:class:`core.retrieval.bm25.BM25Retriever` with
:func:`core.text.analyzer_for` the collection's language) for every query:
they are the trainers' hard negatives and what the re-ranker re-ranks.  Then,
on the held-out queries only (``--max-held-out`` caps them), nDCG@10 and MRR@10
(:func:`core.training.common.ranking_metrics`, trec_eval-exact) of

1. ``BM25``;
2. ``MiniLM (base dual encoder)``: the packaged all-MiniLM-L6-v2 as a
   :class:`~core.retrieval.dense.DenseRetriever` (exact search over the corpus);
3. ``cross-encoder re-ranking BM25@100``: :func:`core.training.cross_encoder.train_cross_encoder`
   (listwise loss, from MiniLM with a new head) re-ranking BM25's top 100;
4. ``dual encoder trained alone``: :func:`core.training.dual_encoder.train_dual_encoder`;
5. ``RocketQAv2 dual encoder``: :func:`core.training.rocketqav2.train_rocketqav2`
   with the SAME training queries, epochs, batch size, negatives, learning
   rate, temperature and seed as 4; its co-trained cross-encoder (the
   teacher of the listwise distillation) starts, as in the paper, from a
   trained re-ranker: the one of 3 (``--rocketqa-cross base`` starts it from
   MiniLM with a new head instead; ``--denoise LOW HIGH`` adds the hybrid
   data augmentation).  With a dev split and ``--teacher-prior bm25`` (the
   default) the distillation target is the cross-encoder's logits plus
   :math:`\\lambda` times BM25's min-max normalised score (the module
   docstring of :mod:`core.training.rocketqav2`), :math:`\\lambda` chosen on
   the dev queries (:func:`core.retrieval.rerank.choose_prior_weight`): a
   re-ranker trained on a hundred queries can rank below the student, and
   only a teacher stronger than the student can teach it.

The held-out queries are scored once, at the end, so nothing is picked on the
numbers this table reports: the trainers' best epoch, the re-ranker's BM25
interpolation weight and RocketQAv2's teacher prior weight are chosen on a dev
split of the training queries (``--dev``, 15 %; ``--dev 0``: none, and the
trainers keep their last weights).

Training speed: ``train_cross_encoder``'s training time and pairs/s against a
plain ``transformers`` loop written here (:func:`plain_training_loop`: the
same model, the same query lists, the same number of lists per batch, but
batches of a seeded shuffle rather than length-sorted ones;
``AutoModelForSequenceClassification`` + ``torch.optim.AdamW`` + the same
listwise softmax cross-entropy; no schedule, no clipping, no autocast),
run one after the other in the same process.  Both train on the same pairs,
so the ratio of wall times (model loading to the last step; plain /
pooljudge) is the ratio of pairs/s.  The two alternate for ``--speed-rounds``
rounds (default 2) and each side's fastest round counts, so that other work
on a shared machine slows both alike; on the CPU they train on a seeded
sample of 4 training queries (``--speed-queries``).  The
benchmark's own cross-encoder training time (and its pairs/s over its
training steps alone) is printed as well.

CPU defaults, sized for the 2 shared CPU cores of the development machine:
``--max-length 128``, 1 epoch, batches of 8 query lists, 3 hard negatives,
cross-encoder learning rate 1e-4 (a new head and a few dozen steps), at most
20 training queries (each gives one list per relevant passage: about 130
lists on Cranfield) and 20 held-out queries per collection
(``--max-held-out``: a seeded sample of the 30 % split), rgb-zh capped at 50
queries, the speed comparison on the first collection only (``--plain-all``
for every one).  That is about 40-60 minutes when the two cores are busy with
other work (half as long when they are free), most of it re-ranking 100
candidates per held-out query and training on CPU-sized budgets that are
far too small to learn much: treat the CPU numbers as a smoke run of the
whole pipeline on real data.  On CUDA the defaults are the real benchmark:
the CPU's batches (8 lists of 1 positive + 3 negatives) and cross-encoder
learning rate (1e-4), max length 256, 3 epochs (the best on the dev split),
no caps (all training and held-out queries, all 300 rgb-zh queries).  Prints a table
like::

    collection  system                              nDCG@10  MRR@10  (held-out queries)
    cranfield   BM25                                 0.3982  0.6121
    ...

and, with ``--output FILE``, writes every number (and the settings) as JSON.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DISABLE_TQDM", "1")  # bm25s progress bars

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks.bench_training_cli import (  # noqa: E402
    COLLECTIONS,
    DATA,  # noqa: F401  (bench_default_training.py reads bench_training.DATA)
    SYSTEMS,
    add_budget_arguments,
    add_model_arguments,
    add_run_arguments,
    format_table,
)
from core.retrieval.bm25 import BM25Retriever  # noqa: E402
from core.text import analyzer_for  # noqa: E402
from core.training.common import ranking_metrics  # noqa: E402
from core.training.data import LabelledData, TrainConfig, split_queries  # noqa: E402
from core.types import CollectionSource, Qrels, Run  # noqa: E402

DEPTH = 100
HELD_OUT = 0.3


@dataclass
class Collection:
    """One benchmark collection: its labelled data (BM25 candidates for every query) and language."""

    name: str
    language: str
    data: LabelledData
    bm25_run: Run = field(default_factory=dict)
    bm25_prior: Run = field(default_factory=dict)  # every passage's BM25 score: the teacher's first-stage evidence


# ---------------------------------------------------------------------------------------------- data


def labelled_from_source(
    source: CollectionSource, *, level: int = 1, max_queries: int | None = None, seed: int = 0
) -> LabelledData:
    """A reader's streams as :class:`LabelledData` (no candidates yet).

    Passages with neither text nor title are left out (Cranfield's empty
    placeholders).  ``max_queries`` keeps a seeded sample of the queries
    that have a relevant passage, and then only the passages those queries
    judge (for a collection like RGB whose corpus is the union of per-query
    passage lists).
    """
    passages: dict[str, str] = {}
    for p in source.passages():
        text = p.text.strip() or p.title.strip()
        if text:
            passages[p.id] = text
    queries = {q.id: q.text for q in source.queries()}
    qrels: Qrels = {}
    for entry in source.qrels():
        qrels.setdefault(entry.query_id, {})[entry.doc_id] = entry.grade
    data = LabelledData(queries=queries, passages=passages, qrels=qrels, level=level)
    if max_queries is not None and max_queries < len(data.trainable()):
        keep = sorted(random.Random(seed).sample(data.trainable(), max_queries))
        judged = {d for q in keep for d in qrels.get(q, {})}
        data = LabelledData(
            queries={q: queries[q] for q in keep},
            passages={d: t for d, t in passages.items() if d in judged},
            qrels={q: qrels[q] for q in keep},
            level=level,
        )
    return data


def load_collection(name: str, root: Path, *, max_queries: int | None = None, seed: int = 0) -> Collection | None:
    """Read ``name`` from ``root`` (the shared data folder), or print why not and return None."""
    if name == "cranfield":
        from core.formats.smart import read_smart_folder

        folder = root / "cranfield"
        if not (folder / "cran.all.1400").is_file():
            print(f"cranfield: skipped, {folder}/cran.all.1400 not found")
            return None
        data = labelled_from_source(read_smart_folder(folder), level=1)
        return Collection(name, "en", data)
    if name == "rgb-zh":
        from core.formats.qa_jsonl import read_qa_jsonl

        path = root / "rgb-zh" / "zh_refine.json"
        if not path.is_file():
            print(f"rgb-zh: skipped, {path} not found")
            return None
        data = labelled_from_source(read_qa_jsonl(path), level=1, max_queries=max_queries, seed=seed)
        return Collection(name, "zh", data)
    raise SystemExit(f"--collections: unknown collection {name!r} (known: {', '.join(COLLECTIONS)})")


def with_bm25_candidates(collection: Collection, depth: int = DEPTH) -> Collection:
    """Index the corpus with BM25, retrieve the top ``depth`` for every query, store them as candidates."""
    data = collection.data
    ids = sorted(data.passages)
    bm25 = BM25Retriever(analyzer_for(collection.language)).index(ids, [data.passages[d] for d in ids])
    every = bm25.batch_search(data.queries, k=len(ids))
    # batch_search gives each query's hits in trec order
    run = {q: dict(list(hits.items())[:depth]) for q, hits in every.items()}
    candidates = {q: list(hits) for q, hits in run.items()}
    data = LabelledData(data.queries, data.passages, data.qrels, candidates, data.level)
    return Collection(collection.name, collection.language, data, run, every)


def split(
    data: LabelledData, *, seed: int, max_train_queries: int | None = None, max_held_out: int | None = None
) -> tuple[LabelledData, LabelledData]:
    """(training, held-out) data: a seeded 70/30 split of the queries with a relevant passage.

    ``max_train_queries`` and ``max_held_out`` cap either side with a seeded
    sample of it (the split itself does not change: a capped held-out query
    is never a training query).
    """
    train_ids, held_ids = split_queries(data.trainable(), held_out=HELD_OUT, seed=seed)
    if max_train_queries is not None and max_train_queries < len(train_ids):
        train_ids = sorted(random.Random(seed).sample(train_ids, max_train_queries))
    if max_held_out is not None and max_held_out < len(held_ids):
        held_ids = sorted(random.Random(seed + 1).sample(held_ids, max_held_out))
    return data.subset(train_ids), data.subset(held_ids)


def split_dev(train: LabelledData, fraction: float, *, seed: int) -> tuple[LabelledData, LabelledData | None]:
    """(training, dev) data: a seeded ``fraction`` of the training queries held back as a dev split.

    The dev queries pick what the reported numbers must not: the trainers'
    best epoch and the re-ranker's BM25 interpolation weight.  ``fraction``
    0 (or a split too small to leave one query on each side): no dev split.
    """
    if fraction <= 0 or len(train.trainable()) < 2:
        return train, None
    train_ids, dev_ids = split_queries(train.trainable(), held_out=fraction, seed=seed + 2)
    if not dev_ids or not train_ids:
        return train, None
    return train.subset(train_ids), train.subset(dev_ids)


def held_out_metrics(run: Run, held: LabelledData) -> dict[str, float]:
    """nDCG@10 and MRR@10 of ``run`` on the held-out queries (trec_eval-exact)."""
    return ranking_metrics({q: run.get(q, {}) for q in held.queries}, held.qrels, held.level)


# ---------------------------------------------------------------------------------------------- systems


def dense_run(
    model_path: Path,
    data: LabelledData,
    *,
    max_length: int,
    cache: bool,
    k: int = DEPTH,
    progress: Callable[[int, int], None] | None = None,
) -> Run:
    """Exact dense search of ``data``'s queries over all its passages with the bi-encoder at ``model_path``."""
    from core.retrieval.dense import BiEncoder, DenseRetriever

    encoder = BiEncoder(model_path, max_length=max_length)
    ids = sorted(data.passages)
    retriever = DenseRetriever(encoder, name="dense", cache=cache)
    retriever.index(ids, [data.passages[d] for d in ids], progress=progress)
    return retriever.batch_search(data.queries, k=k)


def rerank_run(
    model_path: Path,
    data: LabelledData,
    *,
    max_length: int,
    depth: int = DEPTH,
    progress: Callable[[int, int], None] | None = None,
) -> Run:
    """Re-rank each query's first ``depth`` candidates with the cross-encoder at ``model_path``."""
    from core.training.cross_encoder import CrossEncoder, rerank

    encoder = CrossEncoder(model_path, max_length=max_length)
    candidates = {q: data.candidates.get(q, [])[:depth] for q in data.queries}
    return rerank([encoder], data.queries, candidates, data.passages, progress=progress)


# ---------------------------------------------------------------------------------------------- plain loop


def plain_batches(n: int, batch_size: int, seed: int) -> list[list[int]]:
    """Batches of consecutive indices of a seeded shuffle (no length sorting)."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [order[i : i + batch_size] for i in range(0, n, batch_size)]


def plain_training_loop(
    model_path: Path,
    train: LabelledData,
    *,
    epochs: int,
    batch_size: int,
    negatives: int,
    learning_rate: float,
    weight_decay: float,
    max_length: int,
    seed: int,
    device: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """The textbook recipe: a listwise cross-encoder trained with plain transformers and torch.

    The query lists are ``train_cross_encoder``'s own (the same seeded generator: the positive
    first, then ``negatives`` hard negatives), so both loops train on the same pairs;
    ``batch_size`` lists per step in batches of a seeded shuffle (no length sorting);
    ``AutoModelForSequenceClassification`` (one logit) from ``model_path`` and
    ``torch.optim.AdamW`` at a constant rate; per batch :func:`plain_listwise_loss`, backward, step.

    Returns ``{"seconds", "pairs", "pairs_per_second", "steps", "losses"}``; ``seconds`` runs
    from loading the model to the last step, like ``TrainResult.seconds`` without a held-out set.
    """
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    # train_cross_encoder's own list builder, so that the examples are the same (private, on purpose)
    from core.training.cross_encoder import _groups

    start = time.perf_counter()
    torch.manual_seed(seed)
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    tokenizer = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
    model = AutoModelForSequenceClassification.from_pretrained(model_path, num_labels=1, local_files_only=True)
    model.to(dev).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=weight_decay)
    rng = random.Random(seed)
    epoch_lists = [_groups(train, negatives, rng) for _ in range(epochs)]
    total = sum(len(plain_batches(len(lists), batch_size, seed)) for lists in epoch_lists)
    pairs = 0
    losses: list[float] = []
    for epoch, lists in enumerate(epoch_lists, start=1):
        for batch in plain_batches(len(lists), batch_size, seed * 1000 + epoch):
            chosen = [lists[i] for i in batch]
            loss = plain_listwise_loss(model, tokenizer, train, chosen, max_length=max_length, device=dev)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            pairs += sum(len(docs) for _, docs in chosen)
            losses.append(float(loss.detach()))
            if progress is not None:
                progress(len(losses), total)
    seconds = time.perf_counter() - start
    rate = pairs / seconds if seconds else 0.0
    return {"seconds": seconds, "pairs": pairs, "pairs_per_second": rate, "steps": len(losses), "losses": losses}


def plain_listwise_loss(
    model: Any,
    tokenizer: Any,
    train: LabelledData,
    chosen: Sequence[tuple[str, list[str]]],
    *,
    max_length: int,
    device: torch.device,
) -> torch.Tensor:
    """Softmax cross-entropy of each (query, [positive, negatives...]) list, padding masked with -inf."""
    width = max(len(docs) for _, docs in chosen)
    queries = [train.queries[qid] for qid, docs in chosen for _ in docs]
    passages = [train.passages[d] for _, docs in chosen for d in docs]
    enc = tokenizer(queries, passages, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    flat = model(**enc.to(device)).logits.view(-1)
    scores = torch.full((len(chosen), width), float("-inf"), device=device)
    offset = 0
    for row, (_, docs) in enumerate(chosen):
        scores[row, : len(docs)] = flat[offset : offset + len(docs)]
        offset += len(docs)
    return torch.nn.functional.cross_entropy(scores, torch.zeros(len(chosen), dtype=torch.long, device=device))


def speed_comparison(
    train: LabelledData,
    config: TrainConfig,
    base: Path,
    workdir: Path,
    *,
    rounds: int,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Time ``train_cross_encoder`` and :func:`plain_training_loop` on the same lists, interleaved, best of ``rounds``.

    The two alternate (plain first in odd rounds, pooljudge first in even
    ones) and each side's fastest round counts, so that other work on the
    machine slows both alike.  ``seconds`` are wall times from loading the
    model to the end of training (pooljudge's include saving the model);
    ``pairs`` are the same on both sides.
    """
    from core.training.cross_encoder import train_cross_encoder

    ours: list[float] = []
    steps_rate: list[float] = []
    plain: list[dict[str, Any]] = []

    def run_ours(r: int) -> None:
        result = train_cross_encoder(
            train, None, config, output=workdir / f"speed-{r}", base_model=base, loss="listwise"
        )
        ours.append(result.seconds)
        steps_rate.append(result.pairs_per_second)

    same = ("epochs", "batch_size", "negatives", "learning_rate", "weight_decay", "max_length", "seed", "device")

    def run_plain(r: int) -> None:
        plain.append(plain_training_loop(base, train, **{k: getattr(config, k) for k in same}))

    for r in range(rounds):
        for side in (run_plain, run_ours) if r % 2 == 0 else (run_ours, run_plain):
            side(r)
        if progress is not None:
            progress(r + 1, rounds)
    best_plain = min(plain, key=lambda p: p["seconds"])
    pairs = best_plain["pairs"]
    best_ours = min(ours)
    return {
        "rounds": rounds,
        "queries": len(train.trainable()),
        "pairs": pairs,
        "pooljudge_seconds": best_ours,
        "pooljudge_pairs_per_second": pairs / best_ours,
        "pooljudge_steps_pairs_per_second": max(steps_rate),
        "plain_seconds": best_plain["seconds"],
        "plain_pairs_per_second": best_plain["pairs_per_second"],
        "ratio": best_plain["seconds"] / best_ours,
        "all_pooljudge_seconds": ours,
        "all_plain_seconds": [p["seconds"] for p in plain],
    }


# ---------------------------------------------------------------------------------------------- benchmark


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def ticker(label: str, every: float = 60.0) -> Callable[[int, int], None]:
    """A ``progress(done, total)`` callback that logs at most once a minute (and at the end)."""
    last = [time.perf_counter()]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= every or done == total:
            last[0] = now
            log(f"  {label}: {done}/{total}")

    return progress


def train_config(args: argparse.Namespace, learning_rate: float) -> TrainConfig:
    return TrainConfig(
        seed=args.seed,
        epochs=args.epochs,
        batch_size=args.batch_size,
        learning_rate=learning_rate,
        max_length=args.max_length,
        negatives=args.negatives,
        device=args.device,
    )


@dataclass
class Bench:
    """One collection's benchmark: its splits, where models go, and what it has measured so far."""

    collection: Collection
    args: argparse.Namespace
    workdir: Path
    train: LabelledData
    dev: LabelledData | None
    held: LabelledData
    out: dict[str, Any] = field(default_factory=lambda: {"metrics": {}, "seconds": {}})
    prior_weight: float = 0.0  # RocketQAv2's teacher prior weight, chosen on the dev split

    def record(self, key: str, run: Run, seconds: float) -> None:
        self.out["metrics"][key] = held_out_metrics(run, self.held)
        self.out["seconds"][key] = seconds
        m = self.out["metrics"][key]
        log(f"{self.collection.name} {key}: nDCG@10 {m['nDCG@10']:.4f}, MRR@10 {m['MRR@10']:.4f} ({seconds:.0f} s)")

    def model_folder(self, system: str) -> Path:
        return self.workdir / f"{self.collection.name}-{system}"


def bench_minilm(b: Bench) -> None:
    t = time.perf_counter()
    run = dense_run(b.args.base_model, b.held, max_length=b.args.max_length, cache=True, progress=ticker("encoding"))
    b.record("minilm", run, time.perf_counter() - t)


def train_reranker(b: Bench) -> Path:
    """The cross-encoder of ``--cross-model``, or one trained on the training split (dev: best epoch)."""
    if b.args.cross_model is not None:
        log(f"{b.collection.name} cross-encoder: {b.args.cross_model} (given, not trained)")
        return Path(b.args.cross_model)
    from core.training.cross_encoder import train_cross_encoder

    result = train_cross_encoder(
        b.train,
        b.dev,
        train_config(b.args, b.args.cross_lr),
        output=b.model_folder("cross-encoder"),
        base_model=b.args.base_model,
        loss="listwise",
        progress=ticker("cross-encoder training"),
    )
    b.out["cross_encoder_training"] = {
        "seconds": result.seconds,
        "pairs_per_second": result.pairs_per_second,
        "history": result.history,
        "best": result.best,
    }
    log(f"{b.collection.name} cross-encoder trained: {result.seconds:.0f} s, {result.pairs_per_second:.1f} pairs/s")
    return result.path


def bench_cross_encoder(b: Bench) -> Path:
    """Train (or take) the re-ranker; score it alone and, with a dev split, interpolated with BM25."""
    from core.retrieval.rerank import choose_interpolation, interpolate_runs

    folder = train_reranker(b)
    t = time.perf_counter()
    held_run = rerank_run(folder, b.held, max_length=b.args.max_length, progress=ticker("re-ranking"))
    b.record("cross-encoder", held_run, time.perf_counter() - t)
    if b.dev is not None:
        t = time.perf_counter()
        dev_run = rerank_run(folder, b.dev, max_length=b.args.max_length, progress=ticker("re-ranking dev"))
        bm25 = b.collection.bm25_run
        weight, by_weight = choose_interpolation(bm25, dev_run, b.dev.qrels, b.dev.level)
        b.out["interpolation"] = {"weight": weight, "dev_nDCG@10": by_weight, "dev_queries": len(b.dev.queries)}
        log(f"{b.collection.name} BM25 weight chosen on {len(b.dev.queries)} dev queries: {weight}")
        b.record("interpolated", interpolate_runs(bm25, held_run, weight), time.perf_counter() - t)
        if b.args.teacher_prior == "bm25":
            choose_teacher_prior(b, dev_run)
    return folder


def choose_teacher_prior(b: Bench, dev_run: Run) -> None:
    """RocketQAv2's teacher prior weight: the re-ranker's dev logits plus lambda * BM25 with the best dev nDCG@10."""
    from core.retrieval.rerank import choose_prior_weight

    assert b.dev is not None
    b.prior_weight, by_weight = choose_prior_weight(b.collection.bm25_prior, dev_run, b.dev.qrels, b.dev.level)
    b.out["teacher_prior"] = {"weight": b.prior_weight, "dev_nDCG@10": by_weight}
    log(f"{b.collection.name} RocketQAv2 teacher's BM25 weight chosen on the dev queries: {b.prior_weight}")


def bench_speed(b: Bench) -> None:
    subset = b.train
    if b.args.speed_queries is not None and b.args.speed_queries < len(b.train.trainable()):
        subset = b.train.subset(random.Random(b.args.seed).sample(b.train.trainable(), b.args.speed_queries))
    config = train_config(b.args, b.args.cross_lr)
    speed = speed_comparison(
        subset, config, b.args.base_model, b.workdir, rounds=b.args.speed_rounds, progress=ticker("speed rounds")
    )
    b.out["speed"] = speed
    log(
        f"{b.collection.name} speed: pooljudge {speed['pooljudge_seconds']:.0f} s, plain transformers loop "
        f"{speed['plain_seconds']:.0f} s on {speed['pairs']} pairs: {speed['ratio']:.2f}x"
    )


def bench_dual_encoder(b: Bench) -> None:
    from core.training.dual_encoder import train_dual_encoder

    result = train_dual_encoder(
        b.train,
        b.dev,
        train_config(b.args, b.args.dual_lr),
        output=b.model_folder("dual-encoder"),
        base_model=b.args.base_model,
        temperature=b.args.temperature,
        progress=ticker("dual encoder training"),
    )
    b.out["dual_encoder_training"] = {"seconds": result.seconds, "pairs_per_second": result.pairs_per_second}
    t = time.perf_counter()
    run = dense_run(result.path, b.held, max_length=b.args.max_length, cache=False, progress=ticker("encoding"))
    b.record("dual-encoder", run, time.perf_counter() - t)


def bench_rocketqav2(b: Bench, trained_cross: Path | None) -> None:
    """RocketQAv2 with the dual encoder's data and budget; its cross-encoder starts from ``trained_cross``.

    The paper starts the cross-encoder from a trained re-ranker: the one of
    :func:`bench_cross_encoder`, when it ran (``--rocketqa-cross trained``).
    """
    from core.training.rocketqav2 import train_rocketqav2

    base = b.args.base_model
    teacher = trained_cross if b.args.rocketqa_cross == "trained" and trained_cross is not None else base
    result = train_rocketqav2(
        b.train,
        b.dev,
        train_config(b.args, b.args.dual_lr),
        output=b.model_folder("rocketqav2"),
        base_model=base,
        cross_base=teacher,
        denoise=tuple(b.args.denoise) if b.args.denoise and teacher != base else None,
        temperature=b.args.temperature,
        prior=b.collection.bm25_prior if b.prior_weight else None,
        prior_weight=b.prior_weight,
        progress=ticker("RocketQAv2 training"),
    )
    b.out["rocketqav2_teacher"] = "trained cross-encoder" if teacher != base else "base model, new head"
    b.out["rocketqav2_denoise"] = result.params.get("denoise")
    b.out["rocketqav2_teacher_prior"] = result.params.get("teacher_prior")
    b.out["rocketqav2_training"] = {"seconds": result.seconds, "pairs_per_second": result.pairs_per_second}
    t = time.perf_counter()
    run = dense_run(result.path, b.held, max_length=b.args.max_length, cache=False, progress=ticker("encoding"))
    b.record("rocketqav2", run, time.perf_counter() - t)


def bench_collection(
    collection: Collection, args: argparse.Namespace, workdir: Path, *, compare_speed: bool = True
) -> dict[str, Any]:
    """Every system's held-out metrics (with ``compare_speed``, the plain loop's too) for one collection."""
    train, held = split(collection.data, seed=args.seed, max_held_out=args.max_held_out)
    train, dev = split_dev(train, args.dev, seed=args.seed)
    if args.max_train_queries is not None and args.max_train_queries < len(train.trainable()):
        train = train.subset(sorted(random.Random(args.seed).sample(train.trainable(), args.max_train_queries)))
    n_pos = sum(len(train.positives(q)) for q in train.queries)
    log(
        f"{collection.name}: {len(collection.data.passages)} passages, {len(train.queries)} training queries "
        f"({n_pos} relevant pairs), {len(dev.queries) if dev else 0} dev queries, {len(held.queries)} held-out queries"
    )
    b = Bench(collection, args, workdir, train, dev, held)
    b.out.update(
        passages=len(collection.data.passages),
        train_queries=len(train.queries),
        dev_queries=len(dev.queries) if dev else 0,
        held_out_queries=len(held.queries),
    )
    b.record("bm25", collection.bm25_run, 0.0)
    systems = set(args.systems)
    if "minilm" in systems:
        bench_minilm(b)
    trained_cross = bench_cross_encoder(b) if "cross-encoder" in systems else None
    if trained_cross is not None and compare_speed and not args.skip_plain:
        bench_speed(b)
    if "dual-encoder" in systems:
        bench_dual_encoder(b)
    if "rocketqav2" in systems:
        bench_rocketqav2(b, trained_cross)
    return b.out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_run_arguments(parser, cuda)
    add_budget_arguments(parser, cuda)
    add_model_arguments(parser, cuda)
    args = parser.parse_args(argv)
    args.collections = [c.strip() for c in args.collections.split(",") if c.strip()]
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    unknown = set(args.systems) - {k for k, _ in SYSTEMS[1:] if k != "interpolated"}
    if unknown:
        parser.error(f"--systems: unknown {', '.join(sorted(unknown))}")
    if args.base_model is None:
        from core.retrieval.encoder import default_model_path

        args.base_model = default_model_path()
    for name in ("max_train_queries", "max_held_out", "max_queries", "speed_queries"):
        if getattr(args, name) == 0:
            setattr(args, name, None)
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    settings = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    log(
        f"settings: {settings}; torch threads {torch.get_num_threads()}, "
        f"device {args.device or ('cuda' if torch.cuda.is_available() else 'cpu')}"
    )
    results: dict[str, dict[str, Any]] = {}
    keep = args.workdir is not None
    with contextlib.nullcontext(str(args.workdir)) if keep else tempfile.TemporaryDirectory(prefix="bench_") as tmp:
        Path(tmp).mkdir(parents=True, exist_ok=True)
        for name in args.collections:
            collection = load_collection(name, args.data, max_queries=args.max_queries, seed=args.seed)
            if collection is None:
                continue
            collection = with_bm25_candidates(collection)
            results[name] = bench_collection(collection, args, Path(tmp), compare_speed=args.plain_all or not results)
            if args.output is not None:  # after each collection: a run stopped later keeps what it finished
                write_report(args.output, {"settings": settings, "results": results})
    if not results:
        print("no collection found: nothing to benchmark")
        return {}
    print()
    print(format_table(results))
    report = {"settings": settings, "results": results}
    if args.output is not None:
        print(f"written {args.output}")
    return report


def write_report(path: Path, report: dict[str, Any]) -> None:
    path.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
