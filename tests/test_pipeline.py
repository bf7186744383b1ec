"""Retrieval and pooling over a stored collection, end to end through the CLI and the job runner."""

from __future__ import annotations

import pytest

from core.formats.beir import read_beir
from db.jobs import create_job, get_job
from db.pools import load_pool, load_prelabels
from pooljudge.jobs import run_job
from pooljudge.pipeline import retrieve
from pooljudge.retrievers import RetrieverSpec
from pooljudge.seed import DEMO_DIR, DEMO_NAME
from tests.clirun import run_cli


def test_spec_parsing():
    spec = RetrieverSpec.parse("bm25:chinese=bigram,k1=1.2,stem=false")
    assert (spec.kind, spec.options, spec.default_name()) == (
        "bm25",
        {"chinese": "bigram", "k1": 1.2, "stem": False},
        "bm25:chinese=bigram,k1=1.2,stem=false",
    )
    assert (
        RetrieverSpec.parse("dense:pooling=cls,model=/m/bge-small").default_name()
        == "dense:model=bge-small,pooling=cls"
    )
    assert RetrieverSpec.parse("hybrid:fusion=combsum,name=h").default_name() == "h"
    with pytest.raises(ValueError, match="unknown retriever 'splade'"):
        RetrieverSpec.parse("splade")
    with pytest.raises(ValueError, match="unknown option 'k3'"):
        RetrieverSpec.parse("bm25:k3=1")
    with pytest.raises(ValueError, match="option 'k1' must be float"):
        RetrieverSpec.parse("bm25:k1=high")


def test_retrieve_reuses_the_cached_index(demo, tmp_path):
    _, store = demo
    stages = []
    name, first, config = retrieve(
        store, DEMO_NAME, RetrieverSpec.parse("bm25"), k=5, progress=lambda s: stages.append(s) or (lambda d, t: None)
    )
    assert name == "bm25" and stages == ["indexing bm25", "searching bm25"]
    assert config["class"] == "BM25Retriever" and config["params"]["k1"] == 1.5 and config["analyzer"]["cjk"] == "jieba"
    assert len(first) == 54 and all(len(docs) <= 5 for docs in first.values())
    assert list((tmp_path / "cache" / "bm25").iterdir())
    _, second, _ = retrieve(store, DEMO_NAME, RetrieverSpec.parse("bm25"), k=5)
    assert second == first


def test_pool_command_pools_selects_and_prelabels(demo, capsys):
    url, store = demo
    capsys.readouterr()
    # the demo's dense run is multilingual-e5-small, the mixed collection's default encoder (issue 19)
    assert run_cli(url, f"pool -c {DEMO_NAME} --name p --run bm25 --run e5 --depth 10 --select 3 --prelabel") == 0
    assert "pool 'p'" in capsys.readouterr().out
    source = read_beir(DEMO_DIR)
    runs = {name: {} for name in ("bm25", "e5")}
    for name in runs:
        for e in source.runs[name]():
            runs[name].setdefault(e.query_id, {})[e.doc_id] = e.score
    expected = {}
    for name, run in runs.items():
        for qid, docs in run.items():
            top = sorted(docs, key=lambda d: (docs[d], d), reverse=True)[:10]  # trec order: score, doc id desc
            for rank, doc in enumerate(top, start=1):
                expected.setdefault(qid, {}).setdefault(doc, []).append((name, rank, docs[doc]))
    with store.read() as s:
        pool, selected = load_pool(s, DEMO_NAME, "p")
        prelabels = load_prelabels(s, DEMO_NAME)
    assert pool == expected
    # every query, Chinese ones included, has e5's top 10 in its pool
    assert all(sum(name == "e5" for prov in pool[q.id].values() for name, *_ in prov) == 10 for q in source.queries())
    assert all(1 <= len(docs) <= 3 and set(docs) <= set(pool[q]) for q, docs in selected.items())
    assert len(selected) == len(pool)
    # pre-labels only for queries with reference answers (the Chinese demo queries have them)
    answered = {q.id for q in source.queries() if q.answers}
    assert prelabels and set(prelabels) <= answered


def test_failed_job_records_its_error(demo):
    _, store = demo
    with store.write() as s:
        job = create_job(s, "pool", {"collection": DEMO_NAME, "name": "x", "runs": ["nope"]})
    with pytest.raises(LookupError):
        run_job(store, job)
    with store.read() as s:
        info = get_job(s, job)
    assert info.status == "failed" and "nope" in info.error
