"""Cross-encoder training on a GPU: the old training code against the fixed one, Cranfield, GPU defaults, one process.

Not a test.  Issue #19 saw ``bench_training.py --collections cranfield`` on an
H100 give a cross-encoder with held-out nDCG@10 0.2157 (later 0.0742, and NaN
scores) against 0.4463 for the CPU defaults.  The cause
(:func:`core.training.common.float32_weights`): all-MiniLM-L6-v2 reaches the
GPU machine as an fp16 copy (the float32 folder is too large to carry), and
transformers 5 loads a folder in the dtype it stores, so AdamW trained fp16
weights, which turn NaN; one NaN gradient then poisoned every weight through
the clipping factor (now such a step is skipped).  Run from the repository
root::

    python benchmarks/gpu_training_check.py --data FOLDER --base-model MINILM_FOLDER [--arms old,old-fp32,fixed]

Arms, each trained on the same split, lists and seed as ``bench_training.py``
(BM25 top-100 candidates, a seeded 30 % held-out split, 15 % of the training
queries as the dev split that picks the best epoch), with the device's
defaults (on CUDA: 3 epochs, 16 lists of 1 positive + 7 negatives, max length
256, bf16 autocast, learning rate 3e-5):

* ``old``: the training code of ``44dbb55``, patched back in for this
  comparison only: weights in whatever dtype the folder stores, every step
  applied, NaN scores ranked silently;
* ``old-fp32``: the same old code from a float32 copy of ``--base-model``
  written here: if it learns, the weights' dtype was the whole cause;
* ``fixed``: the code as it is.

Prints one line per arm: held-out nDCG@10 and MRR@10 (and BM25's), training
pairs/s, steps with a non-finite gradient norm, the saved weights' dtype and
whether they are finite, the dev history; ``--output`` writes it as JSON.
Needs torch, transformers, numpy, safetensors, bm25s, PyStemmer and
pytrec_eval (the project's Cranfield reader, BM25 and metrics).  About a
minute per arm on one H100.
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
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DISABLE_TQDM", "1")

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

import bench_training as bt  # noqa: E402
import torch  # noqa: E402

import core.retrieval.ensemble as ensemble  # noqa: E402
import core.training.cross_encoder as cross_encoder  # noqa: E402
from core.training.common import TrainingLoop, autocast, float32_weights  # noqa: E402

ARMS = ("old", "old-fp32", "fixed")


def old_train_step(self: TrainingLoop, batch: Any, step_fn: Any, optimizer: Any, scheduler: Any) -> None:
    """``TrainingLoop._train_step`` as it was at 44dbb55: every step applied, finite or not."""
    started = time.perf_counter()
    self.train_mode(True)
    with autocast(self.device, bool(self.config.mixed_precision) and self.autocast_steps):
        loss, pairs, terms = step_fn(batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(self.params, 1.0)
    optimizer.step()
    scheduler.step()
    optimizer.zero_grad(set_to_none=True)
    loss_value = float(loss.detach())
    self.train_seconds += time.perf_counter() - started
    self.pairs += pairs
    self.step += 1
    self._since += 1
    for k, v in {"loss": loss_value, **terms}.items():
        self._sums[k] = self._sums.get(k, 0.0) + v
    if self.progress is not None:
        self.progress(self.step, self.total)


@contextlib.contextmanager
def old_code() -> Iterator[None]:
    """The three behaviours the fix changed, as they were (private names on purpose: this is a before/after check)."""
    with (
        mock.patch.object(cross_encoder, "float32_weights", lambda: {}),
        mock.patch.object(TrainingLoop, "_train_step", old_train_step),
        mock.patch.object(ensemble, "_check_finite", lambda *a, **k: None),
    ):
        yield


@contextlib.contextmanager
def counting_norms(norms: list[float]) -> Iterator[None]:
    """Record every total gradient norm the training loop computes."""
    real = torch.nn.utils.clip_grad_norm_

    def recording(*args: Any, **kwargs: Any) -> Any:
        norm = real(*args, **kwargs)
        norms.append(float(norm))
        return norm

    with mock.patch.object(torch.nn.utils, "clip_grad_norm_", recording):
        yield


def float32_copy(folder: Path, out: Path) -> Path:
    """``folder``'s model and tokenizer saved again with float32 weights."""
    from transformers import AutoModel, AutoTokenizer

    AutoModel.from_pretrained(folder, local_files_only=True, **float32_weights()).save_pretrained(out)
    AutoTokenizer.from_pretrained(folder, local_files_only=True).save_pretrained(out)
    return out


def saved_weights(folder: Path) -> dict[str, Any]:
    """The dtypes of the saved model's weights and whether every one is finite."""
    from safetensors.torch import load_file

    tensors = load_file(str(folder / "model.safetensors"))
    return {
        "dtypes": sorted({str(t.dtype) for t in tensors.values()}),
        "finite": all(bool(torch.isfinite(t).all()) for t in tensors.values()),
    }


def run_arm(arm: str, base: Path, train: Any, dev: Any, held: Any, args: argparse.Namespace, out: Path) -> dict:
    """Train one arm's cross-encoder, then score the held-out queries with it (as bench_training does)."""
    norms: list[float] = []
    row: dict[str, Any] = {"arm": arm, "base_model": str(base)}
    patches = old_code() if arm.startswith("old") else contextlib.nullcontext()
    with patches, counting_norms(norms):
        try:
            result = cross_encoder.train_cross_encoder(
                train, dev, bt.train_config(args, args.cross_lr), output=out / arm, base_model=base, loss="listwise"
            )
        except (ValueError, FloatingPointError) as exc:  # the fixed code refuses what it cannot train or rank
            row["error"] = f"{type(exc).__name__}: {exc}"
            result = None
        row["steps"], row["nonfinite_steps"] = len(norms), sum(1 for n in norms if not torch.isfinite(torch.tensor(n)))
        if result is not None:
            row["pairs_per_second"] = result.pairs_per_second
            row["train_seconds"] = result.seconds
            row["dev_history"] = [(h["step"], h.get("loss"), h["eval"].get("nDCG@10")) for h in result.history]
            row["weights"] = saved_weights(result.path)
            try:
                run = bt.rerank_run(result.path, held, max_length=args.max_length)
                row["held_out"] = bt.held_out_metrics(run, held)
            except ValueError as exc:
                row["error"] = f"ValueError: {exc}"
    return row


def describe(row: dict[str, Any]) -> str:
    held = row.get("held_out")
    metrics = f"nDCG@10 {held['nDCG@10']:.4f} MRR@10 {held['MRR@10']:.4f}" if held else "nDCG@10 n/a"
    speed = f"{row['pairs_per_second']:,.1f} pairs/s" if "pairs_per_second" in row else "-"
    weights = row.get("weights", {})
    return (
        f"{row['arm']:<9} {metrics}; {speed}; {row['nonfinite_steps']}/{row['steps']} steps non-finite; "
        f"weights {','.join(weights.get('dtypes', ['-']))} finite={weights.get('finite')}; "
        f"dev (step, loss, nDCG@10) {row.get('dev_history')}" + (f"; {row['error']}" if "error" in row else "")
    )


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=bt.DATA, help="the folder holding cranfield/")
    parser.add_argument("--base-model", type=Path, default=None, help="default: the packaged all-MiniLM-L6-v2")
    parser.add_argument("--arms", default="old,fixed", help=f"comma-separated, of {', '.join(ARMS)}")
    parser.add_argument("--cross-lr", type=float, default=3e-5 if cuda else 1e-4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default=None)
    parser.add_argument("--output", type=Path, default=None)
    bt.add_budget_arguments(parser, cuda)
    args = parser.parse_args(argv)
    args.arms = [a.strip() for a in args.arms.split(",") if a.strip()]
    if set(args.arms) - set(ARMS):
        parser.error(f"--arms: unknown {sorted(set(args.arms) - set(ARMS))}")
    if args.base_model is None:
        from core.retrieval.encoder import default_model_path

        args.base_model = default_model_path()
    for name in ("max_train_queries", "max_held_out"):
        if getattr(args, name) == 0:
            setattr(args, name, None)
    return args


def main(argv: Sequence[str] | None = None) -> list[dict[str, Any]]:
    args = parse_args(argv)
    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    name = torch.cuda.get_device_name() if device.startswith("cuda") else "cpu"
    print(f"{name}; torch {torch.__version__}; base model {args.base_model}; arms {args.arms}", flush=True)
    collection = bt.load_collection("cranfield", args.data)
    if collection is None:
        raise SystemExit(f"{args.data}/cranfield not found")
    collection = bt.with_bm25_candidates(collection)
    train, held = bt.split(collection.data, seed=args.seed, max_held_out=args.max_held_out)
    train, dev = bt.split_dev(train, args.dev, seed=args.seed)
    if args.max_train_queries is not None and args.max_train_queries < len(train.trainable()):
        train = train.subset(sorted(random.Random(args.seed).sample(train.trainable(), args.max_train_queries)))
    bm25 = bt.held_out_metrics(collection.bm25_run, held)
    print(
        f"{len(train.queries)} training, {len(dev.queries) if dev else 0} dev, {len(held.queries)} held-out queries; "
        f"BM25 nDCG@10 {bm25['nDCG@10']:.4f} MRR@10 {bm25['MRR@10']:.4f}",
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        for arm in args.arms:
            base = float32_copy(args.base_model, Path(tmp) / "fp32") if arm == "old-fp32" else args.base_model
            rows.append(run_arm(arm, base, train, dev, held, args, Path(tmp)))
            print(describe(rows[-1]), flush=True)
    if args.output is not None:
        args.output.write_text(json.dumps({"bm25": bm25, "arms": rows}, indent=2, default=str), encoding="utf-8")
    return rows


if __name__ == "__main__":
    main()
