"""Product code says what it does and why, not how it got there: no issue numbers, no "as before".

Migrations' revision docstrings are history by nature and are left out; so are the tests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.source_files import python_files

ROOT = Path(__file__).resolve().parents[1]
HISTORY = re.compile(r"\bissues? ?#?\d+|\bas before\b|\bas it always\b|\bthe issue allows\b", re.IGNORECASE)


def product_files() -> list[Path]:
    files = python_files(("app.py", "serve.py", "core", "db", "pooljudge", "views"))
    migrations = ROOT / "db" / "migrations" / "versions"
    return [f for f in files if migrations not in f.parents]


def history_lines(path: Path) -> list[str]:
    """``"<file>:<line>: <text>"`` for each line of ``path`` that tells history."""
    lines = path.read_text(encoding="utf-8").splitlines()
    name = path.relative_to(ROOT)
    return [f"{name}:{n}: {line.strip()}" for n, line in enumerate(lines, 1) if HISTORY.search(line)]


def test_the_pattern_finds_history():
    found = [bool(HISTORY.search(t)) for t in ("(issue 22)", "jobs finished before issue 10", "Issue #19", "as before")]
    assert found == [True, True, True, True]
    assert not HISTORY.search("a render token it issued, and the 10 items")


@pytest.mark.parametrize("package", ["app.py", "serve.py", "core", "db", "pooljudge", "views"])
def test_product_code_tells_no_history(package):
    files = [f for f in product_files() if f.relative_to(ROOT).parts[0] == package]
    assert files
    assert [line for f in files for line in history_lines(f)] == []
