"""``pooljudge.cli.main`` run in a long-lived process (the tests, a script) leaves no connection open.

Each command opens its store; the engine's pooled connections would otherwise stay open until the garbage
collector happens to find the engine, holding the SQLite file, its WAL and shared-memory files (or a
PostgreSQL connection) between calls.
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from pooljudge.cli import main
from tests.sqlite_template import copy_store

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd (Linux)")


def _open_files_under(folder: Path) -> list[str]:
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the descriptor listdir itself used, closed by now
            continue
        if target.startswith(str(folder)):
            names.append(Path(target).name)
    return sorted(names)


@pytest.mark.parametrize(
    "argv",
    [
        ["user", "add", "sam", "--role", "annotator"],  # a write
        ["user", "list"],  # a read
        ["user", "disable", "ghost"],  # a failure (exit status 1)
    ],
)
def test_a_command_closes_its_store_before_main_returns(argv, sqlite_template, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("POOLJUDGE_PASSWORD", "correct horse battery")
    path = copy_store(sqlite_template, tmp_path / "store.db")
    gc.disable()  # the collector must not close what main() left open
    try:
        status = main(["--db", str(path), "-q", *argv])
        left_open = _open_files_under(tmp_path)
    finally:
        gc.enable()
    assert (status, left_open) == (1 if "ghost" in argv else 0, [])
    out, err = capsys.readouterr()
    assert out == {"add": "added annotator 'sam'\n", "list": "", "disable": ""}[argv[1]]
    assert err == ("error: no user named 'ghost'\n" if "ghost" in argv else "")
