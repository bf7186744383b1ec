"""Issue 23: SQL lives only in ``db/``.

Every Python file of the product outside ``db/`` (``app.py``, ``serve.py``, ``core/``, ``pooljudge/``,
``views/``) and of ``tools/`` is parsed and refused if it imports SQLAlchemy or calls a statement builder (``select(``, ``text(``, ``insert(``,
``update(``, ``delete(``) or a session method that runs SQL (``.execute(``, ``.scalar(``, ...).  Two
SQLAlchemy names are allowed because they carry no SQL: ``sqlalchemy.orm.Session`` as a type and the
exceptions of ``sqlalchemy.exc`` (a page catches a busy store).  Parsing, not grepping, so that a docstring
that mentions ``select(`` or a call such as ``show_text(`` is not taken for SQL.  ``tests/`` and
``benchmarks/`` are left out on purpose: they check the store from outside (the rows a run left behind).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.source_files import python_files

REPO = Path(__file__).resolve().parents[1]
OUTSIDE_DB = ("app.py", "serve.py", "core", "pooljudge", "views", "tools")
BUILDERS = {"select", "text", "insert", "update", "delete"}
RUNNERS = {"execute", "executemany", "exec_driver_sql", "scalar", "scalars"}
ALLOWED_IMPORTS = {("sqlalchemy.orm", "Session")}  # (module, name): a type, no SQL


def _python_files() -> list[Path]:
    return python_files(OUTSIDE_DB)


def _import_findings(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Import):
        return [f"import {a.name}" for a in node.names if a.name.split(".")[0] == "sqlalchemy"]
    if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "sqlalchemy":
        module = node.module or ""
        if module == "sqlalchemy.exc":
            return []
        return [f"from {module} import {a.name}" for a in node.names if (module, a.name) not in ALLOWED_IMPORTS]
    return []


def _sqlalchemy_names(tree: ast.AST) -> dict[str, str]:
    """``{bound name: SQLAlchemy's name}`` of a module's ``from sqlalchemy... import``: a builder is called by those."""
    return {
        alias.asname or alias.name: alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlalchemy"
        for alias in node.names
    }


def _call_findings(node: ast.AST, sqlalchemy_names: dict[str, str]) -> list[str]:
    if not isinstance(node, ast.Call):
        return []
    func = node.func
    if isinstance(func, ast.Name) and sqlalchemy_names.get(func.id) in BUILDERS:
        return [f"{func.id}(...)"]
    if isinstance(func, ast.Attribute) and func.attr in RUNNERS:
        return [f".{func.attr}(...)"]
    return []


def sql_outside_db(files: list[Path], root: Path = REPO) -> list[str]:
    """``path:line what`` for every SQLAlchemy import and SQL call in ``files``."""
    found = []
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = _sqlalchemy_names(tree)
        for node in ast.walk(tree):
            for what in _import_findings(node) + _call_findings(node, names):
                found.append(f"{path.relative_to(root).as_posix()}:{node.lineno} {what}")  # type: ignore[attr-defined]
    return sorted(found)


def test_the_scan_walks_the_product_and_tools() -> None:
    files = {p.relative_to(REPO).as_posix() for p in _python_files()}
    for expected in ("app.py", "core/metrics.py", "pooljudge/pool_job.py", "views/models.py", "tools/build_demo.py"):
        assert expected in files
    assert any(f.startswith("pooljudge/ui/") for f in files) and any(f.startswith("core/retrieval/") for f in files)
    assert not any(f.startswith(("db/", "tests/", "benchmarks/")) for f in files)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from sqlalchemy import select\n", ["x.py:1 from sqlalchemy import select"]),
        ("import sqlalchemy.orm\n", ["x.py:1 import sqlalchemy.orm"]),
        ("def f(s):\n    return s.execute(q)\n", ["x.py:2 .execute(...)"]),
        (
            "from sqlalchemy import select\nrows = select(A.id)\n",
            ["x.py:1 from sqlalchemy import select", "x.py:2 select(...)"],
        ),
        (
            "from sqlalchemy import text as t\nq = t('SELECT 1')\n",
            ["x.py:1 from sqlalchemy import text", "x.py:2 t(...)"],
        ),
        ("n = conn.scalar(q)\n", ["x.py:1 .scalar(...)"]),
        # no SQL: a type, an exception, a docstring naming select(, calls that merely end in "text("
        ('"""select( and text( in prose"""\nfrom sqlalchemy.orm import Session\n', []),
        ("from sqlalchemy.exc import OperationalError\n", []),
        ("show_text(x)\nst.text(x)\np.read_text()\nst.multiselect('a', [])\n", []),
        ("def update(bar, d, t): ...\nupdate(bar, 1, 2)\n", []),  # a helper of the same name as a builder
    ],
)
def test_the_scan_tells_sql_from_look_alikes(tmp_path: Path, source: str, expected: list[str]) -> None:
    path = tmp_path / "x.py"
    path.write_text(source, encoding="utf-8")
    assert sql_outside_db([path], tmp_path) == expected


@pytest.mark.slow
def test_no_sql_outside_db() -> None:
    assert sql_outside_db(_python_files()) == [], "move these into a function of a db/ module and call it"
