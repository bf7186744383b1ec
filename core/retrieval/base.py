"""The one retriever protocol shared by BM25, dense, hybrid, hierarchical and re-ranking retrievers."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from core.ranking import trec_ranking
from core.types import Run

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` during long operations (encoding, indexing, searching)."""


class Hit(NamedTuple):
    """One retrieved passage: its id and score (higher is better)."""

    doc_id: str
    score: float


@runtime_checkable
class Retriever(Protocol):
    """What every contributing retriever offers.

    ``batch_search`` takes ``{query_id: query_text}`` and returns a
    :data:`core.types.Run`; within a query, hits are ordered by score
    descending, ties by doc id descending (trec_eval's order).

    ``kind`` names the retriever's family (``bm25``, ``dense``, ...: the spec kind
    :mod:`pooljudge.retrievers` builds and indexes it by); ``context`` is the passage
    context (:data:`core.context.CONTEXT_MODES`) its texts are indexed with, ``None`` for
    the corpus default (a hybrid's members keep their own); ``describe()`` is the complete
    resolved configuration, stored with the run it makes.
    """

    name: str
    kind: str
    context: str | None

    def index(self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None) -> Any: ...

    def describe(self) -> dict[str, Any]: ...

    def search(self, query: str, k: int = 10) -> list[Hit]: ...

    def batch_search(
        self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None
    ) -> Run: ...


class IndexedPassages:
    """What a retriever that indexes passages itself (BM25, dense) shares: its passage ids and their checks.

    The subclass sets ``_doc_ids``, the passage ids in index order, once it is indexed or loaded.
    """

    _doc_ids: list[str] | None = None

    def describe(self) -> dict[str, Any]:
        """The complete resolved configuration (:func:`describe_retriever`)."""
        return describe_retriever(self)

    def __len__(self) -> int:
        return 0 if self._doc_ids is None else len(self._doc_ids)

    @property
    def doc_ids(self) -> list[str]:
        """The indexed passage ids, in index order."""
        return list(self._indexed_ids())

    def _indexed_ids(self) -> list[str]:
        """The passage ids (not a copy); a ``RuntimeError`` before the retriever is indexed."""
        if self._doc_ids is None:
            name = type(self).__name__
            raise RuntimeError(f"the retriever has no index yet: call index() or {name}.load() first")
        return self._doc_ids

    def _require_index(self) -> None:
        self._indexed_ids()

    def _size_text(self) -> str:
        """``"not indexed"`` or ``"<n> passages"``, for ``repr``."""
        return "not indexed" if self._doc_ids is None else f"{len(self._doc_ids)} passages"


def describe_retriever(retriever: Any, **parts: Any) -> dict[str, Any]:
    """What every :meth:`Retriever.describe` holds, as JSON-ready data (non-JSON values as text).

    ``{"class": ...}``, then ``parts`` (a hybrid's members, a re-ranker's first stage), then
    what the retriever has of ``params`` (a dict), its analyzer's ``params``, its ``context``,
    its ``encoder`` (parameters and fingerprint) with the ``index`` type.
    """
    config: dict[str, Any] = {"class": type(retriever).__name__, **parts}
    params = getattr(retriever, "params", None)
    if isinstance(params, dict):
        config["params"] = params
    analyzer = getattr(retriever, "analyzer", None)
    if analyzer is not None and hasattr(analyzer, "params"):
        config["analyzer"] = analyzer.params
    context = getattr(retriever, "context", None)
    if context is not None:
        config["context"] = context
    encoder = getattr(retriever, "encoder", None)
    if encoder is not None:
        config["encoder"] = dict(getattr(encoder, "params", {})) | {
            "fingerprint": getattr(encoder, "fingerprint", None)
        }
        config["index"] = getattr(retriever, "index_type", None)
    plain: dict[str, Any] = json.loads(json.dumps(config, default=str))
    return plain


def trec_order(hits: list[Hit]) -> list[Hit]:
    """Sort hits as trec_eval ranks them (:func:`core.ranking.trec_ranking`).

    Score descending, compared as 32-bit floats, then doc id descending; the
    hits keep their own scores.  Doc ids are distinct within one query.
    """
    by_id = {h.doc_id: h for h in hits}
    if len(by_id) != len(hits):
        raise ValueError("hits of one query must have distinct doc ids")
    return [by_id[d] for d in trec_ranking({h.doc_id: h.score for h in hits})]
