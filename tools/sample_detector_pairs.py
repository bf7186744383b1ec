"""Sample real query-passage pairs for the detector benchmark (``benchmarks/data/detector_real_pairs.jsonl``).

Draws pairs from labelled collections nobody on the project wrote (and from the
demo collection's own graded judgments), favouring what the error-analysis
dashboard must explain: pairs graded 0 or 1 whose passage is *on topic*
(shares salient words with the query), plus a share of relevant pairs (grade
2-3) that no mismatch category should fire on.  Long passages are trimmed to
the window of whole sentences that overlaps the query most, so a labeller can
read each pair in full.

The sample is reproducible: one seed, sources read in a fixed order, ties
broken by ids.  New pairs come *without* labels (``expected`` and ``note``
empty); labels are added by hand (see ``benchmarks/data/detector_real_pairs.md``).
Re-running the sampler over a labelled file keeps the labels of the pairs it
draws again (matched by source and ids); ``--fresh`` drops them.

Sources (under ``--data``, default ``../shared/data`` next to the project):

* ``demo``: ``pooljudge/demo`` graded qrels (0-3), English and Chinese, same-language pairs only.
* ``rgb-zh``: ``rgb-zh/zh_refine.json``, each query's most on-topic negative
  (grade 0) and, for some queries, a positive (grade 2: it contains the answer).
* ``dbpedia``: ``agentset-dbpedia-subset`` BEIR qrels (0/1/2 kept as grades).
* ``cranfield``: ``cranfield`` qrels, Cleverdon codes 1-4 mapped to grades 3-0 (``4 - code``).
* ``dapr-nq``: ``dapr-sample/NaturalQuestions``, judged chunks (grade 2) and
  unjudged chunks of the same document (grade 0, on topic by construction).
* ``*-focus``: more on-topic low-grade pairs of a source whose query holds a
  number or a direction frame (for RGB, any of its negatives), so that the
  numeral and syntactic categories have enough positives to measure.

Usage: python tools/sample_detector_pairs.py [--data DIR] [--out PATH] [--seed N] [--fresh]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "data" / "detector_real_pairs.jsonl"
DEMO = ROOT / "pooljudge" / "demo"
DATA = ROOT.parent / "shared" / "data"

# How many pairs each source gives: (low grades 0-1, high grades 2-3).
QUOTAS = {
    "demo-en": (60, 14),
    "demo-zh": (50, 14),
    "rgb-zh": (100, 16),
    "dbpedia": (34, 8),
    "cranfield": (22, 8),
    "dapr-nq": (6, 4),
    # Focus strata, drawn after the ones above (so adding them left those draws unchanged): on-topic
    # low-grade pairs whose query holds a number or a direction frame, the cues of the numeral and
    # syntactic categories, which a plain sample holds too few of to measure recall.
    "demo-en-focus": (16, 0),
    "rgb-zh-focus": (34, 0),
    "cranfield-focus": (8, 0),
    "dbpedia-focus": (6, 0),
}
WINDOW = {"en": 480, "zh": 260}  # characters of passage kept around the best-overlapping sentences
MIN_OVERLAP = 0.2  # share of the query's salient units the passage must contain to count as on topic
_EN_STOP = frozenset(
    "a an the of in on at to for from by with and or is are was were be been what which who whom whose when "
    "where why how do does did can could should would will i you it its this that these those as into about "
    "than then there their they he she his her we our not no any all some many much most more".split()
)
_SENTENCE = re.compile(r"[^。！？!?；;]+[。！？!?；;]?|[^.]+(?:\.(?=\s|$))?", re.S)
_CJK = re.compile(r"[\u4e00-\u9fff]")
_NUMBER = re.compile(
    r"\d|第[一二三四五六七八九十百两]|[一二三四五六七八九十两][年届次代级号]|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|first|second|third|fourth|fifth|last)\b",
    re.I,
)
_DIRECTION = re.compile(
    r"\bfrom\b.+\bto\b|\bconvert|\binto\b|\bbeat|\bdefeat|从.+[到至往]|[成至]|飞往|战胜|打败|换算", re.I
)


def units(text: str, lang: str) -> set[str]:
    """Salient units of ``text``: CJK character bigrams and numbers (zh), content words (en)."""
    low = text.lower()
    if lang == "zh":
        chars = "".join(ch if _CJK.match(ch) else " " for ch in low).split()
        grams = {w[i : i + 2] for w in chars for i in range(len(w) - 1)}
        return grams | set(re.findall(r"[a-z0-9]+", low))
    return {w for w in re.findall(r"[a-z0-9]+", low) if w not in _EN_STOP and len(w) > 1}


def overlap(query: str, passage: str, lang: str) -> float:
    """Share of the query's salient units found in the passage (0 when the query has none)."""
    q = units(query, lang)
    return len(q & units(passage, lang)) / len(q) if q else 0.0


def trim(query: str, passage: str, lang: str) -> str:
    """``passage`` itself when short, else the run of whole sentences within the window that overlaps most."""
    text = " ".join(passage.split()) if lang == "en" else passage.strip()
    limit = WINDOW[lang]
    if len(text) <= limit:
        return text
    sentences = [s for s in (m.group(0) for m in _SENTENCE.finditer(text)) if s.strip()]
    best, best_key = text[:limit], (-1.0, 0)
    for i in range(len(sentences)):
        window = ""
        for s in sentences[i:]:
            if window and len(window) + len(s) > limit:
                break
            window += s
        window = window.strip()[:limit]
        key = (overlap(query, window, lang), -i)
        if key > best_key:
            best, best_key = window, key
    return best


def _digest(text: str) -> str:
    """A stable id for a passage that has none (RGB): the first 12 hex digits of its SHA-1."""
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def demo_pairs(lang: str) -> Iterator[dict[str, Any]]:
    """The demo collection's judged same-language pairs of ``lang``."""
    queries = {q["_id"]: q for q in _jsonl(DEMO / "queries.jsonl")}
    corpus = {p["_id"]: p for p in _jsonl(DEMO / "corpus.jsonl")}
    for split in ("test", "dev", "train"):
        lines = (DEMO / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]
        for line in lines:
            qid, pid, grade = line.split("\t")
            q, p = queries[qid], corpus[pid]
            if q["language"] == lang == p["language"]:
                yield {"query": q["text"], "passage": p["text"], "grade": int(grade), "ids": [qid, pid]}


def rgb_pairs(data: Path, every_negative: bool = False) -> Iterator[dict[str, Any]]:
    """Per RGB query: its most on-topic negative (or every negative) as grade 0, its first positive as grade 2."""
    for row in _jsonl(data / "rgb-zh" / "zh_refine.json"):
        negatives = sorted(set(row["negative"]), key=lambda t: (-overlap(row["query"], t, "zh"), t))
        for negative in negatives if every_negative else negatives[:1]:
            yield {"query": row["query"], "passage": negative, "grade": 0, "ids": [str(row["id"]), _digest(negative)]}
        if row["positive"]:
            first = row["positive"][0]
            yield {"query": row["query"], "passage": first, "grade": 2, "ids": [str(row["id"]), _digest(first)]}


def dbpedia_pairs(data: Path) -> Iterator[dict[str, Any]]:
    """The dbpedia subset's judged pairs (title and abstract as the passage)."""
    root = data / "agentset-dbpedia-subset"
    queries = {q["_id"]: q["text"] for q in _jsonl(root / "queries.jsonl")}
    corpus = {d["_id"]: f"{d['title']}. {d['text']}" for d in _jsonl(root / "corpus.jsonl")}
    for line in (root / "qrels" / "test.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        qid, did, grade = line.split("\t")
        if qid in queries and did in corpus:
            yield {"query": queries[qid], "passage": corpus[did], "grade": int(grade), "ids": [qid, did]}


def _smart(path: Path) -> list[dict[str, str]]:
    """Records of a SMART file (``.I`` starts one, ``.T``/``.A``/``.B``/``.W`` fields)."""
    records: list[dict[str, str]] = []
    field = ""
    for line in path.read_text(encoding="utf-8").replace("\r\n", "\n").splitlines():
        if line.startswith(".I"):
            records.append({"I": line[2:].strip()})
            field = ""
        elif line[:2] in {".T", ".A", ".B", ".W"}:
            field = line[1]
            records[-1][field] = ""
        elif field:
            records[-1][field] += " " + line.strip()
    return records


def cranfield_pairs(data: Path) -> Iterator[dict[str, Any]]:
    """Cranfield's judged pairs; qrel query numbers are positions in ``cran.qry``, codes 1-4 become grades 3-0."""
    root = data / "cranfield"
    queries = [q.get("W", "").strip() for q in _smart(root / "cran.qry")]
    docs = {d["I"]: d.get("W", "").strip() for d in _smart(root / "cran.all.1400")}
    for line in (root / "cranqrel").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) != 3:
            continue
        qnum, did, code = int(parts[0]), parts[1], int(parts[2])
        if 1 <= qnum <= len(queries) and did in docs and 1 <= code <= 4 and queries[qnum - 1]:
            yield {"query": queries[qnum - 1], "passage": docs[did], "grade": 4 - code, "ids": [str(qnum), did]}


def dapr_pairs(data: Path) -> Iterator[dict[str, Any]]:
    """DAPR NaturalQuestions: judged chunks (grade 2) and the same document's other chunks (grade 0)."""
    root = data / "dapr-sample" / "NaturalQuestions"
    for split in ("test", "dev", "train"):
        for row in _jsonl(root / f"{split}.jsonl"):
            query = row["query"]
            judged = {j["chunk"]["id"] for j in row["judged_chunks"]}
            for j in row["judged_chunks"]:
                yield {
                    "query": query["text"],
                    "passage": j["chunk"]["text"],
                    "grade": 2,
                    "ids": [query["id"], j["chunk"]["id"]],
                }
                for chunk in j["belonging_doc"]["chunks"]:
                    if chunk["id"] not in judged:
                        yield {
                            "query": query["text"],
                            "passage": chunk["text"],
                            "grade": 0,
                            "ids": [query["id"], chunk["id"]],
                        }


def _source_pairs(source: str, data: Path, every_negative: bool = False) -> tuple[str, Iterator[dict[str, Any]]]:
    """The language and the candidate pairs of one source (``every_negative``: all of RGB's negatives)."""
    readers = {
        "demo-en": ("en", lambda: demo_pairs("en")),
        "demo-zh": ("zh", lambda: demo_pairs("zh")),
        "rgb-zh": ("zh", lambda: rgb_pairs(data, every_negative)),
        "dbpedia": ("en", lambda: dbpedia_pairs(data)),
        "cranfield": ("en", lambda: cranfield_pairs(data)),
        "dapr-nq": ("en", lambda: dapr_pairs(data)),
    }
    lang, read = readers[source]
    return lang, read()


def has_cue(query: str) -> bool:
    """Whether ``query`` holds a number (digits, Chinese or English number words) or a direction frame."""
    return bool(_NUMBER.search(query) or _DIRECTION.search(query))


def sample_source(
    source: str, data: Path, rng: random.Random, taken: set[tuple[str, str]] | None = None
) -> list[dict[str, Any]]:
    """One source's quota: on-topic low-grade pairs and relevant ones, none of the ``taken`` (query, passage) pairs.

    A ``-focus`` source keeps only low-grade pairs whose query :func:`has_cue`.
    """
    focus = source.endswith("-focus")
    lang, candidates = _source_pairs(source.removesuffix("-focus"), data, every_negative=focus)
    seen: set[tuple[str, str]] = set(taken or ())
    low: list[dict[str, Any]] = []
    high: list[dict[str, Any]] = []
    for pair in candidates:
        key = (pair["query"], pair["passage"])
        if key in seen:
            continue
        seen.add(key)
        pair["overlap"] = overlap(pair["query"], pair["passage"], lang)
        if pair["grade"] <= 1 and pair["overlap"] >= MIN_OVERLAP and (not focus or has_cue(pair["query"])):
            low.append(pair)
        elif pair["grade"] >= 2:
            high.append(pair)
    n_low, n_high = QUOTAS[source]
    picked = _spread(low, n_low, rng) + _spread(high, n_high, rng)
    return [_record(source, lang, i, pair) for i, pair in enumerate(picked)]


def _spread(pairs: list[dict[str, Any]], n: int, rng: random.Random) -> list[dict[str, Any]]:
    """Up to ``n`` pairs, at most one per query first (then more), in a seeded random order."""
    pairs = sorted(pairs, key=lambda p: (p["ids"][0], p["ids"][1]))
    rng.shuffle(pairs)
    firsts: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    queries: set[str] = set()
    for pair in pairs:
        (rest if pair["query"] in queries else firsts).append(pair)
        queries.add(pair["query"])
    return (firsts + rest)[:n]


def _record(source: str, lang: str, index: int, pair: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"{source}-{index:03d}",
        "lang": lang,
        "query": pair["query"],
        "passage": trim(pair["query"], pair["passage"], lang),
        "original": pair["passage"],
        "expected": [],
        "note": "",
        "source": source,
        "grade": pair["grade"],
        "ids": pair["ids"],
    }


def existing_labels(path: Path) -> dict[tuple[str, ...], tuple[list[str], str]]:
    """The hand labels (``expected``, ``note``) of an earlier output, by source and ids: a re-run keeps them."""
    return {(r["source"], *r["ids"]): (r["expected"], r["note"]) for r in _jsonl(path)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default: ../shared/data)")
    parser.add_argument("--out", type=Path, default=OUT, help="where to write the unlabelled pairs (JSON lines)")
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--fresh", action="store_true", help="drop the labels of an existing --out file")
    args = parser.parse_args(argv)
    labels = {} if args.fresh or not args.out.exists() else existing_labels(args.out)
    rng = random.Random(args.seed)
    records: list[dict[str, Any]] = []
    taken: set[tuple[str, str]] = set()
    for source in QUOTAS:
        for r in sample_source(source, args.data, rng, taken):
            key = (r["source"], *r["ids"])
            r["expected"], r["note"] = labels.get(key, ([], ""))
            records.append(r)
            taken.add((r["query"], r["original"]))
    for r in records:
        del r["original"]
    lines = [json.dumps(r, ensure_ascii=False) for r in records]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    by_lang = {lang: sum(r["lang"] == lang for r in records) for lang in ("en", "zh")}
    print(f"{len(records)} pairs ({by_lang['en']} en, {by_lang['zh']} zh) -> {args.out.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
