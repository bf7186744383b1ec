"""Query diversity and train/test leakage of a collection's queries (pure: vectors in, rows out).

Used by ``pooljudge leakage`` and the Dataset statistics page; the query embeddings come from
:func:`pooljudge.encoders.query_vectors` (the encoder is the caller's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from core.types import Query

if TYPE_CHECKING:
    from core.analysis import LeakPair

EVAL_SPLITS = ("dev", "test")
"""The splits a training query is compared against."""


def query_diversity(queries: Sequence[Query], vectors: np.ndarray) -> dict[str, tuple[int, float]]:
    """``{split: (queries, ILS)}`` for every split with two queries or more, then ``"all"``.

    ILS is T2Ranking's intra-list similarity (:func:`core.analysis.intra_list_similarity`):
    the mean pairwise cosine of the query embeddings, lower meaning more diverse.
    """
    from core.analysis import intra_list_similarity

    rows_of: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        rows_of.setdefault(q.split, []).append(i)
    out = {
        split: (len(rows), intra_list_similarity(vectors[rows]))
        for split, rows in sorted(rows_of.items())
        if len(rows) >= 2
    }
    if len(queries) >= 2 and len(rows_of) > 1:
        out["all"] = (len(queries), intra_list_similarity(vectors))
    return out


CHINESE_LEAKAGE_METHODS = ("char-bigram", "encoder")
"""How :func:`leaked_training_queries` compares Chinese queries: lexically, or with the encoder's vectors."""


def is_chinese(query: Query) -> bool:
    """A query in Chinese: its ``language`` when set, else :func:`core.lang.detect_language` of its text."""
    from core.lang import detect_language

    return query.language == "zh" if query.language else detect_language(query.text) == "zh"


def chinese_leakage_method(model_given: bool) -> str:
    """``"encoder"`` when the user gave an encoder (theirs may know Chinese), else ``"char-bigram"``.

    The bundled all-MiniLM-L6-v2 is English-only: it puts unrelated Chinese
    questions at cosine 0.5-0.86 (黄山的最高峰是哪座 / 高血压的诊断标准是什么:
    0.86), so 4 of the demo's 7 training queries were flagged at 0.5, mostly
    falsely.
    """
    return "encoder" if model_given else "char-bigram"


def _check_chinese(chinese: str) -> None:
    if chinese not in CHINESE_LEAKAGE_METHODS:
        raise ValueError(f"chinese must be one of {', '.join(CHINESE_LEAKAGE_METHODS)}, got {chinese!r}")


def leakage_method_text(
    queries: Sequence[Query],
    *,
    chinese: str,
    threshold: float,
    lexical_threshold: float,
    model_name: str,
    train_split: str = "train",
) -> str:
    """One line saying how :func:`leaked_training_queries` compared which training queries (shown with its result)."""
    _check_chinese(chinese)
    train = [q for q in queries if q.split == train_split]
    n_zh = sum(is_chinese(q) for q in train) if chinese == "char-bigram" else 0
    parts = []
    if len(train) - n_zh:
        parts.append(f"{len(train) - n_zh} by {model_name} embedding cosine >= {threshold:g}")
    if n_zh:
        parts.append(
            f"{n_zh} Chinese by character-bigram cosine >= {lexical_threshold:g} (lexical, against the "
            "Chinese dev/test queries only)"
        )
    return f"{train_split} queries compared: " + ("; ".join(parts) or "none")


def leaked_training_queries(
    queries: Sequence[Query],
    vectors: np.ndarray | None,
    *,
    threshold: float = 0.5,
    train_split: str = "train",
    eval_splits: Sequence[str] = EVAL_SPLITS,
    chinese: str = "encoder",
    lexical_threshold: float | None = None,
) -> list[dict[str, Any]]:
    """Training queries near-duplicate to an evaluation query (DuReader-retrieval's check, cosine >= 0.5).

    Returns one row per (training query, evaluation query) pair at or above
    its threshold, most similar first: ``train_id``, ``train_query``,
    ``eval_id``, ``eval_split``, ``eval_query``, ``similarity``, ``method``
    (``"encoder"`` or ``"char-bigram"``) and ``threshold`` (the one the pair
    was held to).

    Parameters
    ----------
    queries : sequence of Query
        The collection's queries.
    vectors : array of shape (len(queries), dim) or None
        Their embeddings (:func:`pooljudge.encoders.query_vectors`); with ``chinese="char-bigram"``
        the rows of Chinese queries are not read (zeros will do), and
        ``None`` is allowed when every training or evaluation query is Chinese.
    threshold : float, default 0.5
        Embedding cosine at or above which a pair leaks (:func:`core.analysis.find_leakage`).
    chinese : {"encoder", "char-bigram"}
        ``"encoder"``: every pair by embedding cosine.  ``"char-bigram"`` (no
        Chinese encoder at hand, :func:`chinese_leakage_method`): Chinese
        training queries (:func:`is_chinese`) against Chinese evaluation
        queries by character-bigram cosine
        (:func:`core.analysis.find_lexical_leakage`), the others against the
        others by embedding cosine; a Chinese query is not compared with a
        non-Chinese one (words cannot match across languages and the
        encoder does not know Chinese).
    lexical_threshold : float, optional
        Character-bigram cosine threshold (default
        :data:`core.analysis.LEXICAL_LEAKAGE_THRESHOLD`, 0.4).
    """
    from core.analysis import LEXICAL_LEAKAGE_THRESHOLD

    _check_chinese(chinese)
    lexical_threshold = LEXICAL_LEAKAGE_THRESHOLD if lexical_threshold is None else lexical_threshold
    train = [i for i, q in enumerate(queries) if q.split == train_split]
    held_out = [i for i, q in enumerate(queries) if q.split in eval_splits]
    if not train or not held_out:
        return []
    # Chinese queries are compared lexically only without a Chinese encoder
    lexical = {i for i in (*train, *held_out) if is_chinese(queries[i])} if chinese == "char-bigram" else set()
    train_other, train_zh = _partition(train, lexical)
    held_out_other, held_out_zh = _partition(held_out, lexical)
    pairs = _leaked_pairs(queries, vectors, train_other, held_out_other, threshold, lexical=False)
    pairs += _leaked_pairs(queries, vectors, train_zh, held_out_zh, lexical_threshold, lexical=True)
    pairs.sort(key=lambda row: (-row[0].similarity, row[0].train_id, row[0].eval_id))
    return _leak_rows(queries, pairs)


def _partition(rows: list[int], chosen: set[int]) -> tuple[list[int], list[int]]:
    """``rows`` split into those not in ``chosen`` and those in it, each in order."""
    return [i for i in rows if i not in chosen], [i for i in rows if i in chosen]


def _leak_rows(queries: Sequence[Query], pairs: list[tuple[LeakPair, str, float]]) -> list[dict[str, Any]]:
    """The rows :func:`leaked_training_queries` returns for ``(pair, method, threshold)`` triples, in order."""
    by_id = {q.id: q for q in queries}
    return [
        {
            "train_id": p.train_id,
            "train_query": by_id[p.train_id].text,
            "eval_id": p.eval_id,
            "eval_split": by_id[p.eval_id].split,
            "eval_query": by_id[p.eval_id].text,
            "similarity": p.similarity,
            "method": method,
            "threshold": limit,
        }
        for p, method, limit in pairs
    ]


def _leaked_pairs(
    queries: Sequence[Query],
    vectors: np.ndarray | None,
    train: list[int],
    held_out: list[int],
    threshold: float,
    *,
    lexical: bool,
) -> list[tuple[LeakPair, str, float]]:
    """The leaking (pair, method, threshold) of training rows ``train`` against ``held_out``: by
    character bigrams (:func:`core.analysis.find_lexical_leakage`) or by embedding cosine."""
    from core.analysis import find_leakage, find_lexical_leakage

    if not train or not held_out:
        return []
    if lexical:
        return [
            (p, "char-bigram", threshold)
            for p in find_lexical_leakage(
                [queries[i].id for i in train],
                [queries[i].text for i in train],
                [queries[i].id for i in held_out],
                [queries[i].text for i in held_out],
                threshold=threshold,
            )
        ]
    if vectors is None:
        raise ValueError("vectors are needed: some queries are compared by their embeddings")
    return [
        (p, "encoder", threshold)
        for p in find_leakage(
            [queries[i].id for i in train],
            vectors[train],
            [queries[i].id for i in held_out],
            vectors[held_out],
            threshold=threshold,
        )
    ]
