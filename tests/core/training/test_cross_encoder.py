"""core.training.cross_encoder: the CrossEncoder wrapper and train_cross_encoder, on a tiny random BERT.

The training tests use ``learnable_encoder_folder`` (the tiny BERT with a
larger initial weight scale and no dropout) on ``short_toy_split`` (queries
and their relevant passages share a topic keyword; the held-out queries ask
about the same topics in other words), 100 steps of a few seconds on a CPU.
"""

from __future__ import annotations

import os
import random

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from core.training.common import TRAINING_RECORD, load_training_record  # noqa: E402
from core.training.cross_encoder import (  # noqa: E402
    KIND,
    CrossEncoder,
    _groups,
    evaluate_reranker,
    train_cross_encoder,
)
from core.training.data import LabelledData, TrainConfig  # noqa: E402

PAIRS = [
    ("bread ?", "the bread is good ."),
    ("cat", "a small old dog in the river ."),
    ("music please", "music"),
    ("the fish", "fish fish , the fish is big and the river is old ."),
]


@pytest.fixture(autouse=True)
def _one_thread(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the machine is shared; one thread is also what the determinism test assumes
    yield
    torch.set_num_threads(threads)


def listwise_config(**changes) -> TrainConfig:
    base = dict(
        seed=0,
        epochs=100,
        batch_size=8,
        learning_rate=3e-3,
        negatives=3,
        max_steps=100,
        eval_every=20,
        patience=5,
        max_length=32,
        device="cpu",
    )
    return TrainConfig(**{**base, **changes})


def train_ce(data, held_out, config, output, folder, **kw):
    """``train_cross_encoder`` from the model ``folder``, into ``output``."""
    return train_cross_encoder(data, held_out, config, output=output, base_model=folder, **kw)


@pytest.fixture(scope="module")
def listwise(tmp_path_factory, learnable_encoder_folder, short_toy_split):
    """(result, output folder, progress calls) of 100 listwise steps on the toy collection."""
    torch.set_num_threads(1)
    train, held_out = short_toy_split
    out = tmp_path_factory.mktemp("listwise") / "model"
    checkpoints = tmp_path_factory.mktemp("checkpoints")
    calls: list[tuple[int, int]] = []
    result = train_ce(
        train,
        held_out,
        listwise_config(checkpoint_dir=checkpoints),
        out,
        learnable_encoder_folder,
        progress=lambda d, t: calls.append((d, t)),
    )
    return result, out, checkpoints, calls


# --------------------------------------------------------------------------- the model


def test_new_head_is_seeded(tiny_encoder_folder):
    a = CrossEncoder(tiny_encoder_folder, device="cpu", seed=0)
    b = CrossEncoder(tiny_encoder_folder, device="cpu", seed=0)
    c = CrossEncoder(tiny_encoder_folder, device="cpu", seed=1)
    assert a.new_head and b.new_head
    np.testing.assert_array_equal(a.score(PAIRS), b.score(PAIRS))
    assert not np.allclose(a.score(PAIRS), c.score(PAIRS))
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert a.score(PAIRS).dtype == np.float32 and a.score(PAIRS).shape == (4,)
    # loading seeds a forked generator: the caller's random stream goes on undisturbed
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    CrossEncoder(tiny_encoder_folder, device="cpu", seed=0)
    assert torch.equal(torch.rand(3), expected)


def test_length_sorted_batches_give_each_pair_its_own_score(tiny_encoder_folder):
    encoder = CrossEncoder(tiny_encoder_folder, device="cpu", batch_size=3)
    calls: list[tuple[int, int]] = []
    together = encoder.score(PAIRS, progress=lambda d, t: calls.append((d, t)))
    alone = np.array([encoder.score([p])[0] for p in PAIRS])
    np.testing.assert_allclose(together, alone, atol=1e-5)  # padding and batch order do not leak into scores
    assert calls == [(3, 4), (4, 4)]
    assert encoder.score([]).shape == (0,)


def test_probabilities_are_the_sigmoid_of_the_scores(tiny_encoder_folder):
    encoder = CrossEncoder(tiny_encoder_folder, device="cpu")
    scores = encoder.score(PAIRS).astype(np.float64)
    np.testing.assert_allclose(encoder.probabilities(PAIRS), 1 / (1 + np.exp(-scores)), rtol=1e-6)


def test_save_writes_a_standard_folder_that_reloads_with_identical_scores(tmp_path, tiny_encoder_folder):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    encoder = CrossEncoder(tiny_encoder_folder, device="cpu", seed=3)
    folder = encoder.save(tmp_path / "ce")
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= {
        p.name for p in folder.iterdir()
    }
    again = CrossEncoder(folder, device="cpu", seed=99)  # the head is loaded, so the seed does not matter
    assert not again.new_head
    np.testing.assert_array_equal(again.score(PAIRS), encoder.score(PAIRS))

    model = AutoModelForSequenceClassification.from_pretrained(folder, local_files_only=True).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    assert model.config.num_labels == 1
    batch = tokenizer([q for q, _ in PAIRS], [p for _, p in PAIRS], padding=True, truncation=True, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**batch).logits[:, 0].numpy()
    np.testing.assert_allclose(encoder.score(PAIRS), logits, atol=1e-5)


def test_errors_name_the_argument(tmp_path, tiny_encoder_folder, short_toy_split):
    with pytest.raises(FileNotFoundError, match="model_path"):
        CrossEncoder(tmp_path)
    train, held_out = short_toy_split
    with pytest.raises(ValueError, match="loss"):
        train_ce(train, held_out, listwise_config(), tmp_path / "m", tiny_encoder_folder, loss="pairwise")
    unlabelled = LabelledData(queries=train.queries, passages=train.passages, qrels={}, candidates={})
    with pytest.raises(ValueError, match="train"):
        train_ce(unlabelled, None, listwise_config(), tmp_path / "m", tiny_encoder_folder)
    no_candidates = LabelledData(queries=held_out.queries, passages=held_out.passages, qrels=held_out.qrels)
    with pytest.raises(ValueError, match="held_out: no query with both labels and candidates"):
        train_ce(train, no_candidates, listwise_config(), tmp_path / "m", tiny_encoder_folder)
    with pytest.raises(ValueError, match="config.negatives"):
        train_ce(train, None, listwise_config(negatives=0), tmp_path / "m", tiny_encoder_folder)


@pytest.mark.slow
def test_default_is_the_packaged_minilm_with_a_new_head():
    """No download: the packaged all-MiniLM-L6-v2 loads with a fresh, seeded 1-logit head."""
    from core.retrieval.encoder import default_model_path

    encoder = CrossEncoder(device="cpu", max_length=64)
    assert encoder.path == default_model_path()
    assert encoder.new_head and encoder.model.config.num_labels == 1
    scores = encoder.score(PAIRS[:2])
    assert scores.shape == (2,) and np.isfinite(scores).all()
    np.testing.assert_array_equal(scores, CrossEncoder(device="cpu", max_length=64).score(PAIRS[:2]))


# --------------------------------------------------------------------------- training


def test_lists_take_hard_negatives_first_and_fill_up_with_random_non_relevant_passages():
    data = LabelledData(
        queries={"q": "bread"},
        passages={p: p for p in ["pos", "rel2", "hard", "n1", "n2", "n3", "n4"]},
        qrels={"q": {"pos": 2, "rel2": 1, "hard": 0}},
        candidates={"q": ["pos", "hard", "rel2"]},
        level=1,
    )
    lists = _groups(data, 3, random.Random(0))
    # one list per positive (pos: grade 2 first, then rel2); the one hard negative, then 2 random fillers
    # from n1..n4 (never the other positive)
    assert [(q, docs[0], docs[1]) for q, docs in lists] == [("q", "pos", "hard"), ("q", "rel2", "hard")]
    assert all(len(docs) == 4 and set(docs[2:]) <= {"n1", "n2", "n3", "n4"} for _, docs in lists)
    assert lists == _groups(data, 3, random.Random(0))
    # too few passages: the lists are as long as the collection allows (listwise training then masks)
    assert [len(docs) for _, docs in _groups(data, 10, random.Random(0))] == [6, 6]


def test_ragged_lists_train(tmp_path, learnable_encoder_folder):
    # 5 passages: q1 has 1 positive (lists of 1 + 4 negatives), q2 has 2 (lists of 1 + 3): padded and masked
    data = LabelledData(
        queries={"q1": "bread ?", "q2": "cat ?"},
        passages={"b": "the bread .", "c1": "a cat .", "c2": "cat cat", "d": "the dog .", "f": "fish ."},
        qrels={"q1": {"b": 1}, "q2": {"c1": 1, "c2": 2}},
        candidates={},
        level=1,
    )
    assert sorted(len(docs) for _, docs in _groups(data, 30, random.Random(0))) == [4, 4, 5]
    result = train_ce(
        data, None, listwise_config(negatives=30, max_steps=3, batch_size=3), tmp_path / "m", learnable_encoder_folder
    )
    assert [h["step"] for h in result.history] == [3] and np.isfinite(result.history[0]["loss"])


@pytest.mark.slow
def test_listwise_training_lowers_the_loss_and_raises_held_out_ndcg(
    listwise, learnable_encoder_folder, short_toy_split
):
    result, out, _, _ = listwise
    _, held_out = short_toy_split
    untrained = evaluate_reranker(CrossEncoder(learnable_encoder_folder, device="cpu", seed=0), held_out)
    assert result.params["initial_eval"] == untrained
    assert [h["step"] for h in result.history] == [20, 40, 60, 80, 100]  # max_steps=100, eval_every=20
    assert result.history[-1]["loss"] < 0.5 * result.history[0]["loss"]
    # the untrained model is no better than chance (~0.2-0.3); the trained one finds the keyword
    assert result.best["eval"]["nDCG@10"] > untrained["nDCG@10"] + 0.2
    assert result.best == max(result.history, key=lambda h: h["eval"]["nDCG@10"])
    assert set(result.best["eval"]) == {"nDCG@10", "MRR@10"}
    assert result.path == out and result.seconds > 0 and result.pairs_per_second > 0


def test_the_saved_weights_are_the_best_step(listwise, short_toy_split):
    result, out, checkpoints, _ = listwise
    _, held_out = short_toy_split
    saved = evaluate_reranker(CrossEncoder(out, device="cpu"), held_out)
    assert saved == pytest.approx(result.best["eval"])
    assert sorted(p.name for p in checkpoints.iterdir()) == ["step-100", "step-20", "step-40", "step-60", "step-80"]
    step = result.best["step"]
    np.testing.assert_array_equal(
        CrossEncoder(checkpoints / f"step-{step}", device="cpu").score(PAIRS),
        CrossEncoder(out, device="cpu").score(PAIRS),
    )


def test_training_record_and_progress(listwise, learnable_encoder_folder):
    result, out, _, calls = listwise
    record = load_training_record(out)
    assert (out / TRAINING_RECORD).is_file()
    assert record["kind"] == KIND == "cross-encoder"
    assert record["base_model"] == str(learnable_encoder_folder)
    assert record["history"] == result.history and record["best"] == result.best
    assert record["params"]["config"]["batch_size"] == 8 and record["params"]["loss"] == "listwise"
    assert record["pairs_per_second"] == result.pairs_per_second
    assert calls == [(i, 100) for i in range(1, 101)]


@pytest.mark.slow
def test_same_seed_same_history_and_scores(tmp_path, learnable_encoder_folder, short_toy_split):
    train, held_out = short_toy_split
    config = listwise_config(max_steps=15, eval_every=5)
    runs = [train_ce(train, held_out, config, tmp_path / name, learnable_encoder_folder) for name in ("a", "b")]
    assert runs[0].history == runs[1].history
    np.testing.assert_array_equal(CrossEncoder(tmp_path / "a").score(PAIRS), CrossEncoder(tmp_path / "b").score(PAIRS))
    other = train_ce(
        train, held_out, listwise_config(max_steps=15, eval_every=5, seed=1), tmp_path / "c", learnable_encoder_folder
    )
    assert [h["loss"] for h in other.history] != [h["loss"] for h in runs[0].history]


@pytest.mark.slow
def test_pointwise_training_lowers_the_loss_and_raises_held_out_ndcg(
    tmp_path, learnable_encoder_folder, short_toy_split
):
    train, held_out = short_toy_split
    # batch_size counts pairs here: 32 pairs a step is as many as 8 lists of 4
    result = train_ce(
        train, held_out, listwise_config(batch_size=32), tmp_path / "m", learnable_encoder_folder, loss="pointwise"
    )
    assert result.params["loss"] == "pointwise"
    assert result.history[-1]["loss"] < 0.8 * result.history[0]["loss"]
    assert result.best["eval"]["nDCG@10"] > result.params["initial_eval"]["nDCG@10"] + 0.05


def test_early_stopping_after_patience_evaluations_without_improvement(
    tmp_path, learnable_encoder_folder, short_toy_split
):
    train, held_out = short_toy_split
    # learning rate 0: the weights never change, so only the first evaluation is an improvement
    result = train_ce(
        train,
        held_out,
        listwise_config(learning_rate=0.0, eval_every=1, patience=2),
        tmp_path / "m",
        learnable_encoder_folder,
    )
    assert [h["step"] for h in result.history] == [1, 2, 3]
    assert result.best["step"] == 1 and result.params["steps"] == 3


def test_without_held_out_the_last_weights_are_saved(tmp_path, learnable_encoder_folder, short_toy_split):
    train, _ = short_toy_split
    # 18 lists of 4 per epoch at batch 8 -> 9 steps an epoch; two epochs, evaluated (loss only) after each
    result = train_ce(
        train,
        None,
        listwise_config(epochs=2, max_steps=None, eval_every=None),
        tmp_path / "m",
        learnable_encoder_folder,
    )
    n_lists = sum(len(train.positives(q)) for q in train.trainable())
    per_epoch = -(-n_lists // 8)
    assert [h["step"] for h in result.history] == [per_epoch, 2 * per_epoch]
    assert [h["epoch"] for h in result.history] == [1, 2]
    assert result.history[-1]["eval"] == {} and result.best == result.history[-1]
    assert (tmp_path / "m" / "model.safetensors").is_file()
