"""The models a retriever or a pooling job loads, once per process: bi-encoders and cross-encoders.

Loading weights is the slow part, so :func:`encoder_for` and :func:`cross_encoder_for` keep one
instance per model and settings; :func:`resolve_model` turns a model as written (a folder, or a
model registered in a collection) into its folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from core.types import Query
from db.engine import Store

ENCODER_OPTIONS = ("model", "pooling", "normalize", "max_length", "batch_size", "query_prefix", "passage_prefix")
"""A dense spec's options that choose its bi-encoder (the rest choose its index)."""
_BI_ENCODER_KWARGS = ENCODER_OPTIONS[1:]

_ENCODERS: dict[tuple, Any] = {}


def encoder_for(options: Mapping[str, Any]):
    """One BiEncoder per model and settings in this process (loading weights is the slow part).

    ``options`` are a dense spec's encoder settings (``model``, ``pooling``, ``normalize``,
    ``max_length``, ``batch_size``, ``query_prefix``, ``passage_prefix``);
    ``{}`` gives the bundled all-MiniLM-L6-v2.  A setting left out is the model folder's own
    (its sentence-transformers files: pooling, prompts, length, normalisation), else
    pooljudge's default.
    """
    from core.retrieval.encoder import BiEncoder, default_model_path

    key = tuple(sorted((k, options[k]) for k in ENCODER_OPTIONS if k in options))
    if key not in _ENCODERS:
        model = options.get("model") or default_model_path()
        kwargs = {k: options[k] for k in _BI_ENCODER_KWARGS if k in options}
        _ENCODERS[key] = BiEncoder(model, **kwargs)
    return _ENCODERS[key]


_CROSS_ENCODERS: dict[tuple, Any] = {}


def check_reranker_folder(folder: Path) -> None:
    """Refuse a folder that is not a one-logit sequence classifier, before its weights load.

    :class:`core.training.cross_encoder.CrossEncoder` gives a plain encoder, or a classifier with
    another label count, a freshly initialised head (what training starts from): as a re-ranker
    it would score pairs at random.  A sentence-transformers ``CrossEncoder`` folder, or one
    saved by ``pooljudge train cross-encoder``, passes.
    """
    from transformers import AutoConfig

    if not (folder / "config.json").is_file():
        raise ValueError(f"{folder}: not a Hugging Face model folder (no config.json)")
    config = AutoConfig.from_pretrained(folder, local_files_only=True)
    architectures = list(getattr(config, "architectures", None) or [])
    if not any(a.endswith("ForSequenceClassification") for a in architectures):
        raise ValueError(
            f"{folder / 'config.json'}: architectures {architectures or 'unset'} hold no sequence-classification "
            "head, so this is an encoder, not a re-ranker (train one with `pooljudge train cross-encoder`, or "
            "use it as dense:model=...)"
        )
    if config.num_labels != 1:
        raise ValueError(
            f"{folder / 'config.json'}: a classifier with {config.num_labels} labels "
            f"({', '.join(map(str, config.id2label.values()))}); a re-ranker needs exactly one relevance logit"
        )


def cross_encoder_for(path: str | Path, *, max_length: int | None = None, batch_size: int | None = None):
    """One :class:`core.training.cross_encoder.CrossEncoder` per folder and settings in this process.

    Keyed by the folder's resolved path and its files' modification times too, so a model
    retrained into the same folder is loaded again rather than served stale.  A folder that
    is not a one-logit classifier is refused (:func:`check_reranker_folder`).
    """
    from core.training.cross_encoder import CrossEncoder

    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise ValueError(f"cross-encoder folder {str(path)!r} does not exist")
    check_reranker_folder(folder)
    stamp = tuple(sorted((f.name, f.stat().st_mtime_ns) for f in folder.iterdir() if f.is_file()))
    key = (str(folder), max_length, batch_size, stamp)
    if key not in _CROSS_ENCODERS:
        kwargs: dict[str, Any] = {
            k: v for k, v in (("max_length", max_length), ("batch_size", batch_size)) if v is not None
        }
        _CROSS_ENCODERS[key] = CrossEncoder(folder, **kwargs)
    return _CROSS_ENCODERS[key]


def resolve_model(store: Store | None, collection: str | None, model: str) -> Path:
    """A re-ranker given as written (a folder, or a model registered in ``collection``) as a folder.

    With a store and a collection, :func:`pooljudge.training.resolve_model` decides (a registered
    model's folder by name, else an existing folder; for a RocketQAv2 model its co-trained
    cross-encoder); without them the model must be an existing folder.  ``ValueError`` /
    ``NotFound`` name the model.
    """
    if store is not None and collection is not None:
        from pooljudge.training import resolve_model as registered

        # a RocketQAv2 model's co-trained cross-encoder is the re-ranker (its cross-encoder/ folder)
        return Path(registered(store, collection, model, role="cross-encoder"))
    folder = Path(model).expanduser()
    if not folder.is_dir():
        raise ValueError(
            f"model {model!r}: no such folder"
            + ("" if collection is None else f", and no model of that name is registered in {collection!r}")
        )
    return folder


def query_vectors(queries: Sequence[Query], encoder: Any, *, progress: Callable[[int, int], None] | None = None):
    """The queries' embeddings (``kind="query"``), cached on disk by :func:`core.retrieval.encoder.encode_cached`."""
    from core.retrieval.encoder import encode_cached

    return encode_cached(encoder, [q.text for q in queries], kind="query", progress=progress)
