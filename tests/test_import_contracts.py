"""Issue 23: the architecture's import contracts (``.importlinter``, run by ``make lint``) hold and can fail.

``lint-imports`` runs on the real tree (every contract kept) and on a copy of the packages with one
import added that a contract forbids (the contracts it breaks, and only those, reported broken).  import-linter
sees every import, also those inside functions, so ``core``'s rule that torch is loaded only when a
model is used is checked here instead: every ``core`` module imports in a fresh interpreter that
refuses torch, streamlit and sqlalchemy.
"""

from __future__ import annotations

import configparser
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "db", "pooljudge", "views")
CONFIG = REPO / ".importlinter"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _contract_names() -> dict[str, str]:
    parser = configparser.ConfigParser()
    parser.read(CONFIG, encoding="utf-8")
    prefix = "importlinter:contract:"
    return {s.removeprefix(prefix): parser[s]["name"] for s in parser.sections() if s.startswith(prefix)}


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the packages under ``root`` (wide lines: a contract's name is never wrapped)."""
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "400", "NO_COLOR": "1"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )


def _verdicts(output: str) -> dict[str, str]:
    """``{contract name: "KEPT" or "BROKEN"}`` from the summary lines of a ``lint-imports`` report."""
    found = {}
    for name in _contract_names().values():
        lines = [line for line in output.splitlines() if line.startswith(name + " ")]
        assert len(lines) == 1, f"no single summary line for {name!r} in:\n{output}"
        found[name] = lines[0][len(name) :].split()[0]
    return found


@pytest.fixture
def copy_of_tree(tmp_path: Path) -> Path:
    for name in PACKAGES:
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(CONFIG, tmp_path / CONFIG.name)
    return tmp_path


def test_the_configuration_names_the_issue_contracts() -> None:
    assert set(_contract_names()) == {
        "layers",
        "core-pure",
        "db-no-ui",
        "scripts-on-top",
        "db-features-independent",
        "cli-ui-independent",
        "no-circles",
        "pages-independent",
    }


def test_every_contract_holds_on_the_tree() -> None:
    result = _lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert set(_verdicts(result.stdout).values()) == {"KEPT"}
    assert f"Contracts: {len(_contract_names())} kept, 0 broken." in result.stdout


@pytest.mark.parametrize(
    ("module", "added", "contracts", "named"),
    [
        # core -> db is also core -> (db.models ->) sqlalchemy: both contracts say so
        ("core/metrics.py", "from db.models import Collection", {"layers", "core-pure"}, "core.metrics -> db.models"),
        ("core/leaderboard.py", "import streamlit", {"core-pure"}, "core.leaderboard -> streamlit"),
        ("db/guidelines.py", "import streamlit as st", {"db-no-ui"}, "db.guidelines -> streamlit"),
        ("pooljudge/jobs.py", "import app", {"scripts-on-top"}, "pooljudge.jobs -> app"),
        ("db/pools.py", "from db.runs import run_names", {"db-features-independent"}, "db.pools -> db.runs"),
        ("pooljudge/ui/level.py", "from pooljudge import cli", {"cli-ui-independent"}, "pooljudge.ui.level ->"),
        ("db/own_judgments.py", "import db.labelling", {"no-circles"}, "No cycles are allowed in db."),
        ("views/runs.py", "from views import home", {"pages-independent"}, "views.runs -> views.home"),
    ],
)
def test_an_added_forbidden_import_breaks_its_contract(
    copy_of_tree: Path, module: str, added: str, contracts: set[str], named: str
) -> None:
    path = copy_of_tree / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{added}\n", encoding="utf-8")
    result = _lint_imports(copy_of_tree)
    names = _contract_names()
    broken = {key for key, name in names.items() if _verdicts(result.stdout)[name] == "BROKEN"}
    assert result.returncode == 1, result.stdout + result.stderr
    assert broken == contracts
    report = result.stdout.split("Broken contracts", 1)[1]
    assert all(names[c] in report for c in contracts) and named in report


CORE_IMPORT_SCRIPT = """
import importlib, importlib.abc, json, pkgutil, sys

HEAVY = ("torch", "streamlit", "sqlalchemy")


class Refuse(importlib.abc.MetaPathFinder):  # refused, not loaded: the check stays fast and names the module
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in HEAVY:
            raise ImportError(f"{name} imported while importing core")


sys.meta_path.insert(0, Refuse())
import core

names = sorted(m.name for m in pkgutil.walk_packages(core.__path__, "core."))
refused = {}
for name in names:
    try:
        importlib.import_module(name)
    except ImportError as exc:
        refused[name] = str(exc)
print(json.dumps({"file": core.__file__, "modules": names, "refused": refused}))
"""


def _core_imports(root: Path) -> dict:
    """Import every module of ``root/core`` in a fresh interpreter that refuses torch, streamlit and sqlalchemy."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run(
        [sys.executable, "-c", CORE_IMPORT_SCRIPT], cwd=root, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout.splitlines()[-1])
    assert Path(found["file"]).is_relative_to(root)
    return found


@pytest.mark.slow  # imports every module of core: ~10 s on a busy 2-core machine
def test_importing_core_imports_neither_torch_nor_streamlit_nor_sqlalchemy() -> None:
    found = _core_imports(REPO)
    assert {"core.training.losses", "core.training.cross_encoder", "core.retrieval.dense"} <= set(found["modules"])
    assert found["refused"] == {}


@pytest.mark.slow  # imports every module of core: ~10 s on a busy 2-core machine
def test_a_module_level_torch_import_in_core_is_caught(tmp_path: Path) -> None:
    shutil.copytree(REPO / "core", tmp_path / "core", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    path = tmp_path / "core" / "leaderboard.py"
    path.write_text(path.read_text(encoding="utf-8") + "\nimport torch.nn\n", encoding="utf-8")
    assert _core_imports(tmp_path)["refused"] == {"core.leaderboard": "torch imported while importing core"}
