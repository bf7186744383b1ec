"""Work of a read counted in SQLite virtual-machine instructions, on the page-budget benchmark's generated store
at two sizes: exact and independent of the machine's load (``sqlite3.Connection.set_progress_handler``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from benchmarks.page_budget_store import build
from db.engine import Store, sqlite_url

SIZES = (10, 100)
"""Queries of the two generated stores (10 pairs each): 100 and 1,000 pairs."""


def generated_stores(make_dir: Callable[[str], object]) -> Iterator[dict[int, Store]]:
    """``{queries: Store}`` for :data:`SIZES`, built in folders from ``make_dir`` (``tmp_path_factory.mktemp``);
    disposed when the generator closes."""
    built = {}
    for queries in SIZES:
        path = make_dir(f"q{queries}") / "s.db"  # type: ignore[operator]
        build(path, queries=queries)
        built[queries] = Store(sqlite_url(path), upgrade=False)  # built at the newest schema
    try:
        yield built
    finally:
        for store in built.values():
            store.dispose()


def vm_steps(store: Store, read: Callable) -> tuple[int, object]:
    """``(SQLite VM instructions that read(session) ran, rounded up to 100, its result)``."""
    ticks = [0]

    def tick() -> int:
        ticks[0] += 1
        return 0  # go on

    with store.read() as session:
        raw = session.connection().connection.driver_connection
        raw.set_progress_handler(tick, 100)
        try:
            result = read(session)
        finally:
            raw.set_progress_handler(None, 100)
    return ticks[0] * 100, result
