"""Time pooljudge's BiEncoder against a plain transformers loop on the same texts.

Generates a few hundred passages of mixed length (most short, some long:
the shape of real corpora), then, in this one process and with the same
all-MiniLM-L6-v2 weights, measures passages per second of

* pooljudge: ``BiEncoder(default_model_path()).encode(texts)`` -- tokenise
  once, batches of 32 sorted by token length (longest first), mean pooling,
  L2 normalisation;
* pooljudge without length sorting (``sort_by_length=False``): the gain of
  sorting alone;
* plain loop: the textbook transformers recipe -- batches of 32 in input
  order, ``tokenizer(batch, padding=True, truncation=True, max_length=256)``,
  forward, masked mean, normalise.

All three must give the same vectors (checked to 1e-4) before any timing
counts.  Prints e.g.::

    dense encode: pooljudge 41.0 p/s, plain loop 20.3 p/s (2.02x, target >= 1.0x); length sorting gain 1.9x

``--dbpedia`` also encodes the DBpedia subset (``../shared/data/agentset-dbpedia-subset``,
title + " " + text, 5,000 passages: minutes on a CPU, seconds on a GPU;
passage vectors go through the embedding cache, so a second run is fast),
retrieves the top 100 per query with a flat index and prints nDCG@10
(trec_eval semantics, relevance level 1) and R@100.

Usage: python benchmarks/bench_dense.py [--passages N] [--repeat N] [--threads N] [--dbpedia [FOLDER]]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from core.retrieval.dense import BiEncoder, DenseRetriever, default_model_path  # noqa: E402

TARGET = 1.0
BATCH = 32
MAX_LENGTH = 256
DBPEDIA = REPO.parent / "shared" / "data" / "agentset-dbpedia-subset"

_FALLBACK_WORDS = (
    "the of and to in is was for on with as by at from city river music team company language science "
    "history system water energy population century government university between during first largest "
    "known world national early people later region history album season played built century"
).split()


def word_pool() -> list[str]:
    """English words from the bundled demo corpus (realistic subword statistics), or a fixed list."""
    corpus = REPO / "pooljudge" / "demo" / "corpus.jsonl"
    words: list[str] = []
    if corpus.is_file():
        import json

        for line in corpus.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec.get("language") == "en":
                words.extend(rec["text"].split())
    return words or _FALLBACK_WORDS


def generate(n: int, seed: int = 13) -> list[str]:
    """Mixed lengths: 65% short (4-30 words), 25% medium (40-110), 10% long (150-320, truncated at 256 tokens)."""
    rng = random.Random(seed)
    words = word_pool()
    texts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.65:
            length = rng.randint(4, 30)
        elif r < 0.90:
            length = rng.randint(40, 110)
        else:
            length = rng.randint(150, 320)
        start = rng.randrange(len(words))
        texts.append(" ".join(words[(start + i) % len(words)] for i in range(length)))
    rng.shuffle(texts)
    return texts


def plain_loop(tokenizer, model, texts: list[str]) -> np.ndarray:
    """The textbook recipe: input-order batches of 32, pad to the batch's longest, masked mean, normalise."""
    out = []
    with torch.inference_mode():
        for start in range(0, len(texts), BATCH):
            batch = tokenizer(
                texts[start : start + BATCH], padding=True, truncation=True, max_length=MAX_LENGTH, return_tensors="pt"
            )
            hidden = model(**batch).last_hidden_state
            mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            out.append(torch.nn.functional.normalize(pooled, p=2, dim=1))
    return torch.cat(out).numpy()


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def bench_encode(texts: list[str], repeat: int) -> None:
    from transformers import AutoModel, AutoTokenizer

    path = default_model_path()
    encoder = BiEncoder(path, batch_size=BATCH, max_length=MAX_LENGTH, device="cpu")
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()

    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=MAX_LENGTH)["input_ids"]]
    print(
        f"{len(texts)} passages, tokens per passage: median {int(np.median(lengths))}, "
        f"mean {np.mean(lengths):.0f}, max {max(lengths)}; torch threads {torch.get_num_threads()}"
    )

    # warm up both paths (first calls allocate and pick kernels)
    encoder.encode(texts[:BATCH])
    plain_loop(tokenizer, model, texts[:BATCH])

    ours_sorted = ours_unsorted = plain = float("inf")
    vectors: dict[str, np.ndarray] = {}
    for _ in range(repeat):  # interleaved, best of: machine-load drift hits every side alike
        t, vectors["sorted"] = timed(lambda: encoder.encode(texts))
        ours_sorted = min(ours_sorted, t)
        t, vectors["plain"] = timed(lambda: plain_loop(tokenizer, model, texts))
        plain = min(plain, t)
        t, vectors["unsorted"] = timed(lambda: encoder.encode(texts, sort_by_length=False))
        ours_unsorted = min(ours_unsorted, t)

    for label in ("sorted", "unsorted"):
        diff = float(np.abs(vectors[label] - vectors["plain"]).max())
        if diff > 1e-4:
            raise SystemExit(f"pooljudge ({label}) and the plain loop disagree: max |diff| = {diff:.2e}")

    n = len(texts)
    ratio = plain / ours_sorted
    verdict = "ok" if ratio >= TARGET else "SLOWER THAN TARGET"
    print(
        f"dense encode: pooljudge {n / ours_sorted:.1f} p/s, plain loop {n / plain:.1f} p/s "
        f"({ratio:.2f}x, target >= {TARGET}x) {verdict}; length sorting gain {ours_unsorted / ours_sorted:.2f}x "
        f"(pooljudge unsorted {n / ours_unsorted:.1f} p/s)"
    )


def bench_dbpedia(folder: Path) -> None:
    from core.formats.beir import read_beir
    from core.metrics import evaluate

    source = read_beir(folder)
    passages = list(source.passages())
    queries = {q.id: q.text for q in source.queries()}
    qrels: dict[str, dict[str, int]] = {}
    for entry in source.qrels():
        qrels.setdefault(entry.query_id, {})[entry.doc_id] = entry.grade
    texts = [f"{p.title} {p.text}".strip() for p in passages]
    encoder = BiEncoder(default_model_path(), batch_size=BATCH, max_length=MAX_LENGTH)
    retriever = DenseRetriever(encoder, name="minilm")

    last = [0.0]
    calls = [0]

    def progress(done: int, total: int) -> None:
        calls[0] += 1
        now = time.perf_counter()
        if now - last[0] > 15 or done == total:
            last[0] = now
            print(f"  encoded {done}/{total}", flush=True)

    t_index, _ = timed(lambda: retriever.index([p.id for p in passages], texts, progress=progress))
    cached = calls[0] == 1 and len(passages) > BATCH  # a cache hit reports progress once, at the end
    source_of_vectors = (
        "vectors from the embedding cache" if cached else f"encoded at {len(passages) / t_index:.1f} p/s"
    )
    t_search, run = timed(lambda: retriever.batch_search(queries, k=100))
    scores = evaluate(qrels, run, ["nDCG@10", "R@100"], level=1)
    print(
        f"dbpedia subset ({len(passages)} passages, {len(queries)} queries, {len(qrels)} judged): "
        f"MiniLM nDCG@10 {scores['nDCG@10']['all']:.4f}, R@100 {scores['R@100']['all']:.4f} "
        f"(index {t_index:.1f} s, {source_of_vectors}, search {t_search:.2f} s, "
        f"device {encoder.device}, fp16 {encoder.fp16})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds; the best time of each side counts")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own choice)")
    parser.add_argument("--dbpedia", nargs="?", const=DBPEDIA, type=Path, default=None, metavar="FOLDER")
    parser.add_argument("--skip-encode", action="store_true", help="only run --dbpedia")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if not args.skip_encode:
        bench_encode(generate(args.passages), args.repeat)
    if args.dbpedia is not None:
        bench_dbpedia(args.dbpedia)


if __name__ == "__main__":
    main()
