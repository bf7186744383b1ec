"""Tests for core.assignment: distinct annotators per pair, load balance, packages, determinism."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import pytest

from core.assignment import (
    Task,
    adjudicator_candidates,
    annotator_seed,
    package_name,
    plan_assignments,
    plan_fourth,
    split_packages,
)

ANN = ["ann", "bob", "cy", "dee", "eve"]


def pairs_of(n_queries: int, per_query: int) -> list[tuple[str, str]]:
    return [(f"q{q}", f"d{q}-{d}") for q in range(n_queries) for d in range(per_query)]


def who_has(tasks: list[Task]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for t in tasks:
        out[t.pair].append(t.annotator)
    return out


def test_every_pair_gets_three_distinct_annotators_and_balanced_loads() -> None:
    pairs = pairs_of(2, 5)  # 10 pairs x 3 = 30 tasks over 5 annotators
    tasks = plan_assignments(pairs, ANN, seed=7)
    assert len(tasks) == 30
    holders = who_has(tasks)
    assert set(holders) == set(pairs)
    assert all(len(v) == 3 and len(set(v)) == 3 for v in holders.values())
    assert Counter(t.annotator for t in tasks) == {a: 6 for a in ANN}


def test_loads_differ_by_at_most_one() -> None:
    tasks = plan_assignments(pairs_of(1, 7), ANN, seed=3)  # 21 tasks over 5
    loads = Counter(t.annotator for t in tasks)
    assert sorted(loads.values()) == [4, 4, 4, 4, 5]


def test_existing_assignments_count_and_are_never_repeated() -> None:
    pairs = [("q", "a"), ("q", "b"), ("q", "c")]
    existing = {("q", "a"): {"ann", "bob"}, ("q", "b"): {"ann", "bob", "cy"}}
    tasks = plan_assignments(pairs, ["ann", "bob", "cy", "dee"], existing=existing, seed=1)
    holders = who_has(tasks)
    assert ("q", "b") not in holders  # already complete
    assert len(holders[("q", "a")]) == 1 and holders[("q", "a")][0] in {"cy", "dee"}
    assert len(holders[("q", "c")]) == 3
    # load counted from `existing`: ann 2, bob 2, cy 1, dee 0.  Pair a goes to dee (0 < 1);
    # pair c then takes the least loaded: cy 1, dee 1, and one of ann/bob (2).
    assert holders[("q", "a")] == ["dee"]
    assert set(holders[("q", "c")]) >= {"cy", "dee"}


def test_deactivated_existing_annotator_still_counts() -> None:
    # "old" left the team; their label stays and counts toward the three.
    tasks = plan_assignments([("q", "a")], ["ann", "bob"], existing={("q", "a"): {"old"}}, seed=0)
    assert sorted(t.annotator for t in tasks) == ["ann", "bob"]


def test_explicit_load_steers_work_away_from_busy_annotators() -> None:
    tasks = plan_assignments(pairs_of(1, 4), ["ann", "bob", "cy", "dee"], load={"ann": 10}, seed=5)
    assert Counter(t.annotator for t in tasks) == {"bob": 4, "cy": 4, "dee": 4}


def test_adding_an_annotator_later_only_affects_new_pairs() -> None:
    first = pairs_of(2, 3)
    plan1 = plan_assignments(first, ["ann", "bob", "cy"], seed=11, package_size=4)
    existing: dict[tuple[str, str], set[str]] = defaultdict(set)
    for t in plan1:
        existing[t.pair].add(t.annotator)
    packages = Counter()
    for name in {t.annotator for t in plan1}:
        packages[name] = len({t.package for t in plan1 if t.annotator == name})
    assert dict(packages) == {"ann": 2, "bob": 2, "cy": 2}  # 6 tasks each in 2 packages of 3

    second = pairs_of(4, 3)[6:]  # q2, q3: new pool
    plan2 = plan_assignments(
        first + second,
        ["ann", "bob", "cy", "dee"],
        existing=existing,
        existing_packages=packages,
        seed=11,
        package_size=4,
    )
    assert {t.pair for t in plan2} == set(second)  # finished pairs untouched
    assert all(t.annotator not in existing[t.pair] for t in plan2)
    assert all(len(v) == 3 for v in who_has(plan2).values())
    # dee starts at 0 while the others carry 6: dee takes one slot of every new pair.
    assert sum(t.annotator == "dee" for t in plan2) == 6
    # package numbering continues after the existing packages
    assert {t.package for t in plan2 if t.annotator == "ann"} <= {"ann-p003", "ann-p004"}
    assert {t.package for t in plan2 if t.annotator == "dee"} == {"dee-p001", "dee-p002"}
    # re-planning the first pool reproduces plan1 exactly
    assert plan_assignments(first, ["ann", "bob", "cy"], seed=11, package_size=4) == plan1


def test_deterministic_by_seed_and_independent_of_input_order() -> None:
    pairs = pairs_of(6, 5)
    a = plan_assignments(pairs, ANN, seed=42, package_size=7)
    b = plan_assignments(list(reversed(pairs)), list(reversed(ANN)), seed=42, package_size=7)
    assert a == b
    c = plan_assignments(pairs, ANN, seed=43, package_size=7)
    assert a != c


def test_recorded_seed_reproduces_each_annotators_order() -> None:
    tasks = plan_assignments(pairs_of(5, 4), ANN, seed=9, package_size=5)
    for name in ANN:
        mine = [t for t in tasks if t.annotator == name]
        assert {t.seed for t in mine} == {annotator_seed(9, name)}
        expected = sorted(t.pair for t in mine)
        random.Random(annotator_seed(9, name)).shuffle(expected)
        assert [t.pair for t in mine] == expected
        assert 0 <= mine[0].seed < 2**31


def test_annotator_seed_is_stable() -> None:
    assert annotator_seed(1, "ann") == annotator_seed(1, "ann")
    assert annotator_seed(1, "ann") != annotator_seed(2, "ann")
    assert annotator_seed(1, "ann") != annotator_seed(1, "bob")


def test_packages_and_orders() -> None:
    pairs = [("q", f"d{i:02d}") for i in range(25)]
    tasks = plan_assignments(pairs, ["ann"], per_pair=1, seed=0, package_size=10)
    sizes = Counter(t.package for t in tasks)
    assert sizes == {"ann-p001": 9, "ann-p002": 8, "ann-p003": 8}
    for pkg, n in sizes.items():
        assert [t.order for t in tasks if t.package == pkg] == list(range(n))
    more = plan_assignments(pairs, ["ann"], per_pair=1, seed=0, package_size=10, existing_packages={"ann": 2})
    assert sorted(Counter(t.package for t in more)) == ["ann-p003", "ann-p004", "ann-p005"]
    assert package_name("x y", 12) == "x y-p012"


@pytest.mark.parametrize(
    ("n", "size", "expected"),
    [
        (2500, 1000, [834, 833, 833]),
        (2000, 1000, [1000, 1000]),
        (999, 1000, [999]),
        (1001, 1000, [501, 500]),
        (0, 5, []),
    ],
)
def test_split_packages_sizes(n: int, size: int, expected: list[int]) -> None:
    items = [("q", str(i)) for i in range(n)]
    packages = split_packages(items, size)
    assert [len(p) for p in packages] == expected
    assert [x for p in packages for x in p] == items


def test_split_packages_by_query_never_splits_a_query() -> None:
    items = [
        ("a", "1"),
        ("a", "2"),
        ("a", "3"),
        ("b", "1"),
        ("b", "2"),
        ("b", "3"),
        ("c", "1"),
        ("c", "2"),
        ("d", "1"),
        ("d", "2"),
        ("d", "3"),
        ("d", "4"),
    ]
    # n=12, size 5 -> 3 packages; even cuts at 4 and 8 move to query boundaries 3 and 8.
    packages = split_packages(items, 5, group_by_query=True)
    assert [len(p) for p in packages] == [3, 5, 4]
    assert [sorted({q for q, _ in p}) for p in packages] == [["a"], ["b", "c"], ["d"]]
    # one query larger than the package size stays whole
    big = [("z", str(i)) for i in range(7)]
    assert [len(p) for p in split_packages(big, 3, group_by_query=True)] == [7]


def test_group_by_query_keeps_queries_consecutive() -> None:
    pairs = pairs_of(8, 6)
    tasks = plan_assignments(pairs, ANN, seed=4, package_size=10, group_by_query=True)
    for name in ANN:
        mine = [t for t in tasks if t.annotator == name]
        runs = [t.query_id for i, t in enumerate(mine) if i == 0 or t.query_id != mine[i - 1].query_id]
        assert len(runs) == len(set(runs)), f"{name}: a query is split: {runs}"
        by_pkg: dict[str, set[str]] = defaultdict(set)
        for t in mine:
            by_pkg[t.package].add(t.query_id)
        seen: list[str] = [q for qs in by_pkg.values() for q in qs]
        assert len(seen) == len(set(seen)), f"{name}: a query spans packages"
    # queries are not simply in sorted order for everyone
    first_queries = [next(t.query_id for t in tasks if t.annotator == n) for n in ANN]
    assert len(set(first_queries)) > 1


def test_group_by_query_shuffles_passages_within_a_query() -> None:
    pairs = pairs_of(1, 12)  # one query: the whole order is the passage order
    tasks = plan_assignments(pairs, ["ann"], per_pair=1, seed=2, group_by_query=True)
    docs = [t.doc_id for t in tasks]
    assert sorted(docs) == sorted(d for _, d in pairs)
    assert docs != sorted(docs)
    # reproducible from the recorded seed: queries shuffled, then each query's passages
    expected = sorted(pairs)
    rng = random.Random(tasks[0].seed)
    rng.shuffle(["q0"])
    rng.shuffle(expected)
    assert [t.pair for t in tasks] == expected


def test_too_few_annotators_raises() -> None:
    with pytest.raises(ValueError, match="needs 3 more"):
        plan_assignments([("q", "a")], ["ann", "bob"], seed=0)
    # the existing holder is not eligible again: 2 needed, only bob is left
    with pytest.raises(ValueError, match="needs 2 more"):
        plan_assignments([("q", "a")], ["ann", "bob"], existing={("q", "a"): {"ann"}}, seed=0)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="more than once"):
        plan_assignments([("q", "a"), ("q", "a")], ANN, seed=0)
    with pytest.raises(ValueError, match="more than once"):
        plan_assignments([("q", "a")], ["ann", "ann", "bob", "cy"], seed=0)
    with pytest.raises(ValueError, match="tuple"):
        plan_assignments([["q", "a"]], ANN, seed=0)  # type: ignore[list-item]
    with pytest.raises(ValueError, match="package_size"):
        plan_assignments([("q", "a")], ANN, seed=0, package_size=0)
    with pytest.raises(ValueError, match="load"):
        plan_assignments([("q", "a")], ANN, seed=0, load={"ann": -1})
    with pytest.raises(ValueError, match="not a str"):
        plan_assignments([("q", "a")], ANN, seed=0, existing={("q", "a"): "ann"})  # type: ignore[dict-item]


def test_plan_fourth_excludes_the_three_and_prefers_least_loaded() -> None:
    pair = ("q", "a")
    three = {"ann", "bob", "cy"}
    assert plan_fourth(pair, three, ANN, {"dee": 5, "eve": 2, "ann": 0}, seed=0) == "eve"
    assert plan_fourth(pair, three, ANN, {"dee": 1, "eve": 2}, seed=0) == "dee"
    with pytest.raises(ValueError, match="no annotator is left"):
        plan_fourth(pair, three, ["ann", "bob", "cy"], None, seed=0)


def test_plan_fourth_seeded_tie_break() -> None:
    three = {"ann", "bob", "cy"}
    picks = [plan_fourth(("q", str(i)), three, ANN, None, seed=1) for i in range(40)]
    assert set(picks) == {"dee", "eve"}  # ties go both ways across pairs
    again = [plan_fourth(("q", str(i)), three, list(reversed(ANN)), None, seed=1) for i in range(40)]
    assert picks == again  # deterministic, independent of the annotators' order


def test_adjudicator_candidates_come_from_the_pool_or_its_list() -> None:
    pool = ["ann", "bob", "cy", "dee"]
    active = {"ann", "bob", "cy", "dee", "eve", "rev"}
    # the pool's own annotators, minus those on the pair; "eve" (another pool's annotator) never
    assert adjudicator_candidates(pool, [], taken={"ann", "bob", "cy"}, active=active) == ["dee"]
    # the admin's list replaces the pool's annotators
    assert adjudicator_candidates(pool, ["rev", "eve"], taken={"ann", "bob", "cy"}, active=active) == ["eve", "rev"]
    # a list whose members are all inactive leaves nobody: no fall back to the pool
    assert adjudicator_candidates(pool, ["zed"], taken={"ann"}, active=active) == []
    assert adjudicator_candidates(pool, [], taken=set(pool), active=active) == []
    assert adjudicator_candidates(pool, [], taken=(), active={"bob"}) == ["bob"]
    with pytest.raises(ValueError, match="^taken must be a collection of account names, not a str$"):
        adjudicator_candidates(pool, [], taken="ann", active=active)
