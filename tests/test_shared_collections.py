"""Acceptance: every collection in ../shared/data imports through the CLI with the right counts."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from db.engine import Store, sqlite_url
from db.models import PassageRecord, QueryRecord
from db.queries import list_collections, stored_qrels, stored_run
from pooljudge.cli import main
from tests.sqlite_template import copy_store

pytestmark = pytest.mark.shared_data


@pytest.fixture
def db(tmp_path, sqlite_template):
    return sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))


def _import(db, fmt, path, name):
    assert main(["--db", db, "-q", "import", "--format", fmt, str(path), "--collection", name]) == 0


def _info(db, name):
    store = Store(db)
    with store.read() as s:
        info = next(c for c in list_collections(s) if c.name == name)
        qrels = stored_qrels(s, name)
    store.dispose()
    return info, qrels


def test_cranfield(shared_data, db):
    _import(db, "smart", shared_data / "cranfield", "cran")
    info, qrels = _info(db, "cran")
    assert (info.passages, info.queries) == (1400, 225)
    assert sum(len(d) for d in qrels.values()) == 1837
    assert sorted(qrels, key=int)[:3] == ["1", "2", "3"] and len(qrels) == 225


def test_dbpedia_subset(shared_data, db):
    _import(db, "beir", shared_data / "agentset-dbpedia-subset", "dbpedia")
    info, qrels = _info(db, "dbpedia")
    assert (info.passages, info.queries, info.language) == (5000, 50, "en")
    assert sum(len(d) for d in qrels.values()) == 3709
    assert qrels["INEX_LD-2010019"]["<dbpedia:Art_in_Paris>"] == 1


@pytest.mark.slow
def test_rgb_zh(shared_data, db):
    path = shared_data / "rgb-zh" / "zh_refine.json"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    distinct_texts = {p for r in rows for p in r["positive"] + r["negative"]}
    _import(db, "qa-jsonl", path, "rgb")
    info, qrels = _info(db, "rgb")
    assert (info.queries, info.passages, info.language) == (300, len(distinct_texts), "zh")
    store = Store(db)
    with store.read() as s:
        with_answers = s.scalar(select(func.count()).select_from(QueryRecord).where(QueryRecord.answers.is_not(None)))
    store.dispose()
    assert with_answers == 300
    assert sum(len(d) for d in qrels.values()) == sum(len(set(r["positive"] + r["negative"])) for r in rows)


@pytest.mark.slow
@pytest.mark.parametrize("subset", ["NaturalQuestions", "MIRACL", "ConditionalQA", "Genomics"])
def test_dapr_keeps_documents_and_chunk_positions(shared_data, db, subset):
    folder = shared_data / "dapr-sample" / subset
    _import(db, "dapr", folder, subset)
    store = Store(db)
    with store.read() as s:
        stored = {
            ext: (doc, pos)
            for ext, doc, pos in s.execute(select(PassageRecord.ext_id, PassageRecord.doc_id, PassageRecord.position))
        }
    store.dispose()
    judged = 0
    for qfile in folder.glob("*.jsonl"):
        if qfile.name == "corpus.jsonl":
            continue
        for line in qfile.read_text(encoding="utf-8").splitlines():
            for j in json.loads(line)["judged_chunks"]:
                doc = j["belonging_doc"]
                position = [c["id"] for c in doc["chunks"]].index(j["chunk"]["id"])
                assert stored[j["chunk"]["id"]] == (doc["id"], position)
                judged += 1
    assert judged > 0


def test_t2ranking_qrels(shared_data, db):
    _import(db, "t2ranking", shared_data / "t2ranking-sample", "t2")
    info, qrels = _info(db, "t2")
    test_lines = (shared_data / "t2ranking-sample" / "qrels.test.tsv").read_text(encoding="utf-8").splitlines()
    expected = {}
    for line in test_lines:
        qid, _, pid, label = line.split("\t")
        expected.setdefault(qid, {})[pid] = int(label)
    assert all(qrels[q].items() >= expected[q].items() for q in expected)
    assert info.queries == 200


@pytest.mark.slow
def test_lecard_qrels_and_runs(shared_data, db):
    _import(db, "lecard", shared_data / "lecard", "lecard")
    info, qrels = _info(db, "lecard")
    labels = json.loads((shared_data / "lecard" / "label_top30_dict.json").read_text(encoding="utf-8"))
    assert qrels == {q: {d: int(g) for d, g in docs.items()} for q, docs in labels.items()}
    assert info.queries == 107
    # bert.json holds four rankings (JSON lines); bm25 and tfidf lists are stored worst-first
    # (LeCaRD's own metrics.py reverses them), so their ranking is the reversed list.
    assert sorted(info.runs) == [
        "bert_1",
        "bert_2",
        "bert_3",
        "bert_4",
        "bm25_top100",
        "combined_top100",
        "lm_top100",
        "tfidf_top100",
    ]
    bm25 = json.loads((shared_data / "lecard" / "prediction" / "bm25_top100.json").read_text(encoding="utf-8"))
    lm = json.loads((shared_data / "lecard" / "prediction" / "lm_top100.json").read_text(encoding="utf-8"))
    store = Store(db)
    with store.read() as s:
        runs = {name: stored_run(s, "lecard", name) for name in ("bm25_top100", "lm_top100")}
    store.dispose()
    qid = next(iter(bm25))
    ranked = {name: sorted(run[qid], key=lambda d: (-run[qid][d], d)) for name, run in runs.items()}
    assert ranked["lm_top100"] == [str(d) for d in lm[qid]]
    assert ranked["bm25_top100"] == [str(d) for d in reversed(bm25[qid])]
