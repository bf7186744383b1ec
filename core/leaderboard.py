"""Live leaderboards: evaluate many runs against qrels that change a few labels at a time.

Annotation changes the qrels of one query at a time, so re-evaluating every
run on every query after each label would redo almost all the work.
:class:`IncrementalEvaluator` keeps each run's per-query values keyed by a
digest of that query's judgments and retrieved list, and sends only the
queries whose digest changed to :func:`core.metrics.evaluate`.  Per-query
values are exactly those of a full evaluation (every trec_eval measure is
computed per query), and the means are recomputed with ``math.fsum`` over
the same values, so results equal :func:`core.metrics.evaluate` on the whole
input.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from core.metrics import Measure, evaluate, parse_measure
from core.types import Qrels, Run

Results = dict[str, dict[str, float]]


def _digest(docs: Mapping[str, float] | Mapping[str, int] | None) -> tuple[int, int]:
    """A fingerprint of one query's judgments or ranking: its size and the hash of its ids and values, in order.

    Hashing two tuples runs in C, about 20x faster than feeding every pair to
    a cryptographic hash in Python, which matters because a refresh
    fingerprints every (run, query) pair (3 runs x 10k queries x 100
    documents is 3M pairs).  The same pairs in another order fingerprint
    differently, which only costs a needless re-evaluation; two different
    lists collide with probability about 2^-64.
    """
    if not docs:
        return (0, 0)
    return (len(docs), hash((tuple(docs), tuple(docs.values()))))


class IncrementalEvaluator:
    """Per-query cached evaluation of several runs for fixed measures and relevance level.

    Parameters
    ----------
    measures : sequence of Measure or str
        As for :func:`core.metrics.evaluate`.
    level : int
        Relevance level for binary measures.

    Attributes
    ----------
    evaluated_queries : int
        How many (run, query) evaluations the last :meth:`evaluate` call performed
        (0 when nothing changed).
    """

    def __init__(self, measures: Sequence[Measure | str], *, level: int = 1) -> None:
        self.measures = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
        self.names = [str(m) for m in self.measures]
        self.level = level
        self._cache: dict[tuple[str, str], tuple[tuple[int, int], tuple[int, int], dict[str, float]]] = {}
        self.evaluated_queries = 0

    def evaluate(self, qrels: Qrels, runs: Mapping[str, Run]) -> dict[str, Results]:
        """``{run: {measure: {qid: value, ..., "all": mean}}}`` over the queries of ``qrels``.

        Queries of the qrels missing from a run score 0 (trec_eval ``-c``), as in
        :func:`core.metrics.evaluate` without ``intersection``.
        """
        qrels_digest = {qid: _digest(docs) for qid, docs in qrels.items() if docs}
        self.evaluated_queries = 0
        out: dict[str, Results] = {}
        for name, run in runs.items():
            stale = []
            for qid, q_digest in qrels_digest.items():
                cached = self._cache.get((name, qid))
                r_digest = _digest(run.get(qid))
                if cached is None or cached[0] != q_digest or cached[1] != r_digest:
                    stale.append((qid, q_digest, r_digest))
            if stale:
                sub_qrels = {qid: qrels[qid] for qid, _, _ in stale}
                sub_run = {qid: run[qid] for qid, _, _ in stale if qid in run}
                fresh = evaluate(sub_qrels, sub_run, self.measures, level=self.level)
                for qid, q_digest, r_digest in stale:
                    self._cache[(name, qid)] = (
                        q_digest,
                        r_digest,
                        {m: fresh[m][qid] for m in self.names if qid in fresh[m]},
                    )
                self.evaluated_queries += len(stale)
            results: Results = {m: {} for m in self.names}
            for qid in qrels_digest:
                values = self._cache[(name, qid)][2]
                for m in self.names:
                    if m in values:
                        results[m][qid] = values[m]
            for m in self.names:
                per_query = [v for q, v in results[m].items()]
                results[m]["all"] = math.fsum(per_query) / len(per_query) if per_query else 0.0
            out[name] = results
        live = set(qrels_digest)
        self._cache = {k: v for k, v in self._cache.items() if k[1] in live and k[0] in runs}
        return out
