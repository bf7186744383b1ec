"""The default trained system: the choice on the dev split, the hybrids' weights, the fine-tuning that keeps the base's conventions."""

from __future__ import annotations

import json

import pytest

from core.training.data import LabelledData, TrainConfig
from core.training.default_system import (
    FUSION_GRID,
    ScoredSystem,
    choose_default_system,
    choose_fusion_weight,
    choose_system,
    evaluation_pool,
    fine_tune_bi_encoder,
    prefixed,
    score_systems,
    system_run,
)

# Four dev queries; "a", "x", "o", "w" are the relevant passages.  BM25 puts q1's first and q2's
# second, the base encoder the other way round, so their hybrid gets both first; neither finds q3's
# and q4's.  The fine-tuned encoder either puts every relevant passage last (a trained system that
# loses on dev) or first (one that wins).
QRELS = {"q1": {"a": 1}, "q2": {"x": 1}, "q3": {"o": 1}, "q4": {"w": 1}}
BM25 = {
    "q1": {"a": 3.0, "b": 2.0, "c": 1.0},
    "q2": {"y": 3.0, "x": 2.0, "z": 1.0},
    "q3": {"m": 3.0, "n": 2.0, "o": 1.0},
    "q4": {"u": 3.0, "v": 2.0, "w": 1.0},
}
DENSE = {
    "q1": {"b": 0.9, "a": 0.85, "c": 0.1},
    "q2": {"x": 0.9, "y": 0.3, "z": 0.1},
    "q3": {"m": 0.9, "n": 0.5, "o": 0.1},
    "q4": {"u": 0.9, "v": 0.5, "w": 0.1},
}
WORSE = {
    "q1": {"c": 0.9, "b": 0.8, "a": 0.1},
    "q2": {"z": 0.9, "y": 0.8, "x": 0.1},
    "q3": {"m": 0.9, "n": 0.8, "o": 0.1},
    "q4": {"u": 0.9, "v": 0.8, "w": 0.1},
}
BETTER = {
    "q1": {"a": 0.9, "b": 0.2, "c": 0.1},
    "q2": {"x": 0.9, "y": 0.2, "z": 0.1},
    "q3": {"o": 0.9, "n": 0.2, "m": 0.1},
    "q4": {"w": 0.9, "v": 0.2, "u": 0.1},
}
RANK2, RANK3 = 0.6309, 0.5  # nDCG@10 of one relevant passage at rank 2 (1 / log2 3) and rank 3 (1 / log2 4)


def test_a_trained_system_that_loses_on_dev_is_not_offered_and_the_base_is_kept_with_the_reason():
    choice = choose_default_system({"bm25": BM25, "dense": DENSE, "tuned": WORSE}, QRELS)
    assert [s.key for s in choice.systems] == ["bm25", "dense", "hybrid", "tuned-dense", "tuned-hybrid"]
    dev = {s.key: round(s.ndcg, 4) for s in choice.systems}
    single = round((1 + RANK2 + RANK3 + RANK3) / 4, 4)
    assert dev == {
        "bm25": single,
        "dense": single,
        "hybrid": round((1 + 1 + RANK3 + RANK3) / 4, 4),
        "tuned-dense": RANK3,
        "tuned-hybrid": single,  # the fine-tuned encoder adds nothing to BM25
    }
    assert choice.chosen.key == "hybrid" and not choice.improved
    # BM25 and dense tie on dev: the simpler, BM25, is the baseline
    assert choice.baseline.key == "bm25" and choice.dev_queries == 4
    # weights 0.2 to 0.5 put q1's and q2's first: the one nearest an even blend wins
    assert choice.chosen.alpha == 0.5
    assert [w for w, v in choice.chosen.alpha_scores.items() if v == max(choice.chosen.alpha_scores.values())] == [
        0.2,
        0.3,
        0.4,
        0.5,
    ]
    assert choice.reason == (
        "training did not help on the dev split: keeping BM25 + base dense (BM25 weight 0.5) "
        "(nDCG@10 0.7500 on 4 dev queries; the best trained system, BM25 + fine-tuned dense (BM25 weight 0.7), 0.6577)"
    )
    record = choice.as_dict()
    assert json.loads(json.dumps(record)) == record  # JSON-ready, as the registry stores it
    assert record["chosen"] == "hybrid" and record["improved"] is False and record["baseline"] == "bm25"
    assert record["dev_nDCG@10"] == {s.key: s.ndcg for s in choice.systems}
    assert record["systems"][2]["alpha_dev_nDCG@10"]["0.5"] == pytest.approx((2 + 2 * RANK3) / 4)


def test_a_trained_system_that_wins_on_dev_is_offered_with_the_numbers():
    choice = choose_default_system({"bm25": BM25, "dense": DENSE, "tuned": BETTER}, QRELS)
    assert (choice.chosen.key, choice.chosen.ndcg, choice.improved) == ("tuned-dense", 1.0, True)
    # per-query gains over the hybrid 0, 0, 0.5, 0.5: mean 0.25, standard error 0.2887 / 2
    assert choice.standard_error == pytest.approx(0.5 / 12**0.5)
    assert choice.reason == (
        "training helped on the dev split: fine-tuned dense, nDCG@10 1.0000 on 4 dev queries, "
        "against 0.7500 for the best untrained system, BM25 + base dense (BM25 weight 0.5) "
        "(+0.2500, more than one standard error, 0.1443)"
    )


def test_a_trained_gain_within_one_standard_error_is_noise_and_the_untrained_system_is_kept():
    per = {
        "bm25": (0.5, 0.25, 0.25),
        "dense": (0.25, 0.5, 0.25),
        "hybrid": (0.5, 0.5, 0.5),
        "tuned-hybrid": (1.0, 0.5, 0.25),
    }
    found = [
        ScoredSystem(key, {"nDCG@10": sum(v) / 3}, per_query=dict(zip(("q1", "q2", "q3"), v, strict=True)))
        for key, v in per.items()
    ]
    choice = choose_system(found, dev_queries=3)
    # differences 0.5, 0, -0.25: mean +0.0833, standard error 0.2205
    assert choice.standard_error == pytest.approx(0.2205, abs=1e-4)
    assert (choice.chosen.key, choice.improved, choice.baseline.key) == ("hybrid", False, "bm25")
    assert choice.reason == (
        "training did not help on the dev split: keeping BM25 + base dense (nDCG@10 0.5000 on 3 dev queries; "
        "the best trained system, BM25 + fine-tuned dense, 0.5833: +0.0833, within one standard error (0.2205) "
        "of the per-query differences)"
    )
    # the same gain on queries that agree is not noise
    steady = [
        *found[:3],
        ScoredSystem("tuned-hybrid", {"nDCG@10": 0.5833}, per_query={"q1": 0.58, "q2": 0.59, "q3": 0.58}),
    ]
    assert choose_system(steady, dev_queries=3).chosen.key == "tuned-hybrid"


def test_the_base_is_kept_when_nothing_beats_the_better_of_bm25_and_dense():
    found = [
        ScoredSystem("bm25", {"nDCG@10": 0.40}),
        ScoredSystem("dense", {"nDCG@10": 0.52}),
        ScoredSystem("hybrid", {"nDCG@10": 0.52}, alpha=0.0),
        ScoredSystem("tuned-dense", {"nDCG@10": 0.52}),
    ]
    choice = choose_system(found, dev_queries=9)
    # a tie goes to the simpler system: a trained one must be strictly better to be offered
    assert (choice.chosen.key, choice.baseline.key, choice.improved) == ("dense", "dense", False)
    assert choice.reason.startswith("training did not help on the dev split: keeping base dense (nDCG@10 0.5200")


def test_without_a_trained_run_the_choice_says_so_and_bm25_and_dense_are_required():
    choice = choose_default_system({"bm25": BM25, "dense": WORSE}, QRELS)
    assert [s.key for s in choice.systems] == ["bm25", "dense", "hybrid"]
    assert choice.chosen.key == "bm25"
    assert choice.reason == "no trained system was scored: keeping BM25 (nDCG@10 0.6577 on 4 dev queries)"
    assert choice.standard_error is None
    with pytest.raises(ValueError, match=r"needs BM25 and the base dense system .* missing \['dense'\]"):
        choose_system([ScoredSystem("bm25", {"nDCG@10": 1.0})], dev_queries=1)
    with pytest.raises(ValueError, match="no dev query has a label"):
        choose_default_system({"bm25": BM25, "dense": DENSE}, {"q1": {}})


def test_the_fusion_weight_is_chosen_on_dev_with_every_weights_score():
    best, scores = choose_fusion_weight(BM25, WORSE, QRELS)
    assert list(scores) == list(FUSION_GRID)
    # WORSE puts every relevant passage last: BM25's weight must be 0.7 or more to keep q1's first
    assert scores[0.0] == RANK3 and scores[0.6] < scores[0.7]
    assert best == 0.7 and [w for w, v in scores.items() if v == scores[0.7]] == [0.7, 0.8, 0.9, 1.0]
    with pytest.raises(ValueError, match="at least one weight"):
        choose_fusion_weight(BM25, DENSE, QRELS, grid=())


def test_a_hybrid_run_is_the_convex_combination_of_the_min_max_normalised_members():
    run = system_run("hybrid", {"bm25": BM25, "dense": DENSE}, alpha=0.5)
    # q1: BM25 normalised a 1, b 0.5, c 0; dense b 1, a 0.9375, c 0
    assert run["q1"] == pytest.approx({"a": 0.96875, "b": 0.75, "c": 0.0})
    assert list(run["q1"]) == ["a", "b", "c"]  # trec order
    assert system_run("bm25", {"bm25": BM25}) == BM25
    with pytest.raises(ValueError, match="needs the component run"):
        system_run("tuned-hybrid", {"bm25": BM25, "dense": DENSE}, alpha=0.5)
    with pytest.raises(ValueError, match="give BM25's weight"):
        system_run("hybrid", {"bm25": BM25, "dense": DENSE})
    with pytest.raises(ValueError, match="unknown system 'rerank'"):
        system_run("rerank", {"bm25": BM25})


def test_a_chosen_system_is_rebuilt_on_other_queries_with_its_dev_weight():
    [_bm25, _dense, hybrid] = score_systems({"bm25": BM25, "dense": DENSE}, QRELS)
    held = {"bm25": {"h": {"u": 2.0, "v": 0.0}}, "dense": {"h": {"v": 1.0, "u": 0.0}}}
    assert hybrid.alpha == 0.5
    assert hybrid.run(held) == {"h": {"u": 0.5, "v": 0.5}}
    assert hybrid.label == "BM25 + base dense (BM25 weight 0.5)" and not hybrid.trained


def test_prefixes_and_the_evaluation_pool():
    data = LabelledData(
        queries={"q": "cats", "r": "dogs"},
        passages={f"p{i}": f"text {i}" for i in range(8)},
        qrels={"q": {"p7": 1}, "r": {"p6": 0}},
        candidates={"q": ["p0", "p1"], "r": ["p2"]},
    )
    pre = prefixed(data, "query: ", "passage: ")
    assert pre.queries == {"q": "query: cats", "r": "query: dogs"} and pre.passages["p3"] == "passage: text 3"
    assert pre.qrels == data.qrels and pre.candidates == data.candidates
    assert prefixed(data, "", "") is data
    pool = evaluation_pool(data, [{"q": {"p3": 0.9, "p4": 0.5}, "r": {"p5": 0.1}}], depth=1)
    # candidates (depth 1), judged passages (even a grade 0), each run's top 1
    assert sorted(pool.passages) == ["p0", "p2", "p3", "p5", "p6", "p7"]
    assert pool.passages["p3"] == "text 3" and pool.queries == data.queries
    everything = evaluation_pool(data, [{"q": {f"p{i}": 1.0 for i in range(8)}}])
    assert everything is data


def _st_folder(folder, base):
    """``base`` (a tiny BERT) plus E5-like sentence-transformers files: mean pooling, normalised, prefixes."""
    import shutil

    shutil.copytree(base, folder)
    (folder / "modules.json").write_text(
        json.dumps(
            [
                {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
            ]
        ),
        encoding="utf-8",
    )
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"word_embedding_dimension": 32, "pooling_mode": "mean"}), encoding="utf-8"
    )
    (folder / "2_Normalize").mkdir()
    (folder / "config_sentence_transformers.json").write_text(
        json.dumps({"prompts": {"query": "what ", "document": "about "}}), encoding="utf-8"
    )
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 48}), encoding="utf-8")
    return folder


@pytest.mark.slow
def test_fine_tuning_keeps_the_base_folders_prefixes_pooling_and_length(tmp_path, tiny_encoder_folder, toy_split):
    import numpy as np
    import torch

    from core.retrieval.encoder import BiEncoder
    from core.retrieval.st_config import read_conventions
    from core.training.dual_encoder import DualEncoder

    torch.set_num_threads(1)
    base = _st_folder(tmp_path / "base", tiny_encoder_folder)
    train, held = toy_split
    config = TrainConfig(epochs=1, batch_size=4, negatives=2, max_length=32, learning_rate=5e-4, device="cpu")
    result = fine_tune_bi_encoder(train, held, config, output=tmp_path / "tuned", base_model=base)
    assert (result.params["query_prefix"], result.params["passage_prefix"]) == ("what ", "about ")
    assert result.params["pooling"] == "mean" and result.params["train_queries"] == len(train.trainable())
    tuned = read_conventions(tmp_path / "tuned")
    assert (tuned.query_prefix, tuned.passage_prefix, tuned.pooling, tuned.normalize, tuned.max_length) == (
        "what ",
        "about ",
        "mean",
        True,
        48,
    )
    assert (tmp_path / "tuned" / "2_Normalize").is_dir()
    # BiEncoder reads the trained folder as the trainer encoded: the prefixed texts, mean-pooled, normalised
    encoder = BiEncoder(tmp_path / "tuned", device="cpu")
    dual = DualEncoder(tmp_path / "tuned", max_length=48, device="cpu")
    expected = dual.encode(["what bread please", "about the bread ."])
    ours = np.vstack([encoder.encode(["bread please"], kind="query"), encoder.encode(["the bread ."])])
    np.testing.assert_allclose(ours, expected, atol=1e-5)
    # the weights changed: fine-tuning trained, from the base
    before = DualEncoder(base, max_length=48, device="cpu").encode(["what bread please"])
    assert not np.allclose(before, expected[:1], atol=1e-4)


def test_fine_tuning_refuses_a_pooling_it_cannot_train(tmp_path, tiny_encoder_folder, toy_split):
    base = _st_folder(tmp_path / "base", tiny_encoder_folder)
    (base / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "max"}), encoding="utf-8")
    train, held = toy_split
    with pytest.raises(ValueError, match=r"pooling 'max' .*modules.json.* cannot be fine-tuned"):
        fine_tune_bi_encoder(train, held, TrainConfig(device="cpu"), output=tmp_path / "t", base_model=base)


def test_the_base_hybrids_weight_can_be_chosen_on_the_training_queries_too():
    # t1, a training query: BM25 finds its passage, the base encoder ranks it last, so only BM25 weights
    # of 0.7 and more put it first; the dev queries alone would choose 0.5
    runs = {
        "bm25": {**BM25, "t1": {"r": 3.0, "s": 2.0, "t": 1.0}},
        "dense": {**DENSE, "t1": {"t": 0.9, "s": 0.8, "r": 0.1}},
        "tuned": WORSE,
    }
    choice = choose_default_system(runs, QRELS, weight_qrels={"t1": {"r": 1}})
    hybrid = next(s for s in choice.systems if s.key == "hybrid")
    assert hybrid.alpha == 0.7 and [w for w, v in hybrid.alpha_scores.items() if v == 1.0] == [0.7, 0.8, 0.9, 1.0]
    # scored on the dev queries at that weight: q2's passage drops to second
    assert hybrid.ndcg == pytest.approx((1 + RANK2 + 2 * RANK3) / 4, abs=1e-4)
    assert hybrid.per_query.keys() == QRELS.keys()
    # the fine-tuned hybrid's weight is still the dev queries' (the fine-tuned encoder saw the training labels)
    assert next(s for s in choice.systems if s.key == "tuned-hybrid").alpha == 0.7
    assert choice.dev_queries == 4
