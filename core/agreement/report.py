"""The agreement report: every statistic a dashboard shows, as plain dicts and lists.

Layout of :func:`agreement_report`'s result, besides ``n_judgments``, ``n_items`` and
``n_annotators``:

``overall``
    ``{"graded": S, "binary_ge1": S, "binary_ge2": S}`` (one
    ``binary_ge{at}`` per threshold), each ``S`` with
    ``fleiss_kappa``, ``fleiss_n_items``, ``fleiss_n_raters`` (see
    :func:`~core.agreement.fleiss_kappa`, defaults), ``cohen_kappa`` and
    ``cohen_kappa_quadratic`` (item-weighted means over annotator
    pairs, :func:`~core.agreement.cohen_kappa_pairs`), ``krippendorff_alpha_ordinal``,
    ``n_items`` (pairable items) and ``unanimity`` (share of items
    with two or more labels whose labels are all equal).  On binary
    data quadratic and plain kappa, and ordinal and nominal alpha,
    coincide.
``pairs``
    One dict per annotator pair: ``a``, ``b``, ``n_items``,
    ``cohen_kappa``, ``cohen_kappa_quadratic`` and ``confusion``, their
    :func:`~core.agreement.confusion_matrix` (rows ``a``, columns ``b``).
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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from core.agreement.statistics import (
    DEFAULT_CATEGORIES,
    NAN,
    CohenPairs,
    Judgment,
    LabelTable,
    alpha_from_table,
    binarise_table,
    cohen_pairs_from_table,
    collect_table,
    confusion_from_table,
    fleiss_from_table,
)
from core.validators import is_integer

__all__ = ["agreement_report"]


def _unanimity(table: LabelTable) -> float:
    multi = [row for row in table.items.values() if len(row) >= 2]
    if not multi:
        return NAN
    return sum(len(set(row.values())) == 1 for row in multi) / len(multi)


def _overall(table: LabelTable, plain: CohenPairs | None = None, quadratic: CohenPairs | None = None) -> dict[str, Any]:
    fleiss = fleiss_from_table(table)
    alpha = alpha_from_table(table, level="ordinal")
    plain = plain if plain is not None else cohen_pairs_from_table(table)
    quadratic = quadratic if quadratic is not None else cohen_pairs_from_table(table, weights="quadratic")
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


def _per_annotator(table: LabelTable, plain: CohenPairs, quadratic: CohenPairs) -> dict[str, dict[str, Any]]:
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


def _per_query(table: LabelTable) -> dict[Hashable, dict[str, Any]]:
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
        sub = LabelTable(table.categories, items, by_annotator, sum(len(r) for r in items.values()))
        alpha = alpha_from_table(sub, level="ordinal")
        fleiss = fleiss_from_table(sub)
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
        ``n_judgments``, ``n_items``, ``n_annotators``, ``overall``,
        ``pairs``, ``per_annotator`` and ``per_query``, laid out as the
        module docstring describes.  Undefined statistics are
        ``float("nan")``, never missing keys.

    Raises
    ------
    ValueError
        Malformed or duplicate judgments, a label outside ``categories``, or
        a threshold that does not split ``categories``.
    """
    table = collect_table(judgments, categories)
    plain = cohen_pairs_from_table(table)
    quadratic = cohen_pairs_from_table(table, weights="quadratic")
    return {
        "n_judgments": table.n_judgments,
        "n_items": len(table.items),
        "n_annotators": len(table.by_annotator),
        "overall": _overall_views(table, binarise_at, plain, quadratic),
        "pairs": _pair_rows(table, plain, quadratic),
        "per_annotator": _per_annotator(table, plain, quadratic),
        "per_query": _per_query(table),
    }


def _overall_views(
    table: LabelTable, binarise_at: Sequence[int], plain: CohenPairs, quadratic: CohenPairs
) -> dict[str, dict[str, Any]]:
    """``overall``: the graded statistics, then one binary view per threshold."""
    views: dict[str, LabelTable] = {"graded": table}
    for at in binarise_at:
        if not is_integer(at):
            raise ValueError(f"binarise_at must hold integers, got {at!r}")
        views[f"binary_ge{int(at)}"] = binarise_table(table, int(at))
    overall = {"graded": _overall(table, plain, quadratic)}
    overall.update({name: _overall(view) for name, view in views.items() if name != "graded"})
    return overall


def _pair_rows(table: LabelTable, plain: CohenPairs, quadratic: CohenPairs) -> list[dict[str, Any]]:
    """``pairs``: one row per annotator pair, plain and quadratic kappa side by side, and their confusion matrix."""
    return [
        {
            "a": p.a,
            "b": p.b,
            "n_items": p.n_items,
            "cohen_kappa": p.value,
            "cohen_kappa_quadratic": q.value,
            "confusion": confusion_from_table(table, p.a, p.b),
        }
        for p, q in zip(plain.pairs, quadratic.pairs)
    ]
