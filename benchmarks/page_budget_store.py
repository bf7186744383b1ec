"""The page-budget benchmark's store: a generated, seeded collection of 2,000 queries and 20,000 pooled pairs.

Every pair is given to three of four annotators (60,000 assignments in packages of 1,000) and most are
labelled (with a seeded mix of agreement, majorities and three-way splits, so that the Review page has
adjudications, excluded pairs and QC material); what is left is for the client that labels during the
benchmark.  Built through the library (``db.importer``, ``db.pools``, ``db.assignments``, ``db.labelling``), as the app would.

Usage from the benchmark: ``build(path, queries=2000, per_query=10, labelled=0.9, seed=0)``.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

from sqlalchemy import select

WORDS = (
    "river bridge tower museum garden market train harbour castle valley forest island temple library "
    "festival cuisine mountain desert canal square palace theatre stadium airport university hospital"
).split()
ANNOTATORS = ["ann1", "ann2", "ann3", "ann4"]  # of the browser tests' accounts (tests.app.browser_helpers.ACCOUNTS)
COLLECTION = "bench"
POOL = "p"


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _import(session, rng: random.Random, queries: int, per_query: int) -> None:
    from core.types import CollectionSource, Passage, Query, RunEntry
    from db.importer import import_collection
    from db.pools import save_pool

    qtexts = {f"q{i:05d}": f"{_text(rng, 6)} {i}" for i in range(queries)}
    passages = {f"q{i:05d}-d{j}": (f"q{i:05d}", _text(rng, 60)) for i in range(queries) for j in range(per_query)}
    run = [RunEntry(q, d, float(per_query - int(d.rsplit("d", 1)[1]))) for d, (q, _t) in passages.items()]
    source = CollectionSource(
        passages=lambda: iter([Passage(d, t, title=f"title of {d}") for d, (_q, t) in passages.items()]),
        queries=lambda: iter(
            [Query(q, t, split="test" if i % 5 else "train") for i, (q, t) in enumerate(qtexts.items())]
        ),
        qrels=lambda: iter(()),
        runs={"bm25": lambda: iter(run)},
    )
    import_collection(session, source, name=COLLECTION, format="generated", location="bench")
    pool: dict[str, dict[str, list]] = {q: {} for q in qtexts}
    for d, (q, _t) in passages.items():
        pool[q][d] = [("bm25", per_query - int(d.rsplit("d", 1)[1]) + 1, 1.0)]
    save_pool(session, COLLECTION, POOL, pool, method="depth")


def _grades(rng: random.Random) -> list[int]:
    """Three labels of a pair: mostly agreeing, some majorities, a few three-way splits."""
    base = rng.choice([0, 0, 1, 2, 3])
    roll = rng.random()
    if roll < 0.6:
        return [base] * 3
    if roll < 0.95:
        other = rng.choice([g for g in range(4) if g != base])
        labels = [base, base, other]
        rng.shuffle(labels)
        return labels
    return rng.sample(range(4), 3)


def _judgment_rows(rng: random.Random, q: int, p: int, held: list, grades: list[int], now) -> list[dict]:
    """The judgment rows of one pair: each holder's grade, at a moment of the last five days."""
    from datetime import timedelta

    return [
        {
            "assignment_id": aid,
            "query_id": q,
            "passage_id": p,
            "user_id": uid,
            "action": "label",
            "grade": grade,
            "note": "",
            "elapsed_ms": rng.randint(1500, 20000),
            "created_at": now - timedelta(seconds=rng.randint(60, 5 * 86400)),
        }
        for (aid, uid), grade in zip(held, grades)
    ]


def _label(store, rng: random.Random, labelled: float) -> int:
    """Label ``labelled`` of the pairs (all three assignments of each) over the last five days.

    The rows are written in bulk (``record_judgment`` checks and resolves one label at a time: about 40 ms
    each here, half an hour for 54,000); the final labels are resolved with :func:`core.resolution.resolve`
    as the app does, and each three-way split goes through :func:`db.resolution.resolve_pair`, which gives it
    a 4th annotator.
    """
    from datetime import UTC, datetime

    from sqlalchemy import insert

    from core.resolution import resolve
    from db.models import Assignment, FinalLabel, Judgment
    from db.queries import collection_id
    from db.resolution import resolve_pair

    with store.read() as session:
        rows = session.execute(
            select(Assignment.id, Assignment.user_id, Assignment.query_id, Assignment.passage_id).order_by(
                Assignment.query_id, Assignment.passage_id, Assignment.id
            )
        ).all()
        cid = collection_id(session, COLLECTION)
    by_pair: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for aid, uid, q, p in rows:
        by_pair.setdefault((q, p), []).append((aid, uid))
    now = datetime.now(UTC)
    judgments: list[dict] = []
    finals, splits = [], []
    for (q, p), held in by_pair.items():
        if rng.random() >= labelled:
            continue
        grades = _grades(rng)
        judgments += _judgment_rows(rng, q, p, held, grades, now)
        r = resolve(grades)
        if r.is_final:
            finals.append(
                {
                    "collection_id": cid,
                    "query_id": q,
                    "passage_id": p,
                    "grade": r.grade,
                    "method": r.method,
                    "n_labels": r.n_labels,
                    "reason": r.reason,
                    "decided_at": now,
                }
            )
        else:
            splits.append((q, p))
    with store.write() as session:
        session.execute(insert(Judgment), judgments)
        session.execute(insert(FinalLabel), finals)
    with store.write() as session:
        for q, p in splits:
            resolve_pair(session, q, p, scale="graded")
    return len(judgments)


def build(path: Path, *, queries: int = 2000, per_query: int = 10, labelled: float = 0.9, seed: int = 0) -> dict:
    """Build the store at ``path`` (a new SQLite file); returns what it holds and how long each step took."""
    from db.assignments import create_assignments
    from db.engine import Store, sqlite_url
    from tests.app.browser_helpers import ACCOUNTS, add_accounts

    rng = random.Random(seed)
    store = Store(sqlite_url(path))
    steps: dict[str, float] = {}
    t = time.perf_counter()
    with store.write() as session:
        add_accounts(session, ACCOUNTS)
        _import(session, rng, queries, per_query)
    steps["import + pool"] = time.perf_counter() - t
    t = time.perf_counter()
    with store.write() as session:
        summary = create_assignments(session, COLLECTION, POOL, annotators=ANNOTATORS, per_pair=3, seed=seed)
    steps["assign"] = time.perf_counter() - t
    t = time.perf_counter()
    labels = _label(store, rng, labelled)
    steps["label"] = time.perf_counter() - t
    store.dispose()
    return {"pairs": summary.pairs, "assignments": summary.tasks, "labels": labels, "steps": steps}


if __name__ == "__main__":
    import sys
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    with tempfile.TemporaryDirectory() as work:
        print(build(Path(work) / "s.db", queries=int(sys.argv[1]) if len(sys.argv) > 1 else 2000))
