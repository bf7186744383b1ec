"""Toy collections in a store, for the training registry, data and CLI tests.

:func:`write_beir` writes a BEIR folder (with each query's split and an
optional run) that ``pooljudge import -f beir`` reads; :func:`toy_training_folder`
is H1's toy training collection (:func:`tests.core.training.conftest.toy_collection`,
whose words the tiny test BERT knows) with queries ``q-<topic>-3`` in ``dev``
and the others in ``train``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy import select


def write_beir(
    folder: Path,
    *,
    passages: list[dict[str, Any]],
    queries: list[dict[str, Any]],
    qrels: dict[str, dict[str, int]],
    runs: dict[str, dict[str, dict[str, float]]] | None = None,
) -> Path:
    """A BEIR folder: passages ``{"_id", "title", "text"}``, queries ``{"_id", "text", "split"}``, one qrels file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in passages), encoding="utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    if qrels:  # BEIR's reader refuses an empty qrels file
        (folder / "qrels").mkdir(exist_ok=True)
        lines = ["query-id\tcorpus-id\tscore"] + [
            f"{q}\t{d}\t{g}" for q, docs in sorted(qrels.items()) for d, g in sorted(docs.items())
        ]
        (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for name, run in (runs or {}).items():
        (folder / "runs").mkdir(exist_ok=True)
        rows = [
            f"{q} Q0 {d} {rank} {score} {name}"
            for q, docs in sorted(run.items())
            for rank, (d, score) in enumerate(sorted(docs.items(), key=lambda x: -x[1]), start=1)
        ]
        (folder / "runs" / f"{name}.trec").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return folder


def toy_training_folder(folder: Path, *, with_run: bool = True) -> Path:
    """H1's toy collection as a BEIR folder: 32 queries (8 dev), 24 passages, grades 2/1, a run ``shuffled``."""
    from tests.core.training.conftest import toy_collection

    data = toy_collection()
    passages = [{"_id": pid, "title": "", "text": text} for pid, text in sorted(data.passages.items())]
    queries = [
        {"_id": qid, "text": text, "split": "dev" if qid.endswith("-3") else "train"}
        for qid, text in sorted(data.queries.items())
    ]
    runs = {"shuffled": {q: {d: float(len(c) - i) for i, d in enumerate(c)} for q, c in data.candidates.items()}}
    return write_beir(folder, passages=passages, queries=queries, qrels=data.qrels, runs=runs if with_run else None)


def add_final_labels(store, collection: str, labels: dict[tuple[str, str], int | None]) -> None:
    """Final labels straight into the store: ``{(query id, passage id): grade}``; a None grade is an excluded pair."""
    from db.models import FinalLabel, PassageRecord, QueryRecord
    from db.queries import collection_id

    with store.write() as session:
        cid = collection_id(session, collection)
        for (qid, pid), grade in labels.items():
            q = session.scalar(
                select(QueryRecord.id).where(QueryRecord.collection_id == cid, QueryRecord.ext_id == qid)
            )
            p = session.scalar(
                select(PassageRecord.id).where(PassageRecord.collection_id == cid, PassageRecord.ext_id == pid)
            )
            session.add(
                FinalLabel(
                    collection_id=cid,
                    query_id=q,
                    passage_id=p,
                    grade=grade,
                    method="excluded" if grade is None else "majority",
                    n_labels=3,
                )
            )
