"""Issue 23: no private name is imported from a module that is not itself private.

A leading underscore says "used only inside this module"; a ``from X import _name`` elsewhere breaks that
promise and hides a dependency (renaming the helper breaks a module that does not look related).  Every
Python file of the product (``app.py``, ``serve.py``, ``core/``, ``db/``, ``pooljudge/``, ``views/``) is
parsed; each ``from X import _name`` (relative imports resolved against the file's package) is refused
when no part of ``X``'s dotted path starts with ``_`` (``__init__`` aside) and ``_name`` starts with one
underscore and is not a dunder.  A helper two modules need is public in the module that owns it, or in a
shared internal module.  ``import a.b`` followed by ``a.b._x`` is out of scope: only the import lines
are read.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.source_files import python_files

REPO = Path(__file__).resolve().parents[1]
PRODUCT = ("app.py", "serve.py", "core", "db", "pooljudge", "views")


def _python_files() -> list[Path]:
    return python_files(PRODUCT)


def _absolute_module(node: ast.ImportFrom, rel: str) -> str:
    """The module an ``ImportFrom`` names, relative imports resolved against the package of file ``rel``."""
    if node.level == 0:
        return node.module or ""
    package = rel.split("/")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(source: str, rel: str) -> list[str]:
    """``file:line module name`` for each private name file ``rel`` imports from a non-private module."""
    tree = ast.parse(source, filename=rel)
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        module = _absolute_module(node, rel)
        if any(_is_private(part) for part in module.split(".")):
            continue
        found += [f"{rel}:{node.lineno} {module} {a.name}" for a in node.names if _is_private(a.name)]
    return found


def test_the_scan_finds_a_private_import() -> None:
    """The scan itself can fail: absolute and relative imports of a private name are reported, others not."""
    source = (
        "from db.rework import _standing, public\n"
        "from .common import _Chunker\n"
        "from . import _private_module\n"
        "from db._internal import _allowed\n"
        "from core.types import __all__\n"
    )
    found = private_imports(source, "db/importer/probe.py")
    assert found == [
        "db/importer/probe.py:1 db.rework _standing",
        "db/importer/probe.py:2 db.importer.common _Chunker",
        "db/importer/probe.py:3 db.importer _private_module",
    ]


@pytest.mark.slow
def test_no_private_name_is_imported_from_a_public_module() -> None:
    found = [
        line
        for path in _python_files()
        for line in private_imports(path.read_text(encoding="utf-8"), path.relative_to(REPO).as_posix())
    ]
    assert not found, f"{len(found)} private names imported across modules:\n" + "\n".join(found)
