"""Dense retriever training (core.training.dual_encoder) on the toy collection with a tiny random BERT.

Fixtures (``tiny_encoder_folder``, ``toy_data``, ``toy_split``) come from
``tests/core/training/conftest.py``.  One training run is shared by the module
(a few seconds on a CPU); the determinism test trains twice more with few steps.
"""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from core.retrieval.dense import BiEncoder, DenseRetriever
from core.training.common import load_training_record, ranking_metrics
from core.training.data import LabelledData, TrainConfig
from core.training.dual_encoder import DualEncoder, dense_run, evaluate_dual, pack_batches, train_dual_encoder


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    torch.set_num_threads(1)


def config(**kw) -> TrainConfig:
    base = dict(
        seed=0, epochs=6, batch_size=8, learning_rate=3e-3, negatives=3, max_length=32, patience=100, warmup_ratio=0.1
    )
    base.update(kw)
    return TrainConfig(**base)


@pytest.fixture(scope="module")
def trained(tmp_path_factory, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    out = tmp_path_factory.mktemp("dual") / "model"
    torch.set_num_threads(1)
    calls = []
    result = train_dual_encoder(
        train,
        held_out,
        config(),
        output=out,
        base_model=tiny_encoder_folder,
        progress=lambda done, total: calls.append((done, total)),
    )
    return result, calls


@pytest.mark.slow
def test_loss_falls_and_held_out_ndcg_rises(trained):
    result, _ = trained
    history = result.history
    assert [h["epoch"] for h in history] == [1, 2, 3, 4, 5, 6]
    losses = [h["loss"] for h in history]
    assert losses[-1] < 0.6 * losses[0]
    before = result.params["initial_eval"]["nDCG@10"]
    assert before < 0.5
    assert result.best["eval"]["nDCG@10"] > before + 0.3
    assert result.best["eval"]["nDCG@10"] == max(h["eval"]["nDCG@10"] for h in history)
    assert set(result.best["eval"]) == {"nDCG@10", "MRR@10"}
    assert result.pairs_per_second > 0 and result.seconds > 0


def test_progress_counts_every_step(trained):
    result, calls = trained
    steps = result.history[-1]["step"]
    assert calls == [(i, steps) for i in range(1, steps + 1)]


def test_saved_folder_gives_the_trained_vectors(trained, toy_split):
    result, _ = trained
    _, held_out = toy_split
    pids = sorted(held_out.passages)
    texts = [held_out.passages[p] for p in pids]
    bi = BiEncoder(result.path).encode(texts)
    dual = DualEncoder(result.path).encode(texts)
    np.testing.assert_allclose(bi, dual, atol=1e-5)
    # The held-out metric training reported is what DenseRetriever gets from the saved folder.
    retriever = DenseRetriever(BiEncoder(result.path), cache=False).index(pids, texts)
    queries = {q: t for q, t in held_out.queries.items() if held_out.qrels.get(q)}
    run = retriever.batch_search(queries, 100)
    got = ranking_metrics(run, held_out.qrels, held_out.level)
    assert got == pytest.approx(result.best["eval"], abs=1e-9)
    assert evaluate_dual(DualEncoder(result.path), held_out) == pytest.approx(got, abs=1e-9)


def test_training_record(trained, tiny_encoder_folder):
    result, _ = trained
    record = load_training_record(result.path)
    assert record["kind"] == "dual-encoder"
    assert record["base_model"] == str(tiny_encoder_folder)
    assert record["history"] == json.loads(json.dumps(result.history))
    assert record["best"]["step"] == result.best["step"]
    assert record["params"]["pooling"] == "mean" and record["params"]["temperature"] == 0.05
    assert record["params"]["examples"] == 3 * 24 and record["params"]["train_queries"] == 24
    assert record["params"]["held_out_queries"] == 8


@pytest.mark.slow
def test_deterministic_with_a_seed(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    runs = [
        train_dual_encoder(
            train, held_out, config(epochs=1, eval_every=4), output=tmp_path / str(i), base_model=tiny_encoder_folder
        )
        for i in range(2)
    ]
    assert runs[0].history == runs[1].history
    assert [h["step"] for h in runs[0].history] == [4, 8, 9]  # every 4 steps and after the last
    other = train_dual_encoder(
        train, held_out, config(epochs=1, eval_every=4, seed=1), output=tmp_path / "s1", base_model=tiny_encoder_folder
    )
    assert other.history[0]["loss"] != runs[0].history[0]["loss"]


def test_max_steps_checkpoints_and_cls_pooling(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    result = train_dual_encoder(
        train,
        held_out,
        config(max_steps=3, eval_every=2, checkpoint_dir=tmp_path / "ck"),
        output=tmp_path / "cls",
        base_model=tiny_encoder_folder,
        pooling="cls",
    )
    assert [h["step"] for h in result.history] == [2, 3]
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["step-2", "step-3"]
    assert (tmp_path / "ck" / "step-2" / "model.safetensors").is_file()
    texts = list(held_out.passages.values())[:5]
    np.testing.assert_allclose(
        BiEncoder(result.path, pooling="cls").encode(texts),
        DualEncoder(result.path, pooling="cls").encode(texts),
        atol=1e-5,
    )


def test_early_stopping(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    # learning_rate 0: the metric never improves after the first evaluation, patience 2 stops after two more
    result = train_dual_encoder(
        train,
        held_out,
        config(learning_rate=0.0, eval_every=1, patience=2),
        output=tmp_path / "m",
        base_model=tiny_encoder_folder,
    )
    assert [h["step"] for h in result.history] == [1, 2, 3]
    assert result.best["step"] == 1
    assert result.best["eval"] == pytest.approx(result.params["initial_eval"], abs=1e-9)


def test_without_held_out_saves_the_last_weights(tmp_path, tiny_encoder_folder, toy_split):
    train, _ = toy_split
    result = train_dual_encoder(train, None, config(max_steps=2), output=tmp_path / "m", base_model=tiny_encoder_folder)
    assert result.history[-1]["eval"] == {} and result.best["step"] == 2
    assert (tmp_path / "m" / "config.json").is_file()


def test_batches_never_repeat_a_query():
    items = [(q, f"{q}-p{i}") for q in "abc" for i in range(3)] + [("d", "d-p0")]
    batches = pack_batches(items, 3, random.Random(0))
    assert sorted(x for b in batches for x in b) == sorted(items)
    assert all(len({q for q, _ in b}) == len(b) <= 3 for b in batches)


def test_dense_run_is_exact(tiny_encoder_folder, toy_data):
    dual = DualEncoder(tiny_encoder_folder, max_length=32)
    run = dense_run(dual, toy_data, k=5)
    pids = sorted(toy_data.passages)
    vecs = dual.encode([toy_data.passages[p] for p in pids])
    q = dual.encode([toy_data.queries["q-cat-0"]])[0]
    top = sorted(zip(vecs @ q, pids), reverse=True)[:5]
    assert sorted(run["q-cat-0"]) == sorted(p for _, p in top)
    assert len(run) == 32


def test_argument_errors(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    with pytest.raises(ValueError, match="temperature"):
        train_dual_encoder(train, held_out, config(), output=tmp_path, base_model=tiny_encoder_folder, temperature=0)
    with pytest.raises(ValueError, match="pooling"):
        train_dual_encoder(train, held_out, config(), output=tmp_path, base_model=tiny_encoder_folder, pooling="max")
    with pytest.raises(FileNotFoundError, match="base_model"):
        train_dual_encoder(train, held_out, config(), output=tmp_path, base_model=tmp_path / "nowhere")
    with pytest.raises(ValueError, match="config.negatives"):
        train_dual_encoder(train, held_out, config(negatives=-1), output=tmp_path, base_model=tiny_encoder_folder)
    empty = LabelledData(queries={"q": "x"}, passages={"p": "y"}, qrels={})
    with pytest.raises(ValueError, match="no query"):
        train_dual_encoder(empty, None, config(), output=tmp_path, base_model=tiny_encoder_folder)
