"""The Metrics page's live leaderboard evaluator: one per qrels source, safe under concurrent sessions.

Before, ``views/metrics.py`` handed every session one ``IncrementalEvaluator`` per (collection, measures,
level): two sessions on different qrels sources raced on its per-query cache (a ``KeyError`` on an entry the
other session had just pruned, or the other source's values).  The threads below do what two sessions'
reruns do: each evaluates its own source, whose labels change between calls.
"""

from __future__ import annotations

import random
import threading

import pytest
import streamlit as st

from core.metrics import evaluate
from pooljudge.ui.evaluators import LockedEvaluator, leaderboard_results, shared_evaluator

MEASURES = ("MAP", "MRR@10", "nDCG@10", "R@100")
ROUNDS = 25


@pytest.fixture(autouse=True)
def _fresh():
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


def _qrels(seed: int, prefix: str, queries: int = 200) -> dict:
    rng = random.Random(seed)
    return {f"{prefix}{i}": {f"d{j}": rng.randint(0, 3) for j in rng.sample(range(40), 6)} for i in range(queries)}


def _runs(queries: int = 200) -> dict:
    rng = random.Random(7)
    return {
        name: {
            f"{p}{i}": {f"d{j}": rng.random() for j in rng.sample(range(40), 15)}
            for p in ("q", "x")
            for i in range(queries)
        }
        for name in ("bm25", "dense")
    }


def _relabel(qrels: dict, seed: int) -> dict:
    """``qrels`` with a few labels changed, as annotators change the live labels between refreshes."""
    rng = random.Random(seed)
    changed = {qid: dict(docs) for qid, docs in qrels.items()}
    for qid in rng.sample(sorted(changed), 5):
        doc = rng.choice(sorted(changed[qid]))
        changed[qid][doc] = 3 - changed[qid][doc]
    return changed


def _expected(qrels: dict, runs: dict, level: int) -> dict:
    return {name: evaluate(qrels, run, list(MEASURES), level=level) for name, run in runs.items()}


@pytest.mark.parametrize("same_source", [False, True])
def test_two_sessions_evaluating_at_once_each_get_their_own_exact_numbers(same_source):
    runs = _runs()
    sources = ["live final labels", "live final labels" if same_source else "imported"]
    # each session's label states, and what evaluate gives on each (computed before the threads start)
    states = [[_relabel(_qrels(s + 1, "q" if s == 0 else "x"), r) for r in range(3)] for s in range(2)]
    expected = [[_expected(q, runs, 2) for q in per] for per in states]
    failures: list[str] = []
    start = threading.Barrier(2)

    def session(index: int) -> None:
        start.wait()
        for i in range(ROUNDS):
            state = i % 3
            try:
                got, evaluated = leaderboard_results(
                    "sqlite:///x", "c", sources[index], MEASURES, 2, states[index][state], runs
                )
            except Exception as exc:  # noqa: BLE001  (the failure this test is about)
                failures.append(f"session {index}: {exc!r}")
                return
            if got != expected[index][state]:
                failures.append(f"session {index} round {i}: numbers differ from evaluate")
            if not 0 <= evaluated <= 2 * 200:
                failures.append(f"session {index} round {i}: evaluated {evaluated}")

    threads = [threading.Thread(target=session, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_one_evaluator_per_source_measures_and_level_shared_by_sessions():
    a = shared_evaluator("sqlite:///x", "c", "live final labels", MEASURES, 2)
    assert shared_evaluator("sqlite:///x", "c", "live final labels", MEASURES, 2) is a  # every session's
    others = [
        shared_evaluator("sqlite:///x", "c", "imported", MEASURES, 2),
        shared_evaluator("sqlite:///x", "c", "live final labels", MEASURES, 1),
        shared_evaluator("sqlite:///x", "c", "live final labels", MEASURES[:2], 2),
        shared_evaluator("sqlite:///x", "d", "live final labels", MEASURES, 2),
        shared_evaluator("sqlite:///y", "c", "live final labels", MEASURES, 2),
    ]
    assert len({id(e) for e in [a, *others]}) == 6
    assert all(isinstance(e, LockedEvaluator) for e in others)


def test_incremental_counts_are_this_calls():
    runs = _runs(20)
    qrels = _qrels(1, "q", 20)
    got, evaluated = leaderboard_results("sqlite:///x", "c", "imported", MEASURES, 1, qrels, runs)
    assert evaluated == 2 * 20 and got == _expected(qrels, runs, 1)
    assert leaderboard_results("sqlite:///x", "c", "imported", MEASURES, 1, qrels, runs)[1] == 0
    changed = _relabel(qrels, 0)  # 5 queries relabelled, for each of the 2 runs
    got, evaluated = leaderboard_results("sqlite:///x", "c", "imported", MEASURES, 1, changed, runs)
    assert evaluated == 2 * 5 and got == _expected(changed, runs, 1)
