"""Breakdowns: one query's ranking, metrics per query group and per error category, relevant positions.

Metrics per query group (split, type, domain, language) and per error
category, where a query may carry several categories, and the position of
relevant passages within their documents follow Wang et al., "DAPR: A
Benchmark on Document-Aware Passage Retrieval", ACL 2024 (Figure 3, Table 1).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from core.analysis._common import _ALL, _values
from core.lang import detect_language
from core.limits import CUTOFF_MAX
from core.metrics import evaluate
from core.ranking import trec_ranking
from core.types import Passage, Qrels, Query, Run
from core.validators import integer, is_integer, positive_int

__all__ = [
    "UNGROUPED",
    "UNTAGGED",
    "GROUP_ATTRIBUTES",
    "CategoryMean",
    "RankedDoc",
    "RelevantPositions",
    "failing_queries",
    "metrics_by_category",
    "metrics_by_group",
    "missed_relevant",
    "query_groups",
    "ranked_with_labels",
    "relevant_positions",
]

UNTAGGED = "untagged"
"""Category of the queries that carry no error-category tag."""

UNGROUPED = "ungrouped"
"""Group of the evaluated queries that ``groups`` does not mention."""

GROUP_ATTRIBUTES = ("split", "type", "domain", "language")
"""The :class:`~core.types.Query` attributes :func:`query_groups` groups by."""


class RankedDoc(NamedTuple):
    """A passage of one query's ranking: 1-based rank and score in the run (``None`` when the
    run did not retrieve it) and its grade in the qrels (``None`` when unjudged)."""

    rank: int | None
    doc_id: str
    score: float | None
    grade: int | None


class CategoryMean(NamedTuple):
    """Mean of a measure over the queries of one category, and their number."""

    mean: float
    n: int


@dataclass(frozen=True)
class RelevantPositions:
    """Where relevant passages sit in their documents (see :func:`relevant_positions`).

    Attributes
    ----------
    n : int
        Relevant (query, passage) pairs whose passage has a document and a
        position.
    counts : dict[int, int]
        0-based position -> number of relevant pairs, by position.
    share_first : float
        ``counts[0] / n`` (NaN when ``n == 0``).
    mean_position, median_position : float
        Of the 0-based positions (NaN when ``n == 0``).
    relative : list[float]
        ``position / (L - 1)`` per relevant pair in a document of ``L >= 2``
        passages, in qrels order.
    mean_relative : float
        Mean of ``relative`` (NaN when empty).
    relative_histogram : list[int]
        Counts of ``relative`` in equal-width bins over ``[0, 1]`` (the last
        bin closed).
    n_single : int
        Pairs in single-passage documents (position 0, no relative position).
    n_missing : int
        Relevant pairs whose passage is not among the passages given.
    n_unpositioned : int
        Relevant pairs whose passage has no ``doc_id`` or no ``position``.
    """

    n: int
    counts: dict[int, int]
    share_first: float
    mean_position: float
    median_position: float
    relative: list[float] = field(repr=False)
    mean_relative: float
    relative_histogram: list[int]
    n_single: int
    n_missing: int
    n_unpositioned: int


# ---------------------------------------------------------------------------- drill-down


def ranked_with_labels(
    scores: Mapping[str, float], judgments: Mapping[str, int], k: int | None = None
) -> list[RankedDoc]:
    """One query's ranking as the measures see it, with each passage's grade.

    The order is :mod:`core.metrics`' (trec_eval's): score descending, scores
    compared as 32-bit floats, ties broken by document id descending, so rank
    ``i`` here is the rank ``i`` that ``MRR@10`` or ``P@10`` count.

    Parameters
    ----------
    scores : mapping
        ``{doc id: score}`` of one query in a run (``run.get(qid, {})``).
    judgments : mapping
        ``{doc id: grade}`` of the same query (``qrels.get(qid, {})``).
    k : int or None, default None
        Keep the top ``k`` passages; ``None`` keeps them all.

    Returns
    -------
    list of RankedDoc
        ``(rank, doc_id, score, grade)`` in rank order; ``grade`` is ``None``
        for an unjudged passage.
    """
    if k is not None:
        k = positive_int(k, "k")
    ranked = trec_ranking(scores)[:k]
    return [RankedDoc(i, d, float(scores[d]), judgments.get(d)) for i, d in enumerate(ranked, 1)]


def missed_relevant(
    scores: Mapping[str, float], judgments: Mapping[str, int], k: int, level: int = 1
) -> list[RankedDoc]:
    """The relevant passages (``grade >= level``) of one query that a run left out of its top ``k``.

    Parameters
    ----------
    scores, judgments : mapping
        As for :func:`ranked_with_labels`.
    k : int
        Depth of the top that was shown.
    level : int, default 1
        Relevance level.

    Returns
    -------
    list of RankedDoc
        ``(rank, doc_id, score, grade)`` where ``rank``/``score`` are the
        passage's place in the whole run (beyond ``k``) or ``None`` when the
        run did not retrieve it; sorted by grade descending, then retrieved
        before unretrieved by rank, then doc id.
    """
    k = positive_int(k, "k")
    level = integer(level, "level")
    ranks = {d: i for i, d in enumerate(trec_ranking(scores), 1)}
    missed = [
        RankedDoc(ranks.get(d), d, float(scores[d]) if d in scores else None, g)
        for d, g in judgments.items()
        if g >= level and ranks.get(d, k + 1) > k
    ]
    # every passage here is judged, so ``grade or 0`` is its grade
    missed.sort(key=lambda r: (-(r.grade or 0), r.rank is None, r.rank or 0, r.doc_id))
    return missed


# ---------------------------------------------------------------------------- breakdowns


def failing_queries(qrels: Qrels, run: Run, *, k: int = 5, level: int = 2, answerable_only: bool = False) -> list[str]:
    """Judged queries whose top ``k`` in ``run`` holds no passage graded ``>= level``.

    The queries DuReader-retrieval's error analysis samples from (Qiu et al.,
    EMNLP 2022, Section 5).  With ``answerable_only`` a query without any
    relevant judgment (which no run can answer, so it says nothing about this
    run's errors) is left out.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {docid: grade}}``; every qid in it counts as judged.
    run : Run
        ``{qid: {docid: score}}``, ranked in trec_eval order (score
        descending, ties by doc id descending).
    k : int, optional
        Cut-off (default 5, as in DuReader-retrieval's error analysis).
    level : int, optional
        Minimum grade of a relevant passage, ``1..2**31-1`` (default 2;
        :func:`db.error_analysis.sample_error_pairs` defaults to the
        collection's level).

    Returns
    -------
    list of str
        Query ids, sorted.  A judged query missing from the run fails (its
        top ``k`` is empty), as trec_eval scores it 0.

    Examples
    --------
    >>> failing_queries({"q1": {"d1": 2}, "q2": {"d2": 2}}, {"q1": {"d1": 0.9}, "q2": {"d1": 0.9}}, k=1)
    ['q2']
    """
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    # bool is an int: True would otherwise pass as level 1 (same check as db.queries.check_relevance_level)
    if not is_integer(level) or not 1 <= level <= CUTOFF_MAX:
        raise ValueError(f"level must be an integer >= 1 (at most {CUTOFF_MAX}), got {level!r}")
    level = int(level)
    failing = []
    for qid, judged in qrels.items():
        if answerable_only and not any(grade >= level for grade in judged.values()):
            continue
        top = trec_ranking(run.get(qid, {}))[:k]
        if not any(judged.get(doc, 0) >= level for doc in top):
            failing.append(qid)
    return sorted(failing)


def query_groups(queries: Iterable[Query], attribute: str, unknown: str = "unknown") -> dict[str, str]:
    """``{qid: group}`` of the queries by one attribute, the ``groups`` of :func:`metrics_by_group`.

    Parameters
    ----------
    queries : iterable of Query
        The collection's queries.
    attribute : str
        One of :data:`GROUP_ATTRIBUTES`.  A query without a language gets
        the one :func:`core.lang.detect_language` reads from its text.
    unknown : str, default "unknown"
        Group of the queries without a value for ``attribute``.

    Examples
    --------
    >>> query_groups([Query("q1", "a", domain="law"), Query("q2", "b")], "domain")
    {'q1': 'law', 'q2': 'unknown'}
    >>> query_groups([Query("q1", "糖尿病的症状"), Query("q2", "symptoms of diabetes")], "language")
    {'q1': 'zh', 'q2': 'en'}
    """
    if attribute not in GROUP_ATTRIBUTES:
        raise ValueError(f"attribute must be one of {', '.join(GROUP_ATTRIBUTES)}, got {attribute!r}")
    groups = {}
    for q in queries:
        value = getattr(q, attribute)
        if attribute == "language" and not value:
            value = detect_language(q.text)
        groups[q.id] = value or unknown
    return groups


def metrics_by_group(
    qrels: Qrels,
    run: Run,
    measures: Sequence[str],
    groups: Mapping[str, str],
    level: int = 1,
    *,
    intersection: bool = False,
) -> dict[str, dict[str, float]]:
    """Mean of each measure over the evaluated queries of each group.

    One :func:`core.metrics.evaluate` call gives the per-query values; a
    group's mean is ``(1/|G|) sum_{q in G} m(q)`` over its evaluated queries.
    Groups are any query attribute: split, type, domain, language.

    Parameters
    ----------
    qrels, run, measures, level, intersection
        As for :func:`core.metrics.evaluate`.
    groups : mapping
        ``{qid: group name}``.  Evaluated queries it does not mention go to
        :data:`UNGROUPED`; entries for queries that were not evaluated are
        ignored.

    Returns
    -------
    dict
        ``{group: {"n": number of queries, measure: mean, ...}}``, groups
        sorted by name with :data:`UNGROUPED` last; only groups with at least
        one evaluated query appear.  ``pandas.DataFrame.from_dict(result,
        orient="index")`` gives the table.

    Raises
    ------
    TypeError
        When a group name is not a str.
    """
    for qid, g in groups.items():
        if not isinstance(g, str):
            raise TypeError(f"query {qid!r}: group must be a str, got {type(g).__name__}")
    results = evaluate(qrels, run, measures, level=level, intersection=intersection)
    if not results:
        return {}
    first = next(iter(results.values()))
    members: dict[str, list[str]] = {}
    for qid in first:
        if qid != _ALL:
            members.setdefault(groups.get(qid, UNGROUPED), []).append(qid)
    order = sorted(g for g in members if g != UNGROUPED) + ([UNGROUPED] if UNGROUPED in members else [])
    out: dict[str, dict[str, float]] = {}
    for g in order:
        qids = members[g]
        row: dict[str, float] = {"n": len(qids)}
        for key, per in results.items():
            row[key] = math.fsum(per[q] for q in qids) / len(qids)
        out[g] = row
    return out


def metrics_by_category(
    per_query_values: Mapping[str, float],
    categories: Mapping[str, Iterable[str]],
) -> dict[str, CategoryMean]:
    """Mean of a per-query measure per error category (DAPR, Figure 3).

    A query tagged with several categories counts in each of them, so the
    categories overlap and their sizes can sum to more than the number of
    queries.  Queries with no tag (absent from ``categories`` or with an empty
    set) are counted under :data:`UNTAGGED`.

    Parameters
    ----------
    per_query_values : mapping
        ``{qid: value}``, e.g. ``evaluate(...)["nDCG@10"]`` (``"all"`` is
        ignored).
    categories : mapping
        ``{qid: set of category names}``; entries for queries without a value
        are ignored.

    Returns
    -------
    dict
        ``{category: CategoryMean(mean, n)}``, categories sorted by name with
        :data:`UNTAGGED` last.

    Raises
    ------
    TypeError
        When a tag set is a bare str or holds non-str tags.
    """
    values = _values(per_query_values)
    buckets: dict[str, list[float]] = {}
    for qid, v in values.items():
        tags = categories.get(qid, ())
        if isinstance(tags, str):
            raise TypeError(f"query {qid!r}: categories must be a set of str, got the str {tags!r}")
        tags = set(tags)
        for t in tags:
            if not isinstance(t, str):
                raise TypeError(f"query {qid!r}: category must be a str, got {type(t).__name__}")
        for t in tags or (UNTAGGED,):
            buckets.setdefault(t, []).append(v)
    order = sorted(c for c in buckets if c != UNTAGGED) + ([UNTAGGED] if UNTAGGED in buckets else [])
    return {c: CategoryMean(math.fsum(buckets[c]) / len(buckets[c]), len(buckets[c])) for c in order}


# ---------------------------------------------------------------------------- positions


def relevant_positions(
    qrels: Qrels, passages: Iterable[Passage], level: int = 1, *, bins: int = 10
) -> RelevantPositions:
    """Position of the relevant passages within their documents (DAPR, Table 1).

    Every relevant (query, passage) pair, ``grade >= level``, counts once.
    A document's length ``L`` is one more than the largest ``position`` among
    its passages given here; the relative position of a passage at 0-based
    position ``p`` is ``p / (L - 1)`` (0 = first passage, 1 = last), undefined
    for single-passage documents, which are counted apart (``n_single``) but
    still enter ``counts``.

    Parameters
    ----------
    qrels : Qrels
        ``{qid: {passage id: grade}}``.
    passages : iterable of Passage
        The corpus, read once; only passages with ``doc_id`` and ``position``
        count towards document lengths.
    level : int, default 1
        Relevance level.
    bins : int, default 10
        Bins of ``relative_histogram`` over ``[0, 1]``.

    Returns
    -------
    RelevantPositions

    Raises
    ------
    ValueError
        For a negative position, a passage id given twice with different
        structure, or a bad ``level``/``bins``.
    """
    level = integer(level, "level")
    bins = positive_int(bins, "bins")
    relevant = {pid for docs in qrels.values() for pid, g in docs.items() if g >= level}
    doc_last, where = _locate(passages, relevant)
    positions, relative, n_single, n_missing, n_unpositioned = _placed(qrels, level, doc_last, where)
    n = len(positions)
    counts = dict(sorted(Counter(positions).items()))
    hist, _ = np.histogram(np.asarray(relative, dtype=np.float64), bins=bins, range=(0.0, 1.0))
    return RelevantPositions(
        n=n,
        counts=counts,
        share_first=counts.get(0, 0) / n if n else math.nan,
        mean_position=float(np.mean(positions)) if n else math.nan,
        median_position=float(np.median(positions)) if n else math.nan,
        relative=relative,
        mean_relative=math.fsum(relative) / len(relative) if relative else math.nan,
        relative_histogram=[int(x) for x in hist],
        n_single=n_single,
        n_missing=n_missing,
        n_unpositioned=n_unpositioned,
    )


def _locate(
    passages: Iterable[Passage], relevant: set[str]
) -> tuple[dict[str, int], dict[str, tuple[str | None, int | None]]]:
    """Each document's last 0-based position, and ``(doc_id, position)`` of each relevant passage."""
    doc_last: dict[str, int] = {}
    where: dict[str, tuple[str | None, int | None]] = {}
    for p in passages:
        if not isinstance(p, Passage):
            raise TypeError(f"expected Passage, got {type(p).__name__}")
        if p.position is not None and (not is_integer(p.position) or p.position < 0):
            raise ValueError(f"passage {p.id!r}: position must be a non-negative int, got {p.position!r}")
        if p.doc_id is not None and p.position is not None:
            if p.position > doc_last.get(p.doc_id, -1):
                doc_last[p.doc_id] = p.position
        if p.id in relevant:
            seen = where.get(p.id)
            if seen is not None and seen != (p.doc_id, p.position):
                raise ValueError(f"passage {p.id!r} given twice with different doc_id/position")
            where[p.id] = (p.doc_id, p.position)
    return doc_last, where


def _placed(
    qrels: Qrels, level: int, doc_last: Mapping[str, int], where: Mapping[str, tuple[str | None, int | None]]
) -> tuple[list[int], list[float], int, int, int]:
    """Positions and relative positions of the relevant pairs, in qrels order, and the
    numbers of pairs in single-passage documents, missing, and without a position."""
    positions: list[int] = []
    relative: list[float] = []
    n_single = n_missing = n_unpositioned = 0
    for docs in qrels.values():
        for pid, g in docs.items():
            if g < level:
                continue
            if pid not in where:
                n_missing += 1
                continue
            doc, pos = where[pid]
            if doc is None or pos is None:
                n_unpositioned += 1
                continue
            positions.append(pos)
            length = doc_last[doc] + 1
            if length == 1:
                n_single += 1
            else:
                relative.append(pos / (length - 1))
    return positions, relative, n_single, n_missing, n_unpositioned
