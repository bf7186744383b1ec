"""Precision and recall of the error-category detectors (:mod:`core.detectors`) on a labelled set of pairs.

``benchmarks/data/detector_pairs.jsonl`` holds query-passage pairs written for
this table (Chinese and English), each labelled with the categories that truly
apply (possibly none) and carrying what :func:`core.detectors.suggest` needs
for the context-dependent detectors (label, rank, title, earlier chunks,
reference answers, collection word counts).  Every pair goes through
:func:`~core.detectors.suggest`; a category it suggests counts as a true
positive when the label has it, else a false positive; a labelled category it
does not suggest is a false negative.  Only the categories a detector covers
are scored (the hand-assigned ones, such as ``modifier_mismatch``, have no
detector).

Prints a Markdown table, one row per category and an overall (micro-averaged)
row, then the pairs the detectors get wrong::

    | category | pairs | TP | FP | FN | precision | recall |

``--real`` scores instead ``benchmarks/data/detector_real_pairs.jsonl``: pairs
sampled from real labelled collections (``tools/sample_detector_pairs.py``)
and labelled by hand from their text (``detector_real_pairs.md``: sources,
licences, labelling guide).  Only the query and passage go to
:func:`~core.detectors.suggest` (with the pair's language), as on a pool
without titles or document context, so only the detectors that need nothing
more are scored (:data:`REAL_CATEGORIES`); the table has one row per category
and language (``zh``, ``en``, ``all``) and an overall micro row per language::

    | category | lang | pairs | TP | FP | FN | precision | recall |

``--split dev|test|all`` (with ``--real``) scores one half of the real pairs
(:func:`split_pairs`: seeded, by query): the detectors are tuned on the dev half
only and the test half reports how that carries over.  ``--split both`` prints
the two halves side by side (:func:`split_markdown`, the README's table).

Usage: python benchmarks/bench_detectors.py [--pairs PATH] [--real [--real-pairs PATH] [--split dev|test|all|both]] [--quiet]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.detectors import DETECTORS, category_ids, suggest  # noqa: E402

PAIRS = Path(__file__).resolve().parent / "data" / "detector_pairs.jsonl"
CATEGORIES = tuple(dict.fromkeys(d.category for d in DETECTORS))
"""The scored categories: those of the detectors, in registry order, each once (two detectors may share one)."""
_INPUTS = ("label", "score", "rank", "title", "earlier_chunks", "term_frequencies", "answers")
REAL_PAIRS = PAIRS.with_name("detector_real_pairs.jsonl")
REAL_CATEGORIES = tuple(dict.fromkeys(d.category for d in DETECTORS if not d.requires))
"""The categories scored on the real pairs: those of detectors needing only the query and passage."""
LANGUAGES = ("zh", "en")
TARGET = {"numeral_mismatch", "entity_mismatch", "syntactic_mismatch"}
"""The categories with the issue's target: precision >= 0.9 at recall >= 0.7 in each language."""
_REAL_FIELDS: dict[str, type[Any]] = {"id": str, "lang": str, "query": str, "passage": str, "expected": list}
_REAL_FIELDS |= {"note": str, "source": str, "grade": int, "ids": list}
SPLIT_SEED = 22
"""The seed of :func:`split_pairs`'s dev / test halves of the real pairs."""
SPLITS = ("dev", "test", "all")


@dataclass(frozen=True)
class Row:
    """One category's counts (or the overall ones, ``category == "overall"``)."""

    category: str
    pairs: int  # labelled pairs having the category
    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None


def load_pairs(path: Path = PAIRS) -> list[dict[str, Any]]:
    """The labelled pairs of ``path`` (JSON lines), checked: unique ids, known expected categories."""
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [p["id"] for p in pairs]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate pair ids")
    for p in pairs:
        unknown = set(p["expected"]) - set(CATEGORIES)
        if unknown:
            raise ValueError(f"{p['id']}: categories without a detector: {sorted(unknown)}")
    return pairs


def predict(pair: Mapping[str, Any]) -> set[str]:
    """The categories :func:`~core.detectors.suggest` gives ``pair``."""
    extras = {k: pair[k] for k in _INPUTS if k in pair}
    return {s.category for s in suggest(pair["query"], pair["passage"], **extras)}


def score_table(pairs: Iterable[Mapping[str, Any]]) -> tuple[list[Row], list[tuple[str, set[str], set[str]]]]:
    """Per-category rows then the overall row, and the ``(id, expected, predicted)`` of the pairs got wrong."""
    counts = {c: [0, 0, 0, 0] for c in CATEGORIES}  # pairs, tp, fp, fn
    wrong = []
    for pair in pairs:
        expected, got = set(pair["expected"]), predict(pair)
        for c in CATEGORIES:
            counts[c][0] += c in expected
            counts[c][1] += c in expected and c in got
            counts[c][2] += c in got and c not in expected
            counts[c][3] += c in expected and c not in got
        if expected != got:
            wrong.append((pair["id"], expected, got))
    rows = [Row(c, *n) for c, n in counts.items()]
    overall = Row("overall", *(sum(getattr(r, f) for r in rows) for f in ("pairs", "tp", "fp", "fn")))
    return [*rows, overall], wrong


def load_real_pairs(path: Path = REAL_PAIRS) -> list[dict[str, Any]]:
    """The hand-labelled real pairs of ``path`` (JSON lines), checked.

    Raises
    ------
    ValueError
        Naming the line and the problem: a field missing or of the wrong type,
        a duplicate id, a language other than ``zh``/``en``, a category outside
        the taxonomy.
    """
    known, pairs, seen = set(category_ids()), [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        pair = json.loads(line)
        for name, kind in _REAL_FIELDS.items():
            if not isinstance(pair.get(name), kind):
                raise ValueError(f"{path.name} line {number}: field {name!r} missing or not a {kind.__name__}")
        if pair["id"] in seen:
            raise ValueError(f"{path.name} line {number}: duplicate id {pair['id']!r}")
        if pair["lang"] not in LANGUAGES:
            raise ValueError(f"{path.name} line {number}: language {pair['lang']!r} is not zh or en")
        if set(pair["expected"]) - known:
            raise ValueError(f"{path.name} line {number}: unknown categories {sorted(set(pair['expected']) - known)}")
        seen.add(pair["id"])
        pairs.append(pair)
    return pairs


def split_pairs(pairs: Sequence[Mapping[str, Any]], part: str, *, seed: int = SPLIT_SEED) -> list[Any]:
    """The ``dev`` or ``test`` half of the real pairs (``all``: every pair), split by query.

    A pair's half is the parity of the SHA-256 of ``seed``, its language and
    its stripped query, so all the pairs of one query fall in the same half
    (a rule tuned on a query's dev pairs is never scored on its other ones),
    the halves hold about half of each language, and adding pairs never moves
    the others.  The detectors are developed on ``dev`` only; ``test`` says how
    that carries over.

    Parameters
    ----------
    pairs : sequence of mapping
        Real pairs, as :func:`load_real_pairs` gives them (``lang``, ``query``).
    part : {"dev", "test", "all"}
        The half wanted.
    seed : int, optional
        Another seed draws other halves.

    Returns
    -------
    list
        The pairs of that half, in their order.

    Raises
    ------
    ValueError
        When ``part`` is none of :data:`SPLITS`.
    """
    if part not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, not {part!r}")
    if part == "all":
        return list(pairs)
    want = 0 if part == "dev" else 1
    return [p for p in pairs if _half(seed, p["lang"], p["query"]) == want]


def _half(seed: int, lang: str, query: str) -> int:
    key = f"{seed}\0{lang}\0{query.strip()}".encode()
    return hashlib.sha256(key).digest()[0] % 2


def count_rows(outcomes: Iterable[tuple[set[str], set[str]]], categories: Sequence[str]) -> list[Row]:
    """Per-category rows then the overall (micro) row, from ``(expected, predicted)`` category sets."""
    counts = {c: [0, 0, 0, 0] for c in categories}  # pairs, tp, fp, fn
    for expected, got in outcomes:
        for c in categories:
            counts[c][0] += c in expected
            counts[c][1] += c in expected and c in got
            counts[c][2] += c in got and c not in expected
            counts[c][3] += c in expected and c not in got
    rows = [Row(c, *n) for c, n in counts.items()]
    overall = Row("overall", *(sum(getattr(r, f) for r in rows) for f in ("pairs", "tp", "fp", "fn")))
    return [*rows, overall]


def predict_real(pair: Mapping[str, Any]) -> set[str]:
    """The categories :func:`~core.detectors.suggest` gives a real pair from its query, passage and language."""
    return {s.category for s in suggest(pair["query"], pair["passage"], language=pair["lang"])}


def real_table(
    pairs: Sequence[Mapping[str, Any]], categories: Sequence[str] = REAL_CATEGORIES
) -> tuple[dict[str, list[Row]], list[tuple[str, set[str], set[str]]]]:
    """Rows per language (``zh``, ``en`` and ``all``), and the ``(id, expected, predicted)`` of the pairs got wrong.

    Only ``categories`` count: a labelled category without a detector (``modifier_mismatch``) is left out.
    """
    outcomes = []
    for pair in pairs:
        expected, got = set(pair["expected"]) & set(categories), predict_real(pair) & set(categories)
        outcomes.append((pair["lang"], pair["id"], expected, got))
    tables = {lang: count_rows([(e, g) for la, _, e, g in outcomes if la == lang], categories) for lang in LANGUAGES}
    tables["all"] = count_rows([(e, g) for _, _, e, g in outcomes], categories)
    return tables, [(pid, e, g) for _, pid, e, g in outcomes if e != g]


def real_markdown(tables: Mapping[str, Sequence[Row]], n_pairs: Mapping[str, int]) -> str:
    """The per-language table as Markdown, rows grouped by category (the README quotes it)."""
    sizes = ", ".join(f"{n} {lang}" for lang, n in n_pairs.items())
    lines = [
        f"| category ({sizes}) | lang | pairs | TP | FP | FN | precision | recall |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for i, category in enumerate(r.category for r in tables["all"]):
        for lang, rows in tables.items():
            r = rows[i]
            name = f"**{category}**" if category == "overall" else category
            cells = f"{r.pairs} | {r.tp} | {r.fp} | {r.fn} | {_share(r.precision)} | {_share(r.recall)}"
            lines.append(f"| {name} | {lang} | {cells} |")
    return "\n".join(lines)


def split_markdown(dev: Mapping[str, Sequence[Row]], test: Mapping[str, Sequence[Row]]) -> str:
    """The dev and test halves' rows side by side as Markdown, per category and language (the README quotes it)."""
    lines = [
        "| category | lang | dev pairs | dev TP/FP/FN | dev P | dev R | test pairs | test TP/FP/FN | test P | test R |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for i, category in enumerate(r.category for r in dev["all"]):
        name = f"**{category}**" if category == "overall" else category
        for lang in LANGUAGES:
            cells = [
                f"{r.pairs} | {r.tp}/{r.fp}/{r.fn} | {_share(r.precision)} | {_share(r.recall)}"
                for r in (dev[lang][i], test[lang][i])
            ]
            lines.append(f"| {name} | {lang} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def target_gaps(tables: Mapping[str, Sequence[Row]]) -> list[str]:
    """One line per :data:`TARGET` category and language (zh, en) saying whether it meets P >= 0.9 at R >= 0.7."""
    lines = []
    for lang in LANGUAGES:
        for r in tables[lang]:
            if r.category in TARGET:
                p, rc = r.precision, r.recall
                met = p is not None and rc is not None and p >= 0.9 and rc >= 0.7
                verdict = "meets" if met else "misses"
                lines.append(
                    f"{r.category} {lang}: {verdict} the target (P {_share(p)}, R {_share(rc)}, {r.pairs} pairs)"
                )
    return lines


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def markdown(rows: Sequence[Row], n_pairs: int) -> str:
    """The table as Markdown (the README quotes it)."""
    lines = [
        f"| category ({n_pairs} pairs) | pairs | TP | FP | FN | precision | recall |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        name = f"**{r.category}**" if r.category == "overall" else r.category
        lines.append(f"| {name} | {r.pairs} | {r.tp} | {r.fp} | {r.fn} | {_share(r.precision)} | {_share(r.recall)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=Path, default=PAIRS, help="labelled pairs, JSON lines")
    parser.add_argument("--quiet", action="store_true", help="the table only, not the pairs got wrong")
    parser.add_argument("--real", action="store_true", help="score the hand-labelled real pairs instead")
    parser.add_argument("--real-pairs", type=Path, default=REAL_PAIRS, help="real labelled pairs, JSON lines")
    parser.add_argument(
        "--split", choices=(*SPLITS, "both"), default="all", help="which half of the real pairs (by query, seeded)"
    )
    args = parser.parse_args(argv)
    if args.real and args.split == "both":
        return _main_both(args.real_pairs)
    if args.real:
        return _main_real(args.real_pairs, args.quiet, args.split)
    pairs = load_pairs(args.pairs)
    rows, wrong = score_table(pairs)
    print(markdown(rows, len(pairs)))
    if not args.quiet and wrong:
        print("\npairs got wrong (expected / suggested):")
        for pid, expected, got in wrong:
            print(f"  {pid}: {sorted(expected) or '-'} / {sorted(got) or '-'}")
    return 0


def _main_both(path: Path) -> int:
    pairs = load_real_pairs(path)
    halves = {part: split_pairs(pairs, part) for part in ("dev", "test")}
    sizes = {part: {lang: sum(p["lang"] == lang for p in half) for lang in LANGUAGES} for part, half in halves.items()}
    print(f"dev {sizes['dev']}, test {sizes['test']} pairs (seed {SPLIT_SEED})\n")
    tables = {part: real_table(half)[0] for part, half in halves.items()}
    print(split_markdown(tables["dev"], tables["test"]))
    for part in ("dev", "test"):
        print(f"\ntarget on {part} (precision >= 0.9 at recall >= 0.7):")
        for line in target_gaps(tables[part]):
            print(f"  {line}")
    return 0


def _main_real(path: Path, quiet: bool, split: str = "all") -> int:
    pairs = split_pairs(load_real_pairs(path), split)
    tables, wrong = real_table(pairs)
    print(real_markdown(tables, {lang: sum(p["lang"] == lang for p in pairs) for lang in LANGUAGES}))
    print("\ntarget (precision >= 0.9 at recall >= 0.7):")
    for line in target_gaps(tables):
        print(f"  {line}")
    if not quiet and wrong:
        print("\npairs got wrong (expected / suggested, scored categories only):")
        for pid, expected, got in wrong:
            print(f"  {pid}: {sorted(expected) or '-'} / {sorted(got) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
