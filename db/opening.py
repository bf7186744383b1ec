"""Opening a store for use: migrate it, then drop what crashed imports left.

Above both :mod:`db.engine` (which knows connections and migrations, nothing of imports) and
:mod:`db.importer` (whose staged containers a crash can leave behind), so neither imports the other.
The app (:func:`pooljudge.ui.common.get_store`) and the CLI open their store here; tests and
benchmarks that want a bare store build :class:`db.engine.Store` themselves.
"""

from __future__ import annotations

from db.engine import Store
from db.importer import drop_stale_imports


def open_store(url: str | None = None) -> Store:
    """The store at ``url`` (default :func:`db.engine.default_url`), at the newest schema and without stale imports.

    Parameters
    ----------
    url : str, optional
        A SQLAlchemy URL; default ``$POOLJUDGE_DB_URL``, else the SQLite file of ``$POOLJUDGE_DB``.

    Returns
    -------
    Store
        The opened store.  Containers a crashed import left (``importing`` with a heartbeat older than
        :data:`db.importer.STALE_IMPORT_AFTER`) are deleted first, in short chunks.
    """
    store = Store(url)
    drop_stale_imports(store.engine)
    return store
