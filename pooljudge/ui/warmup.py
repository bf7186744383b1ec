"""The page scripts' imports, loaded in a background thread when the server starts.

Without it, a page's first visit after a server start pays for its imports (scipy's statistics for Metrics,
plotly, the page's own modules: 1.4-3.6 s on 2 busy cores); a thread that imports them while nobody is looking
lets that first visit find them loaded.  The modules are read from the page scripts themselves (their top-level
absolute imports), so a page that imports something new is warmed up without a list to keep.  The thread then
builds the highlighter's word patterns (:func:`warm_highlighter`).  Then, when annotators may be
given text that is not English, the same thread loads jieba's dictionary (about a second of CPU, holding the
interpreter's lock): the Annotate page highlights Chinese query terms with it, and would load it on its request.
Last, it freezes what is loaded out of the garbage collector (``gc.freeze``), which walked it all on every full
collection.

An import holds the interpreter's lock too, so the thread takes its next module only when no page is being drawn
(waiting at most :data:`PATIENCE_S` per module): a page drawn in the first seconds after a start shares the lock
only with the one import under way.
"""

from __future__ import annotations

import ast
import gc
import importlib
import logging
import os
import threading
import time
from pathlib import Path

VIEWS = Path(__file__).resolve().parents[2] / "views"
"""The folder of the page scripts."""

SCRIPT_THREAD = "ScriptRunner.scriptThread"
"""The name of the thread Streamlit draws a session's pages in; it exists only while runs are queued or running."""
PATIENCE_S = 2.0
"""The longest the warm-up waits for page runs to end before its next import (a page that refreshes itself every
second would otherwise hold it back for good)."""

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


def _page_runs_going_on() -> bool:
    return any(thread.name == SCRIPT_THREAD and thread.is_alive() for thread in threading.enumerate())


def wait_for_page_runs(patience_s: float = PATIENCE_S) -> None:
    """Return once no page is being drawn, or after ``patience_s`` seconds."""
    deadline = time.monotonic() + patience_s
    while _page_runs_going_on() and time.monotonic() < deadline:
        time.sleep(0.02)


def warm_up(modules: list[str], patience_s: float = PATIENCE_S) -> dict[str, str]:
    """Import ``modules`` one by one, each once no page is being drawn (:func:`wait_for_page_runs`); returns the
    ones that failed, with the error (the page shows it when visited)."""
    failed: dict[str, str] = {}
    for name in modules:
        wait_for_page_runs(patience_s)
        try:
            importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 (the page that imports it reports the error itself, on its visit)
            failed[name] = f"{type(exc).__name__}: {exc}"
    if failed:
        _log.warning("warm-up: %d of %d page imports failed: %s", len(failed), len(modules), ", ".join(failed))
    return failed


def warm_highlighter() -> None:
    """Mark an English query term once: builds the word patterns every highlight uses (a table of Unicode's
    combining marks, then the regular expressions: about 0.2 s of CPU) and the English stemmer."""
    from pooljudge.ui.highlight import highlighted_html

    highlighted_html("warm", "warm up", "en")


def warm_segmenter(url: str | None = None) -> bool:
    """Load jieba's dictionary when the store at ``url`` (default: the app's) may give annotators non-English text.

    Returns whether it was loaded.  A store that cannot be read yet (a new one, before the app migrates it) has
    nothing assigned: the highlighter loads the dictionary itself, on the first Chinese text it marks.
    """
    from db.engine import Store
    from db.languages import may_assign_text_outside

    try:
        store = Store(url, upgrade=False)  # migrating is the app's work (db.opening.open_store), not the warm-up's
        try:
            with store.read() as session:
                needed = may_assign_text_outside(session, ("en",))  # English text is highlighted without jieba
        finally:
            store.dispose()
    except Exception as exc:  # noqa: BLE001 (a warm-up that cannot read the store leaves the work to the page)
        _log.info("warm-up: the store's languages could not be read: %s", type(exc).__name__)
        return False
    if needed:
        from pooljudge.ui.highlight import highlighted_html

        highlighted_html("埃菲尔铁塔有多高", "埃菲尔铁塔高330米", "zh")
    return needed


def _warm_all(folder: Path, segmenter: bool) -> None:
    warm_up(page_imports(folder))
    wait_for_page_runs()
    warm_highlighter()
    if segmenter:
        wait_for_page_runs()
        warm_segmenter()
    # What is loaded by now (modules, classes, functions, the segmenter's tables: ~300,000 objects) lives as long
    # as the server.  Every full collection walked it all, holding the interpreter's lock for 370-400 ms while a
    # page run waited; frozen, the collector leaves it out (gc.freeze's purpose, as for a forking server).
    gc.freeze()


OFF = ("off", "0", "no", "false")
"""Values of ``POOLJUDGE_WARMUP`` (any case) that switch the warm-up off."""


def start(folder: Path = VIEWS, *, segmenter: bool = True) -> threading.Thread | None:
    """Start the warm-up in a daemon thread, once per process; None when already started, or switched off.

    The thread imports the page scripts' modules, then (``segmenter``) runs :func:`warm_segmenter` on the app's store.
    ``POOLJUDGE_WARMUP=off`` switches it off: a server that serves a few of the pages (a kiosk for annotators, a
    test's server) saves the imports of the others (about 5 CPU-s at each start); its pages import what they need
    on their first visit.
    """
    global _started
    if os.environ.get("POOLJUDGE_WARMUP", "").strip().lower() in OFF:
        return None
    with _lock:
        if _started is not None:
            return None
        _started = threading.Thread(target=_warm_all, args=(folder, segmenter), name="pooljudge-warmup", daemon=True)
        _started.start()
        return _started
