"""`pooljudge pool` checks every name before any retrieval, and a failed pooling job stores nothing."""

from __future__ import annotations

import pytest

from db.jobs import create_job, get_job
from db.models import RunRecord
from db.queries import list_collections
from pooljudge import pool_job
from pooljudge.cli import main
from pooljudge.jobs import run_job
from pooljudge.seed import DEMO_NAME


def _runs(store) -> tuple[list[str], int]:
    """The visible run names of the demo, and how many run rows exist at all (staged ones too)."""
    with store.read() as s:
        names = next(c.runs for c in list_collections(s) if c.name == DEMO_NAME)
        rows = s.query(RunRecord).count()
    return names, rows


@pytest.fixture
def retrievals(monkeypatch):
    """The run names :func:`pooljudge.pipeline.retrieve` was asked for."""
    calls: list[str] = []
    real = pool_job.retrieve

    def spy(store, collection, spec, **kwargs):
        calls.append(spec.default_name())
        return real(store, collection, spec, **kwargs)

    monkeypatch.setattr(pool_job, "retrieve", spy)
    return calls


def _pool(url, *args):
    return main(["--db", url, "-q", "pool", "-c", DEMO_NAME, "--depth", "5", *args])


def _pool_job(store, name: str, retriever: str) -> int:
    """A queued pool job of the demo: one new retriever, pooled to depth 5 into pool ``name``."""
    with store.write() as s:
        return create_job(s, "pool", {"collection": DEMO_NAME, "name": name, "retrievers": [retriever], "depth": 5})


@pytest.mark.slow
def test_a_duplicate_pool_name_stops_before_retrieval_and_a_retry_works(demo, retrievals, capsys):
    url, store = demo
    assert _pool(url, "--name", "huge", "--run", "bm25") == 0
    before = _runs(store)
    capsys.readouterr()
    assert _pool(url, "--name", "huge", "-r", "bm25:name=bm25-again") == 1
    assert capsys.readouterr().err.strip() == f"error: a pool named 'huge' already exists in collection {DEMO_NAME!r}"
    assert retrievals == [] and _runs(store) == before
    assert _pool(url, "--name", "huge2", "-r", "bm25:name=bm25-again") == 0
    assert retrievals == ["bm25-again"]
    assert "bm25-again" in _runs(store)[0] and _runs(store)[1] == before[1] + 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--name", "bad\nname", "--run", "bm25"],
            "pool name 'bad\\nname' contains a control character (U+000A) at position 4; names must be printable",
        ),
        (
            ["--name", "p", "-r", "bm25"],
            f"run 'bm25' already exists in {DEMO_NAME!r}: pool the stored run instead, or name the new one, "
            "e.g. bm25:name=my-bm25",
        ),
        (
            ["--name", "p", "-r", "bm25:name=x", "-r", "dense:name=x"],
            "retrievers 'bm25:name=x' and 'dense:name=x' would both store a run named 'x': give each its own name option",
        ),
        (
            ["--name", "p", "-r", "bm25:name=x", "--run", "x"],
            "run name 'x' is given both to a stored run to pool and to the new run of retriever 'bm25:name=x'",
        ),
        (
            ["--name", "p", "-r", "bm25:name=.trec"],
            "run name '.trec' is only a file extension (its file has no name before the extension); "
            "rename the file or give the run a name (--run-name)",
        ),
        (
            ["--name", "p", "-r", "bm25:name=fine", "--run", "nope"],
            f"no run named 'nope' in collection {DEMO_NAME!r} (runs: bm25, bm25-bigram, e5, minilm)",
        ),
    ],
)
def test_every_name_is_checked_before_any_retrieval(demo, retrievals, capsys, args, message):
    url, store = demo
    before = _runs(store)
    capsys.readouterr()
    assert _pool(url, *args) == 1
    assert capsys.readouterr().err.strip() == f"error: {message}"
    assert retrievals == [] and _runs(store) == before


def test_a_job_failing_after_retrieval_leaves_no_run(demo, retrievals, monkeypatch, capsys):
    url, store = demo
    before = _runs(store)
    from dataclasses import replace

    from core import pooling

    def broken(*_a, **_k):
        raise ValueError("pooling broke")

    monkeypatch.setitem(pooling.POOLING_METHODS, "depth", replace(pooling.POOLING_METHODS["depth"], pool=broken))
    assert _pool(url, "--name", "p", "-r", "bm25:name=bm25-again") == 1
    assert "pooling broke" in capsys.readouterr().err
    assert retrievals == ["bm25-again"] and _runs(store) == before
    monkeypatch.undo()
    assert _pool(url, "--name", "p", "-r", "bm25:name=bm25-again") == 0
    assert "bm25-again" in _runs(store)[0]


def test_a_pool_saved_concurrently_under_the_same_name_removes_the_staged_run(demo, monkeypatch):
    """The name was free at the check and taken by the time the pool is saved: the job's run goes too."""
    url, store = demo
    before = _runs(store)
    real = pool_job._stage_runs

    def race(store_, collection, new_runs):
        staged = real(store_, collection, new_runs)
        if new_runs:  # the job under test, not the competing CLI pool
            assert _runs(store)[0] == before[0] and _runs(store)[1] == before[1] + 1  # staged, invisible
            assert _pool(url, "--name", "p", "--run", "bm25") == 0
        return staged

    monkeypatch.setattr(pool_job, "_stage_runs", race)
    job = _pool_job(store, "p", "bm25:name=late")
    with pytest.raises(ValueError, match="a pool named 'p' already exists"):
        run_job(store, job)
    with store.read() as s:
        assert get_job(s, job).status == "failed"
    assert _runs(store) == before


def test_retrieve_refuses_a_taken_run_name_before_indexing(demo, retrievals, capsys):
    url, store = demo
    before = _runs(store)
    capsys.readouterr()
    assert main(["--db", url, "-q", "retrieve", "-c", DEMO_NAME, "-r", "bm25"]) == 1
    assert capsys.readouterr().err.strip() == (
        f"error: run 'bm25' already exists in {DEMO_NAME!r}; give the new run another name"
    )
    assert main(["--db", url, "-q", "retrieve", "-c", DEMO_NAME, "-r", "bm25", "--name", "bad\tname"]) == 1
    assert capsys.readouterr().err.strip() == (
        "error: run name 'bad\\tname' contains a control character (U+0009) at position 4; names must be printable"
    )
    assert retrievals == [] and _runs(store) == before


def test_an_archived_pool_keeps_its_name_and_the_message_says_so(demo, retrievals, capsys):
    from db.archive import archive

    url, store = demo
    assert _pool(url, "--name", "old", "--run", "bm25") == 0
    with store.write() as s:
        archive(s, "pool", "old", collection=DEMO_NAME, by="admin")
    capsys.readouterr()
    assert _pool(url, "--name", "old", "-r", "bm25:name=bm25-again") == 1
    assert capsys.readouterr().err.strip() == (
        f"error: a pool named 'old' already exists in collection {DEMO_NAME!r} (archived: restore it, or choose "
        "another name)"
    )
    assert retrievals == []


@pytest.mark.slow
def test_staged_runs_are_published_with_the_pool_or_dropped_on_both_backends(store, monkeypatch, tmp_path):
    """SQLite and PostgreSQL: the flip and the pool share one transaction; a refused pool drops the staged run."""
    from pooljudge.seed import ensure_demo

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    ensure_demo(store)
    before = _runs(store)
    job = _pool_job(store, "p", "bm25:name=fresh")
    result = run_job(store, job)
    assert result.runs == ["fresh"] and _runs(store) == (sorted([*before[0], "fresh"]), before[1] + 1)

    from db import pools

    real = pools.save_pool

    def refused(*args, **kwargs):
        raise ValueError("refused at save")

    monkeypatch.setattr(pools, "save_pool", refused)
    job = _pool_job(store, "q", "bm25:name=late")
    with pytest.raises(ValueError, match="refused at save"):
        run_job(store, job)
    assert _runs(store) == (sorted([*before[0], "fresh"]), before[1] + 1)
    monkeypatch.setattr(pools, "save_pool", real)
