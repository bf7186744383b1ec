"""What a labelling simulation found: a row per strategy and batch, the stop-labelling hint, the CSV export."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CSV_COLUMNS", "TAU_TARGET", "SimulationResult", "SimulationRow"]

TAU_TARGET = 0.9
"""Kendall tau at which two system rankings are usually called equivalent (Voorhees 2000)."""

CSV_COLUMNS: tuple[str, ...] = (
    "strategy",
    "batch",
    "labelled_pairs",
    "model_labelled",
    "relevant_found",
    "recall",
    "tau",
    "run",
    "metric",
    "lo",
    "hi",
    "full",
)
"""Columns of :meth:`SimulationResult.to_csv`: one row per strategy, batch and run."""


@dataclass(frozen=True)
class SimulationRow:
    """The state after one batch of one strategy.

    ``labelled_pairs`` counts the pairs humans labelled so far;
    ``model_labelled`` the pairs the model labelled for free (active with a
    band; 0 otherwise); ``relevant_found`` the labelled pairs (human or
    model) with grade ``>= level``; ``recall`` the share of the pool's
    relevant pairs (oracle grade ``>= level``) labelled relevant so far (a
    model's wrong "relevant" label finds nothing; NaN when the pool holds
    no relevant pair); ``metric``, ``lo``, ``hi``: each run's mean and
    bootstrap interval under the labels so far.
    """

    strategy: str
    batch: int
    labelled_pairs: int
    model_labelled: int
    relevant_found: int
    recall: float
    tau: float
    metric: dict[str, float]
    lo: dict[str, float]
    hi: dict[str, float]


@dataclass(frozen=True)
class SimulationResult:
    """What :func:`simulate_labelling` found.

    Attributes
    ----------
    measure, level, depth, batch_size, seed, resamples
        The parameters (``measure`` in its canonical spelling).
    runs : list of str
        The runs, in the order given.
    queries : int
        Queries evaluated (those with oracle judgments).
    pool_pairs : int
        Pairs in the depth-``depth`` pool.
    pool_relevant : int
        Pooled pairs the oracle grades ``>= level`` (what ``recall`` divides by).
    full : dict
        ``{run: mean}`` under all oracle labels (the reference).
    rows : list of SimulationRow
        Strategy by strategy, batch by batch.
    saved : dict
        ``{strategy: pairs the model labelled instead of humans}`` (only
        ``active`` with a band saves any).
    model_wrong : dict
        ``{strategy: model labels that disagree with the oracle}`` (relevant
        means grade ``>= level``; an unjudged pair counts as non-relevant).
    rule : str
        The active strategies' order (:data:`core.simulation.strategies.RULES`).
    orders : dict
        ``{strategy: [(qid, docid), ...]}``: the pairs humans labelled, in order.
    training_rounds : dict
        ``{strategy: times the model was fine-tuned}`` (``active-retrain``
        only: once between two batches, never after the last).
    """

    measure: str
    level: int
    depth: int
    batch_size: int
    seed: int
    resamples: int
    runs: list[str]
    queries: int
    pool_pairs: int
    full: dict[str, float]
    rows: list[SimulationRow] = field(default_factory=list)
    saved: dict[str, int] = field(default_factory=dict)
    model_wrong: dict[str, int] = field(default_factory=dict)
    pool_relevant: int = 0
    rule: str = "uncertain"
    orders: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    training_rounds: dict[str, int] = field(default_factory=dict)

    @property
    def strategies(self) -> list[str]:
        """The strategies simulated, in order."""
        return list(dict.fromkeys(row.strategy for row in self.rows))

    def taus(self, strategy: str) -> list[tuple[int, float]]:
        """``[(labelled_pairs, tau), ...]`` of one strategy, batch by batch."""
        return [(row.labelled_pairs, row.tau) for row in self.rows if row.strategy == strategy]

    def recalls(self, strategy: str) -> list[tuple[int, float]]:
        """``[(labelled_pairs, recall), ...]`` of one strategy, batch by batch: relevant pairs found per label spent."""
        return [(row.labelled_pairs, row.recall) for row in self.rows if row.strategy == strategy]

    def pairs_to_recall(self, share: float = 0.9) -> dict[str, int | None]:
        """``{strategy: human-labelled pairs after the first batch with recall >= share}`` (None: never)."""
        reached: dict[str, int | None] = {}
        for row in self.rows:
            reached.setdefault(row.strategy, None)
            if reached[row.strategy] is None and not math.isnan(row.recall) and row.recall >= share:
                reached[row.strategy] = row.labelled_pairs
        return reached

    def pairs_to_reach(self, threshold: float = TAU_TARGET) -> dict[str, int | None]:
        """``{strategy: human-labelled pairs after the first batch with tau >= threshold}`` (None: never).

        The stop-labelling hint: with that many pairs labelled in the
        strategy's order, the system ranking first agreed with the full
        labels' to that tau.
        """
        reached: dict[str, int | None] = {}
        for row in self.rows:
            reached.setdefault(row.strategy, None)
            if reached[row.strategy] is None and not math.isnan(row.tau) and row.tau >= threshold:
                reached[row.strategy] = row.labelled_pairs
        return reached

    def records(self) -> list[dict[str, Any]]:
        """One dict per strategy, batch and run, with the keys :data:`CSV_COLUMNS`."""
        return [
            {
                "strategy": row.strategy,
                "batch": row.batch,
                "labelled_pairs": row.labelled_pairs,
                "model_labelled": row.model_labelled,
                "relevant_found": row.relevant_found,
                "recall": row.recall,
                "tau": row.tau,
                "run": run,
                "metric": row.metric[run],
                "lo": row.lo[run],
                "hi": row.hi[run],
                "full": self.full[run],
            }
            for row in self.rows
            for run in self.runs
        ]

    def to_csv(self, path: str | Path | None = None) -> str:
        """The records as CSV (header :data:`CSV_COLUMNS`, floats with 6 decimals, NaN as ``nan``); also written to ``path``."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CSV_COLUMNS)
        for record in self.records():
            writer.writerow([f"{v:.6f}" if isinstance(v, float) else v for v in record.values()])
        text = out.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text
