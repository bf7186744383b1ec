"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture
def shared_data() -> Path:
    """``../shared/data`` beside the checkout; tests using it skip cleanly when it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present on this machine")
    return SHARED_DATA


@pytest.fixture
def store(tmp_path):
    """A fresh SQLite store at the newest schema."""
    from db.engine import Store, sqlite_url

    s = Store(sqlite_url(tmp_path / "store.db"))
    yield s
    s.dispose()
