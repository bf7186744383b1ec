"""The pooled data: :class:`Contribution` (provenance), :data:`Pool`, :data:`Selection`, and the helpers that build them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from core.ranking import rank_positions
from core.types import Run


@dataclass(frozen=True, slots=True)
class Contribution:
    """One run's part in a pooled pair: the run's name, the 1-based rank and the score it gave.

    ``rank`` is the trec-order rank (score descending, doc id descending)
    within the run's full list for the query.
    """

    run: str
    rank: int
    score: float


Pool = dict[str, dict[str, list[Contribution]]]
"""``{qid: {docid: [Contribution, ...]}}``: the pooled pairs and their provenance.

Contributions of a pair are listed in the order the runs were given.
"""

Selection = dict[str, list[str]]
"""``{qid: [docid, ...]}``: the documents chosen for annotation, best first."""


# --------------------------------------------------------------------------- helpers


def pool_queries(runs: Mapping[str, Run], queries: Sequence[str] | None) -> list[str]:
    """The query ids a pooling method pools, in order, each once.

    Parameters
    ----------
    runs : mapping of str to Run
        The runs by name.
    queries : sequence of str, optional
        The queries to pool; by default every query of any run, in order of first appearance.

    Returns
    -------
    list of str

    Raises
    ------
    TypeError
        ``queries`` is a single string.
    """
    if queries is not None:
        if isinstance(queries, str):
            raise TypeError("queries must be a sequence of query ids, not one string")
        return list(dict.fromkeys(str(q) for q in queries))
    seen: dict[str, None] = {}
    for run in runs.values():
        for qid in run:
            seen.setdefault(qid, None)
    return list(seen)


def all_ranks(runs: Mapping[str, Run], qid: str) -> dict[str, dict[str, int]]:
    """Every run's ranking of one query.

    Parameters
    ----------
    runs : mapping of str to Run
        The runs by name.
    qid : str
        The query.

    Returns
    -------
    dict
        ``{run name: {docid: 1-based rank}}`` (trec_eval's order, :func:`core.ranking.rank_positions`); a run without
        the query maps to ``{}``.
    """
    return {name: rank_positions(run.get(qid, {})) for name, run in runs.items()}


def provenance(
    runs: Mapping[str, Run], ranks: Mapping[str, Mapping[str, int]], qid: str, doc: str
) -> list[Contribution]:
    """The runs that retrieved ``doc`` for ``qid``, with its rank and score in each.

    Parameters
    ----------
    runs : mapping of str to Run
        The runs by name.
    ranks : mapping
        :func:`all_ranks` of ``qid``.
    qid, doc : str
        The pair.

    Returns
    -------
    list of Contribution
        In the order of ``runs``.
    """
    return [Contribution(name, ranks[name][doc], float(runs[name][qid][doc])) for name in runs if doc in ranks[name]]
