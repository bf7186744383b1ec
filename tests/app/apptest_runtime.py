"""What one Streamlit server does once, done once per test process for every ``AppTest``.

A server discovers the installed components (it reads the metadata of every installed distribution, ~0.3
CPU-s here) when it starts and keeps the bytecode of each page script until the file changes.  ``AppTest``
builds a fresh mock runtime per instance and a fresh script cache per run, so without this every page test
paid the discovery once and the compilation of its page (and ``app.py``) on every ``at.run()``.  The test's
thread also waits for each run on an event instead of Streamlit's 1 ms polling loop.
"""

from __future__ import annotations

import functools
import os
import threading
from typing import Any

import pytest
from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import app_test, local_script_runner

_scan_component_manifests = manifest_scanner.scan_component_manifests


@functools.cache
def _installed_component_manifests() -> list[Any]:
    return _scan_component_manifests()


def installed_component_manifests(max_workers: int | None = None) -> list[Any]:
    """``scan_component_manifests()``, computed once per process (a copy: callers may not share the list)."""
    return list(_installed_component_manifests())


class ProcessScriptCache(ScriptCache):
    """A script cache whose bytecode outlives the run: one entry per (path, modification time, size, magic).

    A script edited on disk (a test writing its own page) has a new modification time or size and is compiled
    again, as a server's file watcher would clear its cache.
    """

    _compiled: dict[tuple[str, int, int, bool], Any] = {}

    def get_bytecode(self, script_path: str) -> Any:
        path = os.path.abspath(script_path)
        stat = os.stat(path)
        key = (path, stat.st_mtime_ns, stat.st_size, bool(config.get_option("runner.magicEnabled")))
        code = self._compiled.get(key)
        if code is None:
            code = self._compiled[key] = super().get_bytecode(path)
        return code


def wait_for_script_end(runner: local_script_runner.LocalScriptRunner, timeout: float = 3) -> None:
    """``require_widgets_deltas`` without its polling: sleep until the script thread shuts down, or time out.

    Streamlit's version wakes every millisecond to look; each wake-up is a system call and takes the GIL from
    the page's thread.  On a timeout the run is stopped and the same error is raised.
    """
    ended = threading.Event()

    def on_event(sender: object, event: ScriptRunnerEvent, **kwargs: Any) -> None:
        if event == ScriptRunnerEvent.SHUTDOWN:
            ended.set()

    runner.on_event.connect(on_event, weak=False)
    try:
        if runner.script_stopped() or ended.wait(timeout):  # connected first: a shutdown in between is seen
            return
    finally:
        runner.on_event.disconnect(on_event)
    runner.request_stop()
    runner.join()
    raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every ``AppTest`` in this process share the component discovery and the compiled scripts, and wait
    for each run without polling."""
    monkeypatch.setattr(manifest_scanner, "scan_component_manifests", installed_component_manifests)
    monkeypatch.setattr(app_test, "ScriptCache", ProcessScriptCache)
    monkeypatch.setattr(local_script_runner, "ScriptCache", ProcessScriptCache)
    monkeypatch.setattr(local_script_runner, "require_widgets_deltas", wait_for_script_end)
