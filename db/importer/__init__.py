"""Load a :class:`core.types.CollectionSource` into the store.

Two ways in:

:func:`import_path` / :func:`import_source` (the CLI, the app's import jobs)
    Never hold the write lock while reading.  The whole input is parsed and
    validated first, streamed into a private staging file (a temporary SQLite
    database, so the input never has to fit in memory); every strict reader's
    ``file:line`` error, every duplicate and every merge conflict is found
    there, before the store is touched.  The rows are then written in short
    write transactions (chunks sized to take ~50 ms each) into containers
    (collection, runs, qrels version) created with ``status='importing'``,
    which every reader ignores; one last short transaction flips them to
    ``ready`` and records the import.  Other writers (annotators) wait at
    most one chunk.  A crash leaves only invisible containers whose
    ``staged_at`` heartbeat stops; :func:`drop_stale_imports`, called when the
    app or the CLI opens a store (:func:`db.opening.open_store`), deletes them in chunks.

:func:`import_collection` (small in-memory sources: the demo, tests)
    Runs in the caller's transaction (``with store.write() as session:``);
    an exception rolls everything back.

Either way a failed import leaves the store exactly as it was, a re-import
into an existing collection is refused unless ``mode="merge"``, and a merge
adds what is new, skips what is identical, and refuses (naming
``file:line``) any record whose id already exists with different content.

The package's modules, each one step:

:mod:`db.importer.common`
    The summary, the errors, names and the relevance level, unknown ids: what both paths share.
:mod:`db.importer.collection`
    The in-transaction import (:func:`import_collection`).
:mod:`db.importer.staged`
    The staged import's entry points and its plan (:func:`import_path`, :func:`import_source`).
:mod:`db.importer.staging`
    The staging file: reading the input into it, checking it against the store.
:mod:`db.importer.writing`
    Copying staged rows in short transactions, the heartbeat, the final flip.
:mod:`db.importer.cleanup`
    Dropping a failed import's containers and a crashed import's leftovers (:func:`drop_stale_imports`).
:mod:`db.importer.runs`
    Storing a run held in memory (:func:`save_run`, :func:`store_run`; a job's runs shown with what they
    belong to: :func:`stage_run`, :func:`refresh_staged_runs`, :func:`publish_staged_runs`).

Everything callers use is importable from ``db.importer`` itself.
"""

from __future__ import annotations

from db.importer.cleanup import drop_stale_imports
from db.importer.collection import import_collection
from db.importer.common import (
    BINARY_LEVEL,
    CHECK_ROWS,
    CHUNK,
    GRADED_LEVEL,
    MODES,
    STALE_ENV,
    STALE_IMPORT_AFTER,
    UNKNOWN_EXAMPLES,
    ImportConflict,
    ImportInProgress,
    ImportSummary,
    Progress,
    StagedProgress,
    UnknownIds,
    check_run_name,
    level_for_grades,
)
from db.importer.runs import (
    drop_staged_runs,
    publish_staged_runs,
    refresh_staged_runs,
    save_run,
    stage_run,
    store_run,
)
from db.importer.staged import HEARTBEAT_SECONDS, check_regular_input, import_path, import_source
from db.importer.writing import TARGET_TRANSACTION_SECONDS

__all__ = [
    "BINARY_LEVEL",
    "CHECK_ROWS",
    "CHUNK",
    "GRADED_LEVEL",
    "HEARTBEAT_SECONDS",
    "MODES",
    "STALE_ENV",
    "STALE_IMPORT_AFTER",
    "TARGET_TRANSACTION_SECONDS",
    "UNKNOWN_EXAMPLES",
    "ImportConflict",
    "ImportInProgress",
    "ImportSummary",
    "Progress",
    "StagedProgress",
    "UnknownIds",
    "check_regular_input",
    "check_run_name",
    "drop_stale_imports",
    "drop_staged_runs",
    "import_collection",
    "import_path",
    "import_source",
    "level_for_grades",
    "publish_staged_runs",
    "refresh_staged_runs",
    "save_run",
    "stage_run",
    "store_run",
]
