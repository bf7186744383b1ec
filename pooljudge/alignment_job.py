"""The alignment job: the embedding-alignment detector over every pair of a pool, in a worker.

:mod:`core.detectors.alignment` needs the collection's encoder: loading it
and encoding the phrases of thousands of pairs takes seconds to minutes, so
the Error analysis page queues this job (``pooljudge.ui.alignment_job``)
and shows its progress instead of running it on the request.  The job reads
the pool's pairs and texts, runs the rules on each pair (fast) and the
alignment detector on chunks of pairs (one encoding batch per chunk),
keeps an alignment suggestion only for a category no rule gave the pair (as
:func:`core.detectors.suggest` does: a rule's evidence is exact), and stores
them all in one transaction (:func:`db.suggestion_store.store_suggestions`)
as suggested automatic tags whose evidence names the detector, both phrases
and their cosine.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from db.engine import Store

KIND = "alignment"
CHUNK = 64
"""Pairs per encoding batch (and per progress report)."""


def load_encoder(language: str | None, model: str = "") -> Any:
    """The encoder of the job: ``model`` (a folder or bundled name), else the bundled default of ``language``."""
    from pooljudge.encoders import default_model_name, encoder_for

    return encoder_for({"model": model or default_model_name(language)})


def pool_pairs(store: Store, collection: str, pool: str) -> list[tuple[str, str, str, str]]:
    """``(query id, doc id, query text, passage text)`` of every pair of the pool whose texts are in the store."""
    from db.pools import load_pool
    from db.queries import iter_queries, passages_by_id

    with store.read() as session:
        entries, _ = load_pool(session, collection, pool)
        queries = {q.id: q.text for q in iter_queries(session, collection)}
        passages = passages_by_id(session, collection, {d for docs in entries.values() for d in docs})
    return [
        (qid, did, queries[qid], passages[did].text)
        for qid, docs in entries.items()
        for did in docs
        if qid in queries and did in passages
    ]


def align_pairs(
    pairs: Sequence[tuple[str, str, str, str]], encoder: Any, language: str | None, report: Any
) -> list[tuple[str, str, Any]]:
    """The alignment suggestions of ``pairs`` for categories no rule gives them, ``(qid, doc id, suggestion)``."""
    from core.detectors import suggest
    from core.detectors.alignment import detect_alignment_batch

    found = []
    report(0, len(pairs), "aligning the pairs' phrases")
    for start in range(0, len(pairs), CHUNK):
        chunk = pairs[start : start + CHUNK]
        aligned = detect_alignment_batch([(q, p) for _, _, q, p in chunk], encoder, language=language)
        for (qid, did, query, passage), suggestions in zip(chunk, aligned):
            if not suggestions:
                continue
            ruled = {s.category for s in suggest(query, passage, language=language)}
            found += [
                (qid, did, dataclasses.replace(s, detector="alignment")) for s in suggestions if s.category not in ruled
            ]
        report(min(start + CHUNK, len(pairs)), len(pairs), "aligning the pairs' phrases")
    return found


def run_alignment_job(store: Store, info: Any, report: Any) -> dict[str, Any]:
    """Run the alignment detector over the job's pool and store its suggestions.

    Params: ``collection``, ``pool``, ``language`` (the collection's, or None),
    ``model`` ("" for the bundled default of the language).
    """
    from db.suggestion_store import store_suggestions

    p = info.params
    pairs = pool_pairs(store, p["collection"], p["pool"])
    report(0, len(pairs), "loading the encoder")
    encoder = load_encoder(p.get("language"), p.get("model") or "")
    found = align_pairs(pairs, encoder, p.get("language"), report)
    report(len(pairs), len(pairs), "storing the suggestions")
    with store.write() as session:
        stored = store_suggestions(session, p["collection"], None, found)
    return {"pool": p["pool"], "pairs": len(pairs), "found": len(found), "stored": stored}
