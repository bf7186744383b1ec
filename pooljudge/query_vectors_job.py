"""The query-vectors job: a collection's query embeddings, encoded in a worker, kept on disk by content.

The Dataset statistics page needs the queries' embeddings (diversity, leakage).  Loading an encoder
and encoding takes seconds to minutes, so the page never does it on the request: it computes the
key of what it needs (:func:`vectors_key`: the query texts in order and the model), loads the
vectors if a job has stored them (:func:`stored_vectors`, no model loaded), and otherwise queues this
job and shows its progress.  The key changes whenever a query text or the model does, so a stale file
is never read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from db.engine import Store

KIND = "query_vectors"


def vectors_key(texts: Sequence[str], model: str) -> str:
    """The content key of the embeddings of ``texts`` (in order) by ``model`` ("": the bundled default)."""
    from core.cache import content_key

    return content_key(texts, params={"model": model, "kind": "query", "job": KIND})


def _path(key: str) -> Path:
    from core.cache import cache_dir

    return cache_dir("query_vectors") / f"{key}.npy"


def stored_vectors(key: str, n: int) -> np.ndarray | None:
    """The stored ``(n, dim)`` vectors of ``key``, or None when no job has stored them (or the file is unreadable)."""
    path = _path(key)
    if not path.is_file():
        return None
    try:
        vectors = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    return vectors if vectors.ndim == 2 and vectors.shape[0] == n else None


def run_query_vectors_job(store: Store, info: Any, report: Any) -> dict[str, Any]:
    """Encode the collection's queries with the job's model and store them under their content key.

    Params: ``collection``, ``model`` ("" for the bundled default).  The key is computed from the queries
    read now, so a job queued before an edit stores what the page will ask for after it.
    """
    from core.atomic import atomic_write
    from db.queries import iter_queries
    from pooljudge.encoders import encoder_for, query_vectors

    p = info.params
    model = p.get("model") or ""
    with store.read() as session:
        queries = list(iter_queries(session, p["collection"]))
    key = vectors_key([q.text for q in queries], model)
    report(0, len(queries), "loading the model")
    encoder = encoder_for({"model": model} if model else {})
    vectors = query_vectors(queries, encoder, progress=report.stage_callback("encoding the queries"))
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    atomic_write(_path(key), lambda fh: np.save(fh, vectors, allow_pickle=False))
    return {"key": key, "queries": len(queries), "dim": int(vectors.shape[1])}
