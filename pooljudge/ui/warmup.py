"""The page scripts' imports, loaded in a background thread when the server starts.

Without it, a page's first visit after a server start pays for its imports (scipy's statistics for Metrics,
plotly, the page's own modules: 1.4-3.6 s on 2 busy cores); a thread that imports them while nobody is looking
lets that first visit find them loaded.  The modules are read from the page scripts themselves (their top-level absolute
imports), so a page that imports something new is warmed up without a list to keep.
"""

from __future__ import annotations

import ast
import importlib
import logging
import threading
from pathlib import Path

VIEWS = Path(__file__).resolve().parents[2] / "views"
"""The folder of the page scripts."""

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_started: threading.Thread | None = None


def page_imports(folder: Path = VIEWS) -> list[str]:
    """The modules the scripts in ``folder`` import at their top level (absolute imports), each once, in order.

    ``import a.b`` and ``from a.b import c`` both give ``a.b``; an import inside a function or a relative one is
    left out (it runs when its page needs it, or names nothing outside the page).
    """
    names: dict[str, None] = {}
    for script in sorted(folder.glob("*.py")):
        for node in ast.parse(script.read_text(encoding="utf-8"), filename=script.name).body:
            if isinstance(node, ast.Import):
                names.update((alias.name, None) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names[node.module] = None
    return list(names)


def warm_up(modules: list[str]) -> dict[str, str]:
    """Import ``modules`` one by one; returns the ones that failed, with the error (the page shows it when visited)."""
    failed: dict[str, str] = {}
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 (the page that imports it reports the error itself, on its visit)
            failed[name] = f"{type(exc).__name__}: {exc}"
    if failed:
        _log.warning("warm-up: %d of %d page imports failed: %s", len(failed), len(modules), ", ".join(failed))
    return failed


def start(folder: Path = VIEWS) -> threading.Thread | None:
    """Start importing the page scripts' modules in a daemon thread, once per process; None when already started."""
    global _started
    with _lock:
        if _started is not None:
            return None
        _started = threading.Thread(target=lambda: warm_up(page_imports(folder)), name="pooljudge-warmup", daemon=True)
        _started.start()
        return _started
