"""A hybrid retriever: several retrievers fused into one ranked list.

:class:`HybridRetriever` follows the :class:`core.retrieval.base.Retriever`
protocol.  Each member retrieves its top ``depth`` passages; the member
lists are fused with :func:`core.fusion.rrf`, :func:`core.fusion.combsum`,
:func:`core.fusion.combmnz` or, for exactly two members,
:func:`core.fusion.convex` (``alpha`` times the first member's min-max
normalised score plus ``1 - alpha`` times the second's), and the fused list
is cut to ``k``.

A typical use is lexical + dense retrieval (BM25 and a bi-encoder) fused by
RRF (Cormack et al., SIGIR 2009), the hybrid that DuReader-retrieval and
T2Ranking style pooling benefits from: the two kinds of retriever fail on
different queries.  The convex combination is the fusion DAPR uses for its
BM25 + neural hybrids (Wang, Reimers & Gurevych, "DAPR: A Benchmark on
Document-Aware Passage Retrieval", ACL 2024; Bruch et al., TOIS 2023).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.fusion import DEFAULT_RRF_K, FUSION_METHODS, FusionMethod, WeightsArg, check_alpha, fuse
from core.retrieval.base import Hit, ProgressCallback, Retriever, describe_retriever
from core.types import Run
from core.validators import positive_int

__all__ = ["HybridRetriever"]


class HybridRetriever:
    """Fuse the results of several retrievers (RRF, CombSUM, CombMNZ or a convex combination).

    Parameters
    ----------
    retrievers : Sequence[Retriever] or Mapping[str, Retriever]
        The members.  In a sequence each member is known by its ``name``
        attribute (names must be distinct); a mapping names them itself.
    fusion : {"rrf", "combsum", "combmnz", "convex"}
        How member lists are fused (see :mod:`core.fusion`).  ``"convex"``
        needs exactly two members and takes ``alpha`` instead of weights.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per member (by name, or in member order);
        not with ``"convex"``.
    depth : int
        How many passages each member retrieves per query (default 100).
        A search for ``k > depth`` makes members retrieve ``k`` instead, so
        that a single member can always fill the list.
    name : str
        The retriever's name (its run tag).
    k_rrf : float
        The RRF constant (default 60).
    alpha : float
        ``"convex"`` only: the weight of the *first* member, in ``[0, 1]``
        (default 0.5); the second gets ``1 - alpha``.

    Notes
    -----
    Fused scores are those of :func:`core.fusion.fuse`; hits come back in
    trec order (fused score descending, doc id descending).
    """

    kind = "hybrid"
    context: str | None = None
    """The passage context its texts are indexed with (set by :mod:`pooljudge.retrievers`); ``None``: the corpus default."""

    def __init__(
        self,
        retrievers: Sequence[Retriever] | Mapping[str, Retriever],
        *,
        fusion: FusionMethod = "rrf",
        weights: WeightsArg = None,
        depth: int = 100,
        name: str = "hybrid",
        k_rrf: float = DEFAULT_RRF_K,
        alpha: float = 0.5,
    ) -> None:
        if isinstance(retrievers, Mapping):
            members = {str(n): r for n, r in retrievers.items()}
        else:
            members = {}
            for r in retrievers:
                rname = str(getattr(r, "name", ""))
                if not rname:
                    raise ValueError(f"retriever {r!r} has no name; pass a mapping {{name: retriever}}")
                if rname in members:
                    raise ValueError(f"two retrievers are named {rname!r}; pass a mapping {{name: retriever}}")
                members[rname] = r
        if not members:
            raise ValueError("a hybrid retriever needs at least one member")
        if fusion not in FUSION_METHODS:
            raise ValueError(f"unknown fusion method {fusion!r}; expected one of {', '.join(FUSION_METHODS)}")
        positive_int(depth, "depth")
        self.retrievers: dict[str, Retriever] = members
        self.fusion: FusionMethod = fusion
        self.weights = weights
        self.depth = depth
        self.name = name
        self.k_rrf = k_rrf
        self.alpha = check_alpha(alpha)
        # Validate the weights (and convex's two members) now rather than at the first search.
        fuse({n: {} for n in members}, fusion, weights=weights, k=k_rrf, alpha=self.alpha)

    def _fuse(self, member_runs: dict[str, Run], k: int) -> Run:
        fused = fuse(member_runs, self.fusion, weights=self.weights, k=self.k_rrf, alpha=self.alpha)
        return {qid: dict(list(docs.items())[:k]) for qid, docs in fused.items()}

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Top ``k`` fused hits for one query, in trec order."""
        positive_int(k, "k")
        depth = max(self.depth, k)
        member_runs = {
            n: {"q": {h.doc_id: float(h.score) for h in r.search(query, depth)}} for n, r in self.retrievers.items()
        }
        fused = self._fuse(member_runs, k).get("q", {})
        return [Hit(doc, score) for doc, score in fused.items()]

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None) -> Run:
        """Top ``k`` fused hits for each query: ``{qid: {docid: fused score}}``.

        ``progress(done, total)`` counts member-query searches: ``total`` is
        ``len(queries) * number of members``.
        """
        positive_int(k, "k")
        depth = max(self.depth, k)
        n_queries = len(queries)
        total = n_queries * len(self.retrievers)
        member_runs: dict[str, Run] = {}
        for i, (n, r) in enumerate(self.retrievers.items()):
            offset = i * n_queries

            def member_progress(done: int, _total: int, offset: int = offset) -> None:
                if progress is not None:
                    progress(offset + min(done, n_queries), total)

            member_runs[n] = r.batch_search(queries, depth, progress=member_progress if progress else None)
            if progress is not None:
                progress(offset + n_queries, total)
        fused = self._fuse(member_runs, k)
        return {qid: fused.get(qid, {}) for qid in queries}

    def index(
        self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None
    ) -> HybridRetriever:
        """Index every member with the same texts (:mod:`pooljudge.retrievers` gives each its own context)."""
        for member in self.retrievers.values():
            member.index(doc_ids, texts, progress=progress)
        return self

    def describe(self) -> dict[str, Any]:
        """The fusion and each member's description (:func:`core.retrieval.base.describe_retriever`)."""
        return describe_retriever(
            self, fusion=self.fusion, members={name: member.describe() for name, member in self.retrievers.items()}
        )

    def __repr__(self) -> str:
        alpha = f", alpha={self.alpha}" if self.fusion == "convex" else ""
        return (
            f"HybridRetriever({list(self.retrievers)}, fusion={self.fusion!r}{alpha}, depth={self.depth}, "
            f"name={self.name!r})"
        )
