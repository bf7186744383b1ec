"""bench_training.py's command line and printed table: the collections and systems, the options, the table.

Not a benchmark itself; ``bench_training.py`` imports it (and re-exports what it imports, which
``bench_default_training.py`` and ``gpu_training_check.py`` use as ``bench_training.<name>``).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
COLLECTIONS = ("cranfield", "rgb-zh")

SYSTEMS = (
    ("bm25", "BM25"),
    ("minilm", "MiniLM (base dual encoder)"),
    ("cross-encoder", "cross-encoder re-ranking BM25@100"),
    ("interpolated", "the same + BM25 (weight from dev)"),
    ("dual-encoder", "dual encoder trained alone"),
    ("rocketqav2", "RocketQAv2 dual encoder"),
)


def format_table(results: dict[str, dict[str, Any]]) -> str:
    """The printed table: one row per (collection, system), then the training speed and the targets."""
    lines = [f"{'collection':<11} {'system':<36} {'nDCG@10':>8} {'MRR@10':>8}   (held-out queries)"]
    for name, res in results.items():
        for key, label in SYSTEMS:
            if key in res["metrics"]:
                m = res["metrics"][key]
                lines.append(f"{name:<11} {label:<36} {m['nDCG@10']:>8.4f} {m['MRR@10']:>8.4f}")
    for name, res in results.items():
        if "cross_encoder_training" in res:
            ce = res["cross_encoder_training"]
            lines.append(
                f"{name}: cross-encoder training {ce['seconds']:.0f} s ({ce['pairs_per_second']:.1f} pairs/s "
                f"in its steps)"
            )
        if "speed" in res:
            sp = res["speed"]
            lines.append(
                f"{name}: training speed, {sp['queries']} queries, {sp['pairs']} pairs, best of {sp['rounds']} "
                f"interleaved: train_cross_encoder {sp['pooljudge_seconds']:.1f} s "
                f"({sp['pooljudge_pairs_per_second']:.1f} pairs/s), plain transformers loop "
                f"{sp['plain_seconds']:.1f} s ({sp['plain_pairs_per_second']:.1f} pairs/s): ratio {sp['ratio']:.2f}x"
            )
    for key, how in (("cross-encoder", "alone"), ("interpolated", "interpolated with BM25")):
        tried = [n for n, r in results.items() if key in r["metrics"]]
        beats = [n for n in tried if results[n]["metrics"][key]["nDCG@10"] > results[n]["metrics"]["bm25"]["nDCG@10"]]
        if tried:
            lines.append(
                f"target 1, re-ranker ({how}) beats BM25 (nDCG@10) on at least one collection: "
                f"{'met on ' + ', '.join(beats) if beats else 'MISSED'}"
            )
    for name, res in results.items():
        m = res["metrics"]
        if "rocketqav2" in m and "dual-encoder" in m:
            delta = m["rocketqav2"]["nDCG@10"] - m["dual-encoder"]["nDCG@10"]
            prior = res.get("rocketqav2_teacher_prior")
            teacher = f"logits + {prior['weight']:g} x BM25 (dev)" if prior else "logits alone"
            lines.append(f"{name}: RocketQAv2's teacher: the cross-encoder's {teacher}")
            lines.append(
                f"target 2, {name}: RocketQAv2 - dual alone = {delta:+.4f} nDCG@10 ({'met' if delta > 0 else 'MISSED'})"
            )
    return "\n".join(lines)


def add_budget_arguments(parser: argparse.ArgumentParser, cuda: bool) -> None:
    """What is trained on and for how long (CUDA defaults: the real benchmark; CPU: a smoke run).

    CUDA trains the CPU's lists (8 per step, 1 positive + 3 negatives) at the
    CPU's rate, only longer (3 epochs, the best chosen on the dev split) and on
    longer pairs.  Bigger lists at a smaller rate (16 lists of 1 + 7 at 3e-5,
    this benchmark's CUDA defaults before) left the cross-encoder near its
    random head on an H100: held-out nDCG@10 0.2194 with float32 weights and
    no non-finite step, 0.3792 at 1e-4 with its dev curve still rising, where
    the CPU's settings reach 0.4463 in one epoch.
    """
    parser.add_argument("--epochs", type=int, default=3 if cuda else 1)
    parser.add_argument("--batch-size", type=int, default=8, help="query lists per step")
    parser.add_argument("--max-length", type=int, default=256 if cuda else 128, help="tokens per (query, passage)")
    parser.add_argument("--negatives", type=int, default=3, help="hard negatives per query list")
    caps = {
        "--max-train-queries": "cap on training queries (a seeded sample); 0 = no cap",
        "--max-held-out": "cap on held-out queries (a seeded sample of the 30%% split); 0 = no cap",
        "--max-queries": "rgb-zh: cap on the queries used (a seeded sample, with their passages); 0 = no cap",
    }
    for flag, text in caps.items():
        parser.add_argument(flag, type=int, default=None if cuda else {"--max-queries": 50}.get(flag, 20), help=text)
    parser.add_argument(
        "--dev",
        type=float,
        default=0.15,
        help="share of the training queries held back as a dev split: the trainers' best epoch and the "
        "re-ranker's BM25 interpolation weight and RocketQAv2's teacher prior weight are chosen on it (0 = none)",
    )


def add_model_arguments(parser: argparse.ArgumentParser, cuda: bool) -> None:
    """Learning rates, the starting model and the RocketQAv2 settings."""
    parser.add_argument(
        "--cross-lr",
        type=float,
        default=1e-4,
        help="cross-encoder learning rate (a new head on a bi-encoder: 3e-5 left it near random in 210 GPU steps)",
    )
    parser.add_argument("--dual-lr", type=float, default=2e-5, help="dual encoder and RocketQAv2 learning rate")
    parser.add_argument(
        "--temperature",
        type=float,
        default=0.05,
        help="temperature of the dual encoders' scores (alone and RocketQAv2)",
    )
    parser.add_argument(
        "--rocketqa-cross",
        choices=("trained", "base"),
        default="trained",
        help="RocketQAv2's cross-encoder starts from the re-ranker trained above (the paper's "
        "choice; needs the cross-encoder system) or from the base model with a new head",
    )
    parser.add_argument(
        "--denoise",
        type=float,
        nargs=2,
        default=None,
        metavar=("LOW", "HIGH"),
        help="RocketQAv2 hybrid data augmentation thresholds (with a trained teacher only)",
    )
    parser.add_argument(
        "--teacher-prior",
        choices=("bm25", "none"),
        default="bm25",
        help="RocketQAv2's distillation target adds BM25's normalised score, its weight chosen on the dev split "
        "(needs the cross-encoder system and --dev), or is the cross-encoder's logits alone (the paper's)",
    )
    parser.add_argument(
        "--base-model", type=Path, default=None, help="starting encoder folder (default: the packaged all-MiniLM-L6-v2)"
    )
    parser.add_argument(
        "--cross-model", type=Path, default=None, help="a trained cross-encoder folder to score instead of training one"
    )


def add_run_arguments(parser: argparse.ArgumentParser, cuda: bool) -> None:
    """Which collections and systems, where, on what, and the speed comparison."""
    parser.add_argument("--collections", default=",".join(COLLECTIONS), help="comma-separated: cranfield,rgb-zh")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default ../shared/data)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's own choice)")
    parser.add_argument("--device", default=None, help="torch device (default: CUDA when present)")
    parser.add_argument(
        "--systems",
        default=",".join(k for k, _ in SYSTEMS[1:] if k != "interpolated"),
        help="comma-separated subset of minilm,cross-encoder,dual-encoder,rocketqav2 (BM25 always)",
    )
    parser.add_argument("--skip-plain", action="store_true", help="skip the speed comparison")
    parser.add_argument(
        "--speed-queries",
        type=int,
        default=None if cuda else 4,
        help="training queries of the speed comparison (a seeded sample); 0 = all",
    )
    parser.add_argument("--speed-rounds", type=int, default=2, help="interleaved rounds of the speed comparison")
    parser.add_argument(
        "--plain-all", action="store_true", help="run the speed comparison on every collection (default: the first)"
    )
    parser.add_argument("--workdir", type=Path, default=None, help="keep the trained models here (default: a temp dir)")
    parser.add_argument("--output", type=Path, default=None, help="write every number as JSON here")
