"""Near-duplicate removal from a selection (T2Ranking 4.3): Ward clustering or a cosine threshold."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from core.pooling.types import Selection
from core.validators import real_number

# --------------------------------------------------------------------------- near-duplicates


def _unit_rows(doc_ids: Sequence[str], embeddings: ArrayLike) -> tuple[list[str], np.ndarray]:
    ids = [str(d) for d in doc_ids]
    if len(set(ids)) != len(ids):
        dup = next(d for d in ids if ids.count(d) > 1)
        raise ValueError(f"document {dup!r} is given twice")
    x = np.asarray(embeddings, dtype=np.float64)
    if len(ids) == 0:
        return ids, x.reshape(0, x.shape[-1] if x.ndim == 2 else 0)
    if x.ndim != 2 or x.shape[0] != len(ids):
        raise ValueError(f"embeddings must have shape ({len(ids)}, dim), got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("embeddings contain NaN or infinite values")
    norms = np.linalg.norm(x, axis=1)
    if np.any(norms == 0):
        raise ValueError(f"document {ids[int(np.argmin(norms))]!r} has a zero embedding (no direction)")
    return ids, x / norms[:, None]


def _keep_first(ids: list[str], labels: Sequence[int]) -> tuple[list[str], dict[str, str]]:
    representative: dict[int, str] = {}
    kept: list[str] = []
    removed: dict[str, str] = {}
    for doc, label in zip(ids, labels, strict=True):
        label = int(label)
        if label in representative:
            removed[doc] = representative[label]
        else:
            representative[label] = doc
            kept.append(doc)
    return kept, removed


def dedupe_by_clustering(
    doc_ids: Sequence[str], embeddings: ArrayLike, *, distance_threshold: float
) -> tuple[list[str], dict[str, str]]:
    r"""Near-duplicate removal by Ward hierarchical clustering (T2Ranking §4.3).

    Rows are L2-normalised, clustered with Ward linkage
    (:func:`scipy.cluster.hierarchy.linkage`, ``method="ward"``) and cut at
    ``distance_threshold`` (:func:`~scipy.cluster.hierarchy.fcluster`,
    ``criterion="distance"``: a cluster's members were all merged at a
    height :math:`\le t`).  One document per cluster is kept: the first in
    the given order, so pass documents best first.

    For two single documents the Ward merge height is their Euclidean
    distance, and for unit vectors

    .. math::

        \lVert a - b \rVert^2 = 2 - 2\cos(a, b)
        \quad\Longrightarrow\quad
        \text{merged} \iff \cos(a, b) \ge 1 - t^2 / 2,

    so ``t = 0.3`` pairs documents with cosine >= 0.955.  Larger clusters
    merge at larger heights (Ward's criterion grows with cluster size:
    :math:`\sqrt{2 n_A n_B / (n_A + n_B)}\,\lVert c_A - c_B \rVert`), so a
    cut keeps clusters compact rather than chaining.

    Parameters
    ----------
    doc_ids : Sequence[str]
        Distinct document ids, in preference order.
    embeddings : array_like, shape (n, dim)
        Row ``i`` embeds ``doc_ids[i]``; no row may be all zeros.
    distance_threshold : float
        The cut height :math:`t \ge 0`.

    Returns
    -------
    kept : list of str
        The representatives, in the given order.
    removed : dict of str to str
        ``{removed doc: the representative of its cluster}``.
    """
    real_number(distance_threshold, "distance_threshold", low=0)
    ids, x = _unit_rows(doc_ids, embeddings)
    if len(ids) < 2:
        return ids, {}
    from scipy.cluster.hierarchy import (  # scipy only when de-duplicating (the CLI imports this package)
        fcluster,
        linkage,
    )

    labels = fcluster(linkage(x, method="ward"), t=float(distance_threshold), criterion="distance")
    return _keep_first(ids, labels)


def dedupe_by_similarity(
    doc_ids: Sequence[str], embeddings: ArrayLike, *, threshold: float = 0.95
) -> tuple[list[str], dict[str, str]]:
    r"""Near-duplicate removal by a cosine-similarity threshold.

    Two documents are duplicates when :math:`\cos(a, b) \ge` ``threshold``;
    clusters are the connected components of that graph
    (:func:`scipy.sparse.csgraph.connected_components`), so duplication is
    transitive: if ``a ~ b`` and ``b ~ c`` all three form one cluster even
    when ``cos(a, c)`` is below the threshold (single linkage).  One
    document per cluster is kept: the first in the given order.

    Parameters
    ----------
    doc_ids : Sequence[str]
        Distinct document ids, in preference order.
    embeddings : array_like, shape (n, dim)
        Row ``i`` embeds ``doc_ids[i]``; rows are L2-normalised here.
    threshold : float
        Cosine similarity at or above which two documents are duplicates,
        in ``[-1, 1]`` (default 0.95).  Cosines are computed in float64; two
        identical vectors may come out a hair below 1.0, so a threshold of
        exactly 1.0 is fragile.

    Returns
    -------
    kept : list of str
        The representatives, in the given order.
    removed : dict of str to str
        ``{removed doc: the representative of its cluster}``.
    """
    real_number(threshold, "threshold", low=-1, high=1)
    ids, x = _unit_rows(doc_ids, embeddings)
    if len(ids) < 2:
        return ids, {}
    adjacency = (x @ x.T) >= threshold
    np.fill_diagonal(adjacency, False)
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    _, labels = connected_components(csr_matrix(adjacency), directed=False)
    return _keep_first(ids, labels)


EmbeddingsLookup = Mapping[str, ArrayLike] | Callable[[list[str]], ArrayLike]
"""``{docid: vector}``, or a function taking a list of doc ids and returning their ``(n, dim)`` rows."""


def _embedding_matrix(qid: str, ids: list[str], embeddings_lookup: EmbeddingsLookup) -> np.ndarray:
    """The documents' embeddings as rows, from a mapping (``KeyError`` naming the missing) or a function."""
    if isinstance(embeddings_lookup, Mapping):
        missing = [d for d in ids if d not in embeddings_lookup]
        if missing:
            raise KeyError(f"query {qid!r}: no embedding for document(s) {missing[:5]}")
        return np.stack([np.asarray(embeddings_lookup[d], dtype=np.float64) for d in ids])
    return np.asarray(embeddings_lookup(ids), dtype=np.float64)


def dedupe_pool(
    selection: Mapping[str, Sequence[str]],
    embeddings_lookup: EmbeddingsLookup,
    *,
    method: Literal["ward", "similarity"] = "similarity",
    distance_threshold: float | None = None,
    threshold: float = 0.95,
) -> tuple[Selection, dict[str, dict[str, str]]]:
    """Remove near-duplicates within each query's selection.

    Parameters
    ----------
    selection : Mapping[str, Sequence[str]]
        ``{qid: [docid, ...]}`` best first (from :func:`select_top` or
        :func:`select_all`); the best-ranked member of a duplicate cluster
        survives.
    embeddings_lookup : Mapping[str, array_like] or callable
        Where the embeddings come from: a mapping ``{docid: vector}``, or a
        function called once per query with the list of its doc ids that
        returns an ``(n, dim)`` array (e.g. a disk cache).
    method : {"similarity", "ward"}
        :func:`dedupe_by_similarity` (``threshold``) or
        :func:`dedupe_by_clustering` (``distance_threshold``, required).
    distance_threshold : float, optional
        The Ward cut height.
    threshold : float
        The cosine threshold.

    Returns
    -------
    kept : Selection
        ``{qid: [docid, ...]}`` without duplicates, order preserved.
    removed : dict of str to dict of str to str
        ``{qid: {removed doc: representative}}`` (empty dict for a query
        without duplicates).

    Raises
    ------
    KeyError
        When a mapping lookup lacks a selected document.
    """
    if method == "ward":
        if distance_threshold is None:
            raise ValueError('method="ward" needs distance_threshold')
    elif method != "similarity":
        raise ValueError(f"unknown method {method!r}; expected 'similarity' or 'ward'")
    kept_all: Selection = {}
    removed_all: dict[str, dict[str, str]] = {}
    for qid, docs in selection.items():
        ids = [str(d) for d in docs]
        if not ids:
            kept_all[qid], removed_all[qid] = [], {}
            continue
        matrix = _embedding_matrix(qid, ids, embeddings_lookup)
        if distance_threshold is not None and method == "ward":
            kept, removed = dedupe_by_clustering(ids, matrix, distance_threshold=distance_threshold)
        else:
            kept, removed = dedupe_by_similarity(ids, matrix, threshold=threshold)
        kept_all[qid], removed_all[qid] = kept, removed
    return kept_all, removed_all
