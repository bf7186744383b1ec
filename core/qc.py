"""Package-level quality control (DuReader-retrieval, Appendix A.3).

DuReader-retrieval [1]_ checks annotation quality per package: when an
annotator finishes a package, at least two reviewers independently judge a
random sample of 100 of its pairs; the package's accuracy is the agreement
between the annotator's labels and the reviewers'; a package below 93%
goes back to its annotator for revision, and the check is repeated on the
revised package until it passes.  Every round is kept.

This module is that procedure as plain data:

* :func:`sample_for_qc`: the pairs of one round (seeded, deterministic).
* :func:`package_accuracy`: how the annotator's labels compare with the
  reviewers', as a :class:`QcResult`.
* :func:`qc_decision`: ``"pass"`` or ``"revise"``.
* :class:`QcCycle`: the rounds of one package (sample -> review -> pass or
  revise -> after revision, a new sample with a new seed ...), with the
  history as a list of :class:`QcRound` records.

How reviewer labels count (``rule``)
    For each checked pair the annotator's label is compared with the labels
    of the pair's reviewers (at least ``min_reviewers`` of them):

    * ``"majority"`` (default): the reviewers' *consensus* is the label given
      by more than half of them (with two reviewers: both).  The pair is
      correct when the annotator's label equals the consensus and wrong
      otherwise.  When the reviewers have no consensus (two reviewers who
      disagree), the pair is **excluded from the accuracy** -- it is neither
      correct nor wrong, since the reference itself is in doubt -- and is
      listed in :attr:`QcResult.reviewer_conflicts` so a further reviewer
      can settle it.
    * ``"all"`` (strict): correct only when the annotator's label equals
      every reviewer's label; a reviewer conflict therefore counts as wrong.
    * ``"any"`` (lenient): correct when the annotator's label equals at least
      one reviewer's label.

    With ``relevance_level`` set, every label is first mapped to binary
    relevance (``label >= relevance_level``), so a 2-vs-3 difference is not
    an error when ``relevance_level=2``.

References
----------
.. [1] Y. Qiu, H. Li, Y. Qu, Y. Chen, Q. She, J. Liu, H. Wu and H. Wang,
   "DuReader-retrieval: A large-scale Chinese benchmark for passage
   retrieval from web search engine", EMNLP 2022, Appendix A.3 (quality
   control).
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from core.validators import as_integer, int_in_range, real_number
from core.validators import pair as check_pair

__all__ = [
    "DEFAULT_SAMPLE_SIZE",
    "DEFAULT_THRESHOLD",
    "Disagreement",
    "QcCycle",
    "QcResult",
    "QcRound",
    "package_accuracy",
    "qc_decision",
    "round_seed",
    "sample_for_qc",
]

PairKey = tuple[str, str]
Rule = Literal["majority", "all", "any"]
Decision = Literal["pass", "revise"]

DEFAULT_SAMPLE_SIZE = 100
"""Pairs sampled per package and round (DuReader-retrieval: 100)."""

DEFAULT_THRESHOLD = 0.93
"""Lowest accuracy that passes (DuReader-retrieval: 93%)."""

_RULES = ("majority", "all", "any")


def _check_label(label: object, where: str) -> int:
    number = as_integer(label)
    if number is None:
        raise ValueError(f"{where}: a label must be an integer, got {label!r}")
    return number


def sample_for_qc(pair_keys: Iterable[PairKey], *, size: int = DEFAULT_SAMPLE_SIZE, seed: int) -> list[PairKey]:
    """A seeded random sample of a package's pairs for review.

    Parameters
    ----------
    pair_keys : iterable of (str, str)
        The package's ``(query_id, doc_id)`` pairs, in any order.
    size : int, default 100
        Sample size; a package with fewer pairs is reviewed entirely.
    seed : int
        Sampling seed (use a new one each round, e.g. :func:`round_seed`).

    Returns
    -------
    list of (str, str)
        ``min(size, n)`` distinct pairs in review order (shuffled).  The
        pairs are sorted before sampling, so the result depends only on the
        set of pairs and the seed.

    Raises
    ------
    ValueError
        On a duplicate or malformed pair, or a size below 1.
    """
    int_in_range(size, "size", 1)
    int_in_range(seed, "seed", -(2**63))
    keys = [check_pair(p) for p in pair_keys]
    if len(set(keys)) != len(keys):
        dups = sorted(p for p, c in Counter(keys).items() if c > 1)
        raise ValueError(f"pairs listed more than once: {dups[:5]}")
    keys.sort()
    rng = random.Random(seed)
    rng.shuffle(keys)
    return keys[:size]


def round_seed(seed: int, package: str, round_number: int) -> int:
    """The sampling seed of one QC round of one package.

    A stable hash of ``(seed, package, round_number)`` in ``[0, 2**31)``, so
    every round samples afresh and the sample can be reproduced.
    """
    text = f"qc\x1f{seed}\x1f{package}\x1f{round_number}"
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class Disagreement:
    """A checked pair on which the annotator was counted wrong.

    Attributes
    ----------
    pair : (str, str)
        The pair.
    annotator_label : int
        The annotator's label (as given, before any binary mapping).
    reviewer_labels : dict of str to int
        Each reviewer's label (as given).
    consensus : int or None
        The reviewers' consensus under the rule (binary 0/1 when
        ``relevance_level`` is set); ``None`` when they had none.
    """

    pair: PairKey
    annotator_label: int
    reviewer_labels: dict[str, int]
    consensus: int | None


@dataclass(frozen=True)
class QcResult:
    """The outcome of comparing a package's sample with its reviews.

    Attributes
    ----------
    accuracy : float or None
        ``n_correct / n_checked``; ``None`` when nothing could be checked.
    n_checked : int
        Pairs that count toward the accuracy.
    n_correct : int
        Of those, pairs where the annotator agreed with the reviewers.
    disagreements : list of Disagreement
        The pairs counted wrong, in sample order.
    reviewer_conflicts : list of (str, str)
        ``rule="majority"`` only: pairs left out because the reviewers had no
        consensus.
    incomplete : list of (str, str)
        Sampled pairs with fewer than ``min_reviewers`` reviews (not counted).
    rule : str
        The rule used.
    relevance_level : int or None
        The binary cut-off used, if any.
    """

    accuracy: float | None
    n_checked: int
    n_correct: int
    disagreements: list[Disagreement] = field(default_factory=list)
    reviewer_conflicts: list[PairKey] = field(default_factory=list)
    incomplete: list[PairKey] = field(default_factory=list)
    rule: str = "majority"
    relevance_level: int | None = None

    @property
    def complete(self) -> bool:
        """``True`` when every sampled pair has enough reviews."""
        return not self.incomplete


def package_accuracy(
    annotator_labels: Mapping[PairKey, int],
    reviewer_labels: Mapping[PairKey, Mapping[str, int]],
    *,
    min_reviewers: int = 2,
    rule: Rule = "majority",
    relevance_level: int | None = None,
    sample: Sequence[PairKey] | None = None,
) -> QcResult:
    """Agreement between an annotator's labels and the reviewers' labels.

    Parameters
    ----------
    annotator_labels : mapping of (str, str) to int
        The annotator's label of each pair (the whole package may be given).
    reviewer_labels : mapping of (str, str) to mapping of str to int
        For each reviewed pair, reviewer -> label.
    min_reviewers : int, default 2
        Reviews a pair needs to be counted (DuReader-retrieval: at least 2).
    rule : {"majority", "all", "any"}, default "majority"
        How the reviewers' labels count; see the module docstring.
    relevance_level : int, optional
        Compare binary relevance ``label >= relevance_level`` instead of
        the labels themselves.
    sample : sequence of (str, str), optional
        The pairs that were sampled for review; those with too few reviews
        are reported as ``incomplete``.  Defaults to the pairs of
        ``reviewer_labels``.

    Returns
    -------
    QcResult

    Raises
    ------
    ValueError
        If a checked pair has no annotator label, a reviewed pair is not in
        ``sample``, a label is not an integer, or ``rule`` is unknown.

    Examples
    --------
    >>> a = {("q", "d1"): 2, ("q", "d2"): 0}
    >>> r = {("q", "d1"): {"r1": 2, "r2": 2}, ("q", "d2"): {"r1": 1, "r2": 1}}
    >>> package_accuracy(a, r).accuracy
    0.5
    """
    _check_options(rule, min_reviewers, relevance_level)
    pairs = _sampled_pairs(reviewer_labels, sample)
    return _review_pairs(annotator_labels, reviewer_labels, pairs, min_reviewers, rule, relevance_level)


def _check_options(rule: object, min_reviewers: object, relevance_level: object) -> None:
    if rule not in _RULES:
        raise ValueError(f"rule must be one of {_RULES}, got {rule!r}")
    int_in_range(min_reviewers, "min_reviewers", 1)
    if relevance_level is not None:
        _check_label(relevance_level, "relevance_level")


def _sampled_pairs(
    reviewer_labels: Mapping[PairKey, Mapping[str, int]], sample: Sequence[PairKey] | None
) -> list[PairKey]:
    """The pairs to check: the sample (each once, covering every reviewed pair) or the reviewed pairs."""
    if sample is None:
        return [check_pair(p) for p in reviewer_labels]
    pairs = [check_pair(p) for p in sample]
    if len(set(pairs)) != len(pairs):
        raise ValueError("sample lists a pair more than once")
    in_sample = set(pairs)
    outside = [p for p in reviewer_labels if p not in in_sample]
    if outside:
        raise ValueError(f"reviewed pairs not in the sample: {sorted(outside)[:5]}")
    return pairs


def _review_pairs(
    annotator_labels: Mapping[PairKey, int],
    reviewer_labels: Mapping[PairKey, Mapping[str, int]],
    pairs: list[PairKey],
    min_reviewers: int,
    rule: Rule,
    relevance_level: int | None,
) -> QcResult:
    """:func:`package_accuracy` on checked options: each pair's verdict, counted."""

    def level(label: int) -> int:
        return label if relevance_level is None else int(label >= relevance_level)

    n_checked = n_correct = 0
    disagreements: list[Disagreement] = []
    conflicts: list[PairKey] = []
    incomplete: list[PairKey] = []
    for pair in pairs:
        reviews = dict(reviewer_labels.get(pair, {}))
        for reviewer, label in reviews.items():
            _check_label(label, f"reviewer {reviewer!r} on {pair}")
        if len(reviews) < min_reviewers:
            incomplete.append(pair)
            continue
        if pair not in annotator_labels:
            raise ValueError(f"pair {pair} was reviewed but has no annotator label")
        own = _check_label(annotator_labels[pair], f"annotator label of {pair}")
        correct, consensus = _verdict(level(own), [level(v) for v in reviews.values()], rule)
        if correct is None:
            conflicts.append(pair)
            continue
        n_checked += 1
        if correct:
            n_correct += 1
        else:
            disagreements.append(Disagreement(pair, own, reviews, consensus))
    accuracy = n_correct / n_checked if n_checked else None
    return QcResult(accuracy, n_checked, n_correct, disagreements, conflicts, incomplete, rule, relevance_level)


def _verdict(mine: int, theirs: list[int], rule: Rule) -> tuple[bool | None, int | None]:
    """Whether the annotator's label counts as correct under ``rule`` (``None``: the majority
    rule met no strict majority, a conflict) and the reviewers' strict-majority label."""
    top_label, top_count = Counter(theirs).most_common(1)[0]
    consensus = top_label if 2 * top_count > len(theirs) else None
    if rule == "majority":
        return (None if consensus is None else mine == consensus), consensus
    if rule == "all":
        return all(t == mine for t in theirs), consensus
    return mine in theirs, consensus  # "any"


def qc_decision(result: QcResult, *, threshold: float = DEFAULT_THRESHOLD) -> Decision:
    """Pass or send back a package.

    Parameters
    ----------
    result : QcResult
        A complete review (every sampled pair has enough reviews).
    threshold : float, default 0.93
        The lowest passing accuracy: ``"pass"`` when
        ``n_correct / n_checked >= threshold`` (compared exactly, so 93 of
        100 passes at 0.93 and 92 of 100 does not).

    Returns
    -------
    {"pass", "revise"}

    Raises
    ------
    ValueError
        If the review is incomplete, nothing was checked, or ``threshold`` is
        outside ``[0, 1]``.
    """
    real_number(threshold, "threshold", low=0, high=1)
    if result.incomplete:
        raise ValueError(f"the review is not complete: {len(result.incomplete)} sampled pair(s) lack reviews")
    if result.n_checked == 0:
        raise ValueError("no pair could be checked; cannot decide")
    accuracy = Fraction(result.n_correct, result.n_checked)
    return "pass" if accuracy >= Fraction(str(threshold)) else "revise"


@dataclass(frozen=True)
class QcRound:
    """One QC round of one package, as a plain record.

    Attributes
    ----------
    number : int
        1-based round number.
    seed : int
        The sampling seed of this round.
    sample : tuple of (str, str)
        The pairs sent to the reviewers, in review order.
    status : {"in_review", "decided"}
        Whether the round's review has been recorded.
    result : QcResult or None
        The comparison, once reviewed.
    decision : {"pass", "revise"} or None
        The outcome, once reviewed.
    """

    number: int
    seed: int
    sample: tuple[PairKey, ...]
    status: Literal["in_review", "decided"] = "in_review"
    result: QcResult | None = None
    decision: Decision | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (pairs become two-element lists)."""
        result = None
        if self.result is not None:
            r = self.result
            result = {
                "accuracy": r.accuracy,
                "n_checked": r.n_checked,
                "n_correct": r.n_correct,
                "disagreements": [
                    {
                        "pair": list(d.pair),
                        "annotator_label": d.annotator_label,
                        "reviewer_labels": dict(d.reviewer_labels),
                        "consensus": d.consensus,
                    }
                    for d in r.disagreements
                ],
                "reviewer_conflicts": [list(p) for p in r.reviewer_conflicts],
                "incomplete": [list(p) for p in r.incomplete],
                "rule": r.rule,
                "relevance_level": r.relevance_level,
            }
        return {
            "number": self.number,
            "seed": self.seed,
            "sample": [list(p) for p in self.sample],
            "status": self.status,
            "result": result,
            "decision": self.decision,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> QcRound:
        """Rebuild a round from :meth:`to_dict` output."""
        r = data.get("result")
        result = None
        if r is not None:
            result = QcResult(
                r["accuracy"],
                r["n_checked"],
                r["n_correct"],
                [
                    Disagreement(
                        (d["pair"][0], d["pair"][1]),
                        d["annotator_label"],
                        dict(d["reviewer_labels"]),
                        d["consensus"],
                    )
                    for d in r["disagreements"]
                ],
                [(p[0], p[1]) for p in r["reviewer_conflicts"]],
                [(p[0], p[1]) for p in r["incomplete"]],
                r["rule"],
                r["relevance_level"],
            )
        return cls(
            data["number"],
            data["seed"],
            tuple((p[0], p[1]) for p in data["sample"]),
            data["status"],
            result,
            data["decision"],
        )


CycleState = Literal["not_started", "in_review", "revising", "passed"]


class QcCycle:
    """The QC rounds of one package.

    States and transitions::

        not_started --start_round--> in_review --record_review--> passed
                                         ^                    \\
                                         |                     v
                                         +---start_round--- revising

    ``start_round`` after ``"revising"`` means the annotator has submitted
    the revised package; the new round samples again with a new seed
    (:func:`round_seed` of the cycle's seed, the package and the round
    number).  Rounds are never changed once decided; :attr:`history` holds
    them all.

    Parameters
    ----------
    package : str
        The package name (part of every round's seed).
    seed : int
        The cycle's base seed.
    sample_size, threshold, min_reviewers, rule, relevance_level
        As in :func:`sample_for_qc`, :func:`qc_decision` and
        :func:`package_accuracy`.
    rounds : iterable of QcRound, optional
        Earlier rounds (e.g. rebuilt with :meth:`QcRound.from_dict`), to
        continue a cycle.
    """

    def __init__(
        self,
        package: str,
        *,
        seed: int,
        sample_size: int = DEFAULT_SAMPLE_SIZE,
        threshold: float = DEFAULT_THRESHOLD,
        min_reviewers: int = 2,
        rule: Rule = "majority",
        relevance_level: int | None = None,
        rounds: Iterable[QcRound] = (),
    ) -> None:
        if not isinstance(package, str) or not package:
            raise ValueError(f"package must be a non-empty str, got {package!r}")
        self.package = package
        self.seed = int_in_range(seed, "seed", -(2**63))
        self.sample_size = int_in_range(sample_size, "sample_size", 1)
        real_number(threshold, "threshold", low=0, high=1)
        self.threshold = threshold
        self.min_reviewers = int_in_range(min_reviewers, "min_reviewers", 1)
        if rule not in _RULES:
            raise ValueError(f"rule must be one of {_RULES}, got {rule!r}")
        self.rule: Rule = rule
        self.relevance_level = relevance_level
        self._rounds: list[QcRound] = list(rounds)
        for i, rnd in enumerate(self._rounds, start=1):
            if rnd.number != i:
                raise ValueError(f"rounds must be numbered 1, 2, ...; round {i} has number {rnd.number}")
            if i < len(self._rounds) and rnd.decision != "revise":
                raise ValueError(f"round {i} is followed by another round but was not sent back")

    @property
    def state(self) -> CycleState:
        """``"not_started"``, ``"in_review"``, ``"revising"`` or ``"passed"``."""
        if not self._rounds:
            return "not_started"
        last = self._rounds[-1]
        if last.status == "in_review":
            return "in_review"
        return "passed" if last.decision == "pass" else "revising"

    @property
    def history(self) -> list[QcRound]:
        """Every round so far, oldest first (a copy)."""
        return list(self._rounds)

    @property
    def current(self) -> QcRound | None:
        """The latest round, or ``None`` before the first."""
        return self._rounds[-1] if self._rounds else None

    def start_round(self, pair_keys: Iterable[PairKey]) -> QcRound:
        """Sample the package (as it is now) for a new round.

        Parameters
        ----------
        pair_keys : iterable of (str, str)
            The package's pairs.

        Returns
        -------
        QcRound
            The new round, ``status="in_review"``.

        Raises
        ------
        ValueError
            Unless the state is ``"not_started"`` or ``"revising"``, or the
            package is empty.
        """
        if self.state not in ("not_started", "revising"):
            raise ValueError(f"cannot start a round while the package is {self.state!r}")
        number = len(self._rounds) + 1
        seed = round_seed(self.seed, self.package, number)
        sample = sample_for_qc(pair_keys, size=self.sample_size, seed=seed)
        if not sample:
            raise ValueError(f"package {self.package!r} has no pairs to sample")
        rnd = QcRound(number, seed, tuple(sample))
        self._rounds.append(rnd)
        return rnd

    def record_review(
        self,
        annotator_labels: Mapping[PairKey, int],
        reviewer_labels: Mapping[PairKey, Mapping[str, int]],
    ) -> QcRound:
        """Record the reviews of the current round and decide it.

        Parameters
        ----------
        annotator_labels : mapping of (str, str) to int
            The annotator's current labels (after any revision).
        reviewer_labels : mapping of (str, str) to mapping of str to int
            The reviewers' labels of the round's sample.

        Returns
        -------
        QcRound
            The decided round; the state becomes ``"passed"`` or
            ``"revising"``.

        Raises
        ------
        ValueError
            If no round is in review or the review is incomplete (the round
            stays in review).
        """
        if self.state != "in_review":
            raise ValueError(f"no round is in review (the package is {self.state!r})")
        rnd = self._rounds[-1]
        result = package_accuracy(
            annotator_labels,
            reviewer_labels,
            min_reviewers=self.min_reviewers,
            rule=self.rule,
            relevance_level=self.relevance_level,
            sample=rnd.sample,
        )
        decision = qc_decision(result, threshold=self.threshold)
        decided = QcRound(rnd.number, rnd.seed, rnd.sample, "decided", result, decision)
        self._rounds[-1] = decided
        return decided
