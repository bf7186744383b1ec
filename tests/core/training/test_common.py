"""core.training.common: seeding, devices, held-out metrics, early stopping, batching, the training record."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from core.training.common import (
    TRAINING_RECORD,
    EarlyStopping,
    autocast,
    length_sorted_batches,
    load_training_record,
    pick_device,
    ranking_metrics,
    save_training_record,
    seed_everything,
)


def test_seed_everything_repeats_torch_draws():
    seed_everything(3)
    a = torch.randn(4)
    seed_everything(3)
    assert torch.equal(a, torch.randn(4))


@pytest.mark.slow  # a fresh interpreter that imports torch: 4.7 s in a full run
def test_seed_everything_makes_kernels_deterministic_without_importing_the_compiler():
    """A training job is a fresh process: torch.use_deterministic_algorithms imports torch._inductor (and dynamo)
    to set its compiler's flag, 1.7 of a job's 16 CPU-s, for a compiler the product never calls."""
    probe = (
        "import sys, os, torch\n"
        "from core.training.common import seed_everything\n"
        "seed_everything(1)\n"
        "print(torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),"
        " 'torch._inductor' in sys.modules, os.environ['TORCHINDUCTOR_DETERMINISTIC'])\n"
        "import torch._inductor.config as c\n"
        "print(c.deterministic)\n"
    )
    shown = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    # deterministic and warn-only, the compiler not imported; imported later, it reads its flag from the environment
    assert shown.split() == ["True", "True", "False", "1", "True"]


def test_pick_device_and_autocast_on_cpu():
    assert pick_device("cpu").type == "cpu"
    assert pick_device(None).type == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device"):
        pick_device("nonsense")
    with autocast(torch.device("cpu"), True):  # a no-op on the CPU: float32 stays float32
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32


def test_ranking_metrics_is_trec_eval_exact():
    # q1: the relevant "a" at rank 2 -> nDCG@10 = (1/log2(3)) / 1 = 0.6309..., RR = 1/2
    # q2: judged but missing from the run -> 0 and 0 (trec_eval -c)
    out = ranking_metrics({"q1": {"a": 1.0, "b": 2.0}}, {"q1": {"a": 1}, "q2": {"c": 1}}, level=1)
    assert out == pytest.approx({"nDCG@10": 0.6309297535714575 / 2, "MRR@10": 0.25})
    assert list(out) == ["nDCG@10", "MRR@10"]
    assert ranking_metrics({}, {}, 1) == {"nDCG@10": 0.0, "MRR@10": 0.0}


def test_early_stopping_counts_evaluations_without_improvement():
    stopper = EarlyStopping(2)
    assert [stopper.update(v, s) for s, v in enumerate([0.1, 0.3, 0.3])] == [True, True, False]
    assert not stopper.stop and stopper.best == 0.3 and stopper.best_step == 1
    assert stopper.update(0.2, 3) is False and stopper.stop
    with pytest.raises(ValueError, match="patience"):
        EarlyStopping(0)


def test_length_sorted_batches_groups_similar_lengths_and_is_seeded():
    lengths = [5, 1, 3, 2, 4, 6]
    batches = length_sorted_batches(lengths, 2, seed=0)
    assert sorted(i for b in batches for i in b) == list(range(6))
    assert batches == length_sorted_batches(lengths, 2, seed=0)
    # sorted by length: 1(1) 3(2) 2(3) 4(4) 0(5) 5(6) -> pairs [1,3] [2,4] [0,5]
    assert sorted(batches) == [[0, 5], [1, 3], [2, 4]]


def test_training_record_round_trip(tmp_path):
    assert load_training_record(tmp_path) is None
    record = {"kind": "cross-encoder", "history": [{"step": 1, "eval": {"nDCG@10": 0.5}}], "path": tmp_path}
    save_training_record(tmp_path, record)
    assert json.loads((tmp_path / TRAINING_RECORD).read_text())["kind"] == "cross-encoder"
    assert load_training_record(tmp_path) == {**record, "path": str(tmp_path)}
    (tmp_path / TRAINING_RECORD).write_text("[1]")
    with pytest.raises(ValueError, match=TRAINING_RECORD):
        load_training_record(tmp_path)


def test_tiny_encoder_folder_loads(tiny_encoder_folder):
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(tiny_encoder_folder, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(tiny_encoder_folder, local_files_only=True)
    assert model.config.hidden_size == 32
    assert tokenizer("what about bread ?", "bread is good .")["input_ids"][0] == tokenizer.cls_token_id
