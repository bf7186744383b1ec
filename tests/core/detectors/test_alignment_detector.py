"""The embedding-alignment detector (issue 22): no word list, the collection's encoder aligns query and passage phrases."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import pytest

from core.detectors import suggest
from core.detectors.alignment import AlignmentEvidence, PhraseCache, detect_alignment_mismatch, phrases

# Phrases of one cluster get nearly the same direction (cosine ~0.7), others a hashed random one (~0).
CLUSTERS = {
    "car": ["Toyota", "Honda", "toyota corolla", "honda civic"],
    "phone": ["小米", "华为"],
    "site": ["三星堆", "殷墟"],
    "model": ["iPhone 13", "iPhone 12", "iphone 13", "iphone 12"],
    "inventor": ["Nikola Tesla", "Tesla", "Edison"],
}


def _unit(seed: str, dim: int = 64) -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256(seed.encode()).hexdigest()[:8], 16))
    v = rng.standard_normal(dim)
    return v / np.linalg.norm(v)


class FakeEncoder:
    """Deterministic: a phrase of a cluster is 0.9 * the cluster's direction + 0.6 * its own; else its own."""

    fingerprint = "fake"
    dim = 64

    def __init__(self, shared: float = 0.0) -> None:
        self.calls: list[list[str]] = []
        self.shared = shared  # a direction every vector shares: raw cosines all high, like multilingual-e5's

    def encode(self, texts: Sequence[str], *, kind: str = "passage", progress=None) -> np.ndarray:
        self.calls.append(list(texts))
        rows = []
        for t in texts:
            cluster = next((c for c, words in CLUSTERS.items() if t in words), None)
            v = _unit("own:" + t) * (0.6 if cluster else 1.0)
            if cluster:
                v = v + 0.9 * _unit("cluster:" + cluster)
            v = v / np.linalg.norm(v) + self.shared * _unit("shared")
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


def test_phrases_have_kinds_and_spans() -> None:
    got = {(p.text, p.kind) for p in phrases("2016年小米手机和华为手机哪个好")}
    assert {("2016", "number:year"), ("小米", "slot:手机"), ("华为", "slot:手机")} <= got
    got = {(p.text, p.kind) for p in phrases("Is the iPhone 13 better than the Honda Civic in 2021?")}
    assert {("iPhone 13", "name"), ("Honda Civic", "name"), ("2021", "number:year")} <= got
    text = "殷墟遗址位于河南省安阳市。"
    [site] = [p for p in phrases(text) if p.text == "殷墟"]
    assert (site.kind, text[site.span[0] : site.span[1]]) == ("slot:遗址", "殷墟")


@pytest.mark.parametrize(
    "query, passage, q_phrase, p_phrase, category",
    [
        ("小米手机怎么截图", "华为手机截图方法：同时按住电源键和音量下键。", "小米", "华为", "entity_mismatch"),
        ("三星堆遗址在哪里", "殷墟遗址位于河南省安阳市。", "三星堆", "殷墟", "entity_mismatch"),
        # a name whose number differs: the number is what differs
        (
            "is the iPhone 13 waterproof",
            "Apple says the iPhone 12 is water resistant.",
            "iPhone 13",
            "iPhone 12",
            "numeral_mismatch",
        ),
    ],
)
def test_a_close_phrase_of_the_same_kind_is_a_mismatch(query, passage, q_phrase, p_phrase, category) -> None:
    encoder = FakeEncoder()
    [s] = detect_alignment_mismatch(query, passage, encoder)
    assert s.category == category
    ev = s.evidence
    assert isinstance(ev, AlignmentEvidence)
    assert (ev.query_phrase, ev.passage_phrase) == (q_phrase, p_phrase)
    assert 0.5 <= ev.cosine < 0.95
    assert [passage[a:b] for a, b in s.spans] == [p_phrase]
    assert f"'{q_phrase}'" in ev.summary() and f"'{p_phrase}'" in ev.summary() and f"{ev.cosine:.2f}" in ev.summary()


@pytest.mark.parametrize(
    "query, passage",
    [
        ("小米手机怎么截图", "小米手机截图方法：同时按住电源键和音量下键。"),  # the same name
        ("三星堆遗址在哪里", "三星堆遗址位于四川省广汉市。"),
        ("is the iPhone 13 waterproof", "Apple says the iPhone 13 is water resistant."),
        ("小米手机怎么截图", "截图方法：同时按住电源键和音量下键。"),  # no counterpart at all
        ("三星堆遗址在哪里", "华为手机截图方法"),  # a counterpart of another kind (slot) only
        ("is the Toyota safe", "The weather in Paris is mild."),  # a name, but not a close one
        # a shorter mention of the query's name is the same name, however close another one is
        ("what did Nikola Tesla invent", "Tesla worked for Edison before founding his own company."),
    ],
)
def test_equal_missing_or_unrelated_counterparts_are_clean(query, passage) -> None:
    assert detect_alignment_mismatch(query, passage, FakeEncoder()) == []


def test_phrase_embeddings_are_cached_and_batched() -> None:
    encoder = FakeEncoder()
    cache = PhraseCache(encoder)
    detect_alignment_mismatch("小米手机怎么截图", "华为手机截图方法", cache)
    detect_alignment_mismatch("小米手机怎么截图", "华为手机截图方法", cache)
    # one batch for the pair, one for the encoder's baseline (once), nothing again for the second call
    assert len(encoder.calls) == 2
    assert sorted(encoder.calls[0]) == ["华为", "小米"]
    assert 0.0 <= abs(cache.baseline()) < 0.2 and len(encoder.calls) == 2


def test_the_band_is_read_on_the_encoders_scale() -> None:
    """An encoder whose cosines are all high (a shared direction) judges the same pairs the same way."""
    encoder = FakeEncoder(shared=2.0)
    cache = PhraseCache(encoder)
    assert cache.baseline() > 0.7
    [s] = detect_alignment_mismatch("小米手机怎么截图", "华为手机截图方法", cache)
    assert s.evidence.passage_phrase == "华为" and s.evidence.cosine >= s.evidence.threshold > 0.7
    assert detect_alignment_mismatch("is the Toyota safe", "The weather in Paris is mild.", cache) == []
    [s] = detect_alignment_mismatch("Toyota mileage", "Honda averages 36 mpg in the city.", cache)
    assert (s.evidence.query_phrase, s.evidence.passage_phrase) == ("Toyota", "Honda")


def test_suggest_runs_it_only_with_an_encoder_and_after_the_rules() -> None:
    query, passage = "三星堆遗址在哪里", "殷墟遗址位于河南省安阳市。"
    without = suggest(query, passage)
    assert all(s.detector != "alignment" for s in without)
    got = suggest(query + "?", "殷墟遗址位于河南省安阳市。", encoder=FakeEncoder())
    # the name list (rule) already gives entity_mismatch: the alignment detector adds no second one
    assert [(s.category, s.detector) for s in got if s.category == "entity_mismatch"] == [
        ("entity_mismatch", "entities")
    ]
    query, passage = "is the iPhone 13 waterproof", "Apple says the iPhone 12 is water resistant."
    got = suggest(query, passage, encoder=FakeEncoder())
    assert [(s.category, s.detector) for s in got] == [("numeral_mismatch", "numerals")]
    # a pair the rules miss (single sentence-initial names are not read as names by the entity rule)
    query, passage = "Toyota mileage", "Honda averages 36 mpg in the city."
    assert suggest(query, passage) == []
    [s] = suggest(query, passage, encoder=FakeEncoder())
    assert (s.category, s.detector) == ("entity_mismatch", "alignment")
    assert s.to_dict()["detector"] == "alignment"
