"""The model behind ``active-retrain``: it scores the pool and learns from the labels between batches.

:func:`core.simulation.simulate_labelling` only needs this protocol; the
cross-encoder that implements it (fine-tuned on every label so far after
each batch) is :class:`core.training.active.RetrainingSelector`.  A test can
bring a plain Python object with the same three methods.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

__all__ = ["Selector"]


class Selector(Protocol):
    """A model that gives each pooled pair a probability of relevance and can be updated with labels.

    ``reset()`` returns to the base model (each simulated strategy starts
    from it); ``probabilities(pairs)`` returns one probability in [0, 1]
    per ``(qid, docid)`` pair, in order; ``update(labels, level)`` fine-tunes
    on every label so far (``{(qid, docid): grade}``, relevant when
    ``grade >= level``) before the next batch is chosen.
    """

    def reset(self) -> None:
        """Return to the base model's weights."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> Iterable[float]:
        """The probability that each pair is relevant, in the order given."""
        ...

    def update(self, labels: Mapping[tuple[str, str], int], level: int) -> None:
        """Learn from every label so far (all of them, not only the newest batch)."""
