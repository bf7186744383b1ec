"""Fixtures shared by the training tests: a tiny random BERT and a toy collection it can learn.

``tiny_encoder_folder`` is a 2-layer, 32-dim randomly initialised BERT (a plain
``BertModel``: the trainers add their own heads) with a word-level vocabulary
of the toy collection's words, saved with its ``BertTokenizerFast`` to a
temporary folder, so each training test runs in seconds on a CPU.

``toy_data`` is a :class:`~core.training.data.LabelledData` whose relevance a
tiny model can learn: every query and each of its relevant passages share a
topic keyword, and nothing else tells them apart (the other words are drawn
from one shared filler list).  Each topic has several queries, so the
held-out queries (``toy_split``) ask about topics seen in training, with other
words around the keyword.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import random  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from core.training.data import LabelledData, split_queries  # noqa: E402

TOPICS = ("bread", "river", "market", "cat", "dog", "fish", "money", "music")
FILLER = ("the", "a", "of", "and", "is", "in", "at", "to", "on", "old", "new", "big", "small", "good", "very")
QUERY_TEMPLATES = ("what about {kw} ?", "tell me of the {kw}", "{kw} please", "is a {kw} good ?")
# Shorter texts make the keyword a bigger share of each input: what the re-ranker tests train on.
SHORT_QUERY_TEMPLATES = ("{kw} ?", "the {kw}", "{kw} please", "a {kw}")
WORDS = sorted({*TOPICS, *FILLER, "what", "about", "tell", "me", "please", "?", ".", ",", ":"})
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]


def toy_collection(
    seed: int = 0, *, filler: tuple[int, int] = (4, 8), templates: tuple[str, ...] = QUERY_TEMPLATES
) -> LabelledData:
    """Queries ``q-<topic>-<i>``, passages ``p-<topic>-<j>`` (3 per topic), graded labels and candidate lists.

    A query's passages about its topic are relevant (the first grade 2, the
    others grade 1); its candidates are every passage in a seeded random order
    (as a weak first stage would give them), so hard negatives are other
    topics' passages.  ``filler`` bounds each passage's number of filler
    words; ``templates`` are the query texts (``{kw}`` is the topic).
    """
    rng = random.Random(seed)
    passages: dict[str, str] = {}
    for topic in TOPICS:
        for j in range(3):
            words = [rng.choice(FILLER) for _ in range(rng.randint(*filler))]
            words.insert(rng.randint(0, len(words)), topic)
            passages[f"p-{topic}-{j}"] = " ".join(words) + " ."
    queries = {f"q-{topic}-{i}": template.format(kw=topic) for topic in TOPICS for i, template in enumerate(templates)}
    qrels = {q: {f"p-{q.split('-')[1]}-{j}": (2 if j == 0 else 1) for j in range(3)} for q in queries}
    candidates = {}
    for q in sorted(queries):
        ids = sorted(passages)
        rng.shuffle(ids)
        candidates[q] = ids
    return LabelledData(queries=queries, passages=passages, qrels=qrels, candidates=candidates, level=1)


@pytest.fixture(scope="session")
def toy_data() -> LabelledData:
    """The toy collection (32 queries, 24 passages), see :func:`toy_collection`."""
    return toy_collection()


@pytest.fixture(scope="session")
def toy_split(toy_data) -> tuple[LabelledData, LabelledData]:
    """(training, held-out) subsets of ``toy_data``: a seeded 25% query split."""
    train_ids, held_ids = split_queries(list(toy_data.queries), 0.25, seed=0)
    return toy_data.subset(train_ids), toy_data.subset(held_ids)


@pytest.fixture(scope="session")
def short_toy_split() -> tuple[LabelledData, LabelledData]:
    """(training, held-out) of the toy collection with short texts (1-3 filler words, 2-word queries)."""
    data = toy_collection(filler=(1, 3), templates=SHORT_QUERY_TEMPLATES)
    train_ids, held_ids = split_queries(list(data.queries), 0.25, seed=0)
    return data.subset(train_ids), data.subset(held_ids)


def make_tiny_encoder(folder: Path, *, initializer_range: float = 0.02, dropout: float = 0.1) -> Path:
    """Write a tiny random ``BertModel`` + ``BertTokenizerFast`` over :data:`VOCAB` to ``folder``."""
    from tests.tiny_models import write_tiny_bert

    return write_tiny_bert(folder, VOCAB, initializer_range=initializer_range, dropout=dropout)


@pytest.fixture(scope="session")
def tiny_encoder_folder(tmp_path_factory) -> Path:
    """A tiny random ``BertModel`` (BERT's initialisation and dropout) saved to a temporary folder."""
    return make_tiny_encoder(tmp_path_factory.mktemp("tiny-encoder"))


@pytest.fixture(scope="session")
def learnable_encoder_folder(tmp_path_factory) -> Path:
    """The tiny BERT with 15x BERT's initial weight scale and no dropout: it learns the toy task in ~100 steps.

    With BERT's 0.02 initialisation a 32-dim model's scores hardly depend on
    the input at first, and training sits on a plateau for most of its first
    hundred steps; larger initial weights skip that plateau.
    """
    return make_tiny_encoder(tmp_path_factory.mktemp("learnable-encoder"), initializer_range=0.3, dropout=0.0)


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: loads the real all-MiniLM-L6-v2 (a few seconds)")
