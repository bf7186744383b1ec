"""The import circles inside db that issue 23 broke stay broken: each pair imports in one direction only.

import-linter's ``acyclic_siblings`` contract (``.importlinter``, ``make lint``) guards every circle; these tests
name the pairs whose circle was hidden behind imports inside functions, so a regression points at the pair.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _imports(relative: str) -> dict[str, set[str]]:
    """Module -> names imported from it by the file or package at ``relative``, in functions too."""
    path = ROOT / relative
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    found: dict[str, set[str]] = {}
    for file in files:
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                found.setdefault(node.module, set()).update(a.name for a in node.names)
                for alias in node.names:  # ``from db import opening`` imports the module db.opening
                    found.setdefault(f"{node.module}.{alias.name}", set())
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    found.setdefault(alias.name, set())
    return found


def _reaches(found: dict[str, set[str]], target: str) -> bool:
    return any(m == target or m.startswith(target + ".") for m in found)


@pytest.mark.parametrize(
    ("lower", "upper"),
    [("db/users.py", "db.sessions"), ("db/engine.py", "db.importer")],
)
def test_the_lower_module_never_imports_the_upper_one(lower, upper):
    assert not _reaches(_imports(lower), upper)


def test_sessions_takes_only_public_names_from_users():
    taken = _imports("db/sessions.py").get("db.users", set())
    assert taken and not {n for n in taken if n.startswith("_")}


def test_the_app_and_the_cli_open_the_store_through_the_clean_up():
    # db.engine.Store only migrates; whoever opens a store for use drops what crashed imports left
    for caller in ("pooljudge/ui/common.py", "pooljudge/cli/common.py"):
        assert "db.opening" in _imports(caller), caller
