"""The default trained system: the best on the dev split of BM25, the base dense retriever and what training adds.

Learning from a few hundred labels can throw away what a pretrained encoder
knows (a cross-encoder head trained from scratch on Cranfield's labels ranks
below BM25), so the default outcome of training is a *choice*, made on
dev queries that neither trained the model nor are reported, among systems
that keep the base encoder's knowledge:

=================  =========================================================  ===========
key                system                                                     trained
=================  =========================================================  ===========
``bm25``           BM25                                                       no
``dense``          the base bi-encoder, exact dense search                    no
``hybrid``         BM25 + base dense, convex combination                      no
``tuned-dense``    the base bi-encoder fine-tuned on the labels               yes
``tuned-hybrid``   BM25 + the fine-tuned bi-encoder, convex combination       yes
=================  =========================================================  ===========

A hybrid is :func:`core.fusion.convex` of the two members' top lists, each
min-max normalised per query, BM25 weighted ``alpha`` (exactly what the
``hybrid:fusion=convex,alpha=A`` retriever computes over its members' top
``depth``); ``alpha`` is chosen on the dev queries (:func:`choose_fusion_weight`).

:func:`choose_system` keeps the untrained system with the best dev nDCG@10
(ties go to the earlier row of the table: the simpler system), unless the
best trained system beats it by more than one standard error of the
per-query differences: the one-standard-error rule of model selection
(Breiman et al., *Classification and Regression Trees*, 1984; Hastie,
Tibshirani & Friedman, *The Elements of Statistical Learning*, 7.10), which
prefers the simpler model when the dev queries cannot tell the two apart.
The fine-tuned weights were picked on the same dev queries (early stopping)
and a few hundred labels move the encoder little, so a gain within the noise
of a few dozen dev queries is not evidence that training helped (on
Cranfield a +0.006 dev gain of BM25 + fine-tuned dense over BM25 + base
dense came with -0.009 on the held-out queries).  BM25 and the base dense
retriever are always candidates, so the chosen system never ranks below the
better of the two on the dev split; when training is not chosen the reason
says so ("training did not help on the dev split: keeping ...").

The fine-tuning (:func:`fine_tune_bi_encoder`) starts from the base encoder
and keeps its conventions: the contrastive trainer of
:mod:`core.training.dual_encoder` (in-batch and hard negatives, a small
learning rate, early stopping on the dev split), the texts prefixed as the
base folder's sentence-transformers files say (E5's ``query: `` and
``passage: ``), its pooling, and those files copied into the trained folder
so that :class:`~core.retrieval.encoder.BiEncoder` reads it as it read the base.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.fusion import convex
from core.retrieval.base import ProgressCallback
from core.training.common import PRIMARY_METRIC, ranking_metrics
from core.training.data import LabelledData, TrainConfig, TrainResult
from core.types import Qrels, Run

__all__ = [
    "BM25",
    "COMPONENTS",
    "DENSE",
    "FUSION_GRID",
    "HYBRID",
    "LABELS",
    "SYSTEMS",
    "TUNED",
    "TUNED_HYBRID",
    "ScoredSystem",
    "SystemChoice",
    "choose_default_system",
    "choose_fusion_weight",
    "choose_system",
    "evaluation_pool",
    "fine_tune_bi_encoder",
    "prefixed",
    "score_systems",
    "standard_error",
    "system_run",
]

BM25 = "bm25"
DENSE = "dense"
HYBRID = "hybrid"
TUNED = "tuned-dense"
TUNED_HYBRID = "tuned-hybrid"
SYSTEMS = (BM25, DENSE, HYBRID, TUNED, TUNED_HYBRID)
"""Every system, simplest first: the order that breaks a tie on the dev split."""
LABELS = {
    BM25: "BM25",
    DENSE: "base dense",
    HYBRID: "BM25 + base dense",
    TUNED: "fine-tuned dense",
    TUNED_HYBRID: "BM25 + fine-tuned dense",
}
COMPONENTS: dict[str, tuple[str, ...]] = {
    BM25: ("bm25",),
    DENSE: ("dense",),
    HYBRID: ("bm25", "dense"),
    TUNED: ("tuned",),
    TUNED_HYBRID: ("bm25", "tuned"),
}
"""The component runs each system is built from: BM25's, the base encoder's and the fine-tuned encoder's."""
TRAINED = frozenset({TUNED, TUNED_HYBRID})
FUSION_GRID = tuple(i / 10 for i in range(11))
"""BM25's weights :func:`choose_fusion_weight` tries: 0 (dense alone), 0.1, ..., 1 (BM25 alone)."""
_ST_FILES = ("modules.json", "config_sentence_transformers.json", "sentence_bert_config.json")


# --------------------------------------------------------------------------- building and scoring the systems


def choose_fusion_weight(
    first: Run, second: Run, qrels: Qrels, level: int = 1, grid: Sequence[float] = FUSION_GRID
) -> tuple[float, dict[float, float]]:
    """The weight of ``first`` in ``convex(first, second, w)`` with the best nDCG@10 on ``qrels``, and every weight's.

    Ties go to the weight nearest 0.5 (then the smaller): when the dev
    queries cannot tell two weights apart, an even blend is the safer guess
    for new queries (Bruch et al., TOIS 2023).  Choose it on queries that are
    not reported.

    Examples
    --------
    BM25 alone puts the relevant ``a`` first, dense alone second; an even
    blend puts it first too, and wins the tie:

    >>> first = {"q": {"a": 2.0, "b": 1.0, "c": 0.0}}
    >>> second = {"q": {"a": 0.8, "b": 1.0, "c": 0.0}}
    >>> best, scores = choose_fusion_weight(first, second, {"q": {"a": 1}}, grid=(0.0, 0.5, 1.0))
    >>> best, {w: round(v, 4) for w, v in scores.items()}
    (0.5, {0.0: 0.6309, 0.5: 1.0, 1.0: 1.0})
    """
    if not grid:
        raise ValueError("grid: need at least one weight")
    judged = {q for q in qrels if qrels[q]}
    a = {q: docs for q, docs in first.items() if q in judged}
    b = {q: docs for q, docs in second.items() if q in judged}
    scores = {float(w): ranking_metrics(convex(a, b, alpha=float(w)), qrels, level)[PRIMARY_METRIC] for w in grid}
    best = max(scores, key=lambda w: (scores[w], -abs(w - 0.5), -w))
    return best, scores


def system_run(key: str, runs: Mapping[str, Run], alpha: float | None = None) -> Run:
    """The run of system ``key`` from its component runs (``runs["bm25"]``, ``["dense"]``, ``["tuned"]``).

    A hybrid needs ``alpha``, BM25's weight in :func:`core.fusion.convex`.

    Raises
    ------
    ValueError
        An unknown system, a missing component run, or a hybrid without ``alpha``.
    """
    if key not in COMPONENTS:
        raise ValueError(f"unknown system {key!r}; known: {', '.join(SYSTEMS)}")
    missing = [c for c in COMPONENTS[key] if c not in runs]
    if missing:
        raise ValueError(f"system {key!r} needs the component run(s) {', '.join(missing)}; given {sorted(runs)}")
    parts = [runs[c] for c in COMPONENTS[key]]
    if len(parts) == 1:
        return {q: dict(docs) for q, docs in parts[0].items()}
    if alpha is None:
        raise ValueError(f"system {key!r} is a hybrid: give BM25's weight alpha")
    return convex(parts[0], parts[1], alpha=alpha)


@dataclass(frozen=True)
class ScoredSystem:
    """One system's dev-split metrics and, for a hybrid, BM25's weight chosen on the dev split.

    ``alpha_scores`` holds the dev nDCG@10 of every weight tried (empty for a single run).
    """

    key: str
    dev: dict[str, float]
    alpha: float | None = None
    alpha_scores: dict[float, float] = field(default_factory=dict)
    per_query: dict[str, float] = field(default_factory=dict)
    """Each dev query's nDCG@10 (what the standard error of a difference is computed from)."""

    @property
    def trained(self) -> bool:
        """Whether the system uses the fine-tuned weights."""
        return self.key in TRAINED

    @property
    def label(self) -> str:
        """``"BM25 + base dense (alpha 0.3)"``: the system's name, with its weight for a hybrid."""
        base = LABELS.get(self.key, self.key)
        return base if self.alpha is None else f"{base} (BM25 weight {self.alpha:g})"

    @property
    def ndcg(self) -> float:
        """Dev nDCG@10."""
        return float(self.dev.get(PRIMARY_METRIC, 0.0))

    def run(self, runs: Mapping[str, Run]) -> Run:
        """This system's run on other queries (held-out, a pool), from their component runs."""
        return system_run(self.key, runs, self.alpha)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: key, label, trained, dev metrics, alpha and the dev nDCG@10 of each weight tried."""
        return {
            "key": self.key,
            "label": self.label,
            "trained": self.trained,
            "dev": dict(self.dev),
            "alpha": self.alpha,
            "alpha_dev_nDCG@10": {f"{w:g}": v for w, v in self.alpha_scores.items()},
        }


def score_systems(
    runs: Mapping[str, Run], qrels: Qrels, level: int = 1, *, weight_qrels: Qrels | None = None
) -> list[ScoredSystem]:
    """Every system whose component runs are given, scored on ``qrels``'s queries (a dev split), in :data:`SYSTEMS` order.

    A hybrid's BM25 weight is chosen by :func:`choose_fusion_weight`: the fine-tuned
    hybrid's on ``qrels``, the base hybrid's on ``weight_qrels`` (default ``qrels``),
    which may add the training queries: BM25 and the base encoder never saw their
    labels, and more queries choose a steadier weight than a small dev split does.
    ``runs`` must hold every query of both.
    """
    scored = []
    for key in SYSTEMS:
        if not all(c in runs for c in COMPONENTS[key]):
            continue
        alpha: float | None = None
        by_weight: dict[float, float] = {}
        if len(COMPONENTS[key]) == 2:
            first, second = (runs[c] for c in COMPONENTS[key])
            chooser = weight_qrels if key == HYBRID and weight_qrels is not None else qrels
            alpha, by_weight = choose_fusion_weight(first, second, chooser, level)
        run = system_run(key, runs, alpha)
        dev = ranking_metrics(run, qrels, level)
        scored.append(ScoredSystem(key, dev, alpha, by_weight, _per_query(run, qrels, level)))
    return scored


def _per_query(run: Run, qrels: Qrels, level: int) -> dict[str, float]:
    """Each judged query's nDCG@10 (0 for a query the run lacks), as :func:`ranking_metrics` averages them."""
    from core.metrics import evaluate

    judged = {q: j for q, j in qrels.items() if j}
    values = evaluate(judged, {q: r for q, r in run.items() if q in judged}, [PRIMARY_METRIC], level=level)
    per_query = values[PRIMARY_METRIC]
    return {q: float(per_query.get(q, 0.0)) for q in judged}


def standard_error(better: ScoredSystem, other: ScoredSystem) -> float:
    """The standard error of the mean per-query difference of dev nDCG@10, ``better`` minus ``other``.

    ``sd(d) / sqrt(n)`` over the queries both were scored on (``ddof=1``);
    0.0 without per-query values or with fewer than two queries (the means
    alone decide).

    >>> a = ScoredSystem("tuned-dense", {}, per_query={"q1": 1.0, "q2": 0.5, "q3": 0.5})
    >>> b = ScoredSystem("hybrid", {}, per_query={"q1": 0.5, "q2": 0.5, "q3": 0.5})
    >>> round(standard_error(a, b), 4)
    0.1667
    """
    shared = sorted(better.per_query.keys() & other.per_query.keys())
    if len(shared) < 2:
        return 0.0
    diffs = [better.per_query[q] - other.per_query[q] for q in shared]
    mean = sum(diffs) / len(diffs)
    variance = sum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return float((variance / len(diffs)) ** 0.5)


# --------------------------------------------------------------------------- the choice


@dataclass(frozen=True)
class SystemChoice:
    """What the dev split chose, every candidate's dev metrics, and why.

    Attributes
    ----------
    chosen : ScoredSystem
        The system offered by default.
    systems : tuple of ScoredSystem
        Every candidate, in :data:`SYSTEMS` order.
    baseline : ScoredSystem
        The better of BM25 and the base dense retriever on the dev split (the floor).
    reason : str
        One sentence: whether training helped on the dev split, with the numbers.
    dev_queries : int
        How many judged dev queries the choice was made on.
    standard_error : float or None
        The standard error of the best trained system's per-query gain over
        the best untrained one (:func:`standard_error`); None without a trained system.
    """

    chosen: ScoredSystem
    systems: tuple[ScoredSystem, ...]
    baseline: ScoredSystem
    reason: str
    dev_queries: int
    standard_error: float | None = None
    """Of the best trained system's dev gain over the best untrained one (None: no trained system)."""

    @property
    def improved(self) -> bool:
        """Whether the chosen system is a trained one (training helped on the dev split)."""
        return self.chosen.trained

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, as the model's record and the job's result store it."""
        return {
            "chosen": self.chosen.key,
            "label": self.chosen.label,
            "alpha": self.chosen.alpha,
            "improved": self.improved,
            "reason": self.reason,
            "baseline": self.baseline.key,
            "dev_queries": self.dev_queries,
            "dev_nDCG@10": {s.key: s.ndcg for s in self.systems},
            "standard_error": self.standard_error,
            "systems": [s.as_dict() for s in self.systems],
        }


def choose_system(systems: Sequence[ScoredSystem], dev_queries: int) -> SystemChoice:
    """The best untrained system on the dev split, or the best trained one if it is better by over one standard error.

    Ties go to the earlier system in :data:`SYSTEMS`.  The trained system
    must beat the best untrained one's dev nDCG@10 by more than
    :func:`standard_error` of their per-query differences (the module
    docstring says why); otherwise the reason says that training did not help.

    Raises
    ------
    ValueError
        When BM25 or the base dense system is missing: they are the floor the
        choice must never fall below.

    Examples
    --------
    >>> found = [ScoredSystem("bm25", {"nDCG@10": 0.5}), ScoredSystem("dense", {"nDCG@10": 0.4}),
    ...          ScoredSystem("tuned-dense", {"nDCG@10": 0.45})]
    >>> choice = choose_system(found, dev_queries=20)
    >>> choice.chosen.key, choice.improved
    ('bm25', False)
    >>> choice.reason
    'training did not help on the dev split: keeping BM25 (nDCG@10 0.5000 on 20 dev queries; the best trained system, fine-tuned dense, 0.4500)'
    """
    by_key = {s.key: s for s in systems}
    missing = [k for k in (BM25, DENSE) if k not in by_key]
    if missing:
        raise ValueError(f"the choice needs BM25 and the base dense system among the candidates; missing {missing}")
    ordered = tuple(sorted(by_key.values(), key=lambda s: SYSTEMS.index(s.key) if s.key in SYSTEMS else len(SYSTEMS)))
    rank = {s.key: i for i, s in enumerate(ordered)}

    def best_of(found: Iterable[ScoredSystem]) -> ScoredSystem:
        return max(found, key=lambda s: (s.ndcg, -rank[s.key]))

    untrained = best_of(s for s in ordered if not s.trained)
    baseline = best_of((by_key[BM25], by_key[DENSE]))
    trained = [s for s in ordered if s.trained]
    if not trained:
        reason = f"no trained system was scored: keeping {untrained.label} (nDCG@10 {untrained.ndcg:.4f} on {dev_queries} dev queries)"
        return SystemChoice(untrained, ordered, baseline, reason, dev_queries)
    top = best_of(trained)
    se = standard_error(top, untrained)
    chosen = top if top.ndcg - untrained.ndcg > se else untrained
    return SystemChoice(chosen, ordered, baseline, _reason(top, untrained, se, dev_queries), dev_queries, se)


def _reason(top: ScoredSystem, untrained: ScoredSystem, se: float, dev_queries: int) -> str:
    """The sentence that says whether training helped on the dev split, and by how much."""
    gain = top.ndcg - untrained.ndcg
    where = f"on {dev_queries} dev queries"
    if gain > se:
        return (
            f"training helped on the dev split: {top.label}, nDCG@10 {top.ndcg:.4f} {where}, "
            f"against {untrained.ndcg:.4f} for the best untrained system, {untrained.label} "
            f"(+{gain:.4f}, more than one standard error, {se:.4f})"
        )
    noise = f": +{gain:.4f}, within one standard error ({se:.4f}) of the per-query differences" if gain > 0 else ""
    return (
        f"training did not help on the dev split: keeping {untrained.label} (nDCG@10 {untrained.ndcg:.4f} {where}; "
        f"the best trained system, {top.label}, {top.ndcg:.4f}{noise})"
    )


def choose_default_system(
    runs: Mapping[str, Run], qrels: Qrels, level: int = 1, *, weight_qrels: Qrels | None = None
) -> SystemChoice:
    """:func:`score_systems` on the dev runs then :func:`choose_system`: the default trained system and why.

    Parameters
    ----------
    runs : mapping
        The component runs: ``"bm25"`` and ``"dense"`` (required), ``"tuned"``
        (the fine-tuned encoder's; absent when training failed or was
        skipped), for the dev queries and those of ``weight_qrels``.  Use
        each member's top ``depth`` (100), as the hybrid retriever fuses them.
    qrels : Qrels
        The dev queries' labels: they score every system and choose among them.
    level : int
        Relevance level.
    weight_qrels : Qrels, optional
        The labels that choose the base hybrid's BM25 weight (default ``qrels``):
        the dev and the training queries' (:func:`score_systems`).
    """
    judged = sum(1 for q in qrels if qrels[q])
    if not judged:
        raise ValueError("qrels: no dev query has a label; the default system is chosen on labelled dev queries")
    return choose_system(score_systems(runs, qrels, level, weight_qrels=weight_qrels), judged)


# --------------------------------------------------------------------------- fine-tuning the base bi-encoder


def prefixed(data: LabelledData, query_prefix: str, passage_prefix: str) -> LabelledData:
    """``data`` with every query text prefixed ``query_prefix`` and every passage text ``passage_prefix``."""
    if not query_prefix and not passage_prefix:
        return data
    return LabelledData(
        queries={q: query_prefix + t for q, t in data.queries.items()},
        passages={p: passage_prefix + t for p, t in data.passages.items()},
        qrels=data.qrels,
        candidates=data.candidates,
        level=data.level,
    )


def evaluation_pool(data: LabelledData, runs: Iterable[Run], depth: int = 30) -> LabelledData:
    """``data`` with only the passages its queries can rank: their judged passages, top ``depth`` candidates and runs' hits.

    The trainer's dev evaluation encodes and searches every passage of its
    data at each evaluation.  nDCG@10 is decided by the top 10, and a
    fine-tuned encoder that starts from the base rarely lifts a passage that
    neither BM25 (the candidates) nor the base encoder (``runs``) ranked in
    its top ``depth``: over that pool an evaluation costs a few dozen
    passages per dev query instead of the whole corpus.  When the pool is the
    whole corpus, ``data`` comes back as it is.
    """
    from core.ranking import trec_ranking

    keep: set[str] = set()
    for q in data.queries:
        keep.update(data.candidates.get(q, [])[:depth])
        keep.update(data.qrels.get(q, {}))
    for run in runs:
        for q in data.queries:
            keep.update(trec_ranking(run.get(q, {}))[:depth])
    if len(keep & data.passages.keys()) >= len(data.passages):
        return data
    passages = {p: t for p, t in data.passages.items() if p in keep}
    return LabelledData(data.queries, passages, data.qrels, data.candidates, data.level)


def fine_tune_bi_encoder(
    train: LabelledData,
    dev: LabelledData | None,
    config: TrainConfig,
    *,
    output: str | Path,
    base_model: str | Path,
    temperature: float = 0.05,
    progress: ProgressCallback | None = None,
) -> TrainResult:
    """Fine-tune the base bi-encoder on the labels, keeping its prefixes, pooling and sentence-transformers files.

    :func:`core.training.dual_encoder.train_dual_encoder` (in-batch and
    ``config.negatives`` hard negatives from ``train.candidates``, early
    stopping on ``dev``'s nDCG@10) on texts prefixed as the base folder's
    sentence-transformers files say (:func:`core.retrieval.st_config.read_conventions`),
    with its pooling; then those files are copied into ``output`` so the
    trained folder encodes as the base did (``dense:model=FOLDER``).

    Parameters
    ----------
    train, dev : LabelledData
        Training data (candidates: the hard negatives) and the dev split that
        picks the best evaluation (None: the last weights).  Give ``dev``
        through :func:`evaluation_pool` to keep each evaluation cheap.
    config : TrainConfig
        The trainer's settings (a small learning rate keeps the base's knowledge).
    output : path
        The folder to write.
    base_model : path
        The base encoder's folder (Transformer at its top level).
    temperature : float
        The contrastive loss's temperature.
    progress : callable, optional
        ``progress(step, total)``.

    Raises
    ------
    ValueError
        When the base folder's pooling is neither mean nor CLS, or its
        Transformer module lives in a subfolder (the trained folder would not
        match its ``modules.json``).
    """
    from core.training.dual_encoder import train_dual_encoder

    base = Path(base_model)
    pooling, q, p = _base_conventions(base)
    result = train_dual_encoder(
        prefixed(train, q, p),
        prefixed(dev, q, p) if dev is not None else None,
        config,
        output=output,
        base_model=base,
        pooling=pooling,
        temperature=temperature,
        progress=progress,
    )
    _copy_st_files(base, Path(output))
    result.params["query_prefix"], result.params["passage_prefix"] = q, p
    return result


def _base_conventions(base: Path) -> tuple[Literal["mean", "cls"], str, str]:
    """The base folder's pooling, query prefix and passage prefix, refused when the trainer cannot keep them."""
    from core.retrieval.st_config import read_conventions

    conventions = read_conventions(base)
    pooling = conventions.pooling or "mean"
    if pooling not in ("mean", "cls"):
        raise ValueError(f"base model {base}: pooling {pooling!r} (from {base / 'modules.json'}) cannot be fine-tuned")
    if conventions.model_dir.resolve() != base.resolve():
        raise ValueError(
            f"base model {base}: its Transformer module is in {conventions.model_dir} (modules.json); "
            "fine-tuning needs the model at the folder's top level"
        )
    return ("cls" if pooling == "cls" else "mean"), conventions.query_prefix or "", conventions.passage_prefix or ""


def _copy_st_files(base: Path, output: Path) -> None:
    """The base folder's sentence-transformers files and module folders (pooling, normalisation), into ``output``."""
    for name in _ST_FILES:
        if (base / name).is_file():
            shutil.copy2(base / name, output / name)
    for sub in base.iterdir():
        # the modules after the Transformer (1_Pooling, 2_Normalize) hold only their small configs
        if sub.is_dir() and sub.name[:1].isdigit() and "_" in sub.name:
            shutil.copytree(sub, output / sub.name, dirs_exist_ok=True)
