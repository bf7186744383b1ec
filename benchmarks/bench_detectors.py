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

Usage: python benchmarks/bench_detectors.py [--pairs PATH] [--quiet]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.detectors import DETECTORS, suggest  # noqa: E402

PAIRS = Path(__file__).resolve().parent / "data" / "detector_pairs.jsonl"
CATEGORIES = tuple(d.category for d in DETECTORS)
"""The scored categories: one per detector, in registry order."""
_INPUTS = ("label", "score", "rank", "title", "earlier_chunks", "term_frequencies", "answers")


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
    args = parser.parse_args(argv)
    pairs = load_pairs(args.pairs)
    rows, wrong = score_table(pairs)
    print(markdown(rows, len(pairs)))
    if not args.quiet and wrong:
        print("\npairs got wrong (expected / suggested):")
        for pid, expected, got in wrong:
            print(f"  {pid}: {sorted(expected) or '-'} / {sorted(got) or '-'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
