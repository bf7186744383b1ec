"""Retrieval and pooling over a stored collection: the glue between ``core`` and ``db``.

Used by the CLI (``pooljudge index / retrieve / pool``) and by the pooling
job the app starts in a background worker.  Retrievers are described by spec
strings so that a job's parameters are plain JSON::

    bm25                                   BM25 (bm25s), analyzer from the collection language
    bm25:chinese=bigram,k1=1.2,b=0.75      CJK character bigrams, other BM25 parameters
    bm25:backend=rank_bm25                 the rank_bm25 backend
    dense                                  all-MiniLM-L6-v2 from the packaged weights, exact FAISS search
    dense:model=/path/to/encoder,pooling=cls,index=hnsw,query_prefix=query: ,max_length=512
    bm25:name=bm25-title                   any retriever: the run's name
    hybrid:fusion=rrf                      BM25 + default dense, fused (rrf, combsum, combmnz)
    hybrid:fusion=convex,alpha=0.3         0.3 * min-max BM25 + 0.7 * min-max dense (DAPR's hybrid)
    hierarchical:top_docs=50,alpha=0.5     DAPR: BM25 over whole documents, then the dense encoder
                                           over the passages of the top 50, scores fused (fusion=convex
                                           with alpha weighting BM25, or fusion=rrf); dense_* options
                                           pick the encoder, bm25_* the document BM25
    bm25:context=title+keyphrases          any retriever: document context prepended to passage texts
                                           (title, the default; keyphrases; title+keyphrases; none);
                                           a hybrid's bm25_context / dense_context set one member's;
                                           hierarchical's applies to the passages it encodes
    rerank:model=PATH,first=bm25,depth=100 a cross-encoder re-ranking the first stage's top ``depth``
                                           (first: bm25, dense, hybrid or hierarchical; first_* options
                                           go to the first stage's spec, e.g. first_chinese=bigram);
    rerank:model=PATH1;PATH2               an ensemble: the mean of per-query min-max normalised scores
                                           (DuReader-retrieval); a model is a folder or the name of a
                                           model registered in the collection (pooljudge models)

Indexes are cached on disk keyed by the corpus content and the retriever
parameters (BM25 index folders; dense passage embeddings), so a repeated
run only searches.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.cache import cache_dir, content_key
from core.context import CONTEXT_MODES
from core.retrieval.base import Retriever
from core.types import Passage, Query, Run
from db.engine import Store

Progress = Callable[[int, int], None]

RETRIEVER_KINDS = ("bm25", "dense", "hybrid", "hierarchical", "rerank")
FIRST_STAGE_KINDS = ("bm25", "dense", "hybrid", "hierarchical")
"""What a ``rerank`` retriever may re-rank (a re-ranker over a re-ranker is refused)."""
_BM25_OPTIONS = {"chinese": str, "k1": float, "b": float, "method": str, "idf_method": str, "backend": str,
                 "epsilon": float, "delta": float, "stem": bool, "context": str}
_DENSE_OPTIONS = {"model": str, "pooling": str, "index": str, "max_length": int, "batch_size": int,
                  "query_prefix": str, "passage_prefix": str, "nprobe": int, "ef_search": int, "context": str}
_HYBRID_OPTIONS = {"fusion": str, "depth": int, "alpha": float, "context": str,
                   **{f"bm25_{k}": v for k, v in _BM25_OPTIONS.items()},
                   **{f"dense_{k}": v for k, v in _DENSE_OPTIONS.items()}}
_ENCODER_OPTIONS = ("model", "pooling", "max_length", "batch_size", "query_prefix", "passage_prefix")
_HIERARCHICAL_OPTIONS = {"top_docs": int, "fusion": str, "alpha": float, "context": str,
                         **{f"bm25_{k}": v for k, v in _BM25_OPTIONS.items() if k != "context"},
                         **{f"dense_{k}": _DENSE_OPTIONS[k] for k in _ENCODER_OPTIONS}}
_RERANK_OPTIONS = {"model": str, "first": str, "depth": int, "batch_size": int, "max_length": int, "context": str}
_FUSIONS = {"hybrid": ("rrf", "combsum", "combmnz", "convex"), "hierarchical": ("convex", "rrf")}


def _check_values(kind: str, options: Mapping[str, Any], text: str) -> None:
    """Reject option values that would only fail later, when the retriever is built or indexed."""
    for key, value in options.items():
        if key.endswith("context") and value not in CONTEXT_MODES:
            raise ValueError(f"option {key!r} in {text!r} must be one of {', '.join(CONTEXT_MODES)}, got {value!r}")
    if kind in _FUSIONS:
        fusion = options.get("fusion", "convex" if kind == "hierarchical" else "rrf")
        if fusion not in _FUSIONS[kind]:
            raise ValueError(f"option 'fusion' of a {kind} retriever must be one of {', '.join(_FUSIONS[kind])}, "
                             f"got {fusion!r}")
        if "alpha" in options:
            if fusion != "convex":
                raise ValueError(f"option 'alpha' in {text!r} needs fusion=convex")
            if not 0.0 <= options["alpha"] <= 1.0:
                raise ValueError(f"option 'alpha' must be in [0, 1], got {options['alpha']!r}")
    for key in ("top_docs", "depth"):
        if key in options and options[key] < 1:
            raise ValueError(f"option {key!r} must be a positive integer, got {options[key]!r}")


def _option_text(value: Any) -> str:
    """An option's value as a spec writes it (a bool as true/false, as :meth:`RetrieverSpec.parse` reads it)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def split_models(value: str) -> list[str]:
    """The models of a ``rerank`` spec's ``model`` option: ``PATH1;PATH2`` (an ensemble), blanks dropped."""
    return [m.strip() for m in str(value).split(";") if m.strip()]


def _looks_like_path(model: str) -> bool:
    """A model written as a path (a separator, ``~``, ``.``) rather than a registered model's name."""
    return "/" in model or "\\" in model or model.startswith(("~", "."))


def _check_rerank(options: Mapping[str, Any], first: Mapping[str, str], text: str) -> dict[str, Any]:
    """Check a ``rerank`` spec's own options and its first stage; returns the converted ``first_*`` options."""
    if not split_models(options.get("model", "")):
        raise ValueError(f"a rerank retriever needs a model: {text!r} has no model=PATH (a cross-encoder folder, "
                         "or a registered model's name; several separated by ';' form an ensemble)")
    for model in split_models(options["model"]):
        # a registered model's name is resolved later, against its collection; a path must exist now
        if _looks_like_path(model) and not Path(model).expanduser().is_dir():
            raise ValueError(f"model {model!r} in {text!r}: no such folder (a cross-encoder saved by "
                             "`pooljudge train cross-encoder`, or any Hugging Face sequence-classification folder)")
    kind = options.get("first", "bm25")
    if kind == "rerank":
        raise ValueError(f"first=rerank in {text!r}: a re-ranker cannot be the first stage of another; "
                         "put the models in one ensemble instead (model=PATH1;PATH2)")
    if kind not in FIRST_STAGE_KINDS:
        raise ValueError(f"option 'first' in {text!r} must be one of {', '.join(FIRST_STAGE_KINDS)}, got {kind!r}")
    for key in ("batch_size", "max_length"):
        if key in options and options[key] < 1:
            raise ValueError(f"option {key!r} must be a positive integer, got {options[key]!r}")
    inner = kind + ":" + ",".join(f"{k}={v}" for k, v in first.items())
    try:
        parsed = RetrieverSpec.parse(inner)
    except ValueError as exc:
        raise ValueError(f"first stage of {text!r} (first_* options): {exc}") from None
    if "name" in parsed.options:
        raise ValueError(f"option 'first_name' in {text!r}: the first stage's run is not stored, so it has no name")
    return {f"first_{k}": v for k, v in parsed.options.items()}


def split_specs(text: str) -> list[str]:
    """Retriever specs separated by ``;``, where a ``rerank`` ensemble's ``model=A;B`` stays one spec.

    A piece that does not start with a retriever kind (``bm25``, ``dense:...``) continues the
    spec before it, so ``"bm25; rerank:model=/m/a;/m/b,depth=50"`` gives two specs.
    """
    specs: list[str] = []
    for piece in text.split(";"):
        kind = piece.strip().partition(":")[0].strip().lower()
        if specs and kind not in RETRIEVER_KINDS and specs[-1].split(":", 1)[0].strip().lower() == "rerank":
            specs[-1] += ";" + piece.strip()
        elif piece.strip():
            specs.append(piece.strip())
    return specs


def _convert(kind: str, key: str, value: str, allowed: Mapping[str, type]) -> Any:
    if key not in allowed:
        raise ValueError(f"unknown option {key!r} for a {kind} retriever; options: {', '.join(sorted(allowed))}")
    typ = allowed[key]
    if typ is bool:
        if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise ValueError(f"option {key!r} must be true or false, got {value!r}")
        return value.lower() in ("true", "1", "yes")
    try:
        return typ(value)
    except ValueError:
        raise ValueError(f"option {key!r} must be {typ.__name__}, got {value!r}") from None


@dataclass(frozen=True)
class RetrieverSpec:
    """A retriever described as ``kind[:key=value,...]`` (see the module docstring)."""

    kind: str
    options: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    @classmethod
    def parse(cls, text: str) -> RetrieverSpec:
        kind, _, rest = text.strip().partition(":")
        kind = kind.strip().lower()
        if kind not in RETRIEVER_KINDS:
            raise ValueError(f"unknown retriever {kind!r} in {text!r}; expected one of {', '.join(RETRIEVER_KINDS)}")
        allowed = {"bm25": _BM25_OPTIONS, "dense": _DENSE_OPTIONS, "hybrid": _HYBRID_OPTIONS,
                   "hierarchical": _HIERARCHICAL_OPTIONS, "rerank": _RERANK_OPTIONS}[kind] | {"name": str}
        options: dict[str, Any] = {}
        first: dict[str, str] = {}
        for item in filter(None, (part for part in rest.split(","))):
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"retriever option {item!r} in {text!r} must look like key=value")
            key = key.strip()
            if kind == "rerank" and key.startswith("first_"):
                first[key[len("first_"):]] = value  # checked below, as the first stage's own spec
                continue
            options[key] = _convert(kind, key, value, allowed)
        _check_values(kind, options, text.strip())
        if kind == "rerank":
            options |= _check_rerank(options, first, text.strip())
        return cls(kind=kind, options=options, text=text.strip())

    @property
    def models(self) -> list[str]:
        """A ``rerank`` spec's models as written (folders or registered names), in order; ``[]`` otherwise."""
        return split_models(self.options["model"]) if self.kind == "rerank" else []

    def first_stage(self) -> RetrieverSpec:
        """A ``rerank`` spec's first stage: ``first`` with the ``first_*`` options (``context`` defaults to ours)."""
        if self.kind != "rerank":
            raise ValueError(f"a {self.kind} retriever has no first stage")
        options = {k[len("first_"):]: v for k, v in self.options.items() if k.startswith("first_")}
        options.setdefault("context", self.options.get("context", "title"))
        kind = self.options.get("first", "bm25")
        text = kind + ":" + ",".join(f"{k}={_option_text(v)}" for k, v in options.items())
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
            if isinstance(value, bool):
                value = str(value).lower()
            shown.append(f"{key}={value}")
        return self.kind + (":" + ",".join(shown) if shown else "")


# --------------------------------------------------------------------------- building retrievers


def _bm25(options: Mapping[str, Any], language: str, name: str):
    from core.retrieval.bm25 import BM25Retriever
    from core.text import analyzer_for

    analyzer = analyzer_for(language, chinese=options.get("chinese", "jieba"), stem=options.get("stem", True))
    params = {k: options[k] for k in ("k1", "b", "method", "idf_method", "backend", "epsilon", "delta") if k in options}
    return BM25Retriever(analyzer, name=name, **params)


_ENCODERS: dict[tuple, Any] = {}


def encoder_for(options: Mapping[str, Any]):
    """One BiEncoder per model and settings in this process (loading weights is the slow part).

    ``options`` are a dense spec's encoder settings (``model``, ``pooling``,
    ``max_length``, ``batch_size``, ``query_prefix``, ``passage_prefix``);
    ``{}`` gives the bundled all-MiniLM-L6-v2.
    """
    from core.retrieval.encoder import BiEncoder, default_model_path

    key = tuple(sorted((k, options[k]) for k in _ENCODER_OPTIONS if k in options))
    if key not in _ENCODERS:
        model = options.get("model") or default_model_path()
        kwargs = {k: options[k] for k in ("pooling", "max_length", "batch_size", "query_prefix", "passage_prefix") if k in options}
        _ENCODERS[key] = BiEncoder(model, **kwargs)
    return _ENCODERS[key]


def _dense(options: Mapping[str, Any], name: str):
    from core.retrieval.dense import DenseRetriever

    kwargs = {k: options[k] for k in ("nprobe", "ef_search") if k in options}
    return DenseRetriever(encoder_for(options), index=options.get("index", "flat"), name=name, **kwargs)


_CONTEXTS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""The passage context (``title``, ``keyphrases``, ...) each retriever built here indexes with."""


def context_of(retriever: Retriever) -> str | None:
    """The ``context`` option a retriever was built with (:func:`build_retriever`); ``None`` if unknown.

    A hybrid has none of its own (see its members); a hierarchical retriever
    keeps it as its ``context`` attribute.
    """
    try:
        found = _CONTEXTS.get(retriever)
    except TypeError:  # not weak-referenceable
        found = None
    return found if found is not None else getattr(retriever, "context", None)


def _with_context(retriever: Any, context: str) -> Any:
    _CONTEXTS[retriever] = context
    return retriever


_CROSS_ENCODERS: dict[tuple, Any] = {}


def cross_encoder_for(path: str | Path, *, max_length: int | None = None, batch_size: int | None = None):
    """One :class:`core.training.cross_encoder.CrossEncoder` per folder and settings in this process.

    Keyed by the folder's resolved path and its files' modification times too, so a model
    retrained into the same folder is loaded again rather than served stale.
    """
    from core.training.cross_encoder import CrossEncoder

    folder = Path(path).expanduser().resolve()
    if not folder.is_dir():
        raise ValueError(f"cross-encoder folder {str(path)!r} does not exist")
    stamp = tuple(sorted((f.name, f.stat().st_mtime_ns) for f in folder.iterdir() if f.is_file()))
    key = (str(folder), max_length, batch_size, stamp)
    if key not in _CROSS_ENCODERS:
        kwargs = {k: v for k, v in (("max_length", max_length), ("batch_size", batch_size)) if v is not None}
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
        raise ValueError(f"model {model!r}: no such folder" + (
            "" if collection is None else f", and no model of that name is registered in {collection!r}"))
    return folder


def build_retriever(
    spec: RetrieverSpec, language: str | None, *, name: str | None = None,
    resolve: Callable[[str], Path] | None = None,
) -> Retriever:
    """An un-indexed retriever for ``spec``; BM25's analyzer follows the collection ``language``.

    The ``context`` option (default ``title``) decides which passage texts
    :func:`index_retriever` gives the retriever (:func:`context_of`); a hybrid's
    ``context`` is the default of its members' ``bm25_context`` / ``dense_context``,
    a re-ranker's the default of its first stage's ``first_context``.  ``resolve`` turns a
    ``rerank`` model as written into its folder (registered names need the collection, see
    :func:`retrieve`); by default each model must be a folder.
    """
    name = name or spec.default_name()
    language = language or "en"
    options = spec.options
    context = options.get("context", "title")
    if spec.kind == "rerank":
        resolve = resolve or (lambda model: resolve_model(None, None, model))
        folders = [resolve(m) for m in spec.models]  # an unknown model is refused before anything loads
        from core.retrieval.rerank import RerankRetriever

        encoders = [cross_encoder_for(f, max_length=options.get("max_length"), batch_size=options.get("batch_size"))
                    for f in folders]
        first_spec = spec.first_stage()
        first = build_retriever(first_spec, language, name=first_spec.kind, resolve=resolve)
        return _with_context(RerankRetriever(first, encoders, depth=options.get("depth", 100), name=name), context)
    if spec.kind == "bm25":
        return _with_context(_bm25(options, language, name), context)
    if spec.kind == "dense":
        return _with_context(_dense(options, name), context)
    sub = lambda prefix: {k[len(prefix):]: v for k, v in options.items() if k.startswith(prefix)}  # noqa: E731
    if spec.kind == "hierarchical":
        from core.retrieval.hierarchical import HierarchicalRetriever

        kwargs = {k: options[k] for k in ("top_docs", "fusion", "alpha") if k in options}
        return HierarchicalRetriever(_bm25(sub("bm25_"), language, "bm25-documents"), encoder_for(sub("dense_")),
                                     context=context, name=name, **kwargs)
    from core.retrieval.hybrid import HybridRetriever

    bm25_options, dense_options = sub("bm25_"), sub("dense_")
    members = [_with_context(_bm25(bm25_options, language, "bm25"), bm25_options.get("context", context)),
               _with_context(_dense(dense_options, "dense"), dense_options.get("context", context))]
    return HybridRetriever(members, fusion=options.get("fusion", "rrf"), depth=options.get("depth", 100),
                           alpha=options.get("alpha", 0.5), name=name)


# --------------------------------------------------------------------------- corpus access


@dataclass
class Corpus:
    """A collection's passages and queries, ready to index and search.

    ``doc_ids`` are the *passage* ids (what a run ranks) and ``texts`` their
    texts with ``context`` applied (:func:`core.context.contextualise`).
    ``passages`` keeps the passages themselves (document id, position, title,
    raw text), which hierarchical retrieval and other contexts
    (:meth:`texts_for`) need.
    """

    collection: str
    language: str | None
    doc_ids: list[str]
    texts: list[str]
    queries: dict[str, str]
    answers: dict[str, list[Any]]
    passages: list[Passage] = field(default_factory=list)
    context: str = "title"
    _contextualised: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def texts_for(self, context: str | None) -> list[str]:
        """The passage texts with ``context`` (``None``: :attr:`texts`), computed once per context."""
        if context is None or context == self.context:
            return self.texts
        if context not in self._contextualised:
            from core.context import check_context_mode, contextualise

            check_context_mode(context)
            if len(self.passages) != len(self.doc_ids):
                raise ValueError(f"this corpus keeps no passages, so it cannot give them the {context!r} context")
            self._contextualised[context] = contextualise(self.passages, context)
        return self._contextualised[context]


def load_corpus(
    store: Store, collection: str, *, with_title: bool = True, split: str | None = None, context: str | None = None,
) -> Corpus:
    """Passages, their texts with document ``context`` and the query texts of a collection.

    ``context`` (:data:`core.context.CONTEXT_MODES`) defaults to ``"title"`` (the title
    prepended when it is not already the text's start), or ``"none"`` with
    ``with_title=False``.  Retrievers built with another ``context`` option get their
    texts from :meth:`Corpus.texts_for` in :func:`index_retriever`.
    """
    from core.context import check_context_mode, contextualise, with_title as titled
    from db.queries import iter_passages, iter_queries, list_collections

    context = check_context_mode(context if context is not None else ("title" if with_title else "none"))
    with store.read() as session:
        info = next((c for c in list_collections(session) if c.name == collection), None)
        if info is None:
            from db.queries import collection_id

            collection_id(session, collection)  # raises NotFound naming the collections
        doc_ids, texts, passages = [], [], []
        for p in iter_passages(session, collection):
            doc_ids.append(p.id)
            passages.append(p)
            texts.append(titled(p.text, p.title) if context == "title" else p.text)
        queries, answers = {}, {}
        for q in iter_queries(session, collection):
            if split is None or q.split == split:
                queries[q.id] = q.text
                if q.answers:
                    answers[q.id] = q.answers
    if context.endswith("keyphrases"):
        texts = contextualise(passages, context)
    return Corpus(collection, info.language, doc_ids, texts, queries, answers, passages=passages, context=context)


def index_retriever(retriever: Retriever, corpus: Corpus, *, progress: Progress | None = None) -> Retriever:
    """Index ``corpus``; returns the indexed retriever (a cached BM25 index is loaded instead of rebuilt).

    A BM25 index is cached under ``cache_dir("bm25")`` keyed by the corpus content and the
    BM25 and analyzer parameters; dense retrievers cache their passage embeddings
    themselves; a hybrid indexes its members.  Each retriever gets the passage texts of
    its ``context`` option (:func:`context_of`, :meth:`Corpus.texts_for`); a hierarchical
    retriever gets the passages too (its document BM25 index is rebuilt every time:
    bm25s indexes ~20k documents/s).
    """
    from core.atomic import atomic_folder
    from core.retrieval.bm25 import BM25Retriever
    from core.retrieval.hierarchical import HierarchicalRetriever
    from core.retrieval.hybrid import HybridRetriever

    if isinstance(retriever, HybridRetriever):
        for key, member in list(retriever.retrievers.items()):
            retriever.retrievers[key] = index_retriever(member, corpus, progress=progress)
        return retriever
    texts = corpus.texts_for(context_of(retriever))
    if _is_rerank(retriever):
        # the first stage through this same path (a cached BM25 index is loaded, not rebuilt);
        # the cross-encoders read the passage texts of the re-ranker's own context
        retriever.first = index_retriever(retriever.first, corpus, progress=progress)
        retriever.index_texts(corpus.doc_ids, texts)
        return retriever
    if isinstance(retriever, HierarchicalRetriever):
        if len(corpus.passages) != len(corpus.doc_ids):
            raise ValueError("hierarchical retrieval needs the corpus passages (doc_id, position): use load_corpus")
        return retriever.index_passages(corpus.passages, texts=texts, progress=progress)
    if not isinstance(retriever, BM25Retriever):
        retriever.index(corpus.doc_ids, texts, progress=progress)
        return retriever
    key = content_key(texts, params={"ids": content_key(corpus.doc_ids), "bm25": retriever.params,
                                     "analyzer": retriever.analyzer.params})
    folder = cache_dir("bm25") / key
    if (folder / "meta.json").exists():
        return BM25Retriever.load(folder, name=retriever.name)
    retriever.index(corpus.doc_ids, texts, progress=progress)
    # a concurrent reader never sees half an index; a process that loses the race keeps its equal copy in memory
    atomic_folder(folder, retriever.save)
    return retriever


def _is_rerank(retriever: Any) -> bool:
    from core.retrieval.rerank import RerankRetriever

    return isinstance(retriever, RerankRetriever)


def describe(retriever: Retriever) -> dict[str, Any]:
    """The complete resolved configuration of a retriever, as JSON-ready data (stored with its run).

    A re-ranker's holds its first stage's description (``first``) and each cross-encoder's
    folder and fingerprint (``models``), so a stored run says exactly which weights ranked it.
    """
    import json

    from core.retrieval.hybrid import HybridRetriever

    config: dict[str, Any] = {"class": type(retriever).__name__}
    if isinstance(retriever, HybridRetriever):
        config["fusion"] = retriever.fusion
        config["members"] = {name: describe(member) for name, member in retriever.retrievers.items()}
    if _is_rerank(retriever):
        config["first"] = describe(retriever.first)
        config["models"] = [{"path": str(e.path), "fingerprint": e.fingerprint, "max_length": e.max_length}
                            for e in retriever.rerankers]
    for attribute in ("params",):
        value = getattr(retriever, attribute, None)
        if isinstance(value, dict):
            config[attribute] = value
    analyzer = getattr(retriever, "analyzer", None)
    if analyzer is not None and hasattr(analyzer, "params"):
        config["analyzer"] = analyzer.params
    context = context_of(retriever)
    if context is not None:
        config["context"] = context
    encoder = getattr(retriever, "encoder", None)
    if encoder is not None:
        config["encoder"] = dict(getattr(encoder, "params", {})) | {"fingerprint": getattr(encoder, "fingerprint", None)}
        config["index"] = getattr(retriever, "index_type", None)
    return json.loads(json.dumps(config, default=str))


def retrieve(
    store: Store, collection: str, spec: RetrieverSpec, *, k: int = 100, name: str | None = None,
    split: str | None = None, progress: Callable[[str], Progress] | None = None,
) -> tuple[str, Run, dict[str, Any]]:
    """Index the collection with ``spec`` and search all its queries (or one split's).

    Returns the run name, the run, and the retriever's full configuration (:func:`describe`).
    """
    stage = progress or (lambda _label: (lambda _d, _t: None))
    corpus = load_corpus(store, collection, split=split)
    retriever = build_retriever(spec, corpus.language, name=name,
                                resolve=lambda model: resolve_model(store, collection, model))
    retriever = index_retriever(retriever, corpus, progress=stage(f"indexing {retriever.name}"))
    run = retriever.batch_search(corpus.queries, k, progress=stage(f"searching {retriever.name}"))
    return retriever.name, run, describe(retriever)


# --------------------------------------------------------------------------- pooling job


def _finite(value: float) -> float | None:
    return value if isinstance(value, (int, float)) and math.isfinite(value) else None


POOL_METHODS = ("depth", "take", "rrf", "rbp")


def check_pool_params(store: Store, params: Mapping[str, Any]) -> list[RetrieverSpec]:
    """Check every name a pooling job would use, before any retrieval; returns the parsed retriever specs.

    Refuses (``ValueError``, ``NotFound`` for an unknown collection or stored run) a bad or taken pool
    name (:func:`core.names.check_name`), an unknown pooling method, a retriever spec that does not
    parse, a new run name that is bad (:func:`db.importer.check_run_name`), taken in the collection
    (or being imported), given to two retrievers or also to a stored run, and a stored run that does
    not exist.  Called by :func:`run_pool_job` and by the CLI before it queues the job, so a
    duplicate name costs nothing.
    """
    from core.names import check_name
    from sqlalchemy import select

    from db.importer import check_run_name
    from db.models import Pool, RunRecord
    from db.queries import NotFound, collection_id

    collection, pool_name = params["collection"], params["name"]
    check_name(pool_name, "pool name")
    method = params.get("method", "depth")
    if method not in POOL_METHODS:
        raise ValueError(f"unknown pooling method {method!r}; expected {', '.join(POOL_METHODS[:-1])} or rbp")
    specs = [RetrieverSpec.parse(s) for s in params.get("retrievers", [])]
    run_names = list(params.get("runs", []))
    if not specs and not run_names:
        raise ValueError("a pool needs at least one retriever or stored run")
    made_by: dict[str, RetrieverSpec] = {}
    for spec in specs:
        name = check_run_name(spec.default_name())
        if name in made_by:
            raise ValueError(f"retrievers {made_by[name].text!r} and {spec.text!r} would both store a run named "
                             f"{name!r}: give each its own name option")
        made_by[name] = spec
    for name in run_names:
        if name in made_by:
            raise ValueError(f"run name {name!r} is given both to a stored run to pool and to the new run of "
                             f"retriever {made_by[name].text!r}")
    with store.read() as session:
        cid = collection_id(session, collection)
        taken = session.execute(select(Pool.id, Pool.archived_at).where(Pool.collection_id == cid, Pool.name == pool_name)).first()
        if taken is not None:
            hidden = " (archived: restore it, or choose another name)" if taken.archived_at is not None else ""
            raise ValueError(f"a pool named {pool_name!r} already exists in collection {collection!r}{hidden}")
        status = dict(session.execute(select(RunRecord.name, RunRecord.status).where(RunRecord.collection_id == cid)).all())
    for name, spec in made_by.items():
        if status.get(name) == "ready":
            raise ValueError(f"run {name!r} already exists in {collection!r}: pool the stored run instead, "
                             f"or name the new one, e.g. {spec.kind}:name=my-{spec.kind}")
        if name in status:
            raise ValueError(f"run {name!r} is being imported into {collection!r} (or a crashed import left it): "
                             f"name the new one, e.g. {spec.kind}:name=my-{spec.kind}")
    for name in run_names:
        if status.get(name) != "ready":
            known = ", ".join(sorted(n for n, st in status.items() if st == "ready")) or "none"
            raise NotFound(f"no run named {name!r} in collection {collection!r} (runs: {known})")
    check_selection_params(params)
    for model in selection_models(params) + [m for spec in specs for m in spec.models]:
        resolve_model(store, collection, model)  # a registered name or an existing folder, else refused now
    return specs


SELECT_METHODS = ("top", "active")
DEFAULT_ACTIVE_BAND = (0.1, 0.9)


def _models_param(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(m, str) and m.strip() for m in value):
        raise ValueError(f"{what} must be a list of model folders or registered model names, got {value!r}")
    return [m.strip() for m in value]


def check_selection_params(params: Mapping[str, Any]) -> None:
    """Refuse selection parameters of a pooling job that cannot work together (before any work).

    ``select`` (top N per query) ranks by the pooled runs, or by the re-rankers of
    ``select_by``; ``select_method="active"`` needs ``active_model`` and an ``active_band``
    ``[low, high]`` with ``0 <= low < high <= 1`` and keeps every unsure pair (no ``select``).
    """
    select_n = params.get("select")
    try:
        select_n = None if select_n is None else int(select_n)
    except (TypeError, ValueError):
        select_n = -1
    if select_n is not None and select_n < 0:
        raise ValueError(f"select must be a number of documents per query (or null), got {params.get('select')!r}")
    method = params.get("select_method") or "top"
    if method not in SELECT_METHODS:
        raise ValueError(f"unknown select_method {method!r}; expected {' or '.join(SELECT_METHODS)}")
    select_by = _models_param(params.get("select_by"), "select_by")
    if select_by and not select_n:
        raise ValueError("select_by (re-rank the pool with these models) needs select: the top N per query to keep")
    if method == "active":
        if select_n:
            raise ValueError("select_method 'active' keeps every pair the model is unsure about: drop select "
                             "(or use select with select_by for a fixed top N)")
        if select_by:
            raise ValueError("select_by goes with select (top N by re-rankers), not with select_method 'active'")
        if not _models_param(params.get("active_model"), "active_model"):
            raise ValueError("select_method 'active' needs active_model: the cross-encoder (folder or registered "
                             "name) that scores the pooled pairs")
        active_band(params)
    else:
        for key in ("active_model", "active_band"):
            if params.get(key) is not None:
                raise ValueError(f"{key} is only used with select_method 'active'")


def active_band(params: Mapping[str, Any]) -> tuple[float, float]:
    """A pooling job's ``active_band`` ``[low, high]`` (default ``[0.1, 0.9]``), checked: ``0 <= low < high <= 1``."""
    band = params.get("active_band")
    if band is None:
        return DEFAULT_ACTIVE_BAND
    try:
        low, high = (float(v) for v in band)
    except (TypeError, ValueError):
        raise ValueError(f"active_band must be two numbers [low, high], got {band!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and 0.0 <= low < high <= 1.0):
        raise ValueError(f"active_band must satisfy 0 <= low < high <= 1, got [{low:g}, {high:g}]")
    return low, high


def selection_models(params: Mapping[str, Any]) -> list[str]:
    """The cross-encoders a pooling job's selection uses, as written: ``select_by``, then ``active_model``."""
    return _models_param(params.get("select_by"), "select_by") + _models_param(params.get("active_model"), "active_model")


def _pool_pairs(pool, corpus: Corpus) -> tuple[dict[str, list[str]], dict[str, str]]:
    """Each pool query's pooled documents that have a text, and those texts (what a cross-encoder reads)."""
    text_of = dict(zip(corpus.doc_ids, corpus.texts))
    candidates = {q: [d for d in docs if d in text_of] for q, docs in pool.items()}
    return candidates, {d: text_of[d] for docs in candidates.values() for d in docs}


def rerank_pool(store: Store, collection: str, pool, corpus: Corpus, models: Sequence[str], *,
                progress: Progress | None = None) -> Run:
    """The pooled pairs scored by the cross-encoder ensemble ``models`` (:func:`core.training.cross_encoder.rerank`)."""
    from core.training.cross_encoder import rerank

    encoders = [cross_encoder_for(resolve_model(store, collection, m)) for m in models]
    candidates, passages = _pool_pairs(pool, corpus)
    return rerank(encoders, {q: corpus.queries[q] for q in candidates}, candidates, passages, progress=progress)


def pool_probabilities(store: Store, collection: str, pool, corpus: Corpus, model: str, *,
                       progress: Progress | None = None) -> Run:
    """Every pooled pair's relevance probability by one cross-encoder (``CrossEncoder.probabilities``)."""
    encoder = cross_encoder_for(resolve_model(store, collection, model))
    candidates, passages = _pool_pairs(pool, corpus)
    pairs = [(q, d) for q, docs in candidates.items() for d in docs]
    probabilities = encoder.probabilities([(corpus.queries[q], passages[d]) for q, d in pairs],
                                          progress=progress) if pairs else []
    run: Run = {q: {} for q in candidates}
    for (q, d), p in zip(pairs, probabilities):
        run[q][d] = float(p)
    return run


def check_new_run_name(store: Store, collection: str, name: str) -> str:
    """Refuse a run name that is bad (:func:`db.importer.check_run_name`) or exists (or is being imported)."""
    from sqlalchemy import select

    from db.importer import check_run_name
    from db.models import RunRecord
    from db.queries import collection_id

    check_run_name(name)
    with store.read() as session:
        cid = collection_id(session, collection)
        status = session.scalar(select(RunRecord.status).where(RunRecord.collection_id == cid, RunRecord.name == name))
    if status == "ready":
        raise ValueError(f"run {name!r} already exists in {collection!r}; give the new run another name")
    if status is not None:
        raise ValueError(f"run {name!r} is being imported into {collection!r} (or a crashed import left it); "
                         "give the new run another name")
    return name


def _stage_runs(store: Store, collection: str, new_runs: Mapping[str, tuple[Run, dict[str, Any]]]) -> list[int]:
    """Write the job's new runs, still invisible (``importing``); returns their ids for the final flip.

    Each earlier staged run's heartbeat is refreshed after every run written, so a long write never
    makes them look like a crashed import's leftovers (:func:`db.importer.drop_stale_imports`).
    """
    from sqlalchemy import select, update

    from db.importer import drop_staged_runs, store_run
    from db.models import RunRecord, utcnow
    from db.queries import collection_id

    ids: list[int] = []
    try:
        for name, (run, params) in new_runs.items():
            store_run(store, collection, name, run, params=params, publish=False)
            with store.write() as session:
                cid = collection_id(session, collection)
                ids.append(session.scalar(select(RunRecord.id).where(
                    RunRecord.collection_id == cid, RunRecord.name == name, RunRecord.status == "importing")))
                session.execute(update(RunRecord).where(RunRecord.id.in_(ids)).values(staged_at=utcnow()))
    except BaseException:
        drop_staged_runs(store, ids)
        raise
    return ids


def run_pool_job(store: Store, info, reporter) -> dict[str, Any]:
    """Retrieve with new retrievers, pool them with stored runs, select, de-duplicate, pre-label, save.

    Job parameters (JSON): ``collection``, ``name`` (pool name), ``retrievers`` (spec strings),
    ``runs`` (stored run names), ``k`` (hits per retriever, default 100), ``method``
    (``depth``/``take``/``rrf``/``rbp``), ``depth`` (default 50) or ``size`` (take/rrf/rbp
    pool size per query), ``select`` (top N per query by the ensemble of the pooled runs; null: annotate
    everything), ``dedupe`` (null or ``{"method": "similarity", "threshold": 0.95}`` /
    ``{"method": "ward", "distance_threshold": 0.3}``), ``prelabel`` (span-F1 pre-labels
    for queries with answers), ``split`` (only that split's queries).  Selection by a model:
    ``select_by`` (cross-encoder folders or registered names, with ``select``: the top N by the
    ensemble's scores, DuReader-retrieval), or ``select_method: "active"`` with ``active_model``
    and ``active_band`` ``[low, high]`` (default ``[0.1, 0.9]``): only the pairs whose probability
    is in the band are annotated (T2Ranking 4.4); the result then has ``"active"``
    (:meth:`core.pooling.ActiveReport.as_dict`).  Selection scores are stored with the selection:
    the ensemble's normalised scores, or the active model's probabilities.

    Every name is checked first (:func:`check_pool_params`).  The new runs stay in memory until the
    pool is ready to save; they are then staged invisible and made visible in the same transaction
    that saves the pool, so a job that fails at any point (even a pool name taken meanwhile) leaves
    no run behind, and a retry can use the same names.
    """
    from core import pooling
    from core.prelabel import prelabel
    from db.pools import save_pool, save_prelabels
    from db.queries import load_run

    p = info.params
    collection, pool_name = p["collection"], p["name"]
    k = int(p.get("k", 100))
    specs = check_pool_params(store, p)
    run_names = list(p.get("runs", []))

    new_runs: dict[str, tuple[Run, dict[str, Any]]] = {}
    for spec in specs:
        name, run, config = retrieve(store, collection, spec, k=k, split=p.get("split"), progress=reporter.stage_callback)
        new_runs[name] = (run, {"spec": spec.text, "k": k, "split": p.get("split"), "config": config})

    reporter(0, None, "pooling")
    with store.read() as session:
        runs = {name: load_run(session, collection, name) for name in dict.fromkeys(run_names)}
    runs.update((name, run) for name, (run, _params) in new_runs.items())
    corpus = load_corpus(store, collection, split=p.get("split"))
    queries = sorted(corpus.queries)
    method = p.get("method", "depth")
    depth = int(p.get("depth", 50))
    if method == "depth":
        pool = pooling.depth_pool(runs, depth, queries=queries)
    elif method == "take":
        pool = pooling.take_pool(runs, int(p.get("size", depth)), queries=queries)
    elif method == "rrf":
        pool = pooling.rrf_pool(runs, int(p.get("size", depth)), queries=queries)
    else:
        pool = pooling.rbp_pool(runs, int(p.get("size", depth)), p=float(p.get("rbp_p", 0.8)), queries=queries)

    select_n = p.get("select")
    select_by = _models_param(p.get("select_by"), "select_by")
    active = None
    if select_n and select_by:  # DuReader-retrieval: the pool re-ranked by a cross-encoder ensemble, its top N
        reranked = rerank_pool(store, collection, pool, corpus, select_by,
                               progress=reporter.stage_callback("re-ranking the pool"))
        selection = pooling.select_top(pool, [reranked], int(select_n))
        scores = pooling.ensemble_scores(pool, [reranked])
    elif select_n:
        selection = pooling.select_top(pool, runs, int(select_n))
        scores = pooling.ensemble_scores(pool, runs)
    elif p.get("select_method") == "active":  # T2Ranking 4.4: only the pairs the model is unsure about
        probabilities = pool_probabilities(store, collection, pool, corpus, p["active_model"],
                                           progress=reporter.stage_callback("scoring the pool for active selection"))
        low, high = active_band(p)
        selection, active = pooling.select_uncertain(pool, probabilities, low, high)
        scores = {q: {d: probabilities[q][d] for d in docs if d in probabilities.get(q, {})}
                  for q, docs in selection.items()}
    else:
        selection, scores = pooling.select_all(pool), None

    duplicates = None
    dedupe = p.get("dedupe")
    if dedupe:
        from core.retrieval.encoder import encode_cached

        text_of = dict(zip(corpus.doc_ids, corpus.texts))
        wanted = sorted({d for docs in selection.values() for d in docs if d in text_of})
        vectors = encode_cached(encoder_for({}), [text_of[d] for d in wanted], kind="passage",
                                progress=reporter.stage_callback("embedding for near-duplicate removal"))
        lookup = dict(zip(wanted, vectors))
        selection = {q: [d for d in docs if d in lookup] for q, docs in selection.items()}
        options = {k2: v for k2, v in dedupe.items() if k2 != "method"}
        selection, duplicates = pooling.dedupe_pool(selection, lookup, method=dedupe.get("method", "similarity"), **options)

    prelabels: list[tuple[str, str, float, dict[str, Any]]] = []
    if p.get("prelabel") and corpus.answers:
        reporter(0, None, "pre-labelling")
        text_of = dict(zip(corpus.doc_ids, corpus.texts))
        for qid, answers in corpus.answers.items():
            candidates = {d: text_of[d] for d in pool.get(qid, {}) if d in text_of}
            for hit in prelabel(answers, candidates):
                prelabels.append((qid, hit.doc_id, hit.f1, {"answer": hit.answer, "method": "span_f1"}))

    reporter(0, None, "saving the pool")
    as_tuples = {q: {d: [(c.run, c.rank, c.score) for c in cs] for d, cs in docs.items()} for q, docs in pool.items()}
    params = {k2: v for k2, v in p.items() if k2 not in ("collection", "name")} | {"runs": list(runs)}
    if new_runs:
        reporter(0, None, "storing the new runs")
    staged = _stage_runs(store, collection, new_runs)
    try:
        with store.write() as session:
            if staged:  # visible in the transaction that saves the pool: both or neither
                from sqlalchemy import update

                from db.models import RunRecord

                session.execute(update(RunRecord).where(RunRecord.id.in_(staged)).values(status="ready", staged_at=None))
            summary = save_pool(session, collection, pool_name, as_tuples, method=method, params=params,
                                selection=selection, selection_scores=scores, duplicates=duplicates)
            n_prelabels = save_prelabels(session, collection, prelabels) if prelabels else 0
    except BaseException:
        from db.importer import drop_staged_runs

        drop_staged_runs(store, staged)
        raise
    stats = pooling.pool_statistics(pool, runs)
    result = {
        "pool": pool_name, "runs": list(runs), "queries": summary.queries, "pairs": summary.pairs,
        "selected": summary.selected, "duplicates": summary.duplicates, "missing_documents": summary.missing_documents,
        "prelabels": n_prelabels,
        "statistics": {
            "runs": stats.runs, "contributed": stats.contributed, "unique": stats.unique,
            "overlap": [[_finite(v) for v in row] for row in stats.overlap],
        },
    }
    if active is not None:
        result["active"] = active.as_dict()
    return result


def stored_pool_statistics(store: Store, collection: str, pool_name: str):
    """:func:`core.pooling.pool_statistics` of a stored pool, plus its selection size per query."""
    from core import pooling
    from db.pools import load_pool

    with store.read() as session:
        stored, selection = load_pool(session, collection, pool_name)
    pool = {q: {d: [pooling.Contribution(*c) for c in cs] for d, cs in docs.items()} for q, docs in stored.items()}
    run_names = sorted({c[0] for docs in stored.values() for cs in docs.values() for c in cs})
    stats = pooling.pool_statistics(pool, {name: {} for name in run_names})
    return stats, {q: len(docs) for q, docs in selection.items()}


# --------------------------------------------------------------------------- query diversity and leakage

EVAL_SPLITS = ("dev", "test")


def query_vectors(queries: Sequence[Query], encoder: Any, *, progress: Callable[[int, int], None] | None = None):
    """The queries' embeddings (``kind="query"``), cached on disk by :func:`core.retrieval.encoder.encode_cached`."""
    from core.retrieval.encoder import encode_cached

    return encode_cached(encoder, [q.text for q in queries], kind="query", progress=progress)


def query_diversity(queries: Sequence[Query], vectors) -> dict[str, tuple[int, float]]:
    """``{split: (queries, ILS)}`` for every split with two queries or more, then ``"all"``.

    ILS is T2Ranking's intra-list similarity (:func:`core.analysis.intra_list_similarity`):
    the mean pairwise cosine of the query embeddings, lower meaning more diverse.
    """
    from core.analysis import intra_list_similarity

    rows_of: dict[str, list[int]] = {}
    for i, q in enumerate(queries):
        rows_of.setdefault(q.split, []).append(i)
    out = {split: (len(rows), intra_list_similarity(vectors[rows]))
           for split, rows in sorted(rows_of.items()) if len(rows) >= 2}
    if len(queries) >= 2 and len(rows_of) > 1:
        out["all"] = (len(queries), intra_list_similarity(vectors))
    return out


CHINESE_LEAKAGE_METHODS = ("char-bigram", "encoder")
"""How :func:`leaked_training_queries` compares Chinese queries: lexically, or with the encoder's vectors."""


def is_chinese(query: Query) -> bool:
    """A query in Chinese: its ``language`` when set, else :func:`core.lang.detect_language` of its text."""
    from core.lang import detect_language

    return query.language == "zh" if query.language else detect_language(query.text) == "zh"


def chinese_leakage_method(model_given: bool) -> str:
    """``"encoder"`` when the user gave an encoder (theirs may know Chinese), else ``"char-bigram"``.

    The bundled all-MiniLM-L6-v2 is English-only: it puts unrelated Chinese
    questions at cosine 0.5-0.86 (黄山的最高峰是哪座 / 高血压的诊断标准是什么:
    0.86), so 4 of the demo's 7 training queries were flagged at 0.5, mostly
    falsely.
    """
    return "encoder" if model_given else "char-bigram"


def leakage_method_text(queries: Sequence[Query], *, chinese: str, threshold: float, lexical_threshold: float,
                        model_name: str, train_split: str = "train") -> str:
    """One line saying how :func:`leaked_training_queries` compared which training queries (shown with its result)."""
    if chinese not in CHINESE_LEAKAGE_METHODS:
        raise ValueError(f"chinese must be one of {', '.join(CHINESE_LEAKAGE_METHODS)}, got {chinese!r}")
    train = [q for q in queries if q.split == train_split]
    n_zh = sum(is_chinese(q) for q in train) if chinese == "char-bigram" else 0
    parts = []
    if len(train) - n_zh:
        parts.append(f"{len(train) - n_zh} by {model_name} embedding cosine >= {threshold:g}")
    if n_zh:
        parts.append(f"{n_zh} Chinese by character-bigram cosine >= {lexical_threshold:g} (lexical, against the "
                     "Chinese dev/test queries only)")
    return f"{train_split} queries compared: " + ("; ".join(parts) or "none")


def leaked_training_queries(
    queries: Sequence[Query], vectors, *, threshold: float = 0.5, train_split: str = "train",
    eval_splits: Sequence[str] = EVAL_SPLITS, chinese: str = "encoder", lexical_threshold: float | None = None,
) -> list[dict[str, Any]]:
    """Training queries near-duplicate to an evaluation query (DuReader-retrieval's check, cosine >= 0.5).

    Returns one row per (training query, evaluation query) pair at or above
    its threshold, most similar first: ``train_id``, ``train_query``,
    ``eval_id``, ``eval_split``, ``eval_query``, ``similarity``, ``method``
    (``"encoder"`` or ``"char-bigram"``) and ``threshold`` (the one the pair
    was held to).

    Parameters
    ----------
    queries : sequence of Query
        The collection's queries.
    vectors : array of shape (len(queries), dim) or None
        Their embeddings (:func:`query_vectors`); with ``chinese="char-bigram"``
        the rows of Chinese queries are not read (zeros will do), and
        ``None`` is allowed when every training or evaluation query is Chinese.
    threshold : float, default 0.5
        Embedding cosine at or above which a pair leaks (:func:`core.analysis.find_leakage`).
    chinese : {"encoder", "char-bigram"}
        ``"encoder"``: every pair by embedding cosine.  ``"char-bigram"`` (no
        Chinese encoder at hand, :func:`chinese_leakage_method`): Chinese
        training queries (:func:`is_chinese`) against Chinese evaluation
        queries by character-bigram cosine
        (:func:`core.analysis.find_lexical_leakage`), the others against the
        others by embedding cosine; a Chinese query is not compared with a
        non-Chinese one (words cannot match across languages and the
        encoder does not know Chinese).
    lexical_threshold : float, optional
        Character-bigram cosine threshold (default
        :data:`core.analysis.LEXICAL_LEAKAGE_THRESHOLD`, 0.4).
    """
    from core.analysis import LEXICAL_LEAKAGE_THRESHOLD, find_leakage, find_lexical_leakage

    if chinese not in CHINESE_LEAKAGE_METHODS:
        raise ValueError(f"chinese must be one of {', '.join(CHINESE_LEAKAGE_METHODS)}, got {chinese!r}")
    lexical_threshold = LEXICAL_LEAKAGE_THRESHOLD if lexical_threshold is None else lexical_threshold
    train = [i for i, q in enumerate(queries) if q.split == train_split]
    held_out = [i for i, q in enumerate(queries) if q.split in eval_splits]
    if not train or not held_out:
        return []
    lexical = {i for i in (*train, *held_out) if is_chinese(queries[i])} if chinese == "char-bigram" else set()
    by_id = {q.id: q for q in queries}
    pairs: list[tuple[Any, str, float]] = []
    enc_train = [i for i in train if i not in lexical]
    enc_eval = [i for i in held_out if i not in lexical]
    if enc_train and enc_eval:
        if vectors is None:
            raise ValueError("vectors are needed: some queries are compared by their embeddings")
        pairs.extend((p, "encoder", threshold) for p in find_leakage(
            [queries[i].id for i in enc_train], vectors[enc_train], [queries[i].id for i in enc_eval],
            vectors[enc_eval], threshold=threshold))
    lex_train = [i for i in train if i in lexical]
    lex_eval = [i for i in held_out if i in lexical]
    if lex_train and lex_eval:
        pairs.extend((p, "char-bigram", lexical_threshold) for p in find_lexical_leakage(
            [queries[i].id for i in lex_train], [queries[i].text for i in lex_train],
            [queries[i].id for i in lex_eval], [queries[i].text for i in lex_eval], threshold=lexical_threshold))
    pairs.sort(key=lambda row: (-row[0].similarity, row[0].train_id, row[0].eval_id))
    return [
        {"train_id": p.train_id, "train_query": by_id[p.train_id].text, "eval_id": p.eval_id,
         "eval_split": by_id[p.eval_id].split, "eval_query": by_id[p.eval_id].text, "similarity": p.similarity,
         "method": method, "threshold": limit}
        for p, method, limit in pairs
    ]
