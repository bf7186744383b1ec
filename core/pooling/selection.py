"""Selecting pooled pairs for annotation: top N by an ensemble, everything, or active selection."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.fusion import WeightsArg, name_runs, resolve_weights
from core.pooling.types import Contribution, Pool, Selection
from core.ranking import trec_ranking
from core.types import Run
from core.validators import positive_int, real_number

# --------------------------------------------------------------------------- selection


def _weighted_terms(
    qid: str, docs: list[str], named: Mapping[str, Run], w: Mapping[str, float]
) -> dict[str, list[float]]:
    """Each document's weighted min-max normalised scores, one per scorer that scored any of ``docs``."""
    terms: dict[str, list[float]] = {doc: [] for doc in docs}
    for name, run in named.items():
        scores = run.get(qid, {})
        present = {doc: float(scores[doc]) for doc in docs if doc in scores}
        if not present or w[name] == 0.0:
            continue
        for doc, s in present.items():
            if not math.isfinite(s):
                raise ValueError(f"scorer {name!r}, query {qid!r}, document {doc!r}: score {s!r} is not finite")
        low, high = min(present.values()), max(present.values())
        for doc, s in present.items():
            norm = 1.0 if high == low else (s - low) / (high - low)
            terms[doc].append(w[name] * norm)
    return terms


def ensemble_scores(pool: Pool, scorers: Mapping[str, Run] | Sequence[Run], *, weights: WeightsArg = None) -> Run:
    r"""Score every pooled document by a weighted mean of min-max normalised scorer scores.

    For query :math:`q` with pooled documents :math:`P_q` and scorers
    :math:`s = 1..m` with weights :math:`w_s`,

    .. math::

        E(d) = \frac{\sum_s w_s\, \hat s(d)}{\sum_s w_s}, \qquad
        \hat s(d) = \begin{cases}
            \dfrac{s(d) - \min_{P_q \cap s} s}{\max_{P_q \cap s} s - \min_{P_q \cap s} s}
              & d \in s \\[1ex]
            0 & d \notin s
        \end{cases}

    The min and max are over the pooled documents the scorer scored for
    that query (documents outside the pool do not stretch the scale); when
    they are equal every such document gets 1.0 (as in
    :func:`core.fusion.min_max_normalise`).  A pooled document a scorer did
    not score gets 0 from it, the same as that scorer's worst pooled
    document.

    Parameters
    ----------
    pool : Pool
        The pool to re-rank.
    scorers : Mapping[str, Run] or Sequence[Run]
        One or more scorers (a re-ranker's scores, or the contributing runs
        themselves).  Pass a single run as ``[run]``.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per scorer (default: plain mean).

    Returns
    -------
    Run
        ``{qid: {docid: E(d)}}`` for every pooled pair, each query in trec
        order of :math:`E`.
    """
    named = name_runs(scorers)
    w = resolve_weights(list(named), weights)
    total_w = math.fsum(w.values())
    result: Run = {}
    for qid, entries in pool.items():
        terms = _weighted_terms(qid, list(entries), named, w)
        ens = {doc: math.fsum(parts) / total_w for doc, parts in terms.items()}
        result[qid] = {doc: ens[doc] for doc in trec_ranking(ens)}
    return result


def select_top(
    pool: Pool, scorers: Mapping[str, Run] | Sequence[Run], n: int, *, weights: WeightsArg = None
) -> Selection:
    """Keep the top ``n`` pooled documents per query by an ensemble of scorers.

    DuReader-retrieval pooled the top 50 of each retrieval system and had
    the top 5 after re-ranking annotated; this is that second step.  The
    ensemble score is :func:`ensemble_scores` (weighted mean of scores
    min-max normalised over the pool; a pooled document missing from a
    scorer gets 0 from it).  Ties are broken in trec order (doc id
    descending).

    Parameters
    ----------
    pool : Pool
        The pool.
    scorers : Mapping[str, Run] or Sequence[Run]
        One or more scorers; a single run as ``[run]``.
    n : int
        Documents kept per query.
    weights : Mapping[str, float] or Sequence[float], optional
        One non-negative weight per scorer.

    Returns
    -------
    Selection
        ``{qid: [docid, ...]}``, best first; every pool query appears
        (with fewer than ``n`` documents when its pool is smaller).
    """
    positive_int(n, "n")
    ens = ensemble_scores(pool, scorers, weights=weights)
    return {qid: list(docs)[:n] for qid, docs in ens.items()}


def select_all(pool: Pool) -> Selection:
    """Select every pooled document (T2Ranking's test split: annotate everything).

    Documents are ordered by their best (smallest) contributed rank, then
    by the number of runs that contributed them (more first), then by doc
    id descending; a document without contributions comes last.  The order
    matters for :func:`dedupe_pool`, which keeps the first of near-duplicates.

    Returns
    -------
    Selection
        ``{qid: [docid, ...]}`` for every pool query.
    """

    def key(item: tuple[str, list[Contribution]]) -> tuple[float, int]:
        contributions = item[1]
        best = min((c.rank for c in contributions), default=math.inf)
        return (best, -len({c.run for c in contributions}))

    selection: Selection = {}
    for qid, entries in pool.items():
        by_id = sorted(entries.items(), key=lambda item: item[0], reverse=True)  # ties: doc id descending
        selection[qid] = [doc for doc, _ in sorted(by_id, key=key)]  # stable sort keeps that tie order
    return selection


@dataclass(frozen=True)
class ActiveReport:
    """What :func:`select_uncertain` kept and what it saved the annotators.

    ``confident_relevant`` / ``confident_irrelevant`` are the skipped pairs
    (``{qid: [docid, ...]}``, most probable first) the model was sure about:
    probability above ``high`` / below ``low``.
    """

    low: float
    high: float
    kept: int
    confident_relevant: Selection
    confident_irrelevant: Selection

    @property
    def saved(self) -> int:
        """Pairs not sent to annotation: the confident ones of both kinds."""
        return sum(map(len, self.confident_relevant.values())) + sum(map(len, self.confident_irrelevant.values()))

    @property
    def total(self) -> int:
        """Every pooled pair considered: kept + saved."""
        return self.kept + self.saved

    def as_dict(self) -> dict[str, object]:
        """Counts as JSON-ready data (a job's result): kept, confident_relevant, confident_irrelevant, saved, pairs, band."""
        return {
            "kept": self.kept,
            "confident_relevant": sum(map(len, self.confident_relevant.values())),
            "confident_irrelevant": sum(map(len, self.confident_irrelevant.values())),
            "saved": self.saved,
            "pairs": self.total,
            "band": [self.low, self.high],
        }


def select_uncertain(pool: Pool, probabilities: Run, low: float, high: float) -> tuple[Selection, ActiveReport]:
    r"""Active selection (T2Ranking §4.4): annotate only the pairs the model is unsure about.

    T2Ranking scored its unlabelled pairs with a cross-encoder trained on
    the labels collected so far and spent annotation on the pairs it could
    not decide.  A pooled pair with probability :math:`p` is

    - kept (sent to annotation) when :math:`low \le p \le high` (both
      ends inclusive: a pair exactly on the boundary is still uncertain);
    - skipped as confidently relevant when :math:`p > high`;
    - skipped as confidently non-relevant when :math:`p < low`.

    A pooled pair without a probability (the model never saw it, e.g. its
    passage is missing from the store) is kept: nothing says it is settled.

    Parameters
    ----------
    pool : Pool
        The pool.
    probabilities : Run
        ``{qid: {docid: p}}``, :math:`p \in [0, 1]` (a cross-encoder's
        sigmoid scores of the pooled pairs).
    low, high : float
        The uncertainty band, ``0 <= low < high <= 1``.

    Returns
    -------
    (Selection, ActiveReport)
        Every pool query with its kept documents, most probable first
        (trec order of :math:`p`; unscored pairs after them in
        :func:`select_all` order), and the report.
    """
    low, high = real_number(low, "low"), real_number(high, "high")
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"the uncertainty band must satisfy 0 <= low < high <= 1, got low={low!r}, high={high!r}")
    fallback = select_all(pool)
    selection: Selection = {}
    relevant: Selection = {}
    irrelevant: Selection = {}
    kept = 0
    for qid, entries in pool.items():
        scores = probabilities.get(qid, {})
        scored = {}
        for doc in entries:
            if doc in scores:
                p = float(scores[doc])
                if not (math.isfinite(p) and 0.0 <= p <= 1.0):
                    raise ValueError(f"query {qid!r}, document {doc!r}: probability {p!r} is not in [0, 1]")
                scored[doc] = p
        order = trec_ranking(scored)
        selection[qid] = [d for d in order if low <= scored[d] <= high] + [d for d in fallback[qid] if d not in scored]
        relevant[qid] = [d for d in order if scored[d] > high]
        irrelevant[qid] = [d for d in order if scored[d] < low]
        kept += len(selection[qid])
    return selection, ActiveReport(low, high, kept, relevant, irrelevant)
