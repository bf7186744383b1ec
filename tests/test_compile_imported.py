"""``make setup`` installs without pip's compilation and compiles what is imported (tools/compile_imported.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.make_dry_run import dry_run_steps
from tools import compile_imported

REPO = Path(__file__).resolve().parents[1]


def test_every_first_party_module_but_the_cli_entry_point_is_imported():
    names = compile_imported.first_party_modules()
    assert {"core", "db", "pooljudge", "db.engine", "pooljudge.cli", "pooljudge.ui.warmup"} <= set(names)
    assert {"core.retrieval.multilingual", "db.importer.staged", "pooljudge.cli.pool"} <= set(names)  # sub-packages
    assert not [name for name in names if name.endswith("__main__")]  # importing it runs the CLI: exit 2
    assert len(names) == len(set(names))


def test_nothing_is_compiled_when_python_writes_no_bytecode():
    done = subprocess.run(
        [sys.executable, "-B", str(REPO / "tools" / "compile_imported.py")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1 and "PYTHONDONTWRITEBYTECODE" in done.stderr


def test_the_setup_installs_without_compiling_then_compiles_the_imports(tmp_path):
    """What ``make setup`` would run in a checkout without ``.venv``, in order (``make --dry-run``)."""
    venv = tmp_path / "venv"
    steps = dry_run_steps("setup", venv)
    assert steps[0] == f"python3 -m venv --without-pip {venv}"  # the venv's own pip took 8.5 s to create
    installs = [step for step in steps if " install " in step]
    assert [step.split(" install ")[0] for step in installs] == [
        # uv and torch's CPU wheel (from the local wheelhouse that uv does not read), by the system's pip
        f"python3 -m pip --python {venv}/bin/python",
        # or, without a system pip, by the venv's own
        f"|| {{ {venv}/bin/python -m ensurepip --default-pip && {venv}/bin/python -m pip",
        f"{venv}/bin/python -m uv pip",  # the rest, keeping that torch, and pip for the users of the venv
    ]
    for step in installs[:2]:
        assert "--no-compile uv torch==2.13.0" in step
    assert "-e '.[dev]' pip" in installs[2]
    assert "--compile" not in installs[2]  # uv compiles nothing unless asked
    assert steps.index(f"{venv}/bin/python tools/compile_imported.py") > steps.index(installs[-1])
