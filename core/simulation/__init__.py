"""How many labels are enough: a labelling simulation with a collection's own labels as the oracle.

No annotation tool tells a team when to stop labelling.  This module replays
labelling on a collection that is already fully labelled: the pairs of a
pool are "labelled" batch by batch, in the order a selection strategy would
send them to annotators, and after every batch the stored runs are
evaluated against the labels gathered so far.  Two numbers say whether the
labels are enough:

* the Kendall tau between the system ranking under the labels so far and
  the ranking under all labels (Voorhees, "Variations in relevance
  judgments and the measurement of retrieval effectiveness", 2000, takes
  0.9 as "equivalent rankings");
* each run's measure with a seeded percentile bootstrap 95% interval over
  queries (Efron and Tibshirani, *An Introduction to the Bootstrap*, 1993).

Strategies (:data:`STRATEGIES`) give an order over the pool's pairs:

``depth``
    Incremental depth pooling: every run's rank-1 document of every query,
    then every rank 2, ... (queries in sorted id order, runs in the order
    given, a document already taken is skipped).
``top-n``
    DuReader-retrieval's selection: each query's pool re-ranked by the
    ensemble of the runs (:func:`core.pooling.ensemble_scores`), then
    round-robin over the queries by that rank (every query's best, then
    every query's second, ...).
``random``
    A seeded shuffle of the pool (``numpy.random.default_rng(seed)``).
``active``
    T2Ranking section 4.4: a cross-encoder's probability per pair, the most
    uncertain first (probability closest to 0.5).  With a confidence
    ``band=(low, high)``, a pair whose probability is outside the band gets
    the model's label instead of a human's and costs nothing (``p > high``:
    grade ``level``; ``p < low``: grade 0); the result reports those "pairs
    saved".  The probabilities are fixed for the whole simulation (the
    model is not retrained between batches).  With ``rule="relevant"`` the
    most probably relevant pairs come first instead (continuous active
    learning, Cormack and Grossman, SIGIR 2014).
``active-retrain``
    T2Ranking's loop: the same order and band as ``active``, but after each
    batch (except the last) the model (a :class:`~core.simulation.selector.Selector`,
    e.g. :class:`core.training.active.RetrainingSelector`) is fine-tuned on
    every human label so far and scores the unlabelled pairs again before
    the next batch is chosen; the first batch is ``active``'s.  A pooled
    pair the oracle does not judge teaches the model grade 0 (trec_eval's
    reading).  With a band, labelling stops once every pair the model is
    unsure about has been labelled: the model then labels the rest (one
    more row, with no human pair, when that leaves no human batch).

Semantics (trec_eval's view, chosen so that every batch is comparable):

* The pool is the union over the runs of their top ``depth`` documents per
  query, for the queries the oracle judges (a query without oracle labels
  cannot be simulated).  Ranks are trec order (:mod:`core.ranking`).
* After a batch, the qrels are the oracle's grades of the pairs labelled so
  far; an unlabelled pair is absent, i.e. non-relevant, as trec_eval treats
  it.  A pooled pair the oracle does not judge stays absent once labelled
  (the oracle has nothing to say, exactly as under all labels).
* ``recall`` is the share of the pool's relevant pairs (oracle grade
  ``>= level``) labelled relevant so far: how quickly a strategy finds
  them.  Only relevant labels move a trec_eval measure (an unlabelled pair
  already counts as non-relevant), so recall and tau rise together.
* Every mean is over the same query set as the all-label evaluation: the
  queries with at least one oracle judgment (what :func:`core.metrics.evaluate`
  averages over).  A query with no labels yet scores 0 for every run, as
  trec_eval would score a judged query with no relevant document, so the
  means of different batches and of the full labels are comparable.
* Tau is ``scipy.stats.kendalltau`` (tau-b, ties counted) between the runs'
  means; it is NaN while every run has the same mean (nothing to rank).
  When the pool holds every judged pair of the oracle, the last batch
  reproduces the full labels and tau is 1; a shallower pool stays below
  (the bias of the pool itself).
* The bootstrap draws ``resamples`` query samples once from the seed and
  uses them for every batch, strategy and run (paired resamples: the bands
  of two batches differ only by the labels).
"""

from __future__ import annotations

from core.simulation.replay import SimulationSettings, simulate_labelling
from core.simulation.result import CSV_COLUMNS, TAU_TARGET, SimulationResult, SimulationRow
from core.simulation.selector import Selector
from core.simulation.statistics import bootstrap_interval
from core.simulation.strategies import (
    ACTIVE_STRATEGIES,
    RULES,
    STRATEGIES,
    active_order,
    depth_order,
    judged_queries,
    random_order,
    top_n_order,
)

__all__ = [
    "ACTIVE_STRATEGIES",
    "CSV_COLUMNS",
    "RULES",
    "STRATEGIES",
    "Selector",
    "SimulationResult",
    "SimulationRow",
    "SimulationSettings",
    "TAU_TARGET",
    "active_order",
    "bootstrap_interval",
    "depth_order",
    "judged_queries",
    "random_order",
    "simulate_labelling",
    "top_n_order",
]
