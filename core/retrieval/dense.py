"""Dense retrieval: a bi-encoder's vectors in a FAISS inner-product index.

``DenseRetriever(encoder).index(doc_ids, texts)`` encodes the passages
(through the on-disk embedding cache, :func:`~core.retrieval.encoder.encode_cached`)
and builds one of

* ``"flat"``: ``faiss.IndexFlatIP``, exact (the default);
* ``"hnsw"``: ``faiss.IndexHNSWFlat(d, hnsw_m, METRIC_INNER_PRODUCT)``, approximate;
* ``"ivf"``: ``faiss.IndexIVFFlat`` (inner product, ``nlist`` cells trained on
  the vectors, ``nprobe`` visited per query), approximate.

With normalised vectors the inner product is the cosine similarity.

Backends (``backend=None`` chooses): ``"faiss"`` (CPU), ``"faiss-gpu"``
(when CUDA and a FAISS GPU build are present; HNSW stays on the CPU) and
``"torch"`` (CUDA without FAISS GPU: exact ``matmul`` + ``topk`` on the
device, whatever the index type; the FAISS index is built only to be saved).

Ranking follows trec_eval: score descending, ties by doc id descending.  For
exact backends the top ``k`` is exactly the brute-force top ``k`` in that
order, ties at the cut included (more candidates are fetched until the k-th
score is no longer tied with the last fetched one).

Aliases for the encoder helpers live here too, so ``from core.retrieval.dense
import BiEncoder, DenseRetriever, default_model_path`` is enough.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from core.atomic import atomic_write
from core.retrieval.base import Hit, IndexedPassages, ProgressCallback, trec_order
from core.retrieval.encoder import (
    DEFAULT_MODEL_NAME,
    BiEncoder,
    TextEncoder,
    default_model_path,
    encode_cached,
    model_files_digest,
)
from core.retrieval.persistence import check_doc_ids, read_saved_index, write_json
from core.types import Run
from core.validators import optional_positive_int, positive_int

if TYPE_CHECKING:
    import faiss

__all__ = [
    "DEFAULT_MODEL_NAME",
    "BiEncoder",
    "DenseRetriever",
    "TextEncoder",
    "default_model_path",
    "encode_cached",
    "model_files_digest",
]

IndexType = Literal["flat", "hnsw", "ivf"]
Backend = Literal["faiss", "faiss-gpu", "torch"]

_INDEX_TYPES = ("flat", "hnsw", "ivf")
_BACKENDS = ("faiss", "faiss-gpu", "torch")
_FORMAT = "pooljudge-dense"
_FORMAT_VERSION = 1
_GPU_MAX_K = 2048  # FAISS GPU's limit on k
_QUERY_CHUNK = 4096  # queries searched at once (bounds the score matrix of the torch backend)

_gpu_res: Any = None


def _gpu_resources() -> Any:
    """One ``faiss.StandardGpuResources`` per process, shared by every GPU index."""
    global _gpu_res
    if _gpu_res is None:
        import faiss

        _gpu_res = faiss.StandardGpuResources()
    return _gpu_res


def _auto_backend() -> Backend:
    try:
        import torch

        cuda = torch.cuda.is_available()
    except ImportError:  # pragma: no cover - torch is a dependency
        cuda = False
    try:
        import faiss
    except ImportError:
        # faiss-cpu is a dependency; a bare GPU machine may still lack it, and torch searches as exactly
        if cuda:
            return "torch"
        raise
    if not cuda:
        return "faiss"
    gpus = getattr(faiss, "get_num_gpus", lambda: 0)()
    return "faiss-gpu" if gpus > 0 and hasattr(faiss, "StandardGpuResources") else "torch"


def default_nlist(n: int) -> int:
    """IVF cells for ``n`` vectors: ``4 sqrt(n)``, at most ``n // 39`` (FAISS wants 39 points per centroid), >= 1."""
    return max(1, min(int(round(4 * math.sqrt(n))), n // 39))


class DenseRetriever(IndexedPassages):
    """Search passages by the inner product of bi-encoder vectors (see the module docstring).

    Parameters
    ----------
    encoder : TextEncoder
        Usually a :class:`~core.retrieval.encoder.BiEncoder`.
    index : {"flat", "hnsw", "ivf"}, default "flat"
    nlist : int, optional
        IVF cells; default :func:`default_nlist` of the corpus size.
    nprobe : int, optional
        IVF cells visited per query; default ``ceil(nlist / 4)``.
    hnsw_m : int, default 32
        HNSW neighbours per node.
    ef_construction : int, default 80
        HNSW build-time beam width.
    ef_search : int, default 128
        HNSW search beam width (raised to the number of hits fetched when larger).
    name : str, default "dense"
        The run name.
    cache : bool, default True
        Cache passage vectors on disk (:func:`encode_cached`).
    backend : {"faiss", "faiss-gpu", "torch"}, optional
        Default: ``"faiss"`` without CUDA, ``"faiss-gpu"`` with CUDA and
        ``faiss.get_num_gpus() > 0``, else ``"torch"``.
    """

    kind = "dense"
    context: str | None = None
    """The passage context its texts are indexed with (set by :mod:`pooljudge.retrievers`); ``None``: the corpus default."""

    def __init__(
        self,
        encoder: TextEncoder,
        *,
        index: IndexType = "flat",
        nlist: int | None = None,
        nprobe: int | None = None,
        hnsw_m: int = 32,
        ef_construction: int = 80,
        ef_search: int = 128,
        name: str = "dense",
        cache: bool = True,
        backend: Backend | None = None,
    ) -> None:
        if index not in _INDEX_TYPES:
            raise ValueError(f"index must be one of {_INDEX_TYPES}, got {index!r}")
        for label, value in (("nlist", nlist), ("nprobe", nprobe)):
            optional_positive_int(value, label)
        for label, value in (("hnsw_m", hnsw_m), ("ef_construction", ef_construction), ("ef_search", ef_search)):
            positive_int(value, label)
        if backend is not None and backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {_BACKENDS} or None, got {backend!r}")
        if not isinstance(name, str) or not name:
            raise ValueError("name must be a non-empty str")
        self.encoder = encoder
        self.index_type: IndexType = index
        self.nlist = nlist
        self.nprobe = nprobe
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self.name = name
        self.cache = cache
        self.backend: Backend = backend if backend is not None else _auto_backend()
        self._doc_ids: list[str] | None = None
        self._cpu_index: Any = None  # faiss CPU index ("faiss"; "faiss-gpu" with hnsw)
        self._gpu_index: Any = None  # "faiss-gpu" with flat/ivf
        self._tvecs: Any = None  # "torch": (n, d) float32 tensor on the device
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"DenseRetriever(name={self.name!r}, index={self.index_type!r}, backend={self.backend!r}, {self._size_text()})"

    # ------------------------------------------------------------------ building

    def index(
        self, doc_ids: Sequence[str], texts: Sequence[str], progress: ProgressCallback | None = None
    ) -> DenseRetriever:
        """Encode the passages (through the embedding cache) and build the index.

        ``progress(done, total)`` follows the encoding (called once with
        ``(n, n)`` on a cache hit).  Returns ``self``.
        """
        doc_ids = list(doc_ids)
        texts = list(texts)
        if len(doc_ids) != len(texts):
            raise ValueError(f"{len(doc_ids)} doc ids but {len(texts)} texts")
        check_doc_ids(doc_ids)
        vectors = encode_cached(self.encoder, texts, kind="passage", cache=self.cache, progress=progress)
        return self.index_vectors(doc_ids, vectors)

    def index_vectors(self, doc_ids: Sequence[str], vectors: np.ndarray) -> DenseRetriever:
        """Build the index from precomputed passage vectors (``(len(doc_ids), dim)``).  Returns ``self``."""
        doc_ids = list(doc_ids)
        check_doc_ids(doc_ids)
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(doc_ids):
            raise ValueError(f"vectors must have shape ({len(doc_ids)}, dim), got {vectors.shape}")
        if not np.isfinite(vectors).all():
            raise ValueError("vectors contain NaN or infinite values")
        self._dim = int(vectors.shape[1])
        self._doc_ids = doc_ids
        # The torch backend searches the vectors themselves; its FAISS index is built only by save().
        self._activate(None if self.backend == "torch" else self._build_cpu_index(vectors), vectors)
        return self

    def _build_cpu_index(self, vectors: np.ndarray) -> Any:
        import faiss

        n, d = vectors.shape
        index: faiss.Index
        if self.index_type == "flat" or n == 0:
            index = faiss.IndexFlatIP(d)
        elif self.index_type == "hnsw":
            index = self._hnsw_index(d)
        else:
            index = self._ivf_index(vectors)
        if n:
            index.add(vectors)
        return index

    def _hnsw_index(self, d: int) -> faiss.Index:
        """An empty HNSW index of ``d``-dimensional vectors, with this retriever's graph parameters."""
        import faiss

        index = faiss.IndexHNSWFlat(d, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = self.ef_construction
        index.hnsw.efSearch = self.ef_search
        return index

    def _ivf_index(self, vectors: np.ndarray) -> faiss.Index:
        """An IVF index with its coarse quantizer trained on ``vectors`` (not yet added)."""
        import faiss

        n, d = vectors.shape
        nlist = self.nlist if self.nlist is not None else default_nlist(n)
        if nlist > n:
            raise ValueError(f"nlist={nlist} is larger than the number of passages ({n})")
        quantizer = faiss.IndexFlatIP(d)
        index = faiss.IndexIVFFlat(quantizer, d, nlist, faiss.METRIC_INNER_PRODUCT)
        index.train(vectors)
        index.nprobe = self._nprobe_for(nlist)
        return index

    def _nprobe_for(self, nlist: int) -> int:
        return min(nlist, self.nprobe if self.nprobe is not None else max(1, math.ceil(nlist / 4)))

    def _activate(self, cpu_index: Any, vectors: np.ndarray | None) -> None:
        """Put a FAISS CPU index (or, for torch, the vectors) on the chosen backend."""
        self._cpu_index = self._gpu_index = self._tvecs = None
        if self.backend == "torch":
            import torch

            if vectors is None:
                vectors = _reconstruct(cpu_index)
            self._tvecs = torch.from_numpy(np.ascontiguousarray(vectors, dtype=np.float32)).to(_torch_device())
        elif self.backend == "faiss-gpu" and self.index_type != "hnsw" and cpu_index.ntotal > 0:
            import faiss

            self._gpu_index = faiss.index_cpu_to_gpu(_gpu_resources(), 0, cpu_index)
        else:
            self._cpu_index = cpu_index

    def _faiss_cpu_copy(self) -> Any:
        """The index as a FAISS CPU index (for saving)."""
        if self._cpu_index is not None:
            return self._cpu_index
        if self._gpu_index is not None:
            import faiss

            return faiss.index_gpu_to_cpu(self._gpu_index)
        vectors = self._tvecs.float().cpu().numpy()
        return self._build_cpu_index(vectors)

    # ------------------------------------------------------------------ searching

    def _raw_search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Up to ``k`` (score, row) per query, best first; row -1 pads missing hits."""
        if self._tvecs is not None:
            import torch

            q = torch.from_numpy(queries).to(self._tvecs.device)
            top_scores, top_rows = torch.topk(q @ self._tvecs.T, k, dim=1, largest=True, sorted=True)
            return top_scores.cpu().numpy(), top_rows.cpu().numpy()
        if self._gpu_index is not None:
            scores, rows = self._gpu_index.search(queries, k)
        elif self.index_type == "hnsw":  # per-call parameters: no shared state mutated, safe across threads
            import faiss

            params = faiss.SearchParametersHNSW()  # type: ignore[attr-defined]  # missing from faiss's stubs
            params.efSearch = max(self.ef_search, k)
            scores, rows = self._cpu_index.search(queries, k, params=params)
        else:
            scores, rows = self._cpu_index.search(queries, k)
        return scores, rows

    def search_vectors(self, query_vectors: np.ndarray, k: int = 10) -> list[list[Hit]]:
        """The top ``k`` hits of each query vector, in trec order (see the module docstring)."""
        ids = self._indexed_ids()
        k = positive_int(k, "k")
        queries = np.ascontiguousarray(query_vectors, dtype=np.float32)
        if queries.ndim != 2 or (self._dim is not None and queries.shape[1] != self._dim):
            raise ValueError(f"query vectors must have shape (n, {self._dim}), got {queries.shape}")
        n_docs = len(ids)
        results: list[list[Hit]] = [[] for _ in range(len(queries))]
        if n_docs == 0 or len(queries) == 0:
            return results
        k_eff = min(k, n_docs)
        limit = _GPU_MAX_K if self._gpu_index is not None else n_docs
        if self._gpu_index is not None and k_eff > _GPU_MAX_K:
            raise ValueError(f"FAISS GPU returns at most {_GPU_MAX_K} hits per query; use backend='torch' or 'faiss'")
        chunk = _QUERY_CHUNK
        if self._tvecs is not None:  # bound the (queries x passages) score matrix to ~1 GiB
            chunk = max(1, min(_QUERY_CHUNK, (1 << 28) // n_docs))
        for chunk_start in range(0, len(queries), chunk):
            pending = np.arange(chunk_start, min(chunk_start + chunk, len(queries)))
            fetch = min(n_docs, limit, k_eff + 1)  # one more than asked: shows whether the k-th score is tied
            while pending.size:
                scores, rows = self._raw_search(queries[pending], fetch)
                again = []
                for r, qi in enumerate(pending):
                    valid = rows[r] >= 0
                    s, rw = scores[r][valid], rows[r][valid]
                    full = len(rw) == fetch and fetch < min(n_docs, limit)
                    if full and len(rw) > k_eff:
                        ranked = np.sort(s)[::-1]
                        if ranked[k_eff - 1] == ranked[-1]:  # the tie may continue beyond what was fetched
                            again.append(qi)
                            continue
                    hits = [Hit(ids[j], float(v)) for j, v in zip(rw.tolist(), s.tolist())]
                    results[qi] = trec_order(hits)[:k_eff]
                pending = np.asarray(again, dtype=np.int64)
                fetch = min(n_docs, limit, fetch * 2)
        return results

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top ``k`` passages for one query, in trec order."""
        if not isinstance(query, str):
            raise TypeError(f"query must be str, got {type(query).__name__}")
        self._require_index()
        vector = self.encoder.encode([query], kind="query")
        return self.search_vectors(vector, k)[0]

    def batch_search(self, queries: Mapping[str, str], k: int = 10, *, progress: ProgressCallback | None = None) -> Run:
        """``{qid: text}`` -> ``{qid: {doc_id: score}}``, each query's hits in trec order.

        Queries are encoded in batches (``progress(done, total)`` follows the
        encoding, the slow part), then searched together.
        """
        self._require_index()
        qids = list(queries)
        texts = []
        for qid in qids:
            text = queries[qid]
            if not isinstance(qid, str) or not isinstance(text, str):
                raise TypeError(f"queries must map str ids to str texts, got {qid!r}: {type(text).__name__}")
            texts.append(text)
        vectors = self.encoder.encode(texts, kind="query", progress=progress)
        hits = self.search_vectors(vectors, k) if qids else []
        return {qid: {h.doc_id: h.score for h in row} for qid, row in zip(qids, hits)}

    # ------------------------------------------------------------------ persistence

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write ``index.faiss`` (``faiss.write_index``), ``doc_ids.json`` and ``meta.json`` into ``folder``."""
        import faiss

        self._require_index()
        root = Path(folder)
        root.mkdir(parents=True, exist_ok=True)
        cpu_index = self._faiss_cpu_copy()
        meta = {
            "format": _FORMAT,
            "version": _FORMAT_VERSION,
            "name": self.name,
            "index": self.index_type,
            "dim": self._dim,
            "count": len(self),
            "nlist": getattr(cpu_index, "nlist", None),
            "nprobe": getattr(cpu_index, "nprobe", None),
            "hnsw_m": self.hnsw_m,
            "ef_construction": self.ef_construction,
            "ef_search": self.ef_search,
            "fingerprint": self.encoder.fingerprint,
            "model_fingerprint": getattr(self.encoder, "model_fingerprint", None),
        }
        atomic_write(root / "index.faiss", lambda fh: faiss.write_index(cpu_index, fh.name))  # faiss writes by path
        write_json(root / "doc_ids.json", self._doc_ids)
        write_json(root / "meta.json", meta, indent=2)
        return root

    @classmethod
    def load(
        cls,
        folder: str | os.PathLike[str],
        encoder: TextEncoder,
        *,
        name: str | None = None,
        backend: Backend | None = None,
        nprobe: int | None = None,
        ef_search: int | None = None,
        check_encoder: bool = True,
    ) -> DenseRetriever:
        """Read what :meth:`save` wrote.

        Raises ``ValueError`` when the files disagree with each other or when
        ``encoder`` does not produce the vectors the index was built from
        (its ``model_fingerprint``, or ``fingerprint`` for other encoders,
        differs; precision alone may differ); ``check_encoder=False`` skips that check.
        """
        root = Path(folder)
        meta, (doc_ids,) = read_saved_index(root, "dense", _FORMAT, _FORMAT_VERSION, "doc_ids.json")
        if check_encoder and not _same_encoder(meta, encoder):
            raise ValueError(f"{root}: the index was built with another encoder or other encoding settings")
        retriever = cls(
            encoder,
            index=meta["index"],
            nprobe=nprobe if nprobe is not None else meta.get("nprobe"),
            hnsw_m=meta.get("hnsw_m", 32),
            ef_construction=meta.get("ef_construction", 80),
            ef_search=ef_search if ef_search is not None else meta.get("ef_search", 128),
            name=name if name is not None else meta.get("name", "dense"),
            backend=backend,
        )
        if not isinstance(doc_ids, list):
            raise ValueError(f"{root}: doc_ids.json, meta.json and index.faiss disagree")
        cpu_index = retriever._read_faiss_index(root, len(doc_ids), meta)
        check_doc_ids(doc_ids)
        retriever._dim = int(cpu_index.d)
        retriever._doc_ids = doc_ids
        retriever._activate(cpu_index, None)
        return retriever

    def _read_faiss_index(self, root: Path, n_docs: int, meta: dict[str, Any]) -> faiss.Index:
        """``index.faiss`` of ``root``, checked against the passage count and ``meta``, tuned for this retriever."""
        import faiss

        cpu_index = faiss.read_index(str(root / "index.faiss"))
        if n_docs != cpu_index.ntotal or cpu_index.d != meta.get("dim"):
            raise ValueError(f"{root}: doc_ids.json, meta.json and index.faiss disagree")
        if self.index_type == "ivf" and isinstance(cpu_index, faiss.IndexIVF):
            self.nlist = int(cpu_index.nlist)
            cpu_index.nprobe = self._nprobe_for(self.nlist)
        if self.index_type == "hnsw" and isinstance(cpu_index, faiss.IndexHNSW):
            cpu_index.hnsw.efSearch = self.ef_search
        return cpu_index


def _same_encoder(meta: dict[str, Any], encoder: TextEncoder) -> bool:
    """Whether ``encoder`` makes the vectors of the saved index: same model (or, for other encoders, same fingerprint).

    Precision alone may differ: the model fingerprint leaves it out.
    """
    theirs = meta.get("model_fingerprint")
    ours = getattr(encoder, "model_fingerprint", None)
    if theirs is not None and ours is not None:
        return bool(theirs == ours)
    return bool(meta.get("fingerprint") == encoder.fingerprint)


def _reconstruct(index: Any) -> np.ndarray:
    """All vectors stored in a FAISS index (flat, HNSW-flat or IVF-flat)."""
    if index.ntotal == 0:
        return np.zeros((0, index.d), dtype=np.float32)
    if hasattr(index, "make_direct_map"):
        index.make_direct_map()
    vectors: np.ndarray = index.reconstruct_n(0, index.ntotal)
    return vectors


def _torch_device() -> Any:
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
