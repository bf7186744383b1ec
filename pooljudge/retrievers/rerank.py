"""``rerank:model=PATH[;PATH2][,first=KIND,depth=N,interpolate=W,first_*=...]``: cross-encoders re-ranking a first stage.

``model`` is a cross-encoder folder or a model registered in the collection (``pooljudge
models``); several separated by ``;`` form an ensemble (the mean of per-query min-max
normalised scores, DuReader-retrieval).  ``first`` (default bm25) is any first-stage kind;
``first_*`` options go to its spec (``first_chinese=bigram``).  ``interpolate`` (default 0)
weights the first stage's min-max normalised scores against the re-rankers'
(:func:`core.retrieval.rerank.interpolate_runs`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from core.retrieval.rerank import RerankRetriever
from pooljudge import encoders
from pooljudge.corpus import Corpus
from pooljudge.models_lookup import reranker_folder
from pooljudge.retrievers.options import CONTEXT, RetrieverOption, check_positive, defaults
from pooljudge.retrievers.registry import build_retriever, first_stage_kinds, index_retriever
from pooljudge.retrievers.spec import RetrieverSpec, split_models

OPTIONS = (
    RetrieverOption(
        "model",
        str,
        help="required: a cross-encoder folder or a registered model's name; several separated by ';' "
        "form an ensemble (the mean of per-query min-max normalised scores)",
    ),
    RetrieverOption(
        "first",
        str,
        "bm25",
        "the first stage: any first-stage kind; first_* options go to its spec (first_chinese=bigram)",
    ),
    RetrieverOption("depth", int, 100, "the first stage's hits re-ranked per query"),
    RetrieverOption("interpolate", float, 0.0, "the weight in [0, 1] of the first stage's min-max normalised scores"),
    RetrieverOption("batch_size", int, 32, "pairs scored per batch"),
    RetrieverOption("max_length", int, 256, "tokens kept per (query, passage) pair"),
    replace(CONTEXT, help="document context prepended to the passages it scores; the default of first_context"),
)
FIRST_STAGE = False
"""A re-ranker over a re-ranker is refused: put the models in one ensemble instead."""
RAW_PREFIX = "first_"
"""Options kept as written and checked as the first stage's own spec."""
_DEFAULT = defaults(OPTIONS)


def _looks_like_path(model: str) -> bool:
    """A model written as a path (a separator, ``~``, ``.``) rather than a registered model's name."""
    return "/" in model or "\\" in model or model.startswith(("~", "."))


def _check_models(options: Mapping[str, Any], text: str) -> None:
    if not split_models(options.get("model", "")):
        raise ValueError(
            f"a rerank retriever needs a model: {text!r} has no model=PATH (a cross-encoder folder, "
            "or a registered model's name; several separated by ';' form an ensemble)"
        )
    for model in split_models(options["model"]):
        # a registered model's name is resolved later, against its collection; a path must exist now
        if _looks_like_path(model) and not Path(model).expanduser().is_dir():
            raise ValueError(
                f"model {model!r} in {text!r}: no such folder (a cross-encoder saved by "
                "`pooljudge train cross-encoder`, or any Hugging Face sequence-classification folder)"
            )


def check(options: dict[str, Any], text: str, raw: Mapping[str, str]) -> dict[str, Any]:
    """Check the models and the first stage; returns the options with the converted ``first_*`` ones."""
    check_positive(options, "depth")
    if not 0.0 <= options.get("interpolate", _DEFAULT["interpolate"]) <= 1.0:  # NaN fails both comparisons
        raise ValueError(f"option 'interpolate' in {text!r} must be in [0, 1], got {options['interpolate']!r}")
    _check_models(options, text)
    kind = options.get("first", _DEFAULT["first"])
    if kind == "rerank":
        raise ValueError(
            f"first=rerank in {text!r}: a re-ranker cannot be the first stage of another; "
            "put the models in one ensemble instead (model=PATH1;PATH2)"
        )
    if kind not in first_stage_kinds():
        raise ValueError(f"option 'first' in {text!r} must be one of {', '.join(first_stage_kinds())}, got {kind!r}")
    check_positive(options, "batch_size", "max_length")
    try:
        parsed = RetrieverSpec.parse(kind + ":" + ",".join(f"{k}={v}" for k, v in raw.items()))
    except ValueError as exc:
        raise ValueError(f"first stage of {text!r} (first_* options): {exc}") from None
    if "name" in parsed.options:
        raise ValueError(f"option 'first_name' in {text!r}: the first stage's run is not stored, so it has no name")
    return options | {f"first_{k}": v for k, v in parsed.options.items()}


def build(spec, language: str, *, name: str, resolve: Callable[[str], Path] | None = None):
    """``resolve`` turns a model as written into its folder (by default each must be a folder)."""
    options = spec.options
    resolve = resolve or (lambda model: reranker_folder(None, None, model))
    folders = [resolve(m) for m in spec.models]  # an unknown model is refused before anything loads
    rerankers = [
        encoders.cross_encoder_for(f, max_length=options.get("max_length"), batch_size=options.get("batch_size"))
        for f in folders
    ]
    first_spec = spec.first_stage()
    first = build_retriever(first_spec, language, name=first_spec.kind, resolve=resolve)
    retriever = RerankRetriever(
        first,
        rerankers,
        depth=options.get("depth", _DEFAULT["depth"]),
        name=name,
        interpolate=options.get("interpolate", _DEFAULT["interpolate"]),
    )
    retriever.context = options.get("context", _DEFAULT["context"])
    return retriever


def index(retriever, corpus: Corpus, progress=None):
    """The first stage as its kind indexes it (a cached BM25 index is loaded, not rebuilt); the
    cross-encoders read the passage texts of the re-ranker's own context."""
    retriever.first = index_retriever(retriever.first, corpus, progress=progress)
    retriever.index_texts(corpus.doc_ids, corpus.texts_for(retriever.context))
    return retriever
