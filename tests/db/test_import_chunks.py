"""How many write transactions a staged import takes: one per chunk of a part's own rows."""

from __future__ import annotations

import pytest

from core.types import Passage, QrelEntry, Query, RunEntry
from db.importer import import_source
from db.queries import stored_run
from tests.db.import_helpers import memory_source


@pytest.mark.slow
def test_each_run_is_copied_in_chunks_of_its_own_rows(store):
    """Four runs of 3,000 entries in chunks of 1,000: three transactions per run, not one per 1,000 staged entries.

    The staged entries of every run share one table; walking that whole table for each run would make
    twelve transactions per run, nine of them empty (and each followed by a pause that leaves the lock free).
    """
    passages = [Passage(f"d{i}", f"text {i}") for i in range(3_000)]
    runs = {f"r{n}": [RunEntry("q1", f"d{i}", float(i + n)) for i in range(3_000)] for n in range(4)}
    ticks: list[int] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "writing":
            ticks.append(done)

    summary = import_source(
        store,
        memory_source(passages, [Query("q1", "x")], [QrelEntry("q1", "d1", 2)], runs),
        name="c",
        format="t",
        location="m",
        progress=progress,
        chunk_rows=1_000,
    )
    assert summary.runs == {f"r{n}": 3_000 for n in range(4)}
    # the first tick announces the phase; then passages 3, queries 1, qrels 1, runs 4 x 3
    assert len(ticks) == 1 + 3 + 1 + 1 + 12
    assert ticks[0] == 0 and ticks[-1] == 3_000 + 1 + 1 + 12_000
    assert all(later > earlier for earlier, later in zip(ticks, ticks[1:]))  # no empty transaction
    with store.read() as s:
        for n in range(4):
            run = stored_run(s, "c", f"r{n}")["q1"]
            assert len(run) == 3_000 and run["d7"] == 7.0 + n
