"""One compiled-SQL cache for every store a test process opens, as one long-lived app process has.

SQLAlchemy compiles a statement once per engine: each engine starts with an empty cache, keyed by its own
dialect object.  The suite opens a new store (an engine) for most tests, so each test compiled again what the
tests before it had compiled, the same statements for the same dialect: 13.7 of the 102 CPU-s of the AppTest
page tests (py-spy over ``tests/app -m "not browser"``; 3.9 of 93 with this cache).
:func:`share_compiled_sql` makes the
engines that ``db.engine`` creates in this process share one cache per kind of database, keyed by what the
compiled SQL depends on (the dialect's class, its parameter style and the server's version) instead of by
the dialect object.  A statement is still compiled, the first time the process runs it, as in production.

SQLAlchemy has no option for this: ``compiled_cache`` (an execution option) replaces the cache but keeps the
dialect object in each key.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy
from sqlalchemy.engine import Dialect
from sqlalchemy.util import LRUCache

# the statements of the whole suite for one kind of database: an engine's default holds 500
SIZE = 20_000


def _same_sql_key(dialect: Dialect) -> tuple[Any, ...]:
    """What two dialect objects must share for one's compiled SQL to serve the other."""
    return (type(dialect), dialect.paramstyle, dialect.positional, dialect.server_version_info)


class SharedCompiledCache(LRUCache):  # type: ignore[type-arg]
    """An LRU cache of compiled statements whose keys name the dialect by :func:`_same_sql_key`.

    SQLAlchemy reads and writes an engine's cache with ``get(key)`` and ``cache[key] = compiled``, the key's
    first item being the dialect (``ClauseElement._compile_w_cache``).
    """

    def __init__(self) -> None:
        super().__init__(SIZE)

    @staticmethod
    def _key(key: tuple[Any, ...]) -> tuple[Any, ...]:
        return (_same_sql_key(key[0]), *key[1:])

    def get(self, key, default=None):  # type: ignore[no-untyped-def, override]
        return super().get(self._key(key), default)

    def __setitem__(self, key, value) -> None:  # type: ignore[no-untyped-def]
        super().__setitem__(self._key(key), value)


_CACHES: dict[str, SharedCompiledCache] = {}


def share_compiled_sql() -> None:
    """From now on, the engines ``db.engine`` creates in this process use one compiled-SQL cache per database."""
    import db.engine

    if getattr(db.engine.create_engine, "shares_compiled_sql", False):
        return

    def create_engine(url: Any, **kwargs: Any) -> sqlalchemy.Engine:
        engine = sqlalchemy.create_engine(url, **kwargs)
        engine._compiled_cache = _CACHES.setdefault(engine.dialect.name, SharedCompiledCache())
        return engine

    create_engine.shares_compiled_sql = True  # type: ignore[attr-defined]
    db.engine.create_engine = create_engine  # type: ignore[assignment]
