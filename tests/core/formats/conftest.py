"""Fixtures for the format reader tests.

``shared_data`` is the read-only sample data folder ``<repo>/../shared/data``;
tests using it skip cleanly when it is absent (a user's checkout has no
``../shared``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED_DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """``<repo>/../shared/data``, or skip the test when it is not there."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared sample data not found at {SHARED_DATA}")
    return SHARED_DATA
