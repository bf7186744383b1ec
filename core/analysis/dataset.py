"""Dataset statistics: text lengths, labels, judgments per query, query diversity, train/eval leakage.

Query diversity is T2Ranking's intra-list similarity (Xie et al.,
"T2Ranking: A large-scale Chinese Benchmark for Passage Ranking", SIGIR 2023,
eq. 3-4); leakage is DuReader-retrieval's near-duplicate query check (Qiu et
al., EMNLP 2022, cosine >= 0.5), with a lexical variant for texts without an
encoder of their language.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np

from core.analysis._common import _DEFAULT_BLOCK, _matrix, _normalised
from core.types import Qrels
from core.validators import integer, is_integer, positive_int, real_number

__all__ = [
    "LEXICAL_LEAKAGE_THRESHOLD",
    "ILSEstimate",
    "LeakPair",
    "LengthStats",
    "char_bigrams",
    "find_leakage",
    "find_lexical_leakage",
    "intra_list_similarity",
    "judged_per_query",
    "label_distribution",
    "length_stats",
    "length_stats_of",
    "sampled_intra_list_similarity",
]


class LengthStats(NamedTuple):
    """Length statistics of a set of texts, in characters (Unicode code points)."""

    count: int  # type: ignore[assignment]  # shadows tuple.count: the public field name is kept
    mean: float
    median: float
    p10: float
    p90: float
    min: int
    max: int


class ILSEstimate(NamedTuple):
    """A sampled intra-list similarity: the estimate, its standard error, the pairs drawn."""

    value: float
    stderr: float
    n_pairs: int


class LeakPair(NamedTuple):
    """A training query near-duplicate to an evaluation query."""

    train_id: str
    eval_id: str
    similarity: float


# ---------------------------------------------------------------------------- dataset statistics


def length_stats(texts: Iterable[str]) -> LengthStats:
    """Length statistics of texts in characters (Unicode code points, ``len(str)``).

    Percentiles use linear interpolation between order statistics
    (:func:`numpy.percentile`'s default, Hyndman & Fan type 7).

    Parameters
    ----------
    texts : iterable of str
        E.g. passage or query texts.

    Returns
    -------
    LengthStats
        ``(count, mean, median, p10, p90, min, max)``.

    Raises
    ------
    ValueError
        When there are no texts.
    TypeError
        When an item is not a str.
    """
    lengths: list[int] = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"text {i}: expected str, got {type(t).__name__}")
        lengths.append(len(t))
    if not lengths:
        raise ValueError("length_stats needs at least one text")
    return length_stats_of(lengths)


def length_stats_of(lengths: Sequence[int] | np.ndarray) -> LengthStats:
    """:func:`length_stats` from the lengths themselves (e.g. ``SELECT length(text)``, no texts in memory)."""
    arr = np.asarray(lengths, dtype=np.int64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("length_stats_of needs a non-empty 1-d sequence of lengths")
    p10, p50, p90 = np.percentile(arr, [10, 50, 90])
    return LengthStats(
        count=int(arr.size),
        mean=float(arr.mean()),
        median=float(p50),
        p10=float(p10),
        p90=float(p90),
        min=int(arr.min()),
        max=int(arr.max()),
    )


def label_distribution(qrels: Qrels) -> dict[int, int]:
    """Number of judgments per grade, sorted by grade.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}``.

    Returns
    -------
    dict
        ``{grade: count}``.

    Raises
    ------
    TypeError
        When a grade is not an int.
    """
    counts: Counter[int] = Counter()
    for qid, docs in qrels.items():
        for doc, grade in docs.items():
            if not is_integer(grade):
                raise TypeError(f"query {qid!r}, doc {doc!r}: grade must be an int, got {grade!r}")
            counts[int(grade)] += 1
    return dict(sorted(counts.items()))


def judged_per_query(qrels: Qrels, *, min_grade: int | None = None) -> dict[str, int]:
    """Number of judged passages per query (or of those with ``grade >= min_grade``).

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}``; a query with no judgments gets 0.
    min_grade : int or None, default None
        Count only judgments with ``grade >= min_grade`` (e.g. 2 for the
        relevant passages on the 4-level scale).

    Returns
    -------
    dict
        ``{qid: count}`` in qrels order.
    """
    if min_grade is None:
        return {qid: len(docs) for qid, docs in qrels.items()}
    integer(min_grade, "min_grade")
    return {qid: sum(g >= min_grade for g in docs.values()) for qid, docs in qrels.items()}


# ---------------------------------------------------------------------------- embeddings


def intra_list_similarity(vectors: np.ndarray, *, chunk_size: int = 65536) -> float:
    """Intra-list similarity of a query set: mean pairwise cosine similarity.

    T2Ranking's query diversity (Xie et al., "T2Ranking: A large-scale Chinese
    Benchmark for Passage Ranking", SIGIR 2023, eq. 3-4); lower ILS means more
    diverse queries::

        ILS(Q) = 2 / (|Q| (|Q| - 1)) * sum_{i<j} cos(e_i, e_j)

    With unit vectors ``u_i = e_i / ||e_i||`` (rows of ``U``) the pair sum is
    the off-diagonal half of ``U U^T``, and since ``1^T U U^T 1 = ||sum_i
    u_i||^2`` and the diagonal sums to ``|Q|``::

        sum_{i<j} cos(e_i, e_j) = (||sum_i u_i||^2 - |Q|) / 2

    so the exact value costs one pass over the vectors (``O(|Q| d)`` time,
    ``O(chunk_size d)`` memory) instead of the ``|Q|^2`` matrix product.
    Rows are normalised and summed in float64, ``chunk_size`` at a time.

    Parameters
    ----------
    vectors : array of shape (n, dim)
        Query embeddings (not necessarily normalised), ``n >= 2``, no zero
        rows.  A ``numpy.memmap`` is read chunk by chunk.
    chunk_size : int, default 65536
        Rows normalised at a time.

    Returns
    -------
    float
        ILS in ``[-1/(n-1), 1]``.

    Raises
    ------
    ValueError
        For fewer than 2 vectors, a zero vector or non-finite values.
    """
    chunk_size = positive_int(chunk_size, "chunk_size")
    arr, n = _ils_vectors(vectors)
    total = np.zeros(arr.shape[1], dtype=np.float64)
    for start in range(0, n, chunk_size):
        total += _normalised(arr[start : start + chunk_size], "vectors", start).sum(axis=0)
    pair_sum = (float(total @ total) - n) / 2.0
    return 2.0 * pair_sum / (n * (n - 1))


def _ils_vectors(vectors: object) -> tuple[np.ndarray, int]:
    """``vectors`` as a 2-d array and its number of rows, at least the 2 a pair needs."""
    arr = _matrix(vectors, "vectors")
    n = int(arr.shape[0])
    if n < 2:
        raise ValueError(f"intra-list similarity needs at least 2 vectors, got {n}")
    return arr, n


def sampled_intra_list_similarity(vectors: np.ndarray, *, n_pairs: int = 100_000, seed: int | None = 0) -> ILSEstimate:
    """Monte Carlo estimate of :func:`intra_list_similarity` from random pairs.

    Draws ``n_pairs`` pairs ``(i, j)``, ``i != j``, uniformly with
    replacement; the estimate is the mean cosine of the pairs and its
    standard error ``s / sqrt(n_pairs)`` (``s`` the sample standard
    deviation).  Unbiased for ILS because every unordered pair is equally
    likely.  The exact value is already linear in ``|Q|``; sampling touches
    only the sampled rows, which helps when the vectors are memory-mapped or
    when a confidence interval is wanted.

    Parameters
    ----------
    vectors : array of shape (n, dim)
        Query embeddings, ``n >= 2``, no zero rows.
    n_pairs : int, default 100000
        Pairs drawn (in batches of 65536).
    seed : int or None, default 0
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    ILSEstimate
        ``(value, stderr, n_pairs)``; ``stderr`` is NaN for one pair.
    """
    n_pairs = positive_int(n_pairs, "n_pairs")
    arr, n = _ils_vectors(vectors)
    rng = np.random.default_rng(seed)
    sims = np.empty(n_pairs, dtype=np.float64)
    batch = 65536
    for start in range(0, n_pairs, batch):
        m = min(batch, n_pairs - start)
        i = rng.integers(0, n, size=m)
        j = rng.integers(0, n - 1, size=m)
        j = j + (j >= i)  # uniform over the n - 1 indices other than i
        rows = np.unique(np.concatenate([i, j]))
        unit = _normalised(arr[rows], "vectors", 0)
        pos = {int(r): k for k, r in enumerate(rows)}
        ui = unit[[pos[int(x)] for x in i]]
        uj = unit[[pos[int(x)] for x in j]]
        sims[start : start + m] = np.einsum("ij,ij->i", ui, uj)
    stderr = float(np.std(sims, ddof=1) / math.sqrt(n_pairs)) if n_pairs > 1 else math.nan
    return ILSEstimate(float(sims.mean()), stderr, n_pairs)


def find_leakage(
    train_ids: Sequence[str],
    train_vecs: np.ndarray,
    eval_ids: Sequence[str],
    eval_vecs: np.ndarray,
    threshold: float = 0.5,
    top: int | None = None,
    *,
    block_elements: int = _DEFAULT_BLOCK,
) -> list[LeakPair]:
    """Training queries near-duplicate to evaluation (dev/test) queries.

    DuReader-retrieval (Qiu et al., EMNLP 2022) removed training queries whose
    embedding cosine similarity to a dev/test query was at least 0.5.  A pair
    leaks when ``cos(t, e) = t.e / (||t|| ||e||) >= threshold`` (inclusive;
    the comparison is on the computed floating-point cosine).

    The similarities are computed block by block, ``E_block U_T^T`` for a
    block of evaluation rows against all (normalised) training rows, each
    block at most ``block_elements`` similarities, so memory stays bounded
    (100k x 10k needs only one 64 MiB block at a time by default).  float32
    inputs are compared in float32, anything else in float64.

    Parameters
    ----------
    train_ids, eval_ids : sequence of str
        Unique ids, one per row of the matching matrix.
    train_vecs, eval_vecs : array of shape (n, dim)
        Query embeddings with the same ``dim``; no zero rows.
    threshold : float, default 0.5
        Cosine threshold in ``[-1, 1]``.
    top : int or None, default None
        Keep at most this many training matches per evaluation query (its
        most similar ones, ties by training id); ``None`` keeps all.
    block_elements : int, default 2**23
        Similarities computed per block.

    Returns
    -------
    list of LeakPair
        ``(train_id, eval_id, similarity)`` sorted by similarity descending,
        then train id, then eval id.

    Raises
    ------
    ValueError
        For mismatched lengths or dimensions, duplicate ids, zero vectors,
        non-finite values, or a threshold outside ``[-1, 1]``.
    """
    train_ids, t_arr, eval_ids, e_arr = _leakage_inputs(train_ids, train_vecs, eval_ids, eval_vecs)
    real_number(threshold, "threshold", low=-1, high=1)
    if top is not None:
        top = positive_int(top, "top")
    block_elements = positive_int(block_elements, "block_elements")
    if t_arr.shape[0] == 0 or e_arr.shape[0] == 0:
        return []
    found = _embedding_leaks(train_ids, t_arr, eval_ids, e_arr, threshold, top, block_elements)
    found.sort(key=lambda p: (-p.similarity, p.train_id, p.eval_id))
    return found


def _leakage_inputs(
    train_ids: Sequence[str], train_vecs: np.ndarray, eval_ids: Sequence[str], eval_vecs: np.ndarray
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """:func:`find_leakage`'s ids as lists and vectors as checked matrices of one dimension."""
    t_arr = _matrix(train_vecs, "train_vecs")
    e_arr = _matrix(eval_vecs, "eval_vecs")
    train_ids, eval_ids = list(train_ids), list(eval_ids)
    _check_ids(train_ids, t_arr.shape[0], "train", "vectors")
    _check_ids(eval_ids, e_arr.shape[0], "eval", "vectors")
    if t_arr.shape[1] != e_arr.shape[1]:
        raise ValueError(f"dimension mismatch: train {t_arr.shape[1]}, eval {e_arr.shape[1]}")
    return train_ids, t_arr, eval_ids, e_arr


def _embedding_leaks(
    train_ids: list[str],
    t_arr: np.ndarray,
    eval_ids: list[str],
    e_arr: np.ndarray,
    threshold: float,
    top: int | None,
    block_elements: int,
) -> list[LeakPair]:
    """:func:`find_leakage`'s pairs, unsorted, one block of evaluation rows at a time."""
    n_train, n_eval = t_arr.shape[0], e_arr.shape[0]
    dtype = np.float32 if (t_arr.dtype == np.float32 and e_arr.dtype == np.float32) else np.float64
    train_unit = _normalised(t_arr, "train_vecs", 0, dtype)
    train_rank = np.empty(n_train, dtype=np.int64)  # position of each train id in sorted order
    train_rank[sorted(range(n_train), key=train_ids.__getitem__)] = np.arange(n_train)
    rows_per_block = max(1, block_elements // n_train)
    found: list[LeakPair] = []
    for start in range(0, n_eval, rows_per_block):
        eval_unit = _normalised(e_arr[start : start + rows_per_block], "eval_vecs", start, dtype)
        rows, cols, vals = _block_matches(eval_unit @ train_unit.T, threshold, top, train_rank)
        found.extend(
            LeakPair(train_ids[c], eval_ids[start + r], float(v))
            for r, c, v in zip(rows.tolist(), cols.tolist(), vals.tolist())
        )
    return found


def _check_ids(ids: list[str], n_rows: int, what: str, rows: str) -> None:
    """Refuse ids that do not match their rows one to one (wrong count or a duplicate)."""
    if len(ids) != n_rows:
        raise ValueError(f"{len(ids)} {what} ids for {n_rows} {what} {rows}")
    if len(set(ids)) != len(ids):
        dup = next(i for i, c in Counter(ids).items() if c > 1)
        raise ValueError(f"duplicate {what} id {dup!r}")


def _block_matches(
    sims: np.ndarray, threshold: float, top: int | None, train_rank: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(row, column, similarity) of one block's similarities ``>= threshold``, at most ``top`` per row.

    ``sims`` is (block of eval rows, n_train); with ``top`` each row keeps its most
    similar columns, ties by ``train_rank`` (the training id's sorted position).
    """
    rows, cols = np.nonzero(sims >= threshold)
    vals = sims[rows, cols].astype(np.float64)
    if top is not None and rows.size:
        order = np.lexsort((train_rank[cols], -vals, rows))
        rows, cols, vals = rows[order], cols[order], vals[order]
        first = np.searchsorted(rows, rows, side="left")  # start of each row's run
        keep = (np.arange(rows.size) - first) < top
        rows, cols, vals = rows[keep], cols[keep], vals[keep]
    return rows, cols, vals


LEXICAL_LEAKAGE_THRESHOLD = 0.4
"""Character-bigram cosine at or above which :func:`find_lexical_leakage` flags a pair.

Calibrated on the bundled demo and paraphrases of its Chinese test queries:
the demo's three Chinese training queries (番茄炒蛋的做法, 麻婆豆腐是哪个省的菜,
黄山的最高峰是哪座) score at most 0.12 against any Chinese dev/test query, and
two different questions of one template (端午节为什么吃粽子 against
除夕为什么要吃饺子) 0.21; reworded paraphrases score 0.53 (故宫是哪年开始建造的
/ 故宫是哪一年开始修建的), 0.53 (吃饺子为什么是除夕的习俗 / 除夕为什么要吃饺子),
0.63 (端午节为啥要吃粽子 / 端午节为什么吃粽子) and 0.84 (高血压的诊断标准 /
高血压的诊断标准是什么).  A paraphrase in other words (怎么预防小孩近视 /
怎样预防孩子近视, 0.29) is out of reach of any lexical measure: that needs a
Chinese encoder; a question of the same short template (元宵节为什么吃汤圆 /
端午节为什么吃粽子, 0.50) is flagged although it asks something else: the
measure sees shared wording, so the flagged list is for review.
"""

_WORD_RUN = re.compile(r"[^\W_]+")


def char_bigrams(text: str) -> list[str]:
    """The overlapping character bigrams of ``text``'s runs of letters and digits (NFKC, lower-cased).

    Punctuation and spaces separate runs and never enter a bigram; a run of
    one character counts as itself.  ``"除夕吃饺子？"`` gives 除夕, 夕吃, 吃饺, 饺子.
    """
    grams: list[str] = []
    for run in _WORD_RUN.findall(unicodedata.normalize("NFKC", text).lower()):
        grams.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return grams


def find_lexical_leakage(
    train_ids: Sequence[str],
    train_texts: Sequence[str],
    eval_ids: Sequence[str],
    eval_texts: Sequence[str],
    threshold: float = LEXICAL_LEAKAGE_THRESHOLD,
    top: int | None = None,
) -> list[LeakPair]:
    """Training queries near-duplicate to evaluation queries by character-bigram cosine.

    :func:`find_leakage` for texts without an encoder of their language (an
    English encoder puts unrelated Chinese questions at cosine 0.5-0.86): each
    query is a vector of its :func:`char_bigrams` counts (scikit-learn's
    ``CountVectorizer``), and a pair leaks when the cosine of the two vectors
    is at least ``threshold`` (default :data:`LEXICAL_LEAKAGE_THRESHOLD`,
    calibrated for Chinese questions).  It measures shared wording, not
    meaning.

    Parameters
    ----------
    train_ids, eval_ids : sequence of str
        Unique ids, one per text.
    train_texts, eval_texts : sequence of str
        The query texts.
    threshold : float, default LEXICAL_LEAKAGE_THRESHOLD
        Cosine threshold in ``(0, 1]`` (a pair sharing no bigram has cosine 0 and never leaks).
    top : int or None, default None
        Keep at most this many training matches per evaluation query, as in :func:`find_leakage`.

    Returns
    -------
    list of LeakPair
        Sorted by similarity descending, then train id, then eval id.
    """
    train_ids, eval_ids = list(train_ids), list(eval_ids)
    _check_ids(train_ids, len(train_texts), "train", "texts")
    _check_ids(eval_ids, len(eval_texts), "eval", "texts")
    real_number(threshold, "threshold", low=0, high=1)
    if threshold == 0:
        raise ValueError("threshold must be above 0: every pair has a bigram cosine >= 0")
    if top is not None:
        top = positive_int(top, "top")
    if not train_ids or not eval_ids:
        return []
    sims = _bigram_cosines(train_texts, eval_texts)
    if sims is None:
        return []
    found = [
        LeakPair(train_ids[c], eval_ids[r], float(v))
        for r, c, v in zip(sims.row.tolist(), sims.col.tolist(), sims.data.tolist())
        if v >= threshold
    ]
    found.sort(key=lambda p: (-p.similarity, p.train_id, p.eval_id))
    return found if top is None else _first_per_eval(found, top)


def _bigram_cosines(train_texts: Sequence[str], eval_texts: Sequence[str]) -> Any:
    """The character-bigram cosines of every (eval, train) pair as a sparse COO matrix (only non-zero ones stored).

    ``None`` when no text has a bigram (no letter or digit): nothing can match.
    """
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.preprocessing import normalize

    vectorizer = CountVectorizer(analyzer=char_bigrams)
    try:
        matrix = vectorizer.fit_transform([*train_texts, *eval_texts])
    except ValueError:  # the vocabulary is empty
        return None
    matrix = normalize(matrix.astype(np.float64))
    n_train = len(train_texts)
    return (matrix[n_train:] @ matrix[:n_train].T).tocoo()


def _first_per_eval(found: list[LeakPair], top: int) -> list[LeakPair]:
    """The first ``top`` pairs of each evaluation query (``found`` is sorted most similar first)."""
    seen: Counter[str] = Counter()
    kept = []
    for pair in found:
        seen[pair.eval_id] += 1
        if seen[pair.eval_id] <= top:
            kept.append(pair)
    return kept
