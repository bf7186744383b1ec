"""Agreement coefficients on plain judgments: Cohen's, Fleiss' kappa, Krippendorff's alpha.

The conventions (judgments, categories, NaN for undefined values) and the
formulas are in the docstring of :mod:`core.agreement`.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Literal

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


def _finite_or_nan(value: float) -> float:
    return value if math.isfinite(value) else NAN


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
class LabelTable:
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


def collect_table(judgments: Iterable[Judgment], categories: Sequence[int]) -> LabelTable:
    """Validate judgments once into a table that every statistic of a report reads.

    Parameters
    ----------
    judgments : iterable of (item_id, annotator, label)
        At most one label per annotator and item (each annotator's latest).
    categories : sequence of int
        The label scale, distinct and increasing, at least two values.

    Returns
    -------
    LabelTable

    Raises
    ------
    ValueError
        A malformed judgment, a label outside ``categories``, or an annotator labelling an item twice.
    """
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
    return LabelTable(cats, items, by_annotator, n)


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


def binarise_table(table: LabelTable, at: int) -> LabelTable:
    """:func:`binarise` on a collected table: labels ``>= at`` become 1, the others 0.

    Parameters
    ----------
    table : LabelTable
        From :func:`collect_table`.
    at : int
        The lowest label counted relevant.

    Returns
    -------
    LabelTable
        Over the categories ``(0, 1)``.

    Raises
    ------
    ValueError
        ``at`` puts every category in one class.
    """
    lo, hi = table.categories[0], table.categories[-1]
    if not lo < at <= hi:
        raise ValueError(f"binarising at {at} puts every label of categories {list(table.categories)} in one class")
    items = {item: {a: int(lab >= at) for a, lab in row.items()} for item, row in table.items.items()}
    by_annotator = {a: {i: int(lab >= at) for i, lab in row.items()} for a, row in table.by_annotator.items()}
    return LabelTable(BINARY, items, by_annotator, table.n_judgments)


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
    return fleiss_from_table(collect_table(judgments, categories), n_raters=n_raters, extra=extra)


def fleiss_from_table(table: LabelTable, *, n_raters: int | None = None, extra: str = "truncate") -> FleissResult:
    """:func:`fleiss_kappa` on a table from :func:`collect_table` (a report computes several statistics from one table)."""
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
    return cohen_pairs_from_table(collect_table(judgments, categories), weights=weights, min_items=min_items)


def _check_cohen_args(weights: object, min_items: object) -> None:
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic', got {weights!r}")
    positive_int(min_items, "min_items")


def cohen_pairs_from_table(table: LabelTable, *, weights: Weights = None, min_items: int = 2) -> CohenPairs:
    """:func:`cohen_kappa_pairs` on a table from :func:`collect_table` (a report computes several statistics from one table)."""
    _check_cohen_args(weights, min_items)
    pairs: list[PairKappa] = []
    total = 0.0
    n_total = 0
    for a, b in combinations(sorted(table.by_annotator), 2):
        la, lb = table.by_annotator[a], table.by_annotator[b]
        shared = [item for item in la if item in lb]
        value = NAN
        if len(shared) >= min_items:
            value = _cohen([la[i] for i in shared], [lb[i] for i in shared], table.categories, weights)
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
    table = collect_table(judgments, categories)
    la, lb = _two_annotators(table, a, b)
    shared = [item for item in la if item in lb]
    value = NAN
    if len(shared) >= min_items:
        value = _cohen([la[i] for i in shared], [lb[i] for i in shared], table.categories, weights)
    return PairKappa(a, b, value, len(shared))


def _two_annotators(table: LabelTable, a: str, b: str) -> tuple[dict[Hashable, int], dict[Hashable, int]]:
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
    return confusion_from_table(collect_table(judgments, categories), a, b)


def confusion_from_table(table: LabelTable, a: str, b: str) -> list[list[int]]:
    """:func:`confusion_matrix` on a table collected once (a report's matrices share one validation pass)."""
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
    return alpha_from_table(collect_table(judgments, categories), level=level)


def alpha_from_table(table: LabelTable, *, level: Level = "ordinal") -> AlphaResult:
    """:func:`krippendorff_alpha` on a table from :func:`collect_table` (a report computes several statistics from one table)."""
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


__all__ = [
    "DEFAULT_CATEGORIES",
    "AlphaResult",
    "CohenPairs",
    "FleissResult",
    "Judgment",
    "PairKappa",
    "binarise",
    "cohen_kappa",
    "cohen_kappa_pairs",
    "confusion_matrix",
    "fleiss_kappa",
    "from_label_map",
    "krippendorff_alpha",
]
