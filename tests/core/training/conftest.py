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
WORDS = sorted({*TOPICS, *FILLER, "what", "about", "tell", "me", "please", "?", ".", ",", ":"})
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]


def toy_collection(seed: int = 0) -> LabelledData:
    """Queries ``q-<topic>-<i>``, passages ``p-<topic>-<j>`` (3 per topic), graded labels and candidate lists.

    A query's passages about its topic are relevant (the first grade 2, the
    others grade 1); its candidates are every passage in a seeded random order
    (as a weak first stage would give them), so hard negatives are other
    topics' passages.
    """
    rng = random.Random(seed)
    passages: dict[str, str] = {}
    for topic in TOPICS:
        for j in range(3):
            words = [rng.choice(FILLER) for _ in range(rng.randint(4, 8))]
            words.insert(rng.randint(0, len(words)), topic)
            passages[f"p-{topic}-{j}"] = " ".join(words) + " ."
    queries = {f"q-{topic}-{i}": template.format(kw=topic)
               for topic in TOPICS for i, template in enumerate(QUERY_TEMPLATES)}
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
def tiny_encoder_folder(tmp_path_factory) -> Path:
    """A tiny random ``BertModel`` + ``BertTokenizerFast`` over :data:`VOCAB`, saved to a temporary folder."""
    import torch
    import transformers
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-encoder")
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    if int(transformers.__version__.split(".")[0]) >= 5:
        tokenizer = BertTokenizerFast(vocab=str(vocab_file))
    else:  # pragma: no cover - transformers 4
        tokenizer = BertTokenizerFast(vocab_file=str(vocab_file))
    assert tokenizer("bread")["input_ids"] == [2, VOCAB.index("bread"), 3]  # the vocab file was really used
    config = BertConfig(
        vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=37, max_position_embeddings=64,
    )
    torch.manual_seed(0)
    BertModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "slow: loads the real all-MiniLM-L6-v2 (a few seconds)")
