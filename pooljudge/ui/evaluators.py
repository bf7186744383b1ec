"""Live leaderboards shared across sessions: one incremental evaluator per qrels source, behind a lock.

:class:`core.leaderboard.IncrementalEvaluator` is mutable: every
:meth:`~core.leaderboard.IncrementalEvaluator.evaluate` call rewrites its
per-query cache and prunes the queries the given qrels lack.  Handed to every
session by ``st.cache_resource``, two sessions on different qrels sources
(the live labels and a frozen version, say) would iterate over that cache
while the other replaces it (``KeyError``, "dictionary changed size during
iteration") and would each keep evicting the other's values.  So there is
one evaluator per (store, collection, qrels source, measures, level), and its
``evaluate`` runs under the evaluator's own lock: sessions on the same source
share the work, sessions on different sources never touch each other's cache.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import streamlit as st

from core.leaderboard import IncrementalEvaluator, Results
from core.types import Qrels, Run

MAX_EVALUATORS = 64
"""Evaluators kept at once (least recently used dropped first); each holds per-query values of every run."""


class LockedEvaluator:
    """An :class:`~core.leaderboard.IncrementalEvaluator` whose calls run one at a time.

    Parameters
    ----------
    measures : tuple of str
        As for :func:`core.metrics.evaluate`.
    level : int
        Relevance level of the binary measures.
    """

    def __init__(self, measures: tuple[str, ...], level: int) -> None:
        self._evaluator = IncrementalEvaluator(list(measures), level=level)
        self._lock = threading.Lock()

    def evaluate(self, qrels: Qrels, runs: Mapping[str, Run]) -> tuple[dict[str, Results], int]:
        """``(results, evaluated)``: as :meth:`IncrementalEvaluator.evaluate`, and how many (run, query) pairs
        this call evaluated (read under the same lock, so it is this call's count, not another session's)."""
        with self._lock:
            results = self._evaluator.evaluate(qrels, runs)
            return results, self._evaluator.evaluated_queries


@st.cache_resource(max_entries=MAX_EVALUATORS, show_spinner=False)
def shared_evaluator(
    store_url: str, collection: str, source: str, measures: tuple[str, ...], level: int
) -> LockedEvaluator:
    """The process-wide evaluator of one qrels ``source`` of a collection (see the module docstring)."""
    return LockedEvaluator(measures, level)


def leaderboard_results(
    store_url: str,
    collection: str,
    source: str,
    measures: tuple[str, ...],
    level: int,
    qrels: Qrels,
    runs: Mapping[str, Run],
) -> tuple[dict[str, Results], int]:
    """Every run of ``runs`` on the ``qrels`` of ``source``: ``({run: {measure: {qid: value, "all": mean}}}, evaluated)``.

    Equal to :func:`core.metrics.evaluate` on the whole input; only the (run,
    query) pairs whose judgments or ranking changed since the last call on
    the same source are evaluated again.  Safe to call from any number of
    sessions at once.
    """
    return shared_evaluator(store_url, collection, source, tuple(measures), int(level)).evaluate(qrels, runs)
