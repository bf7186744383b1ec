"""Inter-annotator agreement on graded relevance judgments.

Every function takes *plain judgments*: an iterable of
``(item_id, annotator, label)`` triples, where ``item_id`` is any hashable
(usually ``(query_id, doc_id)``), ``annotator`` a ``str`` and ``label`` an
integer from ``categories`` (by default the T2Ranking 4-level scale
``(0, 1, 2, 3)``).  One label per (item, annotator): when an annotator
relabelled an item the caller passes only the latest label (replay the
judgment log with :func:`core.judgments.current_labels` first, then
:func:`from_label_map`); a repeated (item, annotator) is a ``ValueError``.
``categories`` must be distinct integers in increasing order, because the
weighted kappas and ordinal alpha read the scale's order from them.

The statistics are computed by maintained implementations, not re-derived:

=====================================  ===================================
statistic                              engine
=====================================  ===================================
Cohen's kappa (plain, linear,          ``sklearn.metrics.cohen_kappa_score``
quadratic weights)                     with ``labels=categories``
Fleiss' kappa                          ``statsmodels.stats.inter_rater``
                                       ``aggregate_raters`` + ``fleiss_kappa``
Krippendorff's alpha                   ``krippendorff.alpha`` on an
                                       (annotators x items) matrix, NaN
                                       for missing labels
confusion matrix                       ``sklearn.metrics.confusion_matrix``
=====================================  ===================================

Formulas
--------
With ``p_o`` the observed and ``p_e`` the chance agreement,

* Cohen (1960): ``kappa = (p_o - p_e) / (1 - p_e)`` with
  ``p_o = sum_k C[k, k] / n`` and ``p_e = sum_k r_k c_k / n^2`` (``C`` the
  confusion matrix of the two annotators on their ``n`` shared items, ``r``
  and ``c`` its row and column sums).  Weighted (Cohen 1968):
  ``kappa_w = 1 - sum_ij w_ij C_ij / sum_ij w_ij E_ij`` with
  ``E_ij = r_i c_j / n`` and ``w_ij = |i - j|`` (linear) or ``(i - j)^2``
  (quadratic), ``i, j`` the *positions* of the labels in ``categories``.
* Fleiss (1971): ``n`` ratings on each of ``N`` items, ``n_ij`` the number
  of ratings of item ``i`` in category ``j``;
  ``P_i = (sum_j n_ij^2 - n) / (n (n - 1))``, ``P_bar = mean_i P_i``,
  ``p_j = sum_i n_ij / (N n)``, ``P_e = sum_j p_j^2`` and
  ``kappa = (P_bar - P_e) / (1 - P_e)``.
* Krippendorff (2011): ``alpha = 1 - D_o / D_e`` with
  ``D_o = (1/n) sum_c sum_k o_ck delta^2_ck`` and
  ``D_e = 1/(n (n - 1)) sum_c sum_k n_c n_k delta^2_ck``, where ``o_ck`` is
  the coincidence matrix of *pairable* values (values in items with at least
  two labels), ``n_c`` its margins and ``n`` the number of pairable values.
  The ordinal difference is
  ``delta^2_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2``.  On binary data
  the nominal, ordinal and interval alphas coincide.

Undefined values (NaN, never an exception)
------------------------------------------
All three coefficients are 0/0 when chance agreement is already perfect:
every label in the data (or in a pair's shared items) is the same category.
What the libraries do there, and what this module returns:

* ``cohen_kappa_score`` emits ``UndefinedMetricWarning`` and returns its
  ``replace_undefined_by`` value, NaN by default (scikit-learn >= 1.9;
  older releases return NaN from a 0/0 with a ``RuntimeWarning``).
* ``statsmodels`` ``fleiss_kappa`` divides 0 by 0 and returns NaN with a
  ``RuntimeWarning``; it also *asserts* that every item has the same number
  of ratings, and divides by zero with one rating per item.
* ``krippendorff.alpha`` *raises* ``ValueError`` when no item has two labels
  or the value domain has a single value; when a domain is given (as here)
  and only one value occurs it returns NaN with a ``RuntimeWarning``.

This module returns ``nan`` in all those cases, without calling a library on
input it would reject and without letting the warnings escape.  A single
annotator, annotators with no shared items, or an empty input therefore give
NaN, with the counts saying why.

References
----------
.. [1] J. Cohen, "A coefficient of agreement for nominal scales",
   Educational and Psychological Measurement 20(1):37-46, 1960.
.. [2] J. Cohen, "Weighted kappa: nominal scale agreement with provision for
   scaled disagreement or partial credit", Psychological Bulletin
   70(4):213-220, 1968.
.. [3] J. L. Fleiss, "Measuring nominal scale agreement among many raters",
   Psychological Bulletin 76(5):378-382, 1971.
.. [4] K. Krippendorff, "Computing Krippendorff's Alpha-Reliability",
   University of Pennsylvania, Annenberg School for Communication, 2011.
.. [5] R. Artstein and M. Poesio, "Inter-coder agreement for computational
   linguistics", Computational Linguistics 34(4):555-596, 2008.
.. [6] X. Xie et al., "T2Ranking: A large-scale Chinese benchmark for
   passage ranking", SIGIR 2023 (the 3 + 1 annotator protocol).
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

import numpy as np

from core.scale import BINARY, GRADES
from core.validators import int_in_range, integer, is_integer, positive_int

Judgment = tuple[Hashable, str, int]
"""``(item_id, annotator, label)``."""

DEFAULT_CATEGORIES: tuple[int, ...] = GRADES
"""The T2Ranking 4-level scale (:mod:`core.scale`)."""

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]

NAN = float("nan")


# --------------------------------------------------------------------------
# result types
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FleissResult:
    """Fleiss' kappa and what it was computed on.

    Attributes
    ----------
    value : float
        Fleiss' kappa; NaN when undefined (no usable item, or every used
        label in one category).
    n_items : int
        Items used (each with exactly ``n_raters`` labels).
    n_annotators : int
        Distinct annotators among the labels used.
    n_raters : int
        Labels per item (``0`` when no item could be used).
    n_items_dropped : int
        Items left out: fewer than ``n_raters`` labels, or more when
        ``extra="drop"``.
    n_items_truncated : int
        Items with more than ``n_raters`` labels of which only the first
        ``n_raters`` (in input order) were used (``extra="truncate"``).
    """

    value: float
    n_items: int
    n_annotators: int
    n_raters: int
    n_items_dropped: int = 0
    n_items_truncated: int = 0


@dataclass(frozen=True, slots=True)
class PairKappa:
    """Cohen's kappa of one annotator pair (``a < b`` in string order).

    ``value`` is NaN when the pair shares fewer than ``min_items`` items or
    kappa is undefined on them (both used one and the same category).
    """

    a: str
    b: str
    value: float
    n_items: int


@dataclass(frozen=True, slots=True)
class CohenPairs:
    """Cohen's kappa for every annotator pair, and their mean.

    Attributes
    ----------
    pairs : tuple of PairKappa
        Every pair of distinct annotators, sorted by ``(a, b)``, including
        pairs with no shared item (``n_items == 0``, value NaN).
    mean : float
        ``sum_p n_p kappa_p / sum_p n_p`` over the pairs ``p`` whose kappa is
        a number (weighted by shared items); NaN when there is none.
    n_items : int
        ``sum_p n_p`` over the pairs in the mean.
    weights : {None, "linear", "quadratic"}
        The weighting used.
    """

    pairs: tuple[PairKappa, ...]
    mean: float
    n_items: int
    weights: Weights = None


@dataclass(frozen=True, slots=True)
class AlphaResult:
    """Krippendorff's alpha and what it was computed on.

    Attributes
    ----------
    value : float
        Alpha; NaN when no item has two labels or only one category occurs
        among the pairable labels.
    n_items : int
        Pairable items (at least two labels); others do not affect alpha.
    n_annotators : int
        Distinct annotators in the input.
    n_pairable : int
        Labels in pairable items (``n`` in Krippendorff's formulas).
    level : str
        Level of measurement.
    """

    value: float
    n_items: int
    n_annotators: int
    n_pairable: int
    level: str = "ordinal"


# --------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------


@dataclass(slots=True)
class _Table:
    """Validated judgments: ``items[item][annotator] = label``, input order kept."""

    categories: tuple[int, ...]
    items: dict[Hashable, dict[str, int]]
    by_annotator: dict[str, dict[Hashable, int]]
    n_judgments: int


def _check_categories(categories: Sequence[int]) -> tuple[int, ...]:
    cats = tuple(categories)
    if len(cats) < 2:
        raise ValueError(f"categories needs at least two values, got {cats!r}")
    for c in cats:
        if not is_integer(c):
            raise ValueError(f"categories must be integers, got {c!r}")
    cats = tuple(int(c) for c in cats)
    if any(b <= a for a, b in zip(cats, cats[1:])):
        raise ValueError(f"categories must be distinct and increasing, got {cats!r}")
    return cats


def _collect(judgments: Iterable[Judgment], categories: Sequence[int]) -> _Table:
    cats = _check_categories(categories)
    allowed = frozenset(cats)
    items: dict[Hashable, dict[str, int]] = {}
    by_annotator: dict[str, dict[Hashable, int]] = {}
    n = 0
    for row in judgments:
        try:
            item, annotator, label = row
        except (TypeError, ValueError):
            raise ValueError(f"a judgment is (item_id, annotator, label), got {row!r}") from None
        if not isinstance(annotator, str):
            raise ValueError(f"annotator must be a str, got {annotator!r} in {row!r}")
        if not is_integer(label):
            raise ValueError(f"label must be an integer, got {label!r} in {row!r}")
        label = int(label)
        if label not in allowed:
            raise ValueError(f"label {label} is not one of the categories {list(cats)} in {row!r}")
        try:
            labels = items.setdefault(item, {})
        except TypeError:
            raise ValueError(f"item_id must be hashable, got {item!r}") from None
        if annotator in labels:
            raise ValueError(
                f"annotator {annotator!r} labelled item {item!r} more than once; "
                "pass only each annotator's latest label"
            )
        labels[annotator] = label
        by_annotator.setdefault(annotator, {})[item] = label
        n += 1
    return _Table(cats, items, by_annotator, n)


def from_label_map(labels: Mapping[Hashable, Mapping[str, int]]) -> list[Judgment]:
    """Flatten ``{item: {annotator: label}}`` into judgments.

    The order of the mapping is kept, so the output of
    :func:`core.judgments.current_labels` (annotators in the order they first
    labelled each pair) keeps its chronology, which :func:`fleiss_kappa`
    relies on when it truncates items with an extra (adjudicating) label.

    Examples
    --------
    >>> from_label_map({("q1", "d1"): {"ann": 2, "bob": 3}})
    [(('q1', 'd1'), 'ann', 2), (('q1', 'd1'), 'bob', 3)]
    """
    return [(item, annotator, label) for item, row in labels.items() for annotator, label in row.items()]


def binarise(judgments: Iterable[Judgment], at: int = 2) -> list[Judgment]:
    """Binary relevance: ``label >= at`` becomes 1, anything lower 0.

    ``at=2`` is the project's default binary relevance (levels 2 and 3
    relevant), ``at=1`` separates "no match" from everything on topic.
    Compute any statistic on the result with ``categories=(0, 1)``.

    Parameters
    ----------
    judgments : iterable of (item_id, annotator, label)
    at : int
        Lowest label counted as relevant.

    Returns
    -------
    list of (item_id, annotator, 0 or 1)

    Raises
    ------
    ValueError
        ``at`` is not an integer, or a judgment is malformed.

    Examples
    --------
    >>> binarise([("i", "a", 0), ("i", "b", 1), ("i", "c", 3)], at=1)
    [('i', 'a', 0), ('i', 'b', 1), ('i', 'c', 1)]
    """
    integer(at, "at")
    out: list[Judgment] = []
    for row in judgments:
        try:
            item, annotator, label = row
        except (TypeError, ValueError):
            raise ValueError(f"a judgment is (item_id, annotator, label), got {row!r}") from None
        if not is_integer(label):
            raise ValueError(f"label must be an integer, got {label!r} in {row!r}")
        out.append((item, annotator, 1 if label >= at else 0))
    return out


def _binarise_table(table: _Table, at: int) -> _Table:
    lo, hi = table.categories[0], table.categories[-1]
    if not lo < at <= hi:
        raise ValueError(
            f"binarising at {at} puts every label of categories {list(table.categories)} in one class"
        )
    items = {item: {a: int(lab >= at) for a, lab in row.items()} for item, row in table.items.items()}
    by_annotator = {a: {i: int(lab >= at) for i, lab in row.items()} for a, row in table.by_annotator.items()}
    return _Table(BINARY, items, by_annotator, table.n_judgments)


# --------------------------------------------------------------------------
# Fleiss
# --------------------------------------------------------------------------


def fleiss_kappa(
    judgments: Iterable[Judgment],
    *,
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    n_raters: int | None = None,
    extra: Literal["truncate", "drop"] = "truncate",
) -> FleissResult:
    """Fleiss' kappa (Fleiss 1971) over items with a common number of labels.

    ``kappa = (P_bar - P_e) / (1 - P_e)``; see the module docstring.  The
    raters of different items need not be the same people, but every item
    must carry the same number ``n`` of labels, so:

    * ``n = n_raters``, by default the most common number of labels among
      items with at least two (ties go to the larger number).  Under the
      T2Ranking protocol this is 3.
    * Items with fewer than ``n`` labels are dropped.
    * Items with more than ``n`` labels (the 4th, adjudicating annotator of
      a pair whose three labels all differ) keep their first ``n`` labels in
      input order (``extra="truncate"``, the default) or are dropped
      (``extra="drop"``).  Truncation keeps the three independent labels;
      dropping would remove exactly the disagreements and inflate kappa.
      Pass judgments in the order they were made (the judgment log is
      append-only; see :func:`from_label_map`).

    Categories are nominal: Fleiss' kappa ignores the order of the scale.

    Parameters
    ----------
    judgments : iterable of (item_id, annotator, label)
    categories : sequence of int
        All possible labels, increasing.
    n_raters : int, optional
        Labels per item (at least 2); default the modal number.
    extra : {"truncate", "drop"}
        What to do with items that have more than ``n_raters`` labels.

    Returns
    -------
    FleissResult
        ``value`` is NaN when no item is usable or every used label is in
        one category (``P_e = 1``).

    Raises
    ------
    ValueError
        Malformed or duplicate judgments, a label outside ``categories``,
        ``n_raters < 2``, or an unknown ``extra``.

    References
    ----------
    J. L. Fleiss, "Measuring nominal scale agreement among many raters",
    Psychological Bulletin 76(5):378-382, 1971.
    """
    return _fleiss(_collect(judgments, categories), n_raters=n_raters, extra=extra)


def _fleiss(table: _Table, *, n_raters: int | None = None, extra: str = "truncate") -> FleissResult:
    if extra not in ("truncate", "drop"):
        raise ValueError(f"extra must be 'truncate' or 'drop', got {extra!r}")
    if n_raters is not None:
        int_in_range(n_raters, "n_raters", 2)
    counts = [len(row) for row in table.items.values()]
    if n_raters is None:
        multi = Counter(c for c in counts if c >= 2)
        if not multi:
            return FleissResult(NAN, 0, 0, 0, n_items_dropped=len(counts))
        n_raters = max(multi, key=lambda c: (multi[c], c))
    n_raters = int(n_raters)
    index = {c: k for k, c in enumerate(table.categories)}
    rows: list[list[int]] = []
    annotators: set[str] = set()
    dropped = truncated = 0
    for row in table.items.values():
        if len(row) < n_raters or (len(row) > n_raters and extra == "drop"):
            dropped += 1
            continue
        if len(row) > n_raters:
            truncated += 1
        used = list(row.items())[:n_raters]
        annotators.update(a for a, _ in used)
        rows.append([index[label] for _, label in used])
    if not rows:
        return FleissResult(NAN, 0, 0, n_raters, dropped, truncated)

    from statsmodels.stats.inter_rater import aggregate_raters
    from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

    counts_table, _ = aggregate_raters(np.asarray(rows, dtype=np.int64), n_cat=len(table.categories))
    value = NAN
    if np.count_nonzero(counts_table.sum(axis=0)) >= 2:  # otherwise P_e = 1 and kappa = 0/0
        with np.errstate(divide="ignore", invalid="ignore"):
            value = float(sm_fleiss_kappa(counts_table, method="fleiss"))
    return FleissResult(_finite_or_nan(value), len(rows), len(annotators), n_raters, dropped, truncated)


# --------------------------------------------------------------------------
# Cohen
# --------------------------------------------------------------------------


def cohen_kappa_pairs(
    judgments: Iterable[Judgment],
    *,
    weights: Weights = None,
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    min_items: int = 2,
) -> CohenPairs:
    """Cohen's kappa for every pair of annotators, on the items both labelled.

    ``kappa = (p_o - p_e) / (1 - p_e)`` (Cohen 1960); with ``weights``,
    ``kappa_w = 1 - sum w_ij C_ij / sum w_ij E_ij`` (Cohen 1968), where
    ``w_ij`` is ``|i - j|`` or ``(i - j)^2`` for the positions ``i, j`` of
    the two labels in ``categories``.  Computed by scikit-learn's
    ``cohen_kappa_score(y_a, y_b, labels=categories, weights=weights)``:
    passing ``labels`` keeps unused categories in the matrix, so the weights
    are distances on the full scale (without it, an unused level 1 would
    make 0 and 2 neighbours).

    A pair sharing fewer than ``min_items`` items gets NaN (with its
    ``n_items``): kappa on a single item is 0/0 or meaningless.  A pair whose
    shared labels are all one category also gets NaN (scikit-learn's
    undefined case).  The mean is weighted by shared items over the pairs
    with a numeric kappa.

    Parameters
    ----------
    judgments : iterable of (item_id, annotator, label)
    weights : {None, "linear", "quadratic"}
    categories : sequence of int
        All possible labels, increasing.
    min_items : int
        Fewest shared items for a pair to get a kappa (default 2).

    Returns
    -------
    CohenPairs

    Raises
    ------
    ValueError
        Malformed or duplicate judgments, a label outside ``categories``,
        or an unknown ``weights``.

    References
    ----------
    J. Cohen, Educational and Psychological Measurement 20(1):37-46, 1960;
    J. Cohen, Psychological Bulletin 70(4):213-220, 1968.
    """
    return _cohen_pairs(_collect(judgments, categories), weights=weights, min_items=min_items)


def _check_cohen_args(weights: object, min_items: object) -> None:
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    positive_int(min_items, "min_items")


def _cohen_pairs(table: _Table, *, weights: Weights = None, min_items: int = 2) -> CohenPairs:
    _check_cohen_args(weights, min_items)
    pairs: list[PairKappa] = []
    total = 0.0
    n_total = 0
    for a, b in combinations(sorted(table.by_annotator), 2):
        la, lb = table.by_annotator[a], table.by_annotator[b]
        shared = [item for item in la if item in lb]
        value = NAN
        if len(shared) >= min_items:
            value = _cohen(
                [la[i] for i in shared], [lb[i] for i in shared], table.categories, weights
            )
        pairs.append(PairKappa(a, b, value, len(shared)))
        if not math.isnan(value):
            total += len(shared) * value
            n_total += len(shared)
    mean = total / n_total if n_total else NAN
    return CohenPairs(tuple(pairs), mean, n_total, weights)


def _cohen(ya: list[int], yb: list[int], categories: tuple[int, ...], weights: Weights) -> float:
    from sklearn.exceptions import UndefinedMetricWarning
    from sklearn.metrics import cohen_kappa_score

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = cohen_kappa_score(ya, yb, labels=list(categories), weights=weights)
    return _finite_or_nan(float(value))


def cohen_kappa(
    judgments: Iterable[Judgment],
    a: str,
    b: str,
    *,
    weights: Weights = None,
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    min_items: int = 2,
) -> PairKappa:
    """Cohen's kappa of annotators ``a`` and ``b`` on the items both labelled.

    Same definition and NaN rules as :func:`cohen_kappa_pairs`; the result
    keeps ``a`` and ``b`` in the order given.

    Raises
    ------
    ValueError
        ``a`` or ``b`` has no judgment, ``a == b``, the judgments are
        malformed, or ``weights``/``min_items`` are invalid.
    """
    _check_cohen_args(weights, min_items)
    table = _collect(judgments, categories)
    la, lb = _two_annotators(table, a, b)
    shared = [item for item in la if item in lb]
    value = NAN
    if len(shared) >= min_items:
        value = _cohen([la[i] for i in shared], [lb[i] for i in shared], table.categories, weights)
    return PairKappa(a, b, value, len(shared))


def _two_annotators(table: _Table, a: str, b: str) -> tuple[dict[Hashable, int], dict[Hashable, int]]:
    if a == b:
        raise ValueError(f"need two different annotators, got {a!r} twice")
    for name in (a, b):
        if name not in table.by_annotator:
            raise ValueError(f"annotator {name!r} has no judgment")
    return table.by_annotator[a], table.by_annotator[b]


def confusion_matrix(
    judgments: Iterable[Judgment],
    a: str,
    b: str,
    categories: Sequence[int] = DEFAULT_CATEGORIES,
) -> list[list[int]]:
    """Label counts of two annotators on the items both labelled.

    ``M[i][j]`` is the number of shared items that ``a`` labelled
    ``categories[i]`` and ``b`` labelled ``categories[j]`` (rows ``a``,
    columns ``b``; sklearn's ``confusion_matrix(y_a, y_b, labels=categories)``),
    as plain lists for a heatmap.  All zeros when they share no item.

    Raises
    ------
    ValueError
        ``a`` or ``b`` has no judgment, ``a == b``, or the judgments are
        malformed.

    Examples
    --------
    >>> confusion_matrix([("i", "a", 0), ("i", "b", 2)], "a", "b", categories=(0, 1, 2))
    [[0, 0, 1], [0, 0, 0], [0, 0, 0]]
    """
    table = _collect(judgments, categories)
    la, lb = _two_annotators(table, a, b)
    return _confusion(la, lb, table.categories)


def _confusion(la: Mapping[Hashable, int], lb: Mapping[Hashable, int], categories: tuple[int, ...]) -> list[list[int]]:
    shared = [item for item in la if item in lb]
    k = len(categories)
    if not shared:
        return [[0] * k for _ in range(k)]
    from sklearn.metrics import confusion_matrix as sk_confusion_matrix

    matrix = sk_confusion_matrix([la[i] for i in shared], [lb[i] for i in shared], labels=list(categories))
    return [[int(x) for x in row] for row in matrix]


# --------------------------------------------------------------------------
# Krippendorff
# --------------------------------------------------------------------------


def krippendorff_alpha(
    judgments: Iterable[Judgment],
    *,
    level: Level = "ordinal",
    categories: Sequence[int] = DEFAULT_CATEGORIES,
) -> AlphaResult:
    """Krippendorff's alpha (Krippendorff 2011) with missing labels.

    ``alpha = 1 - D_o / D_e`` over the pairable labels (items with at least
    two labels); see the module docstring for ``D_o``, ``D_e`` and the
    ordinal difference function.  Computed by
    ``krippendorff.alpha(reliability_data=R, value_domain=categories,
    level_of_measurement=level)`` where ``R`` is the (annotators x items)
    matrix with NaN where an annotator did not label an item.  Items of any
    number of labels take part (a 4th adjudicating label included), which
    makes alpha the statistic to prefer when the number of labels varies.

    Parameters
    ----------
    judgments : iterable of (item_id, annotator, label)
    level : {"nominal", "ordinal", "interval", "ratio"}
        Level of measurement; relevance grades are ordinal.
    categories : sequence of int
        All possible labels, increasing (the value domain).

    Returns
    -------
    AlphaResult
        ``value`` is NaN when no item has two labels or only one category
        occurs among the pairable labels (``D_e = 0``).

    Raises
    ------
    ValueError
        Malformed or duplicate judgments, a label outside ``categories``,
        or an unknown ``level``.

    References
    ----------
    K. Krippendorff, "Computing Krippendorff's Alpha-Reliability", 2011;
    A. F. Hayes and K. Krippendorff, "Answering the call for a standard
    reliability measure for coding data", Communication Methods and Measures
    1(1):77-89, 2007.
    """
    return _alpha(_collect(judgments, categories), level=level)


def _alpha(table: _Table, *, level: str = "ordinal") -> AlphaResult:
    if level not in ("nominal", "ordinal", "interval", "ratio"):
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    pairable = [row for row in table.items.values() if len(row) >= 2]
    n_pairable = sum(len(row) for row in pairable)
    n_annotators = len(table.by_annotator)
    values = {label for row in pairable for label in row.values()}
    if len(values) < 2:  # no pairable item (the library raises) or D_e = 0 (0/0)
        return AlphaResult(NAN, len(pairable), n_annotators, n_pairable, level)
    import krippendorff

    annotators = sorted({a for row in pairable for a in row})
    a_index = {a: k for k, a in enumerate(annotators)}
    matrix = np.full((len(annotators), len(pairable)), np.nan)
    for j, row in enumerate(pairable):
        for annotator, label in row.items():
            matrix[a_index[annotator], j] = label
    with np.errstate(divide="ignore", invalid="ignore"):
        value = float(
            krippendorff.alpha(
                reliability_data=matrix,
                value_domain=np.asarray(table.categories, dtype=float),
                level_of_measurement=level,
            )
        )
    return AlphaResult(_finite_or_nan(value), len(pairable), n_annotators, n_pairable, level)


# --------------------------------------------------------------------------
# report
# --------------------------------------------------------------------------


def _finite_or_nan(value: float) -> float:
    return value if math.isfinite(value) else NAN


def _unanimity(table: _Table) -> float:
    multi = [row for row in table.items.values() if len(row) >= 2]
    if not multi:
        return NAN
    return sum(len(set(row.values())) == 1 for row in multi) / len(multi)


def _overall(
    table: _Table, plain: CohenPairs | None = None, quadratic: CohenPairs | None = None
) -> dict[str, Any]:
    fleiss = _fleiss(table)
    alpha = _alpha(table, level="ordinal")
    plain = plain if plain is not None else _cohen_pairs(table)
    quadratic = quadratic if quadratic is not None else _cohen_pairs(table, weights="quadratic")
    return {
        "fleiss_kappa": fleiss.value,
        "fleiss_n_items": fleiss.n_items,
        "fleiss_n_raters": fleiss.n_raters,
        "cohen_kappa": plain.mean,
        "cohen_kappa_quadratic": quadratic.mean,
        "krippendorff_alpha_ordinal": alpha.value,
        "n_items": alpha.n_items,
        "unanimity": _unanimity(table),
    }


def _strict_majority(labels: Iterable[int]) -> int | None:
    labels = list(labels)
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if 2 * count > len(labels) else None


def _per_annotator(table: _Table, plain: CohenPairs, quadratic: CohenPairs) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for annotator in sorted(table.by_annotator):
        labels = table.by_annotator[annotator]
        entry: dict[str, Any] = {"n_items": len(labels)}
        for key, result in (("cohen_kappa", plain), ("cohen_kappa_quadratic", quadratic)):
            mine = [p for p in result.pairs if annotator in (p.a, p.b) and not math.isnan(p.value)]
            n = sum(p.n_items for p in mine)
            entry[key] = sum(p.n_items * p.value for p in mine) / n if n else NAN
            if key == "cohen_kappa":
                entry["n_pairs"] = len(mine)
        agree = 0
        diffs = 0
        n_majority = 0
        for item, label in labels.items():
            others = [lab for a, lab in table.items[item].items() if a != annotator]
            if len(others) < 2:
                continue
            majority = _strict_majority(others)
            if majority is None:
                continue
            n_majority += 1
            agree += label == majority
            diffs += abs(label - majority)
        entry["majority_agreement"] = agree / n_majority if n_majority else NAN
        entry["majority_mean_abs_diff"] = diffs / n_majority if n_majority else NAN
        entry["n_majority_items"] = n_majority
        counts = Counter(labels.values())
        entry["label_counts"] = {c: counts.get(c, 0) for c in table.categories}
        entry["mean_label"] = sum(labels.values()) / len(labels)
        out[annotator] = entry
    return out


def _per_query(table: _Table) -> dict[Hashable, dict[str, Any]]:
    if not table.items or not all(isinstance(i, tuple) and len(i) == 2 for i in table.items):
        return {}
    groups: dict[Hashable, dict[Hashable, dict[str, int]]] = {}
    for item, row in table.items.items():
        groups.setdefault(item[0], {})[item] = row  # type: ignore[index]
    out: dict[Hashable, dict[str, Any]] = {}
    for qid, items in groups.items():
        by_annotator: dict[str, dict[Hashable, int]] = {}
        for item, row in items.items():
            for a, lab in row.items():
                by_annotator.setdefault(a, {})[item] = lab
        sub = _Table(table.categories, items, by_annotator, sum(len(r) for r in items.values()))
        alpha = _alpha(sub, level="ordinal")
        fleiss = _fleiss(sub)
        out[qid] = {
            "n_items": len(items),
            "n_judgments": sub.n_judgments,
            "n_annotators": len(by_annotator),
            "krippendorff_alpha_ordinal": alpha.value,
            "n_pairable_items": alpha.n_items,
            "fleiss_kappa": fleiss.value,
            "fleiss_n_items": fleiss.n_items,
            "unanimity": _unanimity(sub),
        }
    return out


def agreement_report(
    judgments: Iterable[Judgment],
    *,
    categories: Sequence[int] = DEFAULT_CATEGORIES,
    binarise_at: Sequence[int] = (1, 2),
) -> dict[str, Any]:
    """Everything a dashboard shows about agreement, as plain dicts and lists.

    Parameters
    ----------
    judgments : iterable of (item_id, annotator, label)
    categories : sequence of int
        All possible labels, increasing.
    binarise_at : sequence of int
        Thresholds for the binary views (``label >= at`` is relevant); each
        must split ``categories`` into two non-empty classes.

    Returns
    -------
    dict
        ``n_judgments``, ``n_items``, ``n_annotators`` and:

        ``overall``
            ``{"graded": S, "binary_ge1": S, "binary_ge2": S}`` (one
            ``binary_ge{at}`` per threshold), each ``S`` with
            ``fleiss_kappa``, ``fleiss_n_items``, ``fleiss_n_raters`` (see
            :func:`fleiss_kappa`, defaults), ``cohen_kappa`` and
            ``cohen_kappa_quadratic`` (item-weighted means over annotator
            pairs, :func:`cohen_kappa_pairs`), ``krippendorff_alpha_ordinal``,
            ``n_items`` (pairable items) and ``unanimity`` (share of items
            with two or more labels whose labels are all equal).  On binary
            data quadratic and plain kappa, and ordinal and nominal alpha,
            coincide.
        ``pairs``
            One dict per annotator pair: ``a``, ``b``, ``n_items``,
            ``cohen_kappa``, ``cohen_kappa_quadratic``.
        ``per_annotator``
            ``{annotator: {...}}`` with ``n_items``; ``cohen_kappa`` and
            ``cohen_kappa_quadratic``, the item-weighted mean of the pairs
            the annotator is in (NaN pairs left out), and ``n_pairs``;
            ``majority_agreement``, the share of the annotator's items on
            which the annotator's label equals the strict majority label
            (held by more than half) of the *other* annotators, counted over
            ``n_majority_items`` items that have at least two other labels
            and such a majority; ``majority_mean_abs_diff``, the mean
            ``|label - majority|`` on those items; ``label_counts``
            ``{category: count}`` and ``mean_label`` (leniency).
        ``per_query``
            When every item id is a ``(query_id, doc_id)`` tuple,
            ``{query_id: {...}}`` with ``n_items``, ``n_judgments``,
            ``n_annotators``, ``krippendorff_alpha_ordinal``,
            ``n_pairable_items``, ``fleiss_kappa``, ``fleiss_n_items`` and
            ``unanimity`` computed on that query's items alone (NaN when
            undefined: one label per item, or a single category); ``{}``
            otherwise.

        Undefined statistics are ``float("nan")``, never missing keys.

    Raises
    ------
    ValueError
        Malformed or duplicate judgments, a label outside ``categories``, or
        a threshold that does not split ``categories``.
    """
    table = _collect(judgments, categories)
    views: dict[str, _Table] = {"graded": table}
    for at in binarise_at:
        if not is_integer(at):
            raise ValueError(f"binarise_at must hold integers, got {at!r}")
        views[f"binary_ge{int(at)}"] = _binarise_table(table, int(at))
    plain = _cohen_pairs(table)
    quadratic = _cohen_pairs(table, weights="quadratic")
    overall = {"graded": _overall(table, plain, quadratic)}
    overall.update({name: _overall(view) for name, view in views.items() if name != "graded"})
    return {
        "n_judgments": table.n_judgments,
        "n_items": len(table.items),
        "n_annotators": len(table.by_annotator),
        "overall": overall,
        "pairs": [
            {
                "a": p.a,
                "b": p.b,
                "n_items": p.n_items,
                "cohen_kappa": p.value,
                "cohen_kappa_quadratic": q.value,
            }
            for p, q in zip(plain.pairs, quadratic.pairs)
        ],
        "per_annotator": _per_annotator(table, plain, quadratic),
        "per_query": _per_query(table),
    }


__all__ = [
    "DEFAULT_CATEGORIES",
    "AlphaResult",
    "CohenPairs",
    "FleissResult",
    "Judgment",
    "PairKappa",
    "agreement_report",
    "binarise",
    "cohen_kappa",
    "cohen_kappa_pairs",
    "confusion_matrix",
    "fleiss_kappa",
    "from_label_map",
    "krippendorff_alpha",
]
