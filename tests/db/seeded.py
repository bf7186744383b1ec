"""A store seeded once per module and backend, copied for each test (SQLite file copy, PostgreSQL ``TEMPLATE``).

A module whose tests all start from the same written data (imported collections, accounts, labels)
builds it once per backend with :func:`seed_once`; each test then gets a copy of its own through
:func:`store_copy`, where it may write as it likes.  Parametrise the module fixture with
:data:`BACKENDS` so that the test ids stay ``[sqlite]`` and ``[postgresql]``, as with ``store``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from db.engine import Store, sqlite_url
from tests.sqlite_template import copy_store, seed_template

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)]
"""The parameters of a module fixture built with :func:`seed_once` (the PostgreSQL variant is a slow test)."""


@dataclass(frozen=True)
class Seeded:
    """What :func:`seed_once` built: the backend, the seeded store (a file or a database URL), what ``seed`` gave."""

    backend: str
    source: str
    value: Any


def seed_once(request: pytest.FixtureRequest, seed: Callable[[Store], Any]) -> Iterator[Seeded]:
    """Yield a store at the newest schema on ``request.param``'s backend after ``seed(store)`` wrote into it.

    Use it in a module-scoped fixture parametrised with :data:`BACKENDS` (``yield from seed_once(...)``).
    """
    if request.param == "sqlite":
        values: list[Any] = []

        def write(url: str) -> None:
            store = Store(url, upgrade=False)
            values.append(seed(store))
            store.dispose()

        folder = request.getfixturevalue("tmp_path_factory").mktemp("seeded")
        yield Seeded("sqlite", str(seed_template(request.getfixturevalue("sqlite_template"), folder, write)), values[0])
        return
    databases = request.getfixturevalue("pg_databases")
    url = databases.create()
    store = Store(url, upgrade=False)
    value = seed(store)
    store.dispose()  # nobody may stay connected to a database while it is copied
    yield Seeded("postgresql", url, value)
    databases.drop(url)


def store_copy(seeded: Seeded, request: pytest.FixtureRequest) -> Iterator[Store]:
    """Yield a store of the test's own: a copy of ``seeded``'s, disposed (and on PostgreSQL dropped) after the test."""
    if seeded.backend == "sqlite":
        target = request.getfixturevalue("tmp_path") / "store.db"
        store = Store(sqlite_url(copy_store(Path(seeded.source), target)), upgrade=False)
        yield store
        store.dispose()
        return
    databases = request.getfixturevalue("pg_databases")
    store = Store(databases.copy(seeded.source), upgrade=False)
    yield store
    store.dispose()
    databases.drop(store.url)
