"""Retriever specs: ``kind[:key=value,...]`` strings, so that a job's parameters are plain JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.context import CONTEXT_MODES
from pooljudge.retrievers.options import convert, option_text
from pooljudge.retrievers.registry import RETRIEVERS, kind_module


def split_models(value: str) -> list[str]:
    """The models of a ``rerank`` spec's ``model`` option: ``PATH1;PATH2`` (an ensemble), blanks dropped."""
    return [m.strip() for m in str(value).split(";") if m.strip()]


def split_specs(text: str) -> list[str]:
    """Retriever specs separated by ``;``, where a ``rerank`` ensemble's ``model=A;B`` stays one spec.

    A piece that does not start with a retriever kind (``bm25``, ``dense:...``) continues the
    spec before it, so ``"bm25; rerank:model=/m/a;/m/b,depth=50"`` gives two specs.
    """
    specs: list[str] = []
    for piece in text.split(";"):
        kind = piece.strip().partition(":")[0].strip().lower()
        if specs and kind not in RETRIEVERS and specs[-1].split(":", 1)[0].strip().lower() == "rerank":
            specs[-1] += ";" + piece.strip()
        elif piece.strip():
            specs.append(piece.strip())
    return specs


def _check_contexts(options: dict[str, Any], text: str) -> None:
    """Every kind's ``*context`` options name a context mode (refused now, not when indexing)."""
    for key, value in options.items():
        if key.endswith("context") and value not in CONTEXT_MODES:
            raise ValueError(f"option {key!r} in {text!r} must be one of {', '.join(CONTEXT_MODES)}, got {value!r}")


@dataclass(frozen=True)
class RetrieverSpec:
    """A retriever described as ``kind[:key=value,...]`` (see :mod:`pooljudge.pipeline`).

    The kind's module (:data:`pooljudge.retrievers.registry.RETRIEVERS`) declares its options
    (:class:`pooljudge.retrievers.options.RetrieverOption`) and checks them.
    """

    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> RetrieverSpec:
        kind, _, rest = text.strip().partition(":")
        kind = kind.strip().lower()
        if kind not in RETRIEVERS:
            raise ValueError(f"unknown retriever {kind!r} in {text!r}; expected one of {', '.join(RETRIEVERS)}")
        module = kind_module(kind)
        raw_prefix = getattr(module, "RAW_PREFIX", None)
        options: dict[str, Any] = {}
        raw: dict[str, str] = {}
        for item in filter(None, (part for part in rest.split(","))):
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"retriever option {item!r} in {text!r} must look like key=value")
            key = key.strip()
            if raw_prefix and key.startswith(raw_prefix):
                raw[key[len(raw_prefix) :]] = value  # checked by the module (a re-ranker's first stage)
                continue
            options[key] = convert(kind, key, value, module.OPTIONS)
        _check_contexts(options, text.strip())
        options = module.check(options, text.strip(), raw)
        return cls(kind=kind, options=options, text=text.strip())

    @property
    def models(self) -> list[str]:
        """A ``rerank`` spec's models as written (folders or registered names), in order; ``[]`` otherwise."""
        return split_models(self.options["model"]) if self.kind == "rerank" else []

    def first_stage(self) -> RetrieverSpec:
        """A ``rerank`` spec's first stage: ``first`` with the ``first_*`` options (``context`` defaults to ours)."""
        if self.kind != "rerank":
            raise ValueError(f"a {self.kind} retriever has no first stage")
        options = {k[len("first_") :]: v for k, v in self.options.items() if k.startswith("first_")}
        options.setdefault("context", self.options.get("context", "title"))
        kind = self.options.get("first", "bm25")
        text = kind + ":" + ",".join(f"{k}={option_text(v)}" for k, v in options.items())
        return RetrieverSpec(kind=kind, options=options, text=text)

    def default_name(self) -> str:
        """The run name: the ``name`` option, else the retriever's full configuration as written.

        ``bm25``, ``bm25:chinese=bigram,k1=1.2``, ``dense:model=bge-small,pooling=cls``: the
        kind and its options in a canonical order (a model path is shortened to its folder
        name, so names stay usable as file names); the stored run also keeps the complete
        resolved parameters.
        """
        if "name" in self.options:
            return self.options["name"]
        shown = []
        for key in sorted(self.options):
            value = self.options[key]
            if key == "model" and self.kind == "rerank":
                value = ";".join(Path(m).name for m in self.models)
            elif key.endswith("model"):
                value = Path(str(value)).name
            shown.append(f"{key}={option_text(value)}")
        return self.kind + (":" + ",".join(shown) if shown else "")
