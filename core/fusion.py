"""Rank fusion of runs: RRF, CombSUM, CombMNZ, their weighted variants, and convex combination.

Every function takes several :data:`core.types.Run` objects (``{qid: {docid:
score}}``), either as a mapping ``{run_name: run}`` or as a sequence, and
returns one fused :data:`~core.types.Run`.

Ranks are always taken in trec_eval's order (:mod:`core.ranking`): score
descending, compared as 32-bit floats, ties broken by document id descending
(code-point order, which equals UTF-8 byte order).  A run's own rank column,
if it ever had one, plays no part; two documents with equal scores therefore
get distinct, deterministic ranks.  :func:`trec_ranking` and
:func:`rank_positions` are re-exported from :mod:`core.ranking`.

Fused scores are sums computed with :func:`math.fsum`, so they do not depend
on the order in which the runs are given, and each query of the result is
stored in trec order (best first) for convenience.  A query retrieved by at
least one run appears in the result; a run that lacks the query contributes
nothing to it.  Weighted variants take one non-negative weight per run; a
run weighted 0 takes no part at all (its documents are not added).

References
----------
.. [1] G. V. Cormack, C. L. A. Clarke and S. Büttcher, "Reciprocal rank fusion
   outperforms Condorcet and individual rank learning methods", SIGIR 2009.
.. [2] E. A. Fox and J. A. Shaw, "Combination of multiple searches", TREC-2,
   1994 (CombSUM, CombMNZ).
.. [3] J. H. Lee, "Analyses of multiple evidence combination", SIGIR 1997
   (min-max normalisation before CombSUM / CombMNZ).
.. [4] S. Bruch, S. Gai and A. Ingber, "An analysis of fusion functions for
   hybrid retrieval", ACM TOIS 42(1), 2023 (convex combination of min-max
   normalised lexical and semantic scores).
.. [5] K. Wang, N. Reimers and I. Gurevych, "DAPR: A Benchmark on
   Document-Aware Passage Retrieval", ACL 2024 (BM25 + neural hybrids fused
   by convex combination or RRF).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from core.ranking import rank_positions, trec_ranking
from core.types import Run
from core.validators import optional_positive_int, real_number

__all__ = [
    "FUSION_METHODS",
    "FusionMethod",
    "RunsArg",
    "WeightsArg",
    "combmnz",
    "check_alpha",
    "combsum",
    "convex",
    "fuse",
    "min_max_normalise",
    "name_runs",
    "rank_positions",
    "resolve_weights",
    "rrf",
    "trec_ranking",
]

FusionMethod = Literal["rrf", "combsum", "combmnz", "convex"]
FUSION_METHODS: tuple[str, ...] = ("rrf", "combsum", "combmnz", "convex")
"""Every method :func:`fuse` knows; ``"convex"`` fuses exactly two runs."""

RunsArg = Mapping[str, Run] | Sequence[Run]
"""Runs to fuse: ``{name: run}`` or a sequence (named ``"0"``, ``"1"``, ... by position)."""

WeightsArg = Mapping[str, float] | Sequence[float] | None
"""One weight per run: keyed like the runs, or a sequence in the runs' order; ``None`` = all 1."""

DEFAULT_RRF_K = 60
"""Cormack et al.'s constant ``k`` in ``1 / (k + rank)``."""


def name_runs(runs: RunsArg) -> dict[str, Run]:
    """``runs`` as an ordered ``{name: run}`` dict.

    A sequence is named by position (``"0"``, ``"1"``, ...).  A single
    :data:`Run` passed by mistake (a mapping whose values are ``{docid:
    score}``) is rejected with a clear message rather than misread.

    Raises
    ------
    TypeError
        When ``runs`` is neither a mapping of runs nor a sequence of runs.
    ValueError
        When no run is given.
    """
    if isinstance(runs, Mapping):
        named = {str(name): run for name, run in runs.items()}
    elif isinstance(runs, Sequence) and not isinstance(runs, (str, bytes)):
        named = {str(i): run for i, run in enumerate(runs)}
    else:
        raise TypeError(f"runs must be a mapping {{name: Run}} or a sequence of Runs, got {type(runs).__name__}")
    if not named:
        raise ValueError("no runs given")
    for name, run in named.items():
        if not isinstance(run, Mapping):
            raise TypeError(f"run {name!r} must be a Run {{qid: {{docid: score}}}}, got {type(run).__name__}")
        for qid, docs in run.items():
            if not isinstance(docs, Mapping):
                raise TypeError(
                    f"run {name!r}, query {qid!r}: expected {{docid: score}}, got {type(docs).__name__} "
                    "(pass several runs as {name: run} or [run, ...], a single run as [run])"
                )
            break
    return named


def resolve_weights(names: Sequence[str], weights: WeightsArg) -> dict[str, float]:
    """``{name: weight}`` for the named runs: all 1.0 when ``weights`` is ``None``.

    Raises
    ------
    ValueError
        When the weights do not match the runs one to one, a weight is
        negative, NaN or infinite, or all weights are 0.
    """
    if weights is None:
        return {name: 1.0 for name in names}
    if isinstance(weights, Mapping):
        given = {str(k): v for k, v in weights.items()}
        unknown = sorted(set(given) - set(names))
        missing = [n for n in names if n not in given]
        if unknown or missing:
            raise ValueError(f"weights must name exactly the runs {list(names)}; unknown {unknown}, missing {missing}")
        values = {n: given[n] for n in names}
    else:
        seq = list(weights)
        if len(seq) != len(names):
            raise ValueError(f"{len(seq)} weights given for {len(names)} runs")
        values = dict(zip(names, seq, strict=True))
    result: dict[str, float] = {}
    for name, w in values.items():
        result[name] = real_number(w, f"weight of run {name!r}", low=0)
    if not any(result.values()):
        raise ValueError("at least one weight must be positive")
    return result


def _queries(runs: Mapping[str, Run]) -> list[str]:
    seen: dict[str, None] = {}
    for run in runs.values():
        for qid in run:
            seen.setdefault(qid, None)
    return list(seen)


def _truncate(scores: Mapping[str, float], depth: int | None) -> dict[str, float]:
    if depth is None:
        return dict(scores)
    return {d: scores[d] for d in trec_ranking(scores)[:depth]}


def _in_trec_order(terms: dict[str, list[float]]) -> dict[str, float]:
    fused = {doc: math.fsum(parts) for doc, parts in terms.items()}
    return {doc: fused[doc] for doc in trec_ranking(fused)}


def min_max_normalise(run: Run) -> Run:
    """Min-max normalise the scores of every query of a run into ``[0, 1]``.

    For each query, ``s' = (s - min) / (max - min)`` over that query's
    documents.  A query whose documents all have the same score (including
    a query with a single document) normalises to ``1.0`` for every
    document: each is as good as the best the run offers, and a run that
    retrieved a document should never count less than one that did not.
    A query with no documents stays empty.

    Parameters
    ----------
    run : Run
        ``{qid: {docid: score}}``; scores must be finite.

    Returns
    -------
    Run
        A new run with the same documents and normalised scores.

    Raises
    ------
    ValueError
        On a score that is NaN or infinite.
    """
    result: Run = {}
    for qid, docs in run.items():
        if not docs:
            result[qid] = {}
            continue
        values = list(docs.values())
        for doc, s in docs.items():
            if not math.isfinite(s):
                raise ValueError(f"query {qid!r}, document {doc!r}: score {s!r} is not finite")
        low, high = min(values), max(values)
        if high == low:
            result[qid] = {doc: 1.0 for doc in docs}
        else:
            span = high - low
            result[qid] = {doc: (s - low) / span for doc, s in docs.items()}
    return result


def rrf(runs: RunsArg, *, k: float = DEFAULT_RRF_K, weights: WeightsArg = None, depth: int | None = None) -> Run:
    r"""Reciprocal rank fusion (Cormack, Clarke & Büttcher 2009).

    .. math::

        \mathrm{RRF}(d) = \sum_{r \,:\, d \in r} \frac{w_r}{k + \mathrm{rank}_r(d)}

    where :math:`\mathrm{rank}_r(d)` is the 1-based trec-order rank of
    ``d`` in run ``r`` for the query, and :math:`w_r` is 1 unless weights
    are given (weighted RRF).  Scores are ignored except to rank.

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The runs to fuse.
    k : float
        The RRF constant (default 60, as in the paper); must be >= 0.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per run.
    depth : int, optional
        Only each run's top ``depth`` documents take part.

    Returns
    -------
    Run
        The fused run, each query in trec order.
    """
    named = name_runs(runs)
    w = resolve_weights(list(named), weights)
    optional_positive_int(depth, "depth")
    real_number(k, "k", low=0)
    fused: Run = {}
    for qid in _queries(named):
        terms: dict[str, list[float]] = {}
        for name, run in named.items():
            if w[name] == 0.0:
                continue
            for doc, rank in rank_positions(run.get(qid, {}), depth).items():
                terms.setdefault(doc, []).append(w[name] / (k + rank))
        fused[qid] = _in_trec_order(terms)
    return fused


def _comb(runs: RunsArg, weights: WeightsArg, depth: int | None, mnz: bool) -> Run:
    named = name_runs(runs)
    w = resolve_weights(list(named), weights)
    optional_positive_int(depth, "depth")
    normalised = {
        name: min_max_normalise({qid: _truncate(docs, depth) for qid, docs in run.items()})
        for name, run in named.items()
        if w[name] > 0.0
    }
    fused: Run = {}
    for qid in _queries(named):
        terms: dict[str, list[float]] = {}
        hits: dict[str, int] = {}
        for name, run in normalised.items():
            for doc, s in run.get(qid, {}).items():
                terms.setdefault(doc, []).append(w[name] * s)
                hits[doc] = hits.get(doc, 0) + 1
        if mnz:
            terms = {doc: [hits.get(doc, 0) * math.fsum(parts)] for doc, parts in terms.items()}
        fused[qid] = _in_trec_order(terms)
    return fused


def combsum(runs: RunsArg, *, weights: WeightsArg = None, depth: int | None = None) -> Run:
    r"""CombSUM over min-max normalised scores (Fox & Shaw 1994; Lee 1997).

    .. math::

        \mathrm{CombSUM}(d) = \sum_{r \,:\, d \in r} w_r \, \hat s_r(d),
        \qquad \hat s_r(d) = \frac{s_r(d) - \min_r}{\max_r - \min_r}

    with min and max taken per run and per query (see
    :func:`min_max_normalise`: a query whose scores are all equal
    normalises to 1.0).  A run that did not retrieve ``d`` adds nothing.

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The runs to fuse.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per run (weighted CombSUM, a linear
        combination); default all 1.
    depth : int, optional
        Only each run's top ``depth`` documents take part (normalisation
        is then over those).

    Returns
    -------
    Run
        The fused run, each query in trec order.
    """
    return _comb(runs, weights, depth, mnz=False)


def combmnz(runs: RunsArg, *, weights: WeightsArg = None, depth: int | None = None) -> Run:
    r"""CombMNZ over min-max normalised scores (Fox & Shaw 1994; Lee 1997).

    .. math::

        \mathrm{CombMNZ}(d) = |\{r : d \in r,\ w_r > 0\}| \cdot \mathrm{CombSUM}(d)

    i.e. CombSUM (weighted when weights are given) multiplied by the number
    of runs that retrieved ``d``.  Note that the document a run ranks last
    normalises to 0 and still counts in the multiplier.

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The runs to fuse.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per run; a run weighted 0 is ignored
        (it neither adds score nor counts in the multiplier).
    depth : int, optional
        Only each run's top ``depth`` documents take part.

    Returns
    -------
    Run
        The fused run, each query in trec order.
    """
    return _comb(runs, weights, depth, mnz=True)


def check_alpha(alpha: float) -> float:
    """``alpha`` as a float, checked to be a finite number in ``[0, 1]``.

    Raises
    ------
    ValueError
        Otherwise (booleans and NaN included).
    """
    return real_number(alpha, "alpha", low=0, high=1)


def convex(run_a: Run, run_b: Run, alpha: float = 0.5, *, depth: int | None = None) -> Run:
    r"""Convex combination of two runs' min-max normalised scores (Bruch et al. 2023; DAPR).

    .. math::

        \mathrm{CC}(d) = \alpha \, \hat s_a(d) + (1 - \alpha) \, \hat s_b(d),
        \qquad \hat s_r(d) = \frac{s_r(d) - \min_r}{\max_r - \min_r}

    with min and max taken per run and per query (see
    :func:`min_max_normalise`: a query whose scores are all equal
    normalises to 1.0).  A document missing from one run gets 0 from it.
    This is :func:`combsum` with the weights ``(alpha, 1 - alpha)``, so a
    run weighted 0 (``alpha`` of 0 or 1) takes no part at all: its
    documents are not added.

    Parameters
    ----------
    run_a, run_b : Run
        The two runs; ``alpha`` weights ``run_a``.
    alpha : float
        In ``[0, 1]`` (default 0.5).
    depth : int, optional
        Only each run's top ``depth`` documents take part (normalisation is
        then over those).

    Returns
    -------
    Run
        The fused run, each query in trec order.

    Raises
    ------
    ValueError
        When ``alpha`` is not in ``[0, 1]``.

    Examples
    --------
    >>> convex({"q": {"a": 4.0, "b": 2.0}}, {"q": {"b": 0.9, "c": 0.1}}, alpha=0.25)
    {'q': {'b': 0.75, 'a': 0.25, 'c': 0.0}}
    """
    a = check_alpha(alpha)
    return _comb({"a": run_a, "b": run_b}, {"a": a, "b": 1.0 - a}, depth, mnz=False)


def fuse(
    runs: RunsArg,
    method: FusionMethod = "rrf",
    *,
    weights: WeightsArg = None,
    k: float = DEFAULT_RRF_K,
    depth: int | None = None,
    alpha: float = 0.5,
) -> Run:
    """Fuse runs with the named method (``"rrf"``, ``"combsum"``, ``"combmnz"`` or ``"convex"``).

    Parameters
    ----------
    runs : Mapping[str, Run] or Sequence[Run]
        The runs to fuse; exactly two for ``"convex"`` (``alpha`` weights the first).
    method : {"rrf", "combsum", "combmnz", "convex"}
        See :func:`rrf`, :func:`combsum`, :func:`combmnz`, :func:`convex`.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per run (not with ``"convex"``, which uses ``alpha``).
    k : float
        RRF constant (ignored by the other methods).
    depth : int, optional
        Only each run's top ``depth`` documents take part.
    alpha : float
        The weight of the first run for ``"convex"`` (ignored by the other methods).

    Returns
    -------
    Run
        The fused run, each query in trec order.

    Raises
    ------
    ValueError
        On an unknown method, or ``"convex"`` with other than two runs or with weights.
    """
    if method == "rrf":
        return rrf(runs, k=k, weights=weights, depth=depth)
    if method == "combsum":
        return combsum(runs, weights=weights, depth=depth)
    if method == "combmnz":
        return combmnz(runs, weights=weights, depth=depth)
    if method == "convex":
        named = name_runs(runs)
        if len(named) != 2:
            raise ValueError(f"convex fusion takes exactly two runs, got {len(named)}")
        if weights is not None:
            raise ValueError("convex fusion is weighted by alpha, not by weights")
        run_a, run_b = named.values()
        return convex(run_a, run_b, alpha, depth=depth)
    raise ValueError(f"unknown fusion method {method!r}; expected one of {', '.join(FUSION_METHODS)}")
