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

The package has two modules: :mod:`core.agreement.statistics` (the
coefficients, confusion matrix and binarisation) and
:mod:`core.agreement.report` (:func:`agreement_report`, everything a
dashboard shows).  Import the names from ``core.agreement``.

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

from core.agreement.report import agreement_report
from core.agreement.statistics import (
    DEFAULT_CATEGORIES,
    AlphaResult,
    CohenPairs,
    FleissResult,
    Judgment,
    PairKappa,
    binarise,
    cohen_kappa,
    cohen_kappa_pairs,
    confusion_matrix,
    fleiss_kappa,
    from_label_map,
    krippendorff_alpha,
)

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
