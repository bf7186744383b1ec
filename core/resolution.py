"""Resolving independent relevance labels into one final label (T2Ranking).

The protocol follows T2Ranking [1]_: every (query, passage) pair is judged
by three independent annotators; when all three labels differ a fourth
annotator, not one of the three, judges the pair; the final label is the
majority label, and a pair whose four labels still have no majority is
excluded from the qrels.  Every final label records *how* it was reached
(``Resolution.method``), because the qrels keep that provenance (DESIGN.md,
"Resolution (T2Ranking)").

Rules, for ``n`` labels of distinct annotators and ``required`` independent
labels per pair (3 in T2Ranking):

* ``n < required``: **pending**, no grade yet.
* every label equal: **resolved** by ``"unanimous"``.
* one label held by a *strict majority* (more than ``n / 2`` of the labels):
  **resolved** by ``"majority"`` (the 2-of-3 case) -- unless ``n > required``
  and the extra labels may have been what made the majority (see below).
* ``n == required`` and no strict majority (three different labels):
  **needs_fourth** -- one more annotator, not one of those who labelled, must
  judge the pair.
* ``n > required`` and no strict majority: the *adjudication majority* is a
  label that is the **unique** most frequent label **and** is held by at
  least two annotators.  ``[a, b, c, a]`` resolves to ``a`` by
  ``"adjudicated"``; a 2-2 tie ``[a, b, a, b]`` or four different labels
  ``[a, b, c, d]`` have no such label and the pair is **excluded**.

The labels are an unordered multiset (the caller passes the latest label of
each annotator; undo and relabel are resolved before this module), so the
method is decided from the counts alone.  When ``n > required`` a winner with
a strict majority is reported as ``"majority"`` only when *any* ``required``
of the ``n`` labels already give it a strict majority, i.e. when
``count - (n - required) > required / 2``; otherwise the extra annotators
were needed and the method is ``"adjudicated"``.  With ``required = 3`` this
means ``[a, a, a, b]`` is ``"majority"`` (the three first labels must have
agreed at least 2-1 whatever the order) and ``[a, a, b, c]`` is
``"adjudicated"``.  With ``required = 2``, ``[a, b, a]`` is ``"adjudicated"``.

The same rules apply to binary labels (``levels=BINARY``): with three binary
labels a strict majority always exists, so ``needs_fourth`` never arises.

Reviewers may replace any resolution by an explicit decision with
:func:`apply_override` (method ``"overridden"``); a reason is required.

References
----------
.. [1] X. Xie, Q. Dong, B. Wang, F. Lv, T. Yao, W. Gan, Z. Wu, X. Li, H. Li,
   Y. Liu and J. Ma, "T2Ranking: A large-scale Chinese benchmark for passage
   ranking", SIGIR 2023 (Section 3, relevance annotation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from core.scale import BINARY, GRADES  # re-exported: the scales are defined in core.scale
from core.types import Qrels
from core.validators import is_integer, positive_int

__all__ = [
    "BINARY",
    "GRADES",
    "METHODS",
    "STATES",
    "Resolution",
    "apply_override",
    "exclusion_reason",
    "resolve",
    "resolutions_to_qrels",
]


State = Literal["pending", "needs_fourth", "resolved", "excluded"]
Method = Literal["unanimous", "majority", "adjudicated", "excluded", "overridden"]

STATES: tuple[str, ...] = ("pending", "needs_fourth", "resolved", "excluded")
METHODS: tuple[str, ...] = ("unanimous", "majority", "adjudicated", "excluded", "overridden")


@dataclass(frozen=True)
class Resolution:
    """Where a pair stands and, once final, its label and how it was reached.

    Attributes
    ----------
    state : {"pending", "needs_fourth", "resolved", "excluded"}
        ``"pending"``: fewer labels than required.  ``"needs_fourth"``: the
        required labels have no majority and one more annotator is needed.
        ``"resolved"``: ``grade`` is the final label.  ``"excluded"``: the
        pair is left out of the qrels.
    grade : int or None
        The final label; ``None`` unless ``state == "resolved"``.
    method : {"unanimous", "majority", "adjudicated", "excluded", "overridden"} or None
        How the final decision was reached; ``None`` while not final.
    n_labels : int
        Number of annotator labels the decision is based on.
    counts : dict of int to int
        Label -> number of annotators who gave it, by ascending label.
    reason : str
        The reviewer's reason for an ``"overridden"`` decision, why an
        ``"excluded"`` pair is excluded (:func:`exclusion_reason`), else ``""``.
    """

    state: State
    grade: int | None
    method: Method | None
    n_labels: int
    counts: dict[int, int] = field(default_factory=dict)
    reason: str = ""

    @property
    def is_final(self) -> bool:
        """``True`` when the pair needs no more labels (resolved or excluded)."""
        return self.state in ("resolved", "excluded")


def _check_levels(levels: Iterable[int]) -> frozenset[int]:
    allowed = frozenset(levels)
    if not allowed:
        raise ValueError("levels must contain at least one label value")
    for level in allowed:
        if not is_integer(level):
            raise ValueError(f"levels must be integers, got {level!r}")
    return allowed


def _check_label(label: object, allowed: frozenset[int]) -> int:
    if not is_integer(label):
        raise ValueError(f"a label must be an integer, got {label!r}")
    if label not in allowed:
        raise ValueError(f"label {label} is not one of the allowed levels {sorted(allowed)}")
    return label


def resolve(
    labels: Sequence[int],
    *,
    required: int = 3,
    levels: Iterable[int] = GRADES,
) -> Resolution:
    """Resolve the labels of distinct annotators into a final label.

    Parameters
    ----------
    labels : sequence of int
        One label per annotator (each annotator's latest label), in any
        order; the order does not change the result.
    required : int, default 3
        Independent labels needed before a decision (T2Ranking: 3).
    levels : iterable of int, default :data:`GRADES`
        The allowed label values; :data:`BINARY` for 0/1 annotation.

    Returns
    -------
    Resolution
        See the module docstring for the exact rules.

    Raises
    ------
    ValueError
        If ``required`` is not a positive integer or a label is not one of
        ``levels``.

    Examples
    --------
    >>> resolve([2, 2, 1]).method
    'majority'
    >>> resolve([0, 1, 2]).state
    'needs_fourth'
    >>> r = resolve([0, 1, 2, 1]); (r.grade, r.method)
    (1, 'adjudicated')
    >>> resolve([0, 1, 0, 1]).state
    'excluded'
    """
    positive_int(required, "required")
    allowed = _check_levels(levels)
    checked = [_check_label(label, allowed) for label in labels]
    n = len(checked)
    counter = Counter(checked)
    counts = {label: counter[label] for label in sorted(counter)}

    if n < required:
        return Resolution("pending", None, None, n, counts)
    return _decide(counts, n, required)


def _decide(counts: dict[int, int], n: int, required: int) -> Resolution:
    """The rules of the module docstring once ``n >= required`` labels are in (``counts`` by label)."""
    top = max(counts.values())
    leaders = [label for label, c in counts.items() if c == top]

    if top == n:
        return Resolution("resolved", leaders[0], "unanimous", n, counts)

    if 2 * top > n:  # strict majority of all labels
        winner = leaders[0]
        extra = n - required
        # The winner's count among any `required` of the n labels is at least
        # top - extra; "majority" only if that is still a strict majority.
        method: Method = "majority" if 2 * (top - extra) > required else "adjudicated"
        return Resolution("resolved", winner, method, n, counts)

    if n == required:
        return Resolution("needs_fourth", None, None, n, counts)

    if len(leaders) == 1 and top >= 2:
        return Resolution("resolved", leaders[0], "adjudicated", n, counts)
    return Resolution("excluded", None, "excluded", n, counts, reason=exclusion_reason(counts))


def exclusion_reason(counts: Mapping[int, int]) -> str:
    """Why labels with these counts exclude a pair, e.g. ``"4 labels, no majority: 0, 1, 2, 3"``.

    Parameters
    ----------
    counts : mapping of int to int
        Label -> number of annotators who gave it.

    Returns
    -------
    str
        The number of labels and every label given, ascending (a 2-2 tie reads ``1, 1, 2, 2``).
    """
    labels = [label for label in sorted(counts) for _ in range(counts[label])]
    return f"{len(labels)} labels, no majority: {', '.join(map(str, labels))}"


def apply_override(
    resolution: Resolution,
    grade: int | None,
    reason: str,
    *,
    levels: Iterable[int] = GRADES,
) -> Resolution:
    """Replace a resolution with a reviewer's decision.

    Parameters
    ----------
    resolution : Resolution
        The resolution being overridden (in any state); its ``n_labels`` and
        ``counts`` are kept so the annotators' labels stay visible.
    grade : int or None
        The reviewer's final label, or ``None`` to exclude the pair.
    reason : str
        Why the label was overridden; required (blank is rejected).
    levels : iterable of int, default :data:`GRADES`
        The allowed label values.

    Returns
    -------
    Resolution
        ``state="resolved"`` (or ``"excluded"`` when ``grade`` is ``None``),
        ``method="overridden"``, ``reason`` stripped of surrounding blanks.

    Raises
    ------
    ValueError
        If ``reason`` is empty or blank, or ``grade`` is not one of ``levels``.
    """
    if not isinstance(resolution, Resolution):
        raise ValueError(f"expected a Resolution, got {type(resolution).__name__}")
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("an override needs a reason")
    if grade is not None:
        _check_label(grade, _check_levels(levels))
    state: State = "excluded" if grade is None else "resolved"
    return Resolution(state, grade, "overridden", resolution.n_labels, dict(resolution.counts), reason.strip())


def resolutions_to_qrels(resolutions: Mapping[tuple[str, str], Resolution]) -> Qrels:
    """The qrels of the pairs with a final grade.

    Parameters
    ----------
    resolutions : mapping of (query_id, doc_id) to Resolution
        Resolutions keyed by pair.

    Returns
    -------
    Qrels
        ``{query_id: {doc_id: grade}}`` for every ``"resolved"`` pair;
        pending, needs-fourth and excluded pairs are left out.
    """
    qrels: Qrels = {}
    for (query_id, doc_id), res in resolutions.items():
        if res.state == "resolved" and res.grade is not None:
            qrels.setdefault(query_id, {})[doc_id] = res.grade
    return qrels
