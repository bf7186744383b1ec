"""pooljudge's neural path against sentence-transformers, in one process, on one GPU (or the CPU).

One command measures, on the same texts, model and device:

1. **Encoding**: passages/s of pooljudge's ``BiEncoder.encode`` (token-budget
   batches, numpy padding and pinning in a background thread, vectors kept on
   the device) and of ``sentence_transformers.SentenceTransformer.encode`` at
   each of its batch sizes (both in fp16 on CUDA, fp32 on the CPU, max length
   256, mean pooling, normalised), with the vectors' agreement (cosine of each
   passage's two vectors: every one must be >= 0.999).  The ratio is
   pooljudge's default against sentence-transformers' best batch size;
   targets: >= 2.0x on a GPU, >= 1.0x on the CPU.
2. **Search**: exact inner-product top-100 over the passage vectors
   (``DenseRetriever``: FAISS GPU when importable, else ``torch`` on CUDA,
   FAISS on the CPU), queries/s for the search alone and with query encoding.
3. **Training**: ``benchmarks/bench_training.py`` on Cranfield with the
   device's defaults (on CUDA: 3 epochs, 16 lists of 1 + 7 negatives,
   max length 256, bf16 autocast), the cross-encoder only: training pairs/s
   and the re-ranker's held-out nDCG@10 against BM25's.  Skipped when the
   Cranfield folder is absent.

The passages come from ``bench_dense.generate`` (mixed lengths, as in real
corpora).  Sizes default to a real run on CUDA (30,000 passages, 10,000
queries; about 2 minutes on one H100) and to a smoke run on the CPU.

Usage::

    python benchmarks/bench_gpu.py [--passages N] [--queries N] [--st-batch-sizes 32,128,256]
                                   [--budgets 32768,65536] [--model FOLDER] [--data FOLDER]
                                   [--skip-training] [--output FILE.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The Rust tokenizer's own threads serve both sides (bench_dense would turn them off for its CPU comparison).
os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bench_dense import generate  # noqa: E402

from core.retrieval.dense import BiEncoder, DenseRetriever, default_model_path  # noqa: E402

MAX_LENGTH = 256
AGREEMENT = 0.999
TARGETS = {"cuda": 2.0, "cpu": 1.0}


def log(message: str) -> None:
    print(message, flush=True)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(fn: Callable[[], Any], device: torch.device) -> tuple[float, Any]:
    synchronize(device)
    start = time.perf_counter()
    result = fn()
    synchronize(device)
    return time.perf_counter() - start, result


# ---------------------------------------------------------------------------------------------- encoding


def sentence_transformer(model: Path, device: torch.device, max_length: int) -> Any:
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(model), device=str(device), local_files_only=True)
    st.max_seq_length = max_length
    if device.type == "cuda":
        st.half()
    return st


def st_encode(st: Any, texts: list[str], batch_size: int) -> np.ndarray:
    return st.encode(
        texts, batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )


def bench_encode(args: argparse.Namespace, device: torch.device, texts: list[str]) -> dict[str, Any]:
    """Passages/s of pooljudge (default budget and each of ``--budgets``) and sentence-transformers (each batch size)."""
    ours = BiEncoder(args.model, max_length=MAX_LENGTH, device=device)
    st = sentence_transformer(args.model, device, ours.max_length)  # MAX_LENGTH, or the model's limit
    lengths = ours.tokenizer(texts, truncation=True, max_length=MAX_LENGTH, return_length=True)["length"]
    log(
        f"encode: {len(texts)} passages, tokens median {int(np.median(lengths))}, mean {np.mean(lengths):.0f}; "
        f"device {device}, fp16 {ours.fp16}, attention {getattr(ours.model.config, '_attn_implementation', '?')}, "
        f"pooljudge default budget {ours.token_budget()} tokens"
    )
    ours.encode(texts[:256])  # warm-up: kernels chosen, allocator primed
    st_encode(st, texts[:256], 32)
    t_tokenize, _ = timed(lambda: ours._tokenize(list(texts)), device)
    log(f"  pooljudge tokenising alone: {t_tokenize:.2f} s ({len(texts) / t_tokenize:,.0f} passages/s)")

    budgets: list[int | None] = [None, *args.budgets]
    best: dict[str, float] = {}
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeat):  # interleaved, best of: drift hits every side alike
        for budget in budgets:
            ours.max_tokens = budget
            t, vectors[f"ours-{budget}"] = timed(lambda: ours.encode(texts), device)
            key = "pooljudge" if budget is None else f"pooljudge budget {budget}"
            best[key] = min(best.get(key, float("inf")), t)
        for bs in args.st_batch_sizes:
            t, vectors[f"st-{bs}"] = timed(lambda bs=bs: st_encode(st, texts, bs), device)
            best[f"sentence-transformers batch {bs}"] = min(best.get(f"sentence-transformers batch {bs}", 1e9), t)
    ours.max_tokens = None

    reference = vectors[f"st-{args.st_batch_sizes[0]}"]
    cosines = {key: np.sum(v * reference, axis=1) for key, v in vectors.items() if key.startswith("ours")}
    worst = min(float(c.min()) for c in cosines.values())
    rates = {key: len(texts) / seconds for key, seconds in best.items()}
    st_best = max((k for k in rates if k.startswith("sentence")), key=lambda k: rates[k])
    ratio = rates["pooljudge"] / rates[st_best]
    for key, rate in sorted(rates.items(), key=lambda kv: -kv[1]):
        log(f"  {key}: {rate:,.0f} passages/s")
    target = TARGETS[device.type]
    log(
        f"encode: pooljudge {rates['pooljudge']:,.0f} p/s vs {st_best} {rates[st_best]:,.0f} p/s = {ratio:.2f}x "
        f"(target >= {target}x: {'met' if ratio >= target else 'MISSED'}); vectors: min cosine {worst:.5f} "
        f"(>= {AGREEMENT}: {'ok' if worst >= AGREEMENT else 'DISAGREE'})"
    )
    return {
        "passages": len(texts),
        "passages_per_second": rates,
        "ratio": ratio,
        "target": target,
        "min_cosine": worst,
        "st_best": st_best,
        "vectors": vectors["ours-None"],
        "encoder": ours,
    }


# ---------------------------------------------------------------------------------------------- search


def bench_search(args: argparse.Namespace, device: torch.device, encoded: dict[str, Any]) -> dict[str, Any]:
    """Top-100 exact search of ``--queries`` queries over the encoded passages: search alone, and with encoding."""
    encoder = encoded["encoder"]
    vectors = encoded["vectors"]
    doc_ids = [f"d{i}" for i in range(len(vectors))]
    retriever = DenseRetriever(encoder, name="bench").index_vectors(doc_ids, vectors)
    queries = [" ".join(text.split()[:12]) for text in generate(args.queries, seed=29)]
    query_vectors = encoder.encode(queries, kind="query")
    retriever.search_vectors(query_vectors[:8], 100)  # warm-up
    t_search, hits = timed(lambda: retriever.search_vectors(query_vectors, 100), device)
    mapping = {f"q{i}": q for i, q in enumerate(queries)}
    t_total, run = timed(lambda: retriever.batch_search(mapping, k=100), device)
    # Exact scores in float64 on the host: the search's top-10 scores must be theirs (duplicate generated
    # passages tie, so the ids of tied passages may differ in order, the scores may not).
    exact = np.sort(query_vectors[:100].astype(np.float64) @ vectors.T.astype(np.float64), axis=1)[:, ::-1][:, :10]
    found = np.array([[h.score for h in hits[i][:10]] for i in range(len(exact))])
    agree = bool(np.abs(found - exact).max() < 1e-4)
    result = {
        "backend": retriever.backend,
        "queries": len(queries),
        "search_queries_per_second": len(queries) / t_search,
        "end_to_end_queries_per_second": len(queries) / t_total,
        "top10_scores_equal_to_float64": agree,
    }
    log(
        f"search: {len(queries)} queries x {len(vectors)} passages, top 100, backend {retriever.backend}: "
        f"{result['search_queries_per_second']:,.0f} q/s search alone, "
        f"{result['end_to_end_queries_per_second']:,.0f} q/s with query encoding; top-10 scores = float64 exact (1e-4): {agree}"
    )
    return result


# ---------------------------------------------------------------------------------------------- training


def bench_cranfield_training(args: argparse.Namespace) -> dict[str, Any] | None:
    """bench_training.py on Cranfield, the cross-encoder only, with the device's defaults."""
    import bench_training

    argv = [
        "--collections",
        "cranfield",
        "--systems",
        "cross-encoder",
        "--skip-plain",
        "--data",
        str(args.data),
        "--base-model",
        str(args.model),
        *args.training_args,
    ]
    report = bench_training.main(argv)
    cranfield = report.get("results", {}).get("cranfield") if report else None
    if not cranfield:
        return None
    metrics = cranfield["metrics"]
    result = {
        "pairs_per_second": cranfield["cross_encoder_training"]["pairs_per_second"],
        "cross_encoder_nDCG@10": metrics["cross-encoder"]["nDCG@10"],
        "bm25_nDCG@10": metrics["bm25"]["nDCG@10"],
        "interpolated_nDCG@10": metrics.get("interpolated", {}).get("nDCG@10"),
        "settings": report["settings"],
    }
    log(
        f"training: {result['pairs_per_second']:,.0f} pairs/s; Cranfield held-out nDCG@10: "
        f"cross-encoder {result['cross_encoder_nDCG@10']:.4f}, BM25 {result['bm25_nDCG@10']:.4f}"
        + (
            ""
            if result["interpolated_nDCG@10"] is None
            else f", cross-encoder + BM25 {result['interpolated_nDCG@10']:.4f}"
        )
    )
    return result


# ---------------------------------------------------------------------------------------------- main


def int_list(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=30_000 if cuda else 400)
    parser.add_argument("--queries", type=int, default=10_000 if cuda else 50)
    parser.add_argument("--st-batch-sizes", type=int_list, default=[32, 128, 256, 512] if cuda else [32])
    parser.add_argument(
        "--budgets", type=int_list, default=[32_768, 262_144] if cuda else [], help="extra pooljudge token budgets"
    )
    parser.add_argument("--repeat", type=int, default=2 if cuda else 1)
    parser.add_argument("--model", type=Path, default=None, help="encoder folder (default: all-MiniLM-L6-v2)")
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="holds cranfield/")
    parser.add_argument("--device", default=None, help="torch device (default: CUDA when present)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads on the CPU")
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument(
        "--training-args",
        default="",
        help="extra bench_training.py arguments, one string (CPU smoke runs: caps such as --max-train-queries 4)",
    )
    parser.add_argument("--output", type=Path, default=None, help="write the numbers as JSON here")
    args = parser.parse_args(argv)
    args.model = args.model or default_model_path()
    args.training_args = args.training_args.split()
    return args


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
    log(f"bench_gpu: {name}; torch {torch.__version__}; model {args.model}")
    texts = generate(args.passages)
    encoded = bench_encode(args, device, texts)
    report: dict[str, Any] = {
        "device": name,
        "encode": {k: v for k, v in encoded.items() if k not in ("vectors", "encoder")},
        "search": bench_search(args, device, encoded),
    }
    cranfield = args.data / "cranfield" / "cran.all.1400"
    if args.skip_training or not cranfield.is_file():
        log("training: skipped" + ("" if args.skip_training else f" ({cranfield} not found)"))
    else:
        report["training"] = bench_cranfield_training(args)
    if args.output is not None:
        args.output.write_text(json.dumps(report, indent=2, default=str), encoding="utf-8")
    return report


if __name__ == "__main__":
    main()
