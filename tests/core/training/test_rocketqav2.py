"""RocketQAv2 joint training and hybrid data augmentation (core.training.rocketqav2).

The joint-training tests use the tiny random BERT of ``conftest.py`` for both
models (plumbing: loss terms, reloading, determinism) and, to show that the
distillation carries the cross-encoder's knowledge into the dual encoder, an
"oracle" cross-encoder that scores a pair by whether query and passage share
their topic keyword (a tiny random BERT cross-encoder learns that far too
slowly for a unit test).  ``denoise_candidates`` runs on a stub scorer with
hand-picked probabilities.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
import torch

from core.retrieval.dense import BiEncoder, DenseRetriever
from core.training import rocketqav2
from core.training.common import load_training_record, ranking_metrics
from core.training.data import LabelledData, TrainConfig
from core.training.dual_encoder import DualEncoder
from core.training.rocketqav2 import _denoise, build_lists, denoise_candidates, train_rocketqav2

TOPICS = ("bread", "river", "market", "cat", "dog", "fish", "money", "music")  # conftest.TOPICS (tests are no package)


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    torch.set_num_threads(1)


def config(**kw) -> TrainConfig:
    base = dict(seed=0, epochs=3, batch_size=8, learning_rate=3e-3, negatives=3, max_length=32, patience=100)
    base.update(kw)
    return TrainConfig(**base)


def train_tiny(train, held_out, cfg, output, folder, **kw):
    """``train_rocketqav2`` with the tiny BERT ``folder`` as both models' starting point."""
    return train_rocketqav2(train, held_out, cfg, output=output, base_model=folder, cross_base=folder, **kw)


# --------------------------------------------------------------------------- denoise_candidates


class StubScorer:
    """``probabilities`` from a table keyed by (query text, passage text); remembers what it was asked."""

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table
        self.asked: list[tuple[str, str]] = []

    def probabilities(self, pairs):
        self.asked += list(pairs)
        return np.array([self.table[p] for p in pairs], dtype=np.float32)


def denoise_data() -> LabelledData:
    passages = {f"p{i}": f"text {i}" for i in range(1, 9)}
    return LabelledData(
        queries={"q1": "query one", "q2": "query two", "q3": "no candidates"},
        passages=passages,
        qrels={"q1": {"p1": 3, "p2": 0}, "q2": {"p3": 1}},
        candidates={"q1": ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p9"], "q2": ["p8", "p3", "p4"]},
        level=2,
    )


PROBS = {
    ("query one", "text 3"): 0.10,  # <= low: negative
    ("query one", "text 4"): 0.20,  # == low: negative
    ("query one", "text 5"): 0.5,  # between: dropped
    ("query one", "text 6"): 0.80,  # == high: pseudo-positive
    ("query one", "text 7"): 0.99,  # pseudo-positive
    ("query two", "text 8"): 0.2000001,  # just above low: dropped
    ("query two", "text 4"): 0.7999999,  # just below high: dropped
}


def test_denoise_thresholds_and_boundaries():
    data = denoise_data()
    scorer = StubScorer(PROBS)
    out, counts = _denoise(data, scorer, 0.2, 0.8)
    # labelled pairs (whatever their grade) and passages without a text are never scored
    assert sorted(scorer.asked) == sorted(PROBS)
    assert out.qrels == {"q1": {"p1": 3, "p2": 0, "p6": 2, "p7": 2}, "q2": {"p3": 1}}  # grade = level
    assert out.candidates == {"q1": ["p1", "p2", "p3", "p4", "p6", "p7", "p9"], "q2": ["p3"]}
    assert out.negatives("q1") == ["p2", "p3", "p4"]
    assert out.positives("q1") == ["p1", "p6", "p7"]
    assert out.negatives("q2") == ["p3"]  # labelled below level: still a sure negative
    assert counts == {"scored": 7, "negatives": 2, "pseudo_positives": 2, "dropped": 3}
    assert out.level == 2 and out.queries is data.queries and out.passages is data.passages
    # the input is untouched
    assert data.qrels == {"q1": {"p1": 3, "p2": 0}, "q2": {"p3": 1}}
    assert data.candidates["q2"] == ["p8", "p3", "p4"]
    assert denoise_candidates(data, StubScorer(PROBS), 0.2, 0.8) == out


def test_denoise_equal_thresholds_keep_ties_as_negatives():
    out, counts = _denoise(denoise_data(), StubScorer(PROBS), 0.5, 0.5)
    assert counts == {"scored": 7, "negatives": 4, "pseudo_positives": 3, "dropped": 0}
    assert out.qrels["q1"] == {"p1": 3, "p2": 0, "p6": 2, "p7": 2}
    assert out.qrels["q2"] == {"p3": 1, "p4": 2}
    assert "p5" in out.negatives("q1")


def test_denoise_extremes():
    all_negative, counts = _denoise(denoise_data(), StubScorer(PROBS), 1.0, 1.0)
    assert counts["negatives"] == 7 and all_negative.candidates == denoise_data().candidates
    all_dropped, counts = _denoise(denoise_data(), StubScorer(PROBS), 0.0, 1.0)
    assert counts["dropped"] == 7 and all_dropped.candidates == {"q1": ["p1", "p2", "p9"], "q2": ["p3"]}


@pytest.mark.parametrize(
    ("low", "high", "message"),
    [
        (0.9, 0.1, r"low \(0.9\) must not exceed high \(0.1\)"),
        (-0.1, 0.5, r"low must be a number in \[0, 1\], got -0.1"),
        (0.1, 1.5, r"high must be a number in \[0, 1\], got 1.5"),
        (float("nan"), 0.5, "low must be"),
    ],
)
def test_denoise_argument_errors(low, high, message):
    with pytest.raises(ValueError, match=message):
        denoise_candidates(denoise_data(), StubScorer(PROBS), low, high)


def test_denoise_arguments_of_the_trainer(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    with pytest.raises(ValueError, match="high"):
        train_tiny(train, held_out, config(), tmp_path, tiny_encoder_folder, denoise=(0.2, 1.2))
    with pytest.raises(ValueError, match="cross_base"):
        train_rocketqav2(train, held_out, config(), output=tmp_path, base_model=tiny_encoder_folder, denoise=(0.2, 0.8))
    with pytest.raises(ValueError, match="denoise must be a"):
        train_tiny(train, held_out, config(), tmp_path, tiny_encoder_folder, denoise=0.5)


# --------------------------------------------------------------------------- candidate lists


def test_lists_pad_with_random_passages_then_mask():
    data = LabelledData(
        queries={"a": "x", "b": "y"},
        passages={f"p{i}": "t" for i in range(5)},
        qrels={"a": {"p0": 1, "p1": 1}, "b": {"p2": 1}},
        candidates={"a": ["p0", "p2"], "b": ["p3", "p4", "p0", "p1"]},
    )
    ids = sorted(data.passages)
    lists, masks = build_lists(data, [("a", "p1"), ("b", "p2")], 5, random.Random(0), ids)
    # a: its only hard negative p2, then the random passages that are not its positives (p3, p4), then masked padding
    assert lists[0][0] == "p1" and lists[0][1] == "p2" and sorted(lists[0][2:4]) == ["p3", "p4"]
    assert lists[0][4:] == ["p1", "p1"] and masks[0] == [True, True, True, True, False, False]
    # b: four candidate negatives, then nothing left that is not its positive
    assert lists[1][0] == "p2" and sorted(lists[1][1:5]) == ["p0", "p1", "p3", "p4"]
    assert masks[1] == [True] * 5 + [False]
    lists, masks = build_lists(data, [("b", "p2")], 2, random.Random(0), ids)
    assert len(lists[0]) == 3 and all(masks[0]) and set(lists[0][1:]) <= {"p3", "p4", "p0", "p1"}


# --------------------------------------------------------------------------- joint training, tiny models


@pytest.fixture(scope="module")
def joint(tmp_path_factory, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    torch.set_num_threads(1)
    out = tmp_path_factory.mktemp("rq") / "model"
    return train_tiny(train, held_out, config(), out, tiny_encoder_folder)


@pytest.mark.slow
def test_joint_training_history(joint, tiny_encoder_folder):
    history = joint.history
    assert [h["epoch"] for h in history] == [1, 2, 3]
    for h in history:
        assert set(h) == {"step", "epoch", "loss", "kl", "sup", "eval"}
        assert h["loss"] == pytest.approx(h["kl"] + h["sup"], rel=1e-6)
    assert history[-1]["loss"] < history[0]["loss"]
    assert history[-1]["kl"] < 0.5 * history[0]["kl"]
    assert joint.params["cross_base"] == str(tiny_encoder_folder) and joint.params["denoise"] is None
    assert joint.pairs_per_second > 0


def test_both_folders_reload(joint, toy_split, tiny_encoder_folder):
    from transformers import AutoModelForSequenceClassification

    from core.training.cross_encoder import CrossEncoder

    _, held_out = toy_split
    pids = sorted(held_out.passages)
    texts = [held_out.passages[p] for p in pids]
    np.testing.assert_allclose(BiEncoder(joint.path).encode(texts), DualEncoder(joint.path).encode(texts), atol=1e-5)
    retriever = DenseRetriever(BiEncoder(joint.path), cache=False).index(pids, texts)
    run = retriever.batch_search({q: held_out.queries[q] for q in held_out.queries}, 100)
    assert ranking_metrics(run, held_out.qrels, held_out.level) == pytest.approx(joint.best["eval"], abs=1e-9)

    folder = joint.path / "cross-encoder"
    pairs = [(held_out.queries[q], held_out.passages[p]) for q in sorted(held_out.queries)[:2] for p in pids[:6]]
    first, second = CrossEncoder(folder), CrossEncoder(folder, seed=5)
    assert not first.new_head
    np.testing.assert_array_equal(first.score(pairs), second.score(pairs))  # no random head: the trained one
    assert not np.allclose(first.score(pairs), CrossEncoder(tiny_encoder_folder).score(pairs))
    assert AutoModelForSequenceClassification.from_pretrained(folder).config.num_labels == 1

    dual_record, cross_record = load_training_record(joint.path), load_training_record(folder)
    assert dual_record["kind"] == "rocketqav2" and cross_record["kind"] == "cross-encoder"
    assert dual_record["history"] == json.loads(json.dumps(joint.history)) == cross_record["history"]
    assert cross_record["params"]["trainer"] == "rocketqav2"


@pytest.mark.slow
def test_joint_training_is_deterministic(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    runs = [
        train_tiny(train, held_out, config(epochs=1, max_steps=4, eval_every=2), tmp_path / str(i), tiny_encoder_folder)
        for i in range(2)
    ]
    assert runs[0].history == runs[1].history and [h["step"] for h in runs[0].history] == [2, 4]


def test_denoise_before_training_reports_counts(tmp_path, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    result = train_tiny(train, held_out, config(max_steps=2), tmp_path / "m", tiny_encoder_folder, denoise=(1.0, 1.0))
    # every toy query has all 24 passages as candidates, 3 of them labelled: 21 unlabelled each
    assert result.params["denoise"] == {
        "low": 1.0,
        "high": 1.0,
        "scored": 21 * 24,
        "negatives": 21 * 24,
        "pseudo_positives": 0,
        "dropped": 0,
    }


# --------------------------------------------------------------------------- distillation from a teacher


class OracleCrossEncoder:
    """A cross-encoder stand-in whose logit is ``w * [query and passage share a topic keyword] + b``.

    ``w`` starts at 4: it already knows the task, as a trained re-ranker would;
    the dual encoder has to learn it from the KL term alone in
    :func:`test_distillation_teaches_the_dual_encoder`.
    """

    def __init__(self) -> None:
        self.model = torch.nn.Linear(1, 1)
        with torch.no_grad():
            self.model.weight.fill_(4.0)
            self.model.bias.zero_()
        self.saved: list[Path] = []

    def features(self, pairs):
        return [float(any(t in q.split() and t in p.split() for t in TOPICS)) for q, p in pairs]

    def collate(self, rows):
        return torch.tensor(rows).unsqueeze(-1)

    def logits(self, batch):
        return self.model(batch).reshape(-1)

    def save(self, folder):
        Path(folder).mkdir(parents=True, exist_ok=True)
        self.saved.append(Path(folder))


@pytest.mark.slow
def test_distillation_teaches_the_dual_encoder(tmp_path, monkeypatch, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    # The dual encoder's only training signal is the KL term towards the oracle's list distribution.
    oracle = OracleCrossEncoder()
    monkeypatch.setattr(rocketqav2, "_load_cross_encoder", lambda *a, **k: oracle)
    result = train_rocketqav2(train, held_out, config(epochs=4), output=tmp_path / "m", base_model=tiny_encoder_folder)
    before = result.params["initial_eval"]["nDCG@10"]
    assert result.best["eval"]["nDCG@10"] > before + 0.2
    assert result.history[-1]["kl"] < result.history[0]["kl"]
    assert oracle.saved == [tmp_path / "m" / "cross-encoder"]
    assert result.params["cross_base"] == "all-MiniLM-L6-v2 (new head)"


def test_without_held_out_keeps_the_last_weights(tmp_path, tiny_encoder_folder, toy_split):
    train, _ = toy_split
    result = train_tiny(train, None, config(max_steps=1), tmp_path / "m", tiny_encoder_folder)
    assert result.best["step"] == 1 and result.best["eval"] == {} and result.params["initial_eval"] == {}
    assert (tmp_path / "m" / "model.safetensors").is_file()
    assert (tmp_path / "m" / "cross-encoder" / "model.safetensors").is_file()
    with pytest.raises(ValueError, match="temperature"):
        train_rocketqav2(train, None, config(), output=tmp_path / "x", base_model=tiny_encoder_folder, temperature=-1)


# --------------------------------------------------------------------------- a teacher with first-stage evidence


def topic_prior(data: LabelledData) -> dict[str, dict[str, float]]:
    """A first stage that scores a passage 10 when it shares the query's topic, else 2 (min-max: 1 and 0)."""
    return {q: {p: 10.0 if p.split("-")[1] == q.split("-")[1] else 2.0 for p in data.passages} for q in data.queries}


def test_the_teacher_is_the_logits_plus_the_weighted_normalised_prior(
    tmp_path, monkeypatch, tiny_encoder_folder, toy_split
):
    train, _ = toy_split
    blank = OracleCrossEncoder()
    with torch.no_grad():
        blank.model.weight.zero_()  # logit 0 for every pair: the teacher is the prior alone
    monkeypatch.setattr(rocketqav2, "_load_cross_encoder", lambda *a, **k: blank)
    seen = []
    kl = rocketqav2.listwise_kl

    def recording_kl(dual, teacher, mask):
        seen.append(teacher.detach().clone())
        return kl(dual, teacher, mask)

    monkeypatch.setattr(rocketqav2, "listwise_kl", recording_kl)
    result = train_rocketqav2(
        train,
        None,
        config(max_steps=1),
        output=tmp_path / "m",
        base_model=tiny_encoder_folder,
        prior=topic_prior(train),
        prior_weight=3.0,
    )
    (teacher,) = seen
    # Each list is [positive, 3 negatives of other topics]: the prior gives the positive 3.0, the others 0.
    assert teacher.shape == (8, 4)
    assert torch.equal(teacher, torch.tensor([[3.0, 0.0, 0.0, 0.0]] * 8))
    assert result.params["teacher_prior"] == {"weight": 3.0, "queries": len(train.queries)}


@pytest.mark.slow
def test_a_prior_teaches_where_the_cross_encoder_cannot(tmp_path, monkeypatch, tiny_encoder_folder, toy_split):
    train, held_out = toy_split
    results = {}
    for weight in (0.0, 4.0):
        blank = OracleCrossEncoder()
        with torch.no_grad():
            blank.model.weight.zero_()
        monkeypatch.setattr(rocketqav2, "_load_cross_encoder", lambda *a, _b=blank, **k: _b)
        results[weight] = train_rocketqav2(
            train,
            held_out,
            config(epochs=4),
            output=tmp_path / f"m{weight}",
            base_model=tiny_encoder_folder,
            prior=topic_prior(train),
            prior_weight=weight,
        )
    before = results[0.0].params["initial_eval"]["nDCG@10"]
    assert results[4.0].best["eval"]["nDCG@10"] > before + 0.2
    assert results[0.0].best["eval"]["nDCG@10"] < before + 0.1  # a flat teacher teaches nothing
    assert results[0.0].params["teacher_prior"] is None


def test_prior_arguments(tmp_path, tiny_encoder_folder, toy_split):
    train, _ = toy_split
    with pytest.raises(ValueError, match="prior_weight needs a prior run"):
        train_tiny(train, None, config(max_steps=1), tmp_path / "m", tiny_encoder_folder, prior_weight=1.0)
    with pytest.raises(ValueError, match="prior_weight"):
        train_tiny(train, None, config(max_steps=1), tmp_path / "m", tiny_encoder_folder, prior={}, prior_weight=-1.0)
