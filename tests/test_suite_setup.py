"""How the suite runs: in parallel under `make test`, the Streamlit canary only when asked, stores from templates."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.sqlite_template import copy_store, snapshot

REPO = Path(__file__).resolve().parents[1]
CANARY = "tests/app/test_page_layout_browser.py::test_a_pages_folder_would_be_served_without_app_py"


def test_make_test_runs_the_suite_on_every_core_with_xdist_installed_by_the_dev_extras():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^test: .*\n\t(.*)$", makefile, re.M)
    # one torch/BLAS thread per worker, and bytecode caches for the many interpreters the suite starts
    assert recipe and recipe.group(1) == "OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q -n auto --dist loadgroup"
    assert re.search(r"^unexport PYTHONDONTWRITEBYTECODE$", makefile, re.M)
    dev = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert any(re.match(r"pytest-xdist\b", requirement) for requirement in dev["dev"])


# One interpreter collects every configuration below, one ``pytest.main`` each: a collection is a pytest run of
# its own (its own config, marker expression, hooks), and the interpreter, pytest and the project are imported
# once instead of once per configuration.
COLLECT = """
import sys
import pytest

for args in sys.argv[2:]:
    print(sys.argv[1], flush=True)
    pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", *args.split()])
    sys.stdout.flush()
"""
SEPARATOR = "=== next collection ==="
CONFIGURATIONS = {
    "canary module": CANARY.split("::")[0],
    "canary module, -m canary": f"{CANARY.split('::')[0]} -m canary",
    # given in the opposite order: pytest would collect them as given
    "reversed": "tests/test_readme.py tests/app/test_state_pages.py tests/app/test_state_browser.py",
}


@pytest.fixture(scope="module")
def collected() -> dict[str, list[str]]:
    """The node ids each of :data:`CONFIGURATIONS` collects, in order, from one separate pytest process."""
    out = subprocess.run(
        [sys.executable, "-c", COLLECT, SEPARATOR, *CONFIGURATIONS.values()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    parts = out.split(SEPARATOR + "\n")[1:]
    assert len(parts) == len(CONFIGURATIONS), out
    return {name: [line for line in part.splitlines() if "::" in line] for name, part in zip(CONFIGURATIONS, parts)}


@pytest.mark.slow  # two collections of a browser module in a subprocess
@pytest.mark.xdist_group("suite_setup_collections")  # one worker collects for both tests
def test_the_streamlit_canary_is_collected_only_when_the_marker_expression_names_it(collected):
    default = collected["canary module"]
    assert CANARY not in default and len(default) >= 1  # the module's other test still runs
    assert collected["canary module, -m canary"] == [CANARY]


def test_a_store_copied_from_a_snapshot_holds_what_only_the_write_ahead_log_held(tmp_path):
    source = tmp_path / "source.db"
    writer = sqlite3.connect(source)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")  # the row stays in the -wal file until the snapshot
    writer.execute("CREATE TABLE t (x TEXT)")
    writer.execute("INSERT INTO t VALUES ('kept')")
    writer.commit()
    try:
        assert (tmp_path / "source.db-wal").stat().st_size > 0
        copy = copy_store(snapshot(source, tmp_path / "template.db"), tmp_path / "copy.db")
    finally:
        writer.close()
    with sqlite3.connect(copy) as reader:
        assert reader.execute("SELECT x FROM t").fetchall() == [("kept",)]


@pytest.mark.slow  # a collection in a subprocess
@pytest.mark.xdist_group("suite_setup_collections")
def test_browser_tests_are_handed_out_first(collected):
    order = collected["reversed"]
    browser = [i for i, nodeid in enumerate(order) if "_browser.py::" in nodeid]
    others = [i for i, nodeid in enumerate(order) if "_browser.py::" not in nodeid]
    assert browser and others and max(browser) < min(others), order
