"""From an append-only judgment log to each annotator's current label.

Judgments are never updated: a relabel appends a new ``label`` event, an
undo appends an ``undo`` event that withdraws the annotator's latest label
on that pair (so a second undo withdraws the one before, like an editor's
undo stack).  ``skip`` and ``flag`` events do not change the label.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import NamedTuple


class Event(NamedTuple):
    """One row of the log, in the order it was written."""

    pair: Hashable
    annotator: str
    action: str  # "label" | "undo" | "skip" | "flag"
    grade: int | None = None


def current_labels(events: Iterable[Event]) -> dict[Hashable, dict[str, int]]:
    """Replay the log: ``{pair: {annotator: grade}}`` for every label still standing.

    Examples
    --------
    >>> log = [Event("p", "ann", "label", 2), Event("p", "ann", "label", 3), Event("p", "ann", "undo")]
    >>> current_labels(log)
    {'p': {'ann': 2}}
    """
    stacks: dict[tuple[Hashable, str], list[int]] = {}
    for event in events:
        key = (event.pair, event.annotator)
        if event.action == "label":
            if event.grade is None:
                raise ValueError(f"a label event needs a grade: {event!r}")
            stacks.setdefault(key, []).append(event.grade)
        elif event.action == "undo":
            stack = stacks.get(key)
            if stack:
                stack.pop()
        elif event.action not in ("skip", "flag"):
            raise ValueError(f"unknown judgment action {event.action!r}")
    labels: dict[Hashable, dict[str, int]] = {}
    for (pair, annotator), stack in stacks.items():
        if stack:
            labels.setdefault(pair, {})[annotator] = stack[-1]
    return labels


def labels_of(labels: Mapping[Hashable, Mapping[str, int]], pair: Hashable) -> list[int]:
    """The standing labels of one pair, in annotator-name order (for :func:`core.resolution.resolve`)."""
    return [grade for _, grade in sorted(labels.get(pair, {}).items())]
