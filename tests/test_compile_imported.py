"""``make setup`` installs without pip's compilation and compiles what is imported (tools/compile_imported.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

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


def test_the_setup_installs_without_pips_compilation_then_compiles_the_imports():
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    recipe = re.search(r"^\$\(STAMP\):.*?\n((?:\t.*\n)+)", makefile, re.M).group(1)
    steps = [line.strip() for line in recipe.splitlines() if not line.strip().startswith("#")]
    installs = [step for step in steps if "pip install" in step and "--upgrade pip" not in step]
    assert installs and all("--no-compile" in step for step in installs)
    assert steps.index("$(BIN)/python tools/compile_imported.py") > steps.index(installs[-1])
