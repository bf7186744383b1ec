"""The repository's Python files, for the tests that read the source (sizes, imports, SQL, wording)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def python_files(names: tuple[str, ...]) -> list[Path]:
    """Every ``.py`` file under the folders ``names`` (sorted), and the files among ``names`` that exist."""
    files: list[Path] = []
    for name in names:
        path = REPO / name
        if path.is_dir():
            files += sorted(path.rglob("*.py"))
        elif path.exists():
            files.append(path)
    return files
