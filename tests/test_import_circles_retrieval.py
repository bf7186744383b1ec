"""``core`` and ``pooljudge`` hold no import circle: the no-circles contract ignores none of their imports.

The circles were retrieval <-> training in ``core`` (the re-ranker scored pairs with training's
function and chose weights with its metrics), ``pooljudge.encoders`` <-> ``pooljudge.training``
(the registered-model lookup), and the retriever registry <-> its kinds.  What both sides need
now lives in a lower module: ``core.held_out``, ``core.retrieval.rerank``, ``pooljudge.models_lookup``,
``pooljudge.retrievers.registry`` (which imports no kind).
"""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _ignored_imports() -> list[str]:
    parser = configparser.ConfigParser()
    parser.read(REPO / ".importlinter", encoding="utf-8")
    text = parser["importlinter:contract:no-circles"].get("ignore_imports", "")
    return [line.strip() for line in text.splitlines() if line.strip()]


def test_no_circle_in_core_or_pooljudge_is_ignored() -> None:
    assert [line for line in _ignored_imports() if line.startswith(("core.", "pooljudge."))] == []


def test_no_ignored_import_is_stale() -> None:
    """Every ignore line still matches an import (import-linter warns about one that does not)."""
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1"}
    lint = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint), "--no-cache"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "No matches for ignored import" not in result.stdout + result.stderr


def test_the_registered_model_lookup_is_one_leaf() -> None:
    """``pooljudge.models_lookup`` imports no other ``pooljudge`` module; the CLI, jobs and retrievers share it."""
    import ast

    tree = ast.parse((REPO / "pooljudge" / "models_lookup.py").read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert {m for m in imported if m.startswith("pooljudge")} == set()
    import pooljudge.encoders
    import pooljudge.models_lookup
    import pooljudge.training

    assert pooljudge.training.registered_model_folder is pooljudge.models_lookup.registered_model_folder
    assert not hasattr(pooljudge.encoders, "resolve_model") and not hasattr(pooljudge.training, "resolve_model")
