"""Planning who judges which pair, in which package, in which order.

T2Ranking [1]_ has every (query, passage) pair judged by three independent
annotators, and a fourth when the three all disagree
(:mod:`core.resolution`); DuReader-retrieval [2]_ hands the work out in
packages that are quality-checked one by one (:mod:`core.qc`).  This module
plans that work as plain data:

* :func:`plan_assignments` gives every pair ``per_pair`` *distinct*
  annotators in total, counting those it already has, so new pools and new
  annotators can be added later without touching finished or planned work.
  Only **new** tasks are returned; existing ones are never reassigned or
  reordered.
* :func:`plan_fourth` picks the extra annotator for a split pair, among
  :func:`adjudicator_candidates`: the pool's own annotators, or the
  adjudicators an admin listed for the pool (the list wins when set).

Load balancing
    Each pair is given to the eligible annotators (not already on the pair)
    with the least current load, where load = existing load + new tasks
    planned so far.  Ties are broken by a seeded pseudo-random key per
    (seed, pair, annotator), so the result depends on the seed but not on
    the order in which ``pairs`` or ``annotators`` are listed.  Pairs are
    processed in a seeded shuffle of their sorted order.  On a fresh plan
    (equal starting loads, every annotator eligible) loads end within 1 of
    each other.

Order and packages
    Per annotator, the new tasks are shuffled with a per-annotator seed
    :func:`annotator_seed` derived from ``seed`` (recorded on every task, so
    the order can be reproduced).  With ``group_by_query`` the annotator's
    queries are shuffled and each query's passages (also shuffled) are kept
    consecutive.  The shuffled list is then split into
    ``ceil(n / package_size)`` packages of near-equal size (sizes differ by
    at most one, so no package exceeds ``package_size`` and there is no tiny
    trailing package); with ``group_by_query`` a query is never split across
    packages, each cut being moved to the query boundary nearest to the even
    cut.  Package names are ``"<annotator>-p001"``, numbered after the
    annotator's existing packages (``existing_packages``); new tasks always
    go to new packages.  ``order`` is the 0-based position in the package.

References
----------
.. [1] X. Xie et al., "T2Ranking: A large-scale Chinese benchmark for
   passage ranking", SIGIR 2023 (three annotators per pair, a fourth on a
   three-way split).
.. [2] Y. Qiu et al., "DuReader-retrieval: A large-scale Chinese benchmark
   for passage retrieval from web search engine", EMNLP 2022, Appendix A.3
   (annotation in packages, package-level quality control).
"""

from __future__ import annotations

import functools
import hashlib
import math
import random
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from core.validators import integer, non_negative_int, positive_int
from core.validators import pair as check_pair

__all__ = [
    "PairKey",
    "Task",
    "adjudicator_candidates",
    "annotator_seed",
    "package_name",
    "plan_assignments",
    "plan_fourth",
    "split_packages",
]

PairKey = tuple[str, str]
"""``(query_id, doc_id)``."""


@dataclass(frozen=True, slots=True)
class Task:
    """One pair given to one annotator.

    Attributes
    ----------
    pair : tuple of (str, str)
        ``(query_id, doc_id)``.
    annotator : str
        Who judges it.
    package : str
        The package it belongs to, ``"<annotator>-p001"``.
    order : int
        0-based position within the package.
    seed : int
        The per-annotator shuffle seed (:func:`annotator_seed`), in
        ``[0, 2**31)`` so it fits a signed 32-bit column.
    """

    pair: PairKey
    annotator: str
    package: str
    order: int
    seed: int

    @property
    def query_id(self) -> str:
        """The pair's query id."""
        return self.pair[0]

    @property
    def doc_id(self) -> str:
        """The pair's document (passage) id."""
        return self.pair[1]


def _digest(*parts: object) -> bytes:
    text = "\x1f".join(str(p) for p in parts)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()


def annotator_seed(seed: int, annotator: str) -> int:
    """The shuffle seed of one annotator's new tasks.

    Parameters
    ----------
    seed : int
        The plan's seed.
    annotator : str
        The annotator.

    Returns
    -------
    int
        A stable hash of ``(seed, annotator)`` in ``[0, 2**31)``; it does not
        depend on ``PYTHONHASHSEED``.
    """
    return int.from_bytes(_digest("annotator", seed, annotator), "big") & 0x7FFFFFFF


_MASK64 = (1 << 64) - 1


def _mix64(z: int) -> int:
    """The splitmix64 finaliser: a fast, well-spread 64-bit integer hash."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


@functools.lru_cache(maxsize=4096)
def _name_hash(annotator: str) -> int:
    return int.from_bytes(_digest("name", annotator), "big")


def _pair_hash(seed: int, pair: PairKey) -> int:
    return int.from_bytes(_digest("tie", seed, pair[0], pair[1]), "big")


def package_name(annotator: str, number: int) -> str:
    """``"<annotator>-p<number:03d>"``, e.g. ``package_name("ann", 1) == "ann-p001"``."""
    return f"{annotator}-p{number:03d}"


def _check_annotators(annotators: Iterable[str]) -> list[str]:
    names = list(annotators)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ValueError(f"an annotator must be a non-empty str, got {name!r}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"annotators listed more than once: {duplicates}")
    return names


def _check_load(load: Mapping[str, int], what: str = "load") -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in load.items():
        out[name] = non_negative_int(value, f"{what} of {name!r}")
    return out


def split_packages(pairs: Sequence[PairKey], package_size: int, *, group_by_query: bool = False) -> list[list[PairKey]]:
    """Split an ordered list of pairs into packages.

    Parameters
    ----------
    pairs : sequence of (str, str)
        The annotator's tasks in their final order.
    package_size : int
        The target package size.
    group_by_query : bool, default False
        Keep each run of consecutive pairs of one query in one package.

    Returns
    -------
    list of list of (str, str)
        ``ceil(n / package_size)`` packages of near-equal size, in order (see
        the module docstring).  With ``group_by_query`` a cut falls on the
        query boundary nearest to ``round(i * n / m)`` (the earlier one on a
        tie), so a package may exceed ``package_size`` by part of a query and
        there may be fewer packages when queries are large.

    Raises
    ------
    ValueError
        If ``package_size`` is not a positive integer.
    """
    positive_int(package_size, "package_size")
    n = len(pairs)
    if n == 0:
        return []
    m = math.ceil(n / package_size)
    if not group_by_query:
        base, rem = divmod(n, m)
        out: list[list[PairKey]] = []
        start = 0
        for i in range(m):
            size = base + (1 if i < rem else 0)
            out.append(list(pairs[start : start + size]))
            start += size
        return out
    boundaries = [i for i in range(1, n) if pairs[i][0] != pairs[i - 1][0]]
    cuts: list[int] = []
    for i in range(1, m):
        if not boundaries:
            break
        target = (i * n + m // 2) // m  # round(i * n / m), halves up
        j = bisect_left(boundaries, target)
        near = boundaries[max(j - 1, 0) : j + 1]
        best = min(near, key=lambda b: (abs(b - target), b))
        if not cuts or best > cuts[-1]:
            cuts.append(best)
    edges = [0, *cuts, n]
    return [list(pairs[a:b]) for a, b in zip(edges, edges[1:])]


def _least_loaded(pair: PairKey, eligible: list[str], loads: Mapping[str, int], k: int, seed: int) -> list[str]:
    """The ``k`` eligible annotators with the least load, ties by a seeded key.

    Equivalent to sorting by ``(load, tie key)`` and taking ``k``, where the
    tie key of an annotator is ``mix64(hash(seed, pair) XOR hash(name))``: a
    pseudo-random order of the annotators that differs for every pair and
    seed and does not depend on the order the annotators are listed in.
    Only the annotators tied at the cut-off load are keyed.
    """
    cutoff = sorted(loads.get(name, 0) for name in eligible)[k - 1]
    chosen = [name for name in eligible if loads.get(name, 0) < cutoff]
    tied = [name for name in eligible if loads.get(name, 0) == cutoff]
    if len(tied) > k - len(chosen):
        p = _pair_hash(seed, pair)
        tied.sort(key=lambda name: _mix64(p ^ _name_hash(name)))
    return chosen + tied[: k - len(chosen)]


def _order_tasks(pairs: list[PairKey], rng: random.Random, group_by_query: bool) -> list[PairKey]:
    pairs = sorted(pairs)
    if not group_by_query:
        rng.shuffle(pairs)
        return pairs
    by_query: dict[str, list[PairKey]] = {}
    for pair in pairs:
        by_query.setdefault(pair[0], []).append(pair)
    queries = sorted(by_query)
    rng.shuffle(queries)
    ordered: list[PairKey] = []
    for query in queries:
        group = by_query[query]
        rng.shuffle(group)
        ordered.extend(group)
    return ordered


def plan_assignments(
    pairs: Sequence[PairKey],
    annotators: Sequence[str],
    *,
    per_pair: int = 3,
    existing: Mapping[PairKey, Iterable[str]] | None = None,
    load: Mapping[str, int] | None = None,
    existing_packages: Mapping[str, int] | None = None,
    seed: int,
    package_size: int = 1000,
    group_by_query: bool = False,
) -> list[Task]:
    """Plan the new tasks that give every pair ``per_pair`` distinct annotators.

    Parameters
    ----------
    pairs : sequence of (str, str)
        The ``(query_id, doc_id)`` pairs to be judged (e.g. a selection from a pool).  Pairs
        that already have ``per_pair`` annotators get nothing.
    annotators : sequence of str
        The annotators who may receive new tasks.
    per_pair : int, default 3
        Distinct annotators per pair in total (T2Ranking: 3).
    existing : mapping of (str, str) to set of str, optional
        Annotators who already hold each pair (from earlier plans); they count toward
        ``per_pair`` even if not in ``annotators`` (e.g. deactivated) and never get it again.
    load : mapping of str to int, optional
        Each annotator's current number of tasks, existing work included (e.g. counted from
        the store across all pools); counted from ``existing`` when omitted; missing ones have 0.
    existing_packages : mapping of str to int, optional
        How many packages each annotator already has; new packages are numbered after them.
        Missing annotators start at 1.
    seed : int
        Seed for tie-breaking and shuffling; equal inputs and seed give equal plans.
    package_size : int, default 1000
        Target package size (see :func:`split_packages`).
    group_by_query : bool, default False
        Keep one query's passages consecutive (and in one package) in every annotator's list.

    Returns
    -------
    list of Task
        The new tasks only, grouped by annotator (sorted by name), each in package order.

    Raises
    ------
    ValueError
        If a pair would need more annotators than are eligible for it (fewer distinct
        annotators than ``per_pair``), on duplicate pairs or annotators, or on malformed
        arguments.  Nothing is planned then.
    """
    seed = integer(seed, "seed")
    positive_int(per_pair, "per_pair")
    positive_int(package_size, "package_size")
    names, checked, held = _check_annotators(annotators), _check_pairs(pairs), _held(existing)
    current = _load_of(held) if load is None else _check_load(load)
    packages_before = _check_load(existing_packages or {}, "existing_packages")
    needs = _needs(checked, held, names, per_pair)  # every pair is validated before anything is planned
    by_annotator = _distribute(needs, held, names, current, seed)
    return _package_tasks(by_annotator, packages_before, seed, package_size, group_by_query)


def _check_pairs(pairs: Sequence[PairKey]) -> list[PairKey]:
    checked = [check_pair(p) for p in pairs]
    if len(set(checked)) != len(checked):
        dups = sorted(p for p, c in Counter(checked).items() if c > 1)
        raise ValueError(f"pairs listed more than once: {dups[:5]}")
    return checked


def _held(existing: Mapping[PairKey, Iterable[str]] | None) -> dict[PairKey, frozenset[str]]:
    """``{pair: annotators who already hold it}``, checked."""
    held: dict[PairKey, frozenset[str]] = {}
    for p, who in (existing or {}).items():
        if isinstance(who, str):
            raise ValueError(f"existing[{p!r}] must be a set of annotator names, not a str")
        held[check_pair(p)] = frozenset(who)
    return held


def _load_of(held: Mapping[PairKey, frozenset[str]]) -> dict[str, int]:
    """Each annotator's number of held pairs (the load when none is given)."""
    current: dict[str, int] = {}
    for who in held.values():
        for name in who:
            current[name] = current.get(name, 0) + 1
    return current


def _needs(
    checked: list[PairKey], held: Mapping[PairKey, frozenset[str]], names: list[str], per_pair: int
) -> dict[PairKey, int]:
    """``{pair: annotators still needed}`` of the pairs short of ``per_pair``; refuses a pair
    that fewer eligible annotators than it needs could complete."""
    needs: dict[PairKey, int] = {}
    for pair in checked:
        have = held.get(pair, frozenset())
        need = per_pair - len(have)
        if need <= 0:
            continue
        eligible = sum(1 for name in names if name not in have)
        if eligible < need:
            raise ValueError(
                f"pair {pair} needs {need} more distinct annotator(s) to reach {per_pair} "
                f"but only {eligible} eligible annotator(s) are available"
            )
        needs[pair] = need
    return needs


def _distribute(
    needs: Mapping[PairKey, int],
    held: Mapping[PairKey, frozenset[str]],
    names: list[str],
    current: Mapping[str, int],
    seed: int,
) -> dict[str, list[PairKey]]:
    """``{annotator: new pairs}``: the pairs in a seeded shuffle, each to its least-loaded eligible annotators."""
    order = sorted(needs)
    random.Random(_digest("pairs", seed)).shuffle(order)
    new_by_annotator: dict[str, list[PairKey]] = {name: [] for name in names}
    loads = {name: current.get(name, 0) for name in names}
    for pair in order:
        have = held.get(pair, frozenset())
        for name in _least_loaded(pair, [n for n in names if n not in have], loads, needs[pair], seed):
            loads[name] += 1
            new_by_annotator[name].append(pair)
    return new_by_annotator


def _package_tasks(
    new_by_annotator: Mapping[str, list[PairKey]],
    packages_before: Mapping[str, int],
    seed: int,
    package_size: int,
    group_by_query: bool,
) -> list[Task]:
    """The new tasks: each annotator's pairs in their seeded order, cut into numbered packages."""
    tasks: list[Task] = []
    for name in sorted(new_by_annotator):
        mine = new_by_annotator[name]
        if not mine:
            continue
        a_seed = annotator_seed(seed, name)
        ordered = _order_tasks(mine, random.Random(a_seed), group_by_query)
        first = packages_before.get(name, 0) + 1
        for k, package in enumerate(split_packages(ordered, package_size, group_by_query=group_by_query)):
            pname = package_name(name, first + k)
            tasks.extend(Task(pair, name, pname, i, a_seed) for i, pair in enumerate(package))
    return tasks


def plan_fourth(
    pair: PairKey,
    labelled_by: Iterable[str],
    annotators: Sequence[str],
    load: Mapping[str, int] | None,
    seed: int,
) -> str:
    """Choose the extra annotator for a pair whose labels are split.

    Parameters
    ----------
    pair : (str, str)
        The ``(query_id, doc_id)`` pair.
    labelled_by : iterable of str
        Annotators who already labelled (or hold) the pair; none of them is
        chosen.
    annotators : sequence of str
        Annotators who may be chosen.
    load : mapping of str to int or None
        Current task counts; missing annotators (or ``None``) count as 0.
    seed : int
        Seed of the tie-break among equally loaded annotators (the same
        per-(seed, pair, annotator) key as :func:`plan_assignments`).

    Returns
    -------
    str
        The least-loaded eligible annotator.

    Raises
    ------
    ValueError
        If every annotator already labelled the pair, or on malformed
        arguments.
    """
    pair = check_pair(pair)
    seed = integer(seed, "seed")
    names = _check_annotators(annotators)
    if isinstance(labelled_by, str):
        raise ValueError("labelled_by must be a set of annotator names, not a str")
    taken = set(labelled_by)
    loads = _check_load(load or {})
    eligible = [name for name in names if name not in taken]
    if not eligible:
        raise ValueError(f"no annotator is left for pair {pair}: all of {sorted(names)} already labelled it")
    return _least_loaded(pair, eligible, loads, 1, seed)[0]


def adjudicator_candidates(
    pool_annotators: Iterable[str],
    adjudicators: Iterable[str],
    *,
    taken: Iterable[str],
    active: Iterable[str],
) -> list[str]:
    """Who may adjudicate a split pair: the pool's annotators, or its adjudicator list when one is set.

    A split in one pool must not go to someone who never worked on that pool
    (an annotator given only another language's pool, say): the candidates
    come from the pool itself.  An admin's per-pool list replaces the pool's
    annotators entirely, even when none of its members is active now (the
    pair then waits for a reviewer rather than going to someone the admin
    did not choose).

    Parameters
    ----------
    pool_annotators : iterable of str
        Annotators given labelling work in the pool(s) the pair came from.
    adjudicators : iterable of str
        The pool's adjudicator list; empty when none is set.
    taken : iterable of str
        Accounts that already hold the pair (its labellers, a current 4th);
        none of them is a candidate.
    active : iterable of str
        Accounts that may take labelling work now (active, with a labelling
        role); others are never candidates.

    Returns
    -------
    list of str
        The candidates, sorted.

    Raises
    ------
    ValueError
        If an argument is a bare ``str`` rather than a collection of names.
    """
    for value, what in (
        (pool_annotators, "pool_annotators"),
        (adjudicators, "adjudicators"),
        (taken, "taken"),
        (active, "active"),
    ):
        if isinstance(value, str):
            raise ValueError(f"{what} must be a collection of account names, not a str")
    listed = set(adjudicators)
    base = listed if listed else set(pool_annotators)
    return sorted((base & set(active)) - set(taken))
