"""Acceptance 1 of issue 13: a retriever kind, and a pooling method, are one module plus one registry line.

``tests/toy_retriever.py`` is a whole retriever kind; the fixture registers it with one
``register_retriever`` line and the CLI pools with it (``pooljudge pool -r toy:...``).  A toy
pooling method is one function and one ``register_pooling_method`` line, chosen with
``--method``.  The expected pools are worked out by hand from the four passages below.
"""

from __future__ import annotations

import types

import pytest
from sqlalchemy import select

from core.pooling import POOLING_METHODS, PoolingMethod, depth_pool, pooling_method, register_pooling_method
from core.types import CollectionSource, Passage, Query
from db.engine import Store, sqlite_url
from db.models import RunRecord
from db.pools import load_pool
from db.queries import stored_run
from pooljudge.cli import main
from pooljudge.pool_params import PoolJobParams
from pooljudge.retrievers import RETRIEVERS, RetrieverSpec, register_retriever
from tests import toy_retriever
from tests.clirun import run_cli
from tests.sqlite_template import copy_store

PASSAGES = [
    Passage("p1", "the cat sat on the mat"),
    Passage("p2", "a dog in the fog"),
    Passage("p3", "cat and dog together"),
    Passage("p4", "fish swim"),
]
QUERIES = [Query("q1", "cat"), Query("q2", "dog fish")]


@pytest.fixture
def toy(tmp_path, monkeypatch, sqlite_template):
    """``(url, store)`` of a fresh store holding collection ``c``, with the ``toy`` kind registered."""
    from db.importer import import_collection

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    url = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    store = Store(url)
    source = CollectionSource(passages=lambda: iter(PASSAGES), queries=lambda: iter(QUERIES), qrels=lambda: iter(()))
    with store.write() as s:
        import_collection(s, source, name="c", format="test", location="mem")
    register_retriever("toy", toy_retriever)  # the one line a new kind needs
    yield url, store
    RETRIEVERS.pop("toy")
    store.dispose()


def pool_pairs(store, name: str) -> dict[str, dict[str, list[tuple]]]:
    with store.read() as s:
        pool, _selection = load_pool(s, "c", name)
    return {q: {d: [tuple(c) for c in cs] for d, cs in docs.items()} for q, docs in pool.items()}


def test_a_registered_retriever_kind_parses_builds_and_pools_from_the_cli(toy, capsys):
    url, store = toy
    assert RetrieverSpec.parse("toy:min_overlap=2").options == {"min_overlap": 2}
    with pytest.raises(ValueError, match="option 'min_overlap' in 'toy:min_overlap=0' must be at least 1"):
        RetrieverSpec.parse("toy:min_overlap=0")
    with pytest.raises(
        ValueError, match="unknown option 'k1' for a toy retriever; options: context, min_overlap, name"
    ):
        RetrieverSpec.parse("toy:k1=1.2")

    assert main(["--db", url, "-q", "pool", "-c", "c", "--name", "p", "-r", "toy:name=words", "--depth", "2"]) == 0
    assert "pool 'p'" in capsys.readouterr().out
    # q1 "cat": p1 and p3 hold it (1 word each; trec order breaks the tie by doc id descending: p3, p1).
    # q2 "dog fish": p2, p3 (dog) and p4 (fish) score 1; the top 2 by doc id descending are p4, p3.
    assert pool_pairs(store, "p") == {
        "q1": {"p1": [("words", 2, 1.0)], "p3": [("words", 1, 1.0)]},
        "q2": {"p3": [("words", 2, 1.0)], "p4": [("words", 1, 1.0)]},
    }
    with store.read() as s:
        # the stored run has every hit (--hits 100); the pool only each query's top 2
        assert stored_run(s, "c", "words") == {"q1": {"p1": 1.0, "p3": 1.0}, "q2": {"p2": 1.0, "p3": 1.0, "p4": 1.0}}
        # the run keeps the retriever's describe(): its class, params and the context it was indexed with
        stored = s.scalar(select(RunRecord.params).where(RunRecord.name == "words"))
    assert stored == {
        "spec": "toy:name=words",
        "k": 100,
        "split": None,
        "config": {"class": "ToyRetriever", "params": {"min_overlap": 1}, "context": "title"},
    }

    # min_overlap=2: no passage holds two query words ("cat" is one word; none holds both "dog" and "fish")
    assert main(["--db", url, "-q", "pool", "-c", "c", "--name", "p2", "-r", "toy:name=both,min_overlap=2"]) == 0
    assert pool_pairs(store, "p2") == {}


def test_a_registered_retriever_can_be_a_rerankers_first_stage_and_kinds_are_checked(toy):
    spec = RetrieverSpec.parse("rerank:model=my-model,first=toy,first_min_overlap=2")
    assert spec.first_stage() == RetrieverSpec(
        "toy", {"min_overlap": 2, "context": "title"}, "toy:min_overlap=2,context=title"
    )
    with pytest.raises(ValueError, match="a retriever kind 'toy' is already registered"):
        register_retriever("toy", toy_retriever)
    with pytest.raises(TypeError, match="lacks OPTIONS, check, build"):
        register_retriever("empty", pytest)


def test_a_registered_kind_s_declared_options_are_in_the_pool_help(toy, capsys):
    """``pooljudge pool --help`` lists each kind's options with the help and default its module declares."""
    [min_overlap, context] = toy_retriever.OPTIONS
    with pytest.raises(SystemExit) as exit_:
        main(["pool", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert min_overlap.help == "distinct query words a passage must hold to be retrieved"
    assert "  toy\n" in out
    assert f"    min_overlap (int, default 1): {min_overlap.help}\n" in out
    assert f"    context (title|keyphrases|title+keyphrases|none, default title): {context.help}\n" in out
    # the declaration's type and default are what the spec parser and the build use
    with pytest.raises(ValueError, match="option 'min_overlap' must be int, got 'many'"):
        RetrieverSpec.parse("toy:min_overlap=many")
    with pytest.raises(ValueError, match="option 'context' of a toy retriever must be one of title, keyphrases"):
        RetrieverSpec.parse("toy:context=abstract")


def test_a_kind_whose_options_are_not_declared_as_data_is_refused():
    plain = types.ModuleType("plain")
    plain.OPTIONS = {"k": int}  # a bare type table says nothing of defaults, choices or help
    plain.check = lambda options, text, raw: options
    plain.build = lambda spec, language, *, name, resolve=None: None
    with pytest.raises(TypeError, match="retriever module plain: OPTIONS must be a tuple of RetrieverOption"):
        register_retriever("plain", plain)
    assert "plain" not in RETRIEVERS


def first_run_pool(runs, n, *, queries=None):
    """A toy pooling method: the first run's top ``n`` only (the others contribute nothing)."""
    first = dict([next(iter(runs.items()))])
    return depth_pool(first, n, queries=queries)


@pytest.fixture
def first_method():
    register_pooling_method(PoolingMethod("first", first_run_pool))  # the one line a new method needs
    yield
    POOLING_METHODS.pop("first")


def test_a_registered_pooling_method_pools_from_the_cli(toy, first_method):
    url, store = toy
    assert run_cli(url, "pool -c c --name f -r toy:name=words -r bm25:name=plain --method first --size 1") == 0
    # the first run (words) alone, its top 1: p3 for q1, p4 for q2 (ties by doc id descending)
    assert pool_pairs(store, "f") == {"q1": {"p3": [("words", 1, 1.0)]}, "q2": {"p4": [("words", 1, 1.0)]}}
    with pytest.raises(ValueError, match="a pooling method named 'first' is already registered"):
        register_pooling_method(PoolingMethod("first", first_run_pool))


def test_an_unregistered_pooling_method_is_refused(toy, capsys):
    url, _store = toy
    with pytest.raises(SystemExit):
        main(["--db", url, "pool", "-c", "c", "--name", "x", "-r", "toy", "--method", "first"])
    assert "invalid choice: 'first'" in capsys.readouterr().err


def test_pool_job_params_round_trip_through_the_jobs_json():
    """The CLI and the page build PoolJobParams; the job reads the same values back from the stored JSON."""
    params = PoolJobParams(
        collection="c",
        name="p",
        retrievers=["bm25"],
        method="rbp",
        depth=20,
        select_method="active",
        active_model="ce",
        active_band=[0.2, 0.7],
        extra={"rbp_p": 0.5},
    )
    as_json = params.to_json()
    assert as_json == {
        "collection": "c",
        "name": "p",
        "retrievers": ["bm25"],
        "runs": [],
        "k": 100,
        "method": "rbp",
        "depth": 20,
        "size": None,
        "select": None,
        "select_method": "active",
        "active_model": "ce",
        "active_band": [0.2, 0.7],
        "dedupe": None,
        "prelabel": False,
        "split": None,
        "rbp_p": 0.5,
    }
    assert PoolJobParams.from_json(as_json) == params
    assert (params.band, params.models()) == ((0.2, 0.7), ["ce"])
    # an older job's JSON without the optional keys reads with the defaults; unset selection keys stay out
    old = PoolJobParams.from_json({"collection": "c", "name": "p", "runs": ["r"], "depth": "5"})
    assert (old.depth, old.k, old.method, old.size) == (5, 100, "depth", None)
    assert "select_by" not in old.to_json() and "select_method" not in old.to_json()


def test_registered_methods_read_their_budget_and_options_from_the_job():
    runs = {"a": {"q": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}, "b": {"q": {"d3": 3.0, "d4": 2.0}}}
    assert set(POOLING_METHODS["depth"](runs, depth=1, size=3)["q"]) == {"d1", "d3"}  # depth ignores size
    assert set(POOLING_METHODS["take"](runs, depth=2, size=None)["q"]) == {"d1", "d3"}  # size: the depth
    assert set(POOLING_METHODS["take"](runs, depth=2, size=3)["q"]) == {"d1", "d3", "d2"}
    # rbp_p reaches rbp_pool's p: with p=0.1 rank 1 outweighs everything, so d1 and d3 (rank 1 of a, b) lead
    assert set(POOLING_METHODS["rbp"](runs, size=2, options={"rbp_p": 0.1})["q"]) == {"d1", "d3"}
    with pytest.raises(ValueError, match="unknown pooling method 'borda'; expected depth, take, rrf or rbp"):
        pooling_method("borda")
