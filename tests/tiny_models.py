"""Tiny randomly initialised BERT folders for tests: no download, a few hundred KB, seconds to train.

Every test that needs a Hugging Face model writes one of these: a 2-layer,
32-dimensional BERT over a word-level vocabulary of the test's own words,
with its tokenizer, saved as a standard folder that ``transformers`` loads.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def write_tiny_bert(
    folder: Path,
    vocab: Sequence[str],
    *,
    seed: int = 0,
    head: bool = False,
    intermediate_size: int = 37,
    max_position_embeddings: int = 64,
    initializer_range: float = 0.02,
    dropout: float = 0.1,
) -> Path:
    """Write a random BERT over ``vocab`` (``[PAD]``, ``[UNK]``, ``[CLS]``, ``[SEP]`` first) and its tokenizer.

    ``head=True`` writes a ``BertForSequenceClassification`` with one logit (a
    cross-encoder), else a plain ``BertModel`` (a bi-encoder).  The weights are
    drawn after ``torch.manual_seed(seed)``, so equal arguments give equal folders.
    """
    import torch
    import transformers
    from transformers import BertConfig, BertForSequenceClassification, BertModel, BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab_file = folder / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    if int(transformers.__version__.split(".")[0]) >= 5:
        tokenizer = BertTokenizerFast(vocab=str(vocab_file))
    else:  # pragma: no cover - transformers 4
        tokenizer = BertTokenizerFast(vocab_file=str(vocab_file))
    word = next(w for w in vocab if not w.startswith("[") and w.isalpha() and w.isascii())
    assert tokenizer(word)["input_ids"] == [2, list(vocab).index(word), 3]  # the vocab file was really used
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=intermediate_size,
        max_position_embeddings=max_position_embeddings,
        initializer_range=initializer_range,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        **({"num_labels": 1} if head else {}),
    )
    torch.manual_seed(seed)
    (BertForSequenceClassification if head else BertModel)(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
