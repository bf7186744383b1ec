r"""Hierarchical (document-then-passage) retrieval, DAPR's BM25 + neural hybrid.

DAPR (Wang, Reimers & Gurevych, "DAPR: A Benchmark on Document-Aware Passage
Retrieval", ACL 2024) extends a neural passage retriever with document
context by hybrid retrieval: BM25 ranks whole *documents*, the neural
retriever scores the *passages* of the best documents, and each passage's
score is fused with its document's.  :class:`HierarchicalRetriever` does
exactly that and follows the one retriever protocol
(:class:`core.retrieval.base.Retriever`), so its runs pool like any other.

Indexing (:meth:`HierarchicalRetriever.index_passages`)
-------------------------------------------------------
Passages are grouped into documents by ``doc_id`` and ordered by
``position`` (:func:`core.context.group_by_document`; a passage without
``doc_id`` is a document of its own).  Every document is indexed by the
document retriever (BM25 by default) as its title followed by its passages'
texts in position order, one per line.  The passages are encoded by the bi-encoder
through the on-disk embedding cache (:func:`~core.retrieval.encoder.encode_cached`),
in input order, so a :class:`~core.retrieval.dense.DenseRetriever` given the
same texts shares the cached vectors.  The passage texts are
:func:`core.context.contextualise`\d with ``context`` (the title by default,
as the pipeline's dense retrievers see them) unless given explicitly.

``index(doc_ids, texts)`` (flat passages) raises :class:`TypeError`: without
document structure the method would silently become a passage-level hybrid.

Searching
---------
For a query ``q``:

1. the document retriever returns its top ``top_docs`` documents ``D_q``
   with scores ``s_doc(q, d)`` (BM25 returns only documents that match: a
   query matching no document gets no hits);
2. every passage ``p`` of a document ``d(p)`` in ``D_q`` is scored by the
   inner product of the query and passage vectors,
   ``s_psg(q, p) = <E(q), E(p)>`` (the cosine with normalised vectors);
3. the two scores are fused, per query, over these candidate passages:

   ``"convex"`` (default): with min-max normalisation over the candidates
   (:func:`core.fusion.min_max_normalise`; all-equal scores normalise to 1),

   .. math::

       s(q, p) = \alpha \, \hat s_{doc}(q, d(p)) + (1 - \alpha) \, \hat s_{psg}(q, p)

   ``"rrf"``: with the 1-based trec-order rank of the document among
   ``D_q`` (all passages of a document share it) and of the passage among
   the candidates,

   .. math::

       s(q, p) = \frac{1}{k_{rrf} + \mathrm{rank}_{doc}(d(p))} + \frac{1}{k_{rrf} + \mathrm{rank}_{psg}(p)}

4. the top ``k`` passages come back in trec order (score descending, passage
   id descending).  Fewer than ``k`` come back when the top documents hold
   fewer passages.

``alpha`` weights the *document* (BM25) score, as ``alpha`` weights the
first member, BM25, of the pipeline's ``hybrid:fusion=convex``.

References
----------
.. [1] K. Wang, N. Reimers and I. Gurevych, "DAPR: A Benchmark on
   Document-Aware Passage Retrieval", ACL 2024.
.. [2] S. Bruch, S. Gai and A. Ingber, "An analysis of fusion functions for
   hybrid retrieval", ACM TOIS 42(1), 2023.
.. [3] G. V. Cormack, C. L. A. Clarke and S. Büttcher, "Reciprocal rank fusion
   outperforms Condorcet and individual rank learning methods", SIGIR 2009.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from core.context import DEFAULT_N_KEYPHRASES, check_context_mode, contextualise, group_by_document
from core.fusion import DEFAULT_RRF_K, check_alpha, convex
from core.ranking import rank_positions
from core.retrieval.base import Hit, ProgressCallback, describe_retriever, trec_order
from core.retrieval.encoder import TextEncoder, encode_cached
from core.types import Passage, Run
from core.validators import non_negative_int, positive_int, real_number

__all__ = ["HIERARCHICAL_FUSIONS", "DocumentRetriever", "HierarchicalRetriever"]

HierarchicalFusion = Literal["convex", "rrf"]
HIERARCHICAL_FUSIONS: tuple[str, ...] = ("convex", "rrf")


@runtime_checkable
class DocumentRetriever(Protocol):
    """What the document stage needs: index texts under ids, then search them (e.g. BM25)."""

    name: str

    def index(self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None) -> Any: ...

    def search(self, query: str, k: int = 10) -> list[Hit]: ...

    def batch_search(
        self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None
    ) -> Run: ...


class HierarchicalRetriever:
    """BM25 over documents, then a bi-encoder over their passages, scores fused (see the module docstring).

    Parameters
    ----------
    doc_retriever : DocumentRetriever
        Ranks whole documents; usually a
        :class:`~core.retrieval.bm25.BM25Retriever`.  It is (re)indexed by
        :meth:`index_passages`.
    passage_encoder : TextEncoder
        Encodes queries and passages (usually a
        :class:`~core.retrieval.encoder.BiEncoder`).
    top_docs : int
        Documents kept from the document stage per query (default 100).
    fusion : {"convex", "rrf"}
        How a passage's dense score and its document's score are fused.
    alpha : float
        ``"convex"``: the weight of the document score, in ``[0, 1]`` (0.5).
    k_rrf : float
        ``"rrf"``: the RRF constant (60).
    context : {"title", "keyphrases", "title+keyphrases", "none"}
        Document context prepended to passage texts before encoding
        (:func:`core.context.contextualise`); default ``"title"``.
    n_keyphrases : int
        Keyphrases per document for the keyphrase contexts (5).
    name : str
        The run name (``"hierarchical"``).
    cache : bool
        Cache passage vectors on disk (default ``True``).

    Examples
    --------
    >>> from core.retrieval.bm25 import BM25Retriever
    >>> from core.text import analyzer_for
    >>> r = HierarchicalRetriever(BM25Retriever(analyzer_for("en")), encoder, top_docs=50)  # doctest: +SKIP
    >>> r.index_passages(passages).search("who built the venue", k=10)  # doctest: +SKIP
    """

    kind = "hierarchical"

    def __init__(
        self,
        doc_retriever: DocumentRetriever,
        passage_encoder: TextEncoder,
        *,
        top_docs: int = 100,
        fusion: HierarchicalFusion = "convex",
        alpha: float = 0.5,
        k_rrf: float = DEFAULT_RRF_K,
        context: str = "title",
        n_keyphrases: int = DEFAULT_N_KEYPHRASES,
        name: str = "hierarchical",
        cache: bool = True,
    ) -> None:
        for method in ("index", "search", "batch_search"):
            if not callable(getattr(doc_retriever, method, None)):
                raise TypeError(f"doc_retriever must have an {method}() method, got {type(doc_retriever).__name__}")
        if not callable(getattr(passage_encoder, "encode", None)):
            raise TypeError(f"passage_encoder must have an encode() method, got {type(passage_encoder).__name__}")
        positive_int(top_docs, "top_docs")
        if fusion not in HIERARCHICAL_FUSIONS:
            raise ValueError(f"fusion must be one of {', '.join(HIERARCHICAL_FUSIONS)}, got {fusion!r}")
        real_number(k_rrf, "k_rrf", low=0)
        non_negative_int(n_keyphrases, "n_keyphrases")
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty str")
        self.doc_retriever = doc_retriever
        self.encoder = passage_encoder
        self.top_docs = top_docs
        self.fusion: HierarchicalFusion = fusion
        self.alpha = check_alpha(alpha)
        self.k_rrf = float(k_rrf)
        self.context = check_context_mode(context)
        self.n_keyphrases = n_keyphrases
        self.name = name
        self.cache = cache
        self._passage_ids: list[str] | None = None  # grouped: document by document, in position order
        self._vectors: np.ndarray | None = None  # rows aligned with _passage_ids
        self._doc_rows: dict[str, tuple[int, int]] = {}  # document id -> [start, end) rows

    # ------------------------------------------------------------------ description

    @property
    def params(self) -> dict[str, Any]:
        """The retriever's parameters (JSON-serialisable), the document retriever's included."""
        params: dict[str, Any] = {"top_docs": self.top_docs, "fusion": self.fusion}
        if self.fusion == "convex":
            params["alpha"] = self.alpha
        else:
            params["k_rrf"] = self.k_rrf
        params["context"] = self.context
        if self.context.endswith("keyphrases"):
            params["n_keyphrases"] = self.n_keyphrases
        doc_params = getattr(self.doc_retriever, "params", None)
        params["documents"] = {"class": type(self.doc_retriever).__name__} | (
            dict(doc_params) if isinstance(doc_params, dict) else {}
        )
        return params

    @property
    def analyzer(self) -> Any:
        """The document retriever's analyzer (``None`` when it has none)."""
        return getattr(self.doc_retriever, "analyzer", None)

    def describe(self) -> dict[str, Any]:
        """The complete resolved configuration (:func:`core.retrieval.base.describe_retriever`)."""
        return describe_retriever(self)

    def __repr__(self) -> str:
        size = (
            "not indexed"
            if self._passage_ids is None
            else (f"{len(self._doc_rows)} documents, {len(self._passage_ids)} passages")
        )
        return (
            f"HierarchicalRetriever(name={self.name!r}, top_docs={self.top_docs}, fusion={self.fusion!r}, "
            f"{'alpha=' + str(self.alpha) if self.fusion == 'convex' else 'k_rrf=' + str(self.k_rrf)}, {size})"
        )

    def __len__(self) -> int:
        return 0 if self._passage_ids is None else len(self._passage_ids)

    @property
    def doc_ids(self) -> list[str]:
        """The indexed passage ids, document by document, each document's in position order."""
        self._require_index()
        assert self._passage_ids is not None
        return list(self._passage_ids)

    @property
    def document_ids(self) -> list[str]:
        """The indexed document ids, in order of first appearance."""
        self._require_index()
        return list(self._doc_rows)

    def passages_of(self, document_id: str) -> list[str]:
        """The passage ids of one document, in position order."""
        self._require_index()
        assert self._passage_ids is not None
        if document_id not in self._doc_rows:
            raise KeyError(f"unknown document {document_id!r}")
        start, end = self._doc_rows[document_id]
        return self._passage_ids[start:end]

    # ------------------------------------------------------------------ building

    def index(self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None) -> Any:
        """Not supported: hierarchical retrieval needs documents.  Use :meth:`index_passages`.

        Raises
        ------
        TypeError
            Always; flat passages carry no document structure.
        """
        raise TypeError(
            "HierarchicalRetriever needs document structure: call index_passages(passages) with "
            "core.types.Passage objects carrying doc_id and position, not index(doc_ids, texts)"
        )

    def index_passages(
        self,
        passages: Sequence[Passage],
        *,
        texts: Sequence[str] | None = None,
        progress: ProgressCallback | None = None,
    ) -> HierarchicalRetriever:
        """Index documents with the document retriever and encode the passages.

        Parameters
        ----------
        passages : Sequence[Passage]
            Every passage of the collection, with ``doc_id``, ``position``
            and ``title`` (see :func:`core.context.group_by_document`).
        texts : Sequence[str], optional
            The texts to encode, aligned with ``passages`` (e.g. already
            contextualised ones); default :func:`core.context.contextualise`
            of the passages with :attr:`context`.  Documents are always
            indexed from the raw passage texts and titles.
        progress : callable, optional
            ``progress(done, total)`` over ``documents + passages``: the
            document indexing first, then the passage encoding.

        Returns
        -------
        HierarchicalRetriever
            ``self``.

        Raises
        ------
        ValueError
            On duplicate passage ids, passages of one document with two
            different titles, ``texts`` of the wrong length, or a document
            structure :func:`~core.context.group_by_document` rejects.
        """
        passages = list(passages)
        groups = group_by_document(passages)
        ids = _passage_ids(passages)
        if texts is None:
            texts = contextualise(passages, self.context, n_keyphrases=self.n_keyphrases)
        else:
            texts = list(texts)
            if len(texts) != len(passages):
                raise ValueError(f"{len(passages)} passages but {len(texts)} texts")
        documents = _Documents.of(passages, groups)
        n_docs, n_passages = len(groups), len(passages)
        total = n_docs + n_passages
        self.doc_retriever.index(documents.ids, documents.texts, progress=_stage_progress(progress, 0, n_docs, total))
        # Encode in input order (shares the embedding cache with a dense retriever of the same texts).
        vectors = self._passage_vectors(texts, _stage_progress(progress, n_docs, n_passages, total))
        order = documents.order
        self._vectors = vectors[np.asarray(order, dtype=np.int64)] if order else vectors
        self._passage_ids = [ids[i] for i in order]
        self._doc_rows = documents.rows
        if progress is not None:
            progress(total, total)
        return self

    def _passage_vectors(self, texts: list[str], progress: ProgressCallback | None) -> np.ndarray:
        """The passage vectors of ``texts`` (through the embedding cache), checked: one finite row per text."""
        vectors = encode_cached(self.encoder, texts, kind="passage", cache=self.cache, progress=progress)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"the encoder returned shape {vectors.shape}, expected ({len(texts)}, dim)")
        if not np.isfinite(vectors).all():
            raise ValueError("passage vectors contain NaN or infinite values")
        return vectors

    def _require_index(self) -> None:
        if self._passage_ids is None:
            raise RuntimeError("the hierarchical retriever is not indexed: call index_passages(passages) first")

    # ------------------------------------------------------------------ searching

    def _fuse(self, doc_scores: Mapping[str, float], query_vector: np.ndarray, k: int) -> list[Hit]:
        """Score the passages of the top documents and fuse (steps 2 to 4 of the module docstring)."""
        assert self._passage_ids is not None and self._vectors is not None
        if not doc_scores:
            return []
        ids = self._passage_ids
        rows: list[int] = []
        doc_of: dict[str, str] = {}
        for doc_id in doc_scores:
            span = self._doc_rows.get(doc_id)
            if span is None:
                raise RuntimeError(f"the document retriever returned {doc_id!r}, which index_passages did not index")
            rows.extend(range(*span))
            for r in range(*span):
                doc_of[ids[r]] = doc_id
        matrix = self._vectors[np.asarray(rows, dtype=np.int64)].astype(np.float64)
        dense_values = matrix @ query_vector.astype(np.float64)
        dense = {ids[r]: float(v) for r, v in zip(rows, dense_values.tolist())}
        if self.fusion == "convex":
            lexical = {pid: float(doc_scores[d]) for pid, d in doc_of.items()}
            fused = convex({"q": lexical}, {"q": dense}, self.alpha)["q"]
        else:
            doc_rank = rank_positions({d: float(s) for d, s in doc_scores.items()})
            psg_rank = rank_positions(dense)
            fused = {
                pid: math.fsum((1.0 / (self.k_rrf + doc_rank[doc_of[pid]]), 1.0 / (self.k_rrf + psg_rank[pid])))
                for pid in dense
            }
        return trec_order([Hit(pid, score) for pid, score in fused.items()])[:k]

    def _encode_queries(self, texts: list[str], progress: ProgressCallback | None = None) -> np.ndarray:
        vectors = np.asarray(self.encoder.encode(texts, kind="query", progress=progress), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise ValueError(f"the encoder returned shape {vectors.shape} for {len(texts)} queries")
        if self._vectors is not None and vectors.shape[1] != self._vectors.shape[1]:
            raise ValueError(f"query vectors have dimension {vectors.shape[1]}, passages {self._vectors.shape[1]}")
        return vectors

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top ``k`` passages for one query, in trec order (fewer when the top documents hold fewer)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be str, got {type(query).__name__}")
        positive_int(k, "k")
        self._require_index()
        doc_scores = {h.doc_id: float(h.score) for h in self.doc_retriever.search(query, self.top_docs)}
        if not doc_scores:
            return []
        return self._fuse(doc_scores, self._encode_queries([query])[0], k)

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None) -> Run:
        """``{qid: text}`` -> ``{qid: {passage id: fused score}}``, each query's hits in trec order.

        Every query gets an entry (empty when no document matches).
        ``progress(done, total)`` runs over ``2 * len(queries)``: the document
        searches first, then the query encoding.
        """
        positive_int(k, "k")
        self._require_index()
        qids = list(queries)
        texts: list[str] = []
        for qid in qids:
            text = queries[qid]
            if not isinstance(qid, str) or not isinstance(text, str):
                raise TypeError(f"queries must map str ids to str texts, got {qid!r}: {type(text).__name__}")
            texts.append(text)
        n = len(qids)
        doc_run = self.doc_retriever.batch_search(
            dict(zip(qids, texts)), self.top_docs, progress=_stage_progress(progress, 0, n, 2 * n)
        )
        run: Run = {}
        if n:
            vectors = self._encode_queries(texts, progress=_stage_progress(progress, n, n, 2 * n))
            for i, qid in enumerate(qids):
                hits = self._fuse(doc_run.get(qid, {}), vectors[i], k)
                run[qid] = {h.doc_id: h.score for h in hits}
        if progress is not None:
            progress(2 * n, 2 * n)
        return run


def _passage_ids(passages: list[Passage]) -> list[str]:
    """The passage ids, refused when one is not a non-empty str or two are the same."""
    ids = [p.id for p in passages]
    for i, pid in enumerate(ids):
        if not isinstance(pid, str) or not pid:
            raise ValueError(f"passages[{i}] must have a non-empty str id, got {pid!r}")
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for pid in ids:
            if pid in seen:
                raise ValueError(f"duplicate passage id {pid!r}")
            seen.add(pid)
    return ids


@dataclass
class _Documents:
    """The documents the document retriever indexes, and where their passages go among the retriever's rows."""

    ids: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)  # the title (if any), then the passage texts, a line each
    order: list[int] = field(default_factory=list)  # passage indexes, document by document
    rows: dict[str, tuple[int, int]] = field(default_factory=dict)  # document id -> [start, end) in ``order``

    @classmethod
    def of(cls, passages: list[Passage], groups: dict[str, list[int]]) -> _Documents:
        """The documents of ``passages`` grouped by :func:`~core.context.group_by_document` (one title each)."""
        documents = cls()
        for doc_id, rows in groups.items():
            titles = {passages[i].title.strip() for i in rows} - {""}
            if len(titles) > 1:
                raise ValueError(f"document {doc_id!r} has passages with different titles: {sorted(titles)}")
            documents.ids.append(doc_id)
            documents.texts.append("\n".join([*titles, *(passages[i].text for i in rows)]))
            documents.rows[doc_id] = (len(documents.order), len(documents.order) + len(rows))
            documents.order.extend(rows)
        return documents


def _stage_progress(progress: ProgressCallback | None, offset: int, size: int, total: int) -> ProgressCallback | None:
    """``progress`` for one stage of ``size`` steps starting at ``offset`` of ``total`` (``None`` stays ``None``)."""
    if progress is None:
        return None

    def report(done: int, _total: int) -> None:
        progress(offset + min(done, size), total)

    return report
