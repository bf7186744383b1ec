"""Benchmark analysis: run comparison, significance, breakdowns, dataset statistics.

Everything here is plain data in, plain data out, computed from the
per-query values of :func:`core.metrics.evaluate` (``{measure: {qid: value,
"all": mean}}``).  The pieces follow how published passage-retrieval
benchmarks were studied:

* run comparison and paired significance tests (Student's paired t-test and
  Fisher's paired randomisation test, as recommended for IR by Smucker, Allan
  & Carterette, "A comparison of statistical significance tests for
  information retrieval evaluation", CIKM 2007);
* qrels version comparison, e.g. before/after relabelling false negatives
  (Qiu et al., "DuReader-retrieval", EMNLP 2022, Figure 2);
* metrics per query group (split, type, domain, language) and per error
  category, where a query may carry several categories (Wang et al., "DAPR:
  A Benchmark on Document-Aware Passage Retrieval", ACL 2024, Figure 3);
* dataset statistics: text lengths, label distribution, judgments per query;
* query diversity by intra-list similarity (Xie et al., "T2Ranking: A
  large-scale Chinese Benchmark for Passage Ranking", SIGIR 2023, eq. 3-4);
* train/eval leakage by near-duplicate queries (DuReader-retrieval, cosine
  >= 0.5);
* the position of relevant passages within their documents (DAPR, Table 1).

The package is split by question: :mod:`core.analysis.significance` (run and
qrels version comparison, paired tests), :mod:`core.analysis.breakdowns` (one
query's ranking, metrics per group and per category, relevant positions) and
:mod:`core.analysis.dataset` (lengths, labels, diversity, leakage).  Import
the names from ``core.analysis``; the modules are an implementation detail.

The query id ``"all"`` is reserved by :func:`core.metrics.evaluate` for the
mean; the functions that take per-query values ignore that key.
"""

from __future__ import annotations

from core.analysis.breakdowns import (
    GROUP_ATTRIBUTES,
    UNGROUPED,
    UNTAGGED,
    CategoryMean,
    RankedDoc,
    RelevantPositions,
    failing_queries,
    metrics_by_category,
    metrics_by_group,
    missed_relevant,
    query_groups,
    ranked_with_labels,
    relevant_positions,
)
from core.analysis.dataset import (
    LEXICAL_LEAKAGE_THRESHOLD,
    ILSEstimate,
    LeakPair,
    LengthStats,
    char_bigrams,
    find_leakage,
    find_lexical_leakage,
    intra_list_similarity,
    judged_per_query,
    label_distribution,
    length_stats,
    length_stats_of,
    sampled_intra_list_similarity,
)
from core.analysis.significance import (
    MeasureComparison,
    QueryDelta,
    SignificanceResult,
    VersionDelta,
    compare_qrels_versions,
    compare_runs,
    paired_randomization_test,
    paired_t_test,
    per_query_deltas,
)

__all__ = [
    "LEXICAL_LEAKAGE_THRESHOLD",
    "UNGROUPED",
    "UNTAGGED",
    "GROUP_ATTRIBUTES",
    "CategoryMean",
    "ILSEstimate",
    "LeakPair",
    "LengthStats",
    "MeasureComparison",
    "QueryDelta",
    "RankedDoc",
    "RelevantPositions",
    "SignificanceResult",
    "VersionDelta",
    "char_bigrams",
    "compare_qrels_versions",
    "compare_runs",
    "failing_queries",
    "find_leakage",
    "find_lexical_leakage",
    "intra_list_similarity",
    "judged_per_query",
    "label_distribution",
    "length_stats",
    "length_stats_of",
    "metrics_by_category",
    "metrics_by_group",
    "missed_relevant",
    "paired_randomization_test",
    "paired_t_test",
    "per_query_deltas",
    "query_groups",
    "ranked_with_labels",
    "relevant_positions",
    "sampled_intra_list_similarity",
]
