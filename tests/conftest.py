"""Fixtures shared by the whole suite."""

from __future__ import annotations

import gc
import os
import shutil
import tempfile
import threading
from pathlib import Path

import pytest

from tests.compiled_sql_cache import share_compiled_sql
from tests.pgcluster import SYSTEM_TMP
from tests.sqlite_template import copy_store, snapshot, template

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# Cheap Argon2 parameters in this process and the CLI/Streamlit processes the tests start (they inherit the
# environment): production-cost hashing made every test that creates accounts spend ~50 ms per user.
# Set here, at conftest import, because core.passwords reads it once when first imported.
os.environ["POOLJUDGE_TEST_CHEAP_ARGON2"] = "1"
# the stores the tests open share their compiled SQL, as the queries of one long-lived app process do
share_compiled_sql()


# Python's cycle collector by default runs a young collection every 700 allocations and, now and then, a full
# one over every object: in a worker that has imported torch, transformers, Streamlit and every test module,
# that was about a tenth of its CPU (perf over a whole `make test`).  Fewer young collections here, and the
# objects alive after collection (modules, classes, fixtures' code) frozen out of the full ones.
gc.set_threshold(50_000, 20, 20)


def pytest_collection_finish(session):
    gc.collect()
    gc.freeze()


def pytest_configure(config):
    """Under pytest-xdist each worker gets a temporary folder of its own (``$TMPDIR``, inherited by the app
    servers and CLI processes it starts), so a test that looks for leftovers there sees only its own worker's."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker or SYSTEM_TMP in os.environ:
        return
    os.environ[SYSTEM_TMP] = tempfile.gettempdir()
    private = tempfile.mkdtemp(prefix=f"pooljudge-tests-{worker}-")
    os.environ["TMPDIR"] = tempfile.tempdir = private
    config.add_cleanup(lambda: shutil.rmtree(private, ignore_errors=True))


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests using it skip cleanly when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    return SHARED_DATA


@pytest.fixture(scope="session")
def multilingual_cache(tmp_path_factory) -> Path:
    """A ``POOLJUDGE_CACHE`` folder holding multilingual-e5-small, converted once per session."""
    from tests.model_cache import converted_multilingual_cache

    return converted_multilingual_cache(tmp_path_factory)


@pytest.fixture(scope="session")
def pg_databases():
    """Fresh PostgreSQL databases for the session (:class:`tests.pgcluster.Databases`).

    ``$POOLJUDGE_TEST_PG_URL``'s server when set, else a throwaway cluster started here and stopped
    at the end of the session (also when tests fail).  Without PostgreSQL the PostgreSQL variants
    skip, except under CI, where `make test` installs it and its absence is a failure.
    """
    from tests import pgcluster

    cluster = None
    url = os.environ.get(pgcluster.ENV_URL)
    if not url:
        bindir = pgcluster.bin_dir()
        if bindir is None:
            message = "PostgreSQL is not installed (initdb/pg_ctl not found; `make test` installs it)"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        cluster = pgcluster.Cluster(bindir)
        url = cluster.start()
    databases = pgcluster.Databases(url)
    try:
        yield databases
    finally:
        databases.close()
        if cluster is not None:
            cluster.stop()


@pytest.fixture
def pg_url(pg_databases):
    """The URL of a fresh PostgreSQL database at the newest schema, dropped after the test."""
    url = pg_databases.create()
    yield url
    pg_databases.drop(url)


# The PostgreSQL variants are slow tests: each waits for a database of its own (CREATE DATABASE), 40% of the
# fast loop's time; `pytest -m "not slow"` checks the SQLite variants, `make test` both.
@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def store_url(request, tmp_path):
    """The URL of a fresh store at the newest schema, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        from db.engine import sqlite_url

        yield sqlite_url(copy_store(request.getfixturevalue("sqlite_template"), tmp_path / "store.db"))
    else:
        yield request.getfixturevalue("pg_url")


@pytest.fixture
def store(store_url):
    """A fresh store at the newest schema, once on SQLite and once on PostgreSQL (``store[sqlite]``, ``store[postgresql]``)."""
    from db.engine import Store

    s = Store(store_url, upgrade=False)  # both templates are at the newest schema already
    yield s
    s.dispose()


@pytest.fixture(scope="session")
def sqlite_template() -> Path:
    """A SQLite store at the newest schema, migrated once per session (per xdist worker); tests get copies."""
    return template()


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory, sqlite_template) -> Path:
    """A SQLite store holding the demo collection, loaded by ``pooljudge demo`` once per session."""
    from db.engine import sqlite_url
    from pooljudge.cli import main

    folder = tmp_path_factory.mktemp("demo")
    build = copy_store(sqlite_template, folder / "build.db")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("POOLJUDGE_CACHE", str(folder / "cache"))
        assert main(["--db", sqlite_url(build), "-q", "demo"]) == 0
    return snapshot(build, folder / "demo.db")


@pytest.fixture
def demo(demo_template, tmp_path, monkeypatch):
    """``(url, store)`` of a fresh SQLite store holding the demo collection, with a private cache."""
    from db.engine import Store, sqlite_url

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    url = sqlite_url(copy_store(demo_template, tmp_path / "s.db"))
    store = Store(url, upgrade=False)
    yield url, store
    store.dispose()


def pytest_collection_modifyitems(config, items):
    """Browser tests are slow tests: ``pytest -m "not slow"`` leaves them out without each file saying so.

    Canary tests (a behaviour of Streamlit itself) run only when ``-m`` names them (``pytest -m canary``).
    """
    asked = "canary" in (config.option.markexpr or "")
    kept, canaries = [], []
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
        (canaries if item.get_closest_marker("canary") and not asked else kept).append(item)
    if canaries:
        config.hook.pytest_deselected(items=canaries)
    # Browser tests first: pytest-xdist hands out work in this order, so both workers share the long browser
    # modules from the start and the many short tests even out the end; a browser module left for last would
    # run alone on one worker while the other has nothing to do.
    items[:] = sorted(kept, key=lambda item: item.get_closest_marker("browser") is None)


@pytest.fixture
def page_run():
    """A thread named as Streamlit's page-run thread (``pooljudge.ui.warmup.SCRIPT_THREAD``), running until the
    event it yields is set: what the server's background threads wait for."""
    from pooljudge.ui.warmup import SCRIPT_THREAD

    done = threading.Event()
    threading.Thread(target=done.wait, name=SCRIPT_THREAD, daemon=True).start()
    yield done
    done.set()
