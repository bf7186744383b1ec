"""benchmarks/bench_gpu.py's CPU smoke run: every section on small sizes, with a tiny random BERT.

The encoding section checks pooljudge's vectors against sentence-transformers'
on the same texts and model; the search section checks the top-10 scores
against float64 exact ones; the training section runs bench_training.py's
cross-encoder on a toy Cranfield folder.  No timing is asserted.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402

from tests.test_bench_training import VOCAB, write_cranfield  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    # here rather than at import: collecting the suite (in every xdist worker) need not load sentence-transformers
    pytest.importorskip("sentence_transformers")
    sys.path.insert(0, str(REPO / "benchmarks"))
    spec = importlib.util.spec_from_file_location("bench_gpu", REPO / "benchmarks" / "bench_gpu.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_gpu"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))


def test_every_section_runs_on_the_cpu_and_the_vectors_agree(bench, tmp_path, capsys):
    from tests.tiny_models import write_tiny_bert

    model = write_tiny_bert(tmp_path / "tiny", VOCAB + ["music", "city", "river"], dropout=0.0)
    write_cranfield(tmp_path / "data" / "cranfield")
    output = tmp_path / "report.json"
    report = bench.main(
        [
            "--passages", "40", "--queries", "6", "--model", str(model), "--data", str(tmp_path / "data"),
            "--threads", "1", "--output", str(output),
            "--training-args", "--max-train-queries 4 --max-held-out 4 --max-length 32 --dev 0",
        ]
    )  # fmt: skip
    encode = report["encode"]
    rates = encode["passages_per_second"]
    assert set(rates) == {"pooljudge", "sentence-transformers batch 32"}
    assert encode["ratio"] == pytest.approx(rates["pooljudge"] / rates["sentence-transformers batch 32"])
    assert encode["min_cosine"] >= 0.999 and encode["passages"] == 40 and encode["target"] == 1.0
    search = report["search"]
    assert search["backend"] == "faiss" and search["queries"] == 6 and search["top10_scores_equal_to_float64"]
    training = report["training"]
    assert 0.0 <= training["cross_encoder_nDCG@10"] <= 1.0 and training["pairs_per_second"] > 0
    assert training["settings"]["max_length"] == 32 and training["settings"]["max_train_queries"] == 4
    assert json.loads(output.read_text(encoding="utf-8"))["search"] == search
    out = capsys.readouterr().out
    assert "encode: pooljudge" in out and "(target >= 1.0x" in out and "top-10 scores = float64 exact" in out
