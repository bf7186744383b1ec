"""Re-ranking as a retriever, pool selection by a re-ranker and active selection, through the CLI and the job.

A tiny randomly initialised cross-encoder (BertForSequenceClassification, one logit) saved by the
test scores a toy collection; every expectation is computed directly with
``CrossEncoder(path).score`` / ``.probabilities`` on the same pairs, so the tests pin down which
pairs the pipeline scores, with which texts, and how it orders and selects them.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from core.ranking import trec_ranking  # noqa: E402
from core.types import CollectionSource, Passage, Query  # noqa: E402
from db.engine import Store, sqlite_url  # noqa: E402
from pooljudge.cli import main  # noqa: E402
from pooljudge.pipeline import retrieve  # noqa: E402
from pooljudge.pool_job import ActiveCounts  # noqa: E402
from pooljudge.retrievers import RetrieverSpec, split_specs  # noqa: E402
from tests.clirun import run_cli
from tests.sqlite_template import copy_store

WORDS = (
    "bread",
    "river",
    "market",
    "cat",
    "dog",
    "fish",
    "money",
    "music",
    "the",
    "a",
    "of",
    "and",
    "is",
    "in",
    "old",
    "new",
    "big",
    "small",
    "good",
    "what",
    "about",
    "tell",
    "me",
    ".",
    "?",
)
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
TOPICS = WORDS[:8]
FILLER = WORDS[8:19]


def save_cross_encoder(folder: Path, seed: int) -> Path:
    """A 2-layer, 32-dim random BERT with a 1-logit head and a word-level vocab, saved as a HF folder."""
    from tests.tiny_models import write_tiny_bert

    return write_tiny_bert(folder, VOCAB, seed=seed, head=True, max_position_embeddings=512)


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("cross-encoders")
    return save_cross_encoder(root / "ce-a", 0), save_cross_encoder(root / "ce-b", 1)


def toy_source() -> CollectionSource:
    """8 topics x 3 passages (a topic word among seeded filler words), 2 queries per topic, no qrels."""
    rng = np.random.default_rng(0)
    passages = []
    for t, topic in enumerate(TOPICS):
        for j in range(3):
            words = list(rng.choice(FILLER, size=5))
            words.insert(j, topic)
            passages.append(Passage(f"p{t}{j}", " ".join(words) + " .", title="" if j else "the " + topic))
    queries = [
        Query(f"q{t}{i}", (f"what about {topic} ?", f"tell me of the {topic} and {TOPICS[t - 1]}")[i])
        for t, topic in enumerate(TOPICS)
        for i in range(2)
    ]
    return CollectionSource(passages=lambda: iter(passages), queries=lambda: iter(queries), qrels=lambda: iter(()))


@pytest.fixture
def toy(tmp_path, monkeypatch, sqlite_template):
    """``(url, store)`` of a fresh SQLite store holding the toy collection ``toy``, with a private cache."""
    from db.importer import import_collection

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    url = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    store = Store(url)
    with store.write() as s:
        import_collection(s, toy_source(), name="toy", format="test", location="mem")
    yield url, store
    store.dispose()


def texts(store) -> tuple[dict[str, str], dict[str, str]]:
    """Query texts and passage texts with their title (the default context a re-ranker reads)."""
    from pooljudge.corpus import load_corpus

    corpus = load_corpus(store, "toy")
    return corpus.queries, dict(zip(corpus.doc_ids, corpus.texts))


def scores_of(model: Path, queries, passages, candidates) -> dict[str, dict[str, float]]:
    """``CrossEncoder(model).score`` of every (query, candidate) pair, as a run."""
    from core.training.cross_encoder import CrossEncoder

    pairs = [(q, d) for q, docs in candidates.items() for d in docs]
    scores = CrossEncoder(model).score([(queries[q], passages[d]) for q, d in pairs])
    run: dict[str, dict[str, float]] = {}
    for (q, d), s in zip(pairs, scores):
        run.setdefault(q, {})[d] = float(s)
    return run


def min_max(scores: dict[str, float]) -> dict[str, float]:
    low, high = min(scores.values()), max(scores.values())
    return {d: 0.0 if high == low else (s - low) / (high - low) for d, s in scores.items()}  # as core's rerank


# --------------------------------------------------------------------------- spec parsing


def test_rerank_spec_options_ensemble_and_first_stage(models):
    a, b = models
    spec = RetrieverSpec.parse(f"rerank:model={a},first=bm25,depth=50,first_k1=1.2,first_chinese=bigram,max_length=64")
    assert spec.kind == "rerank" and spec.models == [str(a)]
    assert spec.options == {
        "model": str(a),
        "first": "bm25",
        "depth": 50,
        "max_length": 64,
        "first_k1": 1.2,
        "first_chinese": "bigram",
    }
    first = spec.first_stage()
    assert (first.kind, first.options) == ("bm25", {"k1": 1.2, "chinese": "bigram", "context": "title"})
    assert (
        spec.default_name() == "rerank:depth=50,first=bm25,first_chinese=bigram,first_k1=1.2,max_length=64,model=ce-a"
    )
    ensemble = RetrieverSpec.parse(f"rerank:model={a};{b},first=dense,first_pooling=cls,context=none")
    assert ensemble.models == [str(a), str(b)]
    assert ensemble.first_stage().options == {"pooling": "cls", "context": "none"}
    assert ensemble.default_name() == "rerank:context=none,first=dense,first_pooling=cls,model=ce-a;ce-b"
    stemless = RetrieverSpec.parse(f"rerank:model={a},first_stem=false").first_stage()
    assert (stemless.options, stemless.text) == ({"stem": False, "context": "title"}, "bm25:stem=false,context=title")
    assert RetrieverSpec.parse(stemless.text).options == stemless.options  # the first stage's text parses back
    # a bare word is a registered model's name: resolved later, against the collection
    assert RetrieverSpec.parse("rerank:model=my-reranker").models == ["my-reranker"]
    assert split_specs(f"bm25:k1=1.2; rerank:model={a};{b},depth=5; dense") == [
        "bm25:k1=1.2",
        f"rerank:model={a};{b},depth=5",
        "dense",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("rerank", "needs a model: 'rerank' has no model=PATH"),
        ("rerank:depth=5", "needs a model"),
        ("rerank:model=/no/such/folder", "model '/no/such/folder' in 'rerank:model=/no/such/folder': no such folder"),
        (
            "rerank:model=m,first=rerank",
            "first=rerank in 'rerank:model=m,first=rerank': a re-ranker cannot be the first",
        ),
        (
            "rerank:model=m,first=splade",
            "option 'first' in 'rerank:model=m,first=splade' must be one of bm25, dense, hybrid, hierarchical",
        ),
        (
            "rerank:model=m,first_k3=1",
            r"first stage of 'rerank:model=m,first_k3=1' \(first_\* options\): unknown option 'k3'",
        ),
        ("rerank:model=m,first_k1=high", "option 'k1' must be float"),
        ("rerank:model=m,depth=0", "option 'depth' must be a positive integer"),
        ("rerank:model=m,batch_size=0", "option 'batch_size' must be a positive integer"),
        ("rerank:model=m,context=abstract", "option 'context'"),
        ("rerank:model=m,first_name=x", "option 'first_name'"),
    ],
)
def test_bad_rerank_specs_are_refused_when_parsed(text, message):
    with pytest.raises(ValueError, match=message):
        RetrieverSpec.parse(text)


# --------------------------------------------------------------------------- re-ranking as a retriever


def test_retrieve_stores_the_first_stage_reordered_by_the_cross_encoder(toy, models, capsys):
    url, store = toy
    a, _ = models
    spec = f"rerank:model={a},first=bm25,depth=5,name=ce"
    assert main(["--db", url, "-q", "retrieve", "-c", "toy", "-r", spec, "--hits", "4"]) == 0
    _, first, _ = retrieve(store, "toy", RetrieverSpec.parse("bm25"), k=5)
    queries, passages = texts(store)
    expected_scores = scores_of(a, queries, passages, {q: list(docs) for q, docs in first.items()})
    from db.queries import stored_run

    with store.read() as s:
        stored = stored_run(s, "toy", "ce")
    assert set(stored) == set(first) and len(stored) == 16
    for q, docs in stored.items():
        # BM25's top 5 (fewer when fewer passages share a word), in the model's order, cut to 4
        assert trec_ranking(docs) == trec_ranking(expected_scores[q])[:4]
        np.testing.assert_allclose([docs[d] for d in docs], [expected_scores[q][d] for d in docs], rtol=1e-5, atol=1e-6)
    n_hits = sum(min(4, len(docs)) for docs in first.values())
    assert n_hits > 16 * 3  # most queries really had candidates to reorder
    assert f"run 'ce': {n_hits} hits for 16 queries, stored in 'toy'" in capsys.readouterr().err
    # the model changed BM25's order somewhere (else the test could not tell re-ranking from none)
    assert any(trec_ranking(stored[q]) != trec_ranking(first[q])[:4] for q in stored)


def test_the_stored_run_describes_the_first_stage_and_the_models(toy, models):
    _, store = toy
    a, b = models
    from core.training.cross_encoder import CrossEncoder

    name, run, config = retrieve(store, "toy", RetrieverSpec.parse(f"rerank:model={a};{b},depth=3"), k=3)
    assert name == "rerank:depth=3,model=ce-a;ce-b"
    assert config["class"] == "RerankRetriever"
    assert config["first"]["class"] == "BM25Retriever" and config["first"]["params"]["k1"] == 1.5
    assert [m["fingerprint"] for m in config["models"]] == [CrossEncoder(a).fingerprint, CrossEncoder(b).fingerprint]
    assert config["models"][0]["fingerprint"] != config["models"][1]["fingerprint"]
    # the ensemble: mean of each model's min-max normalised scores over the first stage's candidates
    _, first, _ = retrieve(store, "toy", RetrieverSpec.parse("bm25"), k=3)
    queries, passages = texts(store)
    candidates = {q: list(docs) for q, docs in first.items()}
    sa, sb = scores_of(a, queries, passages, candidates), scores_of(b, queries, passages, candidates)
    for q in candidates:
        na, nb = min_max(sa[q]), min_max(sb[q])
        mean = {d: (na[d] + nb[d]) / 2 for d in candidates[q]}
        assert list(run[q]) == trec_ranking(mean)
        np.testing.assert_allclose([run[q][d] for d in run[q]], [mean[d] for d in run[q]], atol=1e-6)


def test_retrieve_refuses_an_unknown_model_name_before_indexing(toy, capsys, tmp_path):
    url, store = toy
    assert main(["--db", url, "-q", "retrieve", "-c", "toy", "-r", "rerank:model=no-such-model"]) == 1
    assert "'no-such-model'" in capsys.readouterr().err  # named, by the registry or as a missing folder
    assert not (tmp_path / "cache" / "bm25").exists()  # refused before the first stage was indexed
    from db.queries import list_collections

    with store.read() as s:
        assert next(c for c in list_collections(s) if c.name == "toy").runs == []


@pytest.mark.slow
def test_a_registered_model_name_works_in_index_and_pool(toy, models, capsys):
    url, store = toy
    a, _ = models
    from db.pools import load_pool
    from db.queries import stored_run
    from db.trained_models import register_model

    with store.write() as s:
        register_model(
            s, "toy", name="ce-mine", kind="cross-encoder", path=str(a), base_model=None, params={}, history=[], best={}
        )
    assert main(["--db", url, "-q", "index", "-c", "toy", "-r", "rerank:model=ce-mine,depth=3"]) == 0
    assert run_cli(url, "pool -c toy --name p -r rerank:model=ce-mine,depth=3,name=re --depth 2") == 0
    _, by_folder, config = retrieve(store, "toy", RetrieverSpec.parse(f"rerank:model={a},depth=3"), k=100)
    assert config["models"][0]["path"] == str(a.resolve())
    with store.read() as s:
        stored = stored_run(s, "toy", "re")
        pool, _ = load_pool(s, "toy", "p")
    assert stored.keys() == by_folder.keys()
    for q, docs in by_folder.items():  # the name gave the same model as its folder: the same run
        assert stored[q] == pytest.approx(docs, rel=1e-6)
    assert {q: set(docs) for q, docs in pool.items()} == {
        q: set(trec_ranking(docs)[:2]) for q, docs in by_folder.items()
    }


# --------------------------------------------------------------------------- pool selection


def save_runs(store) -> dict[str, dict[str, float]]:
    """Two hand-made runs over the toy collection: r1 ranks p00.. in order, r2 in reverse."""
    from db.importer import save_run

    ids = [f"p{t}{j}" for t in range(8) for j in range(3)]
    queries = [f"q{t}{i}" for t in range(8) for i in range(2)]
    r1 = {q: {d: float(24 - n) for n, d in enumerate(ids[(k * 3) % 24 :][:6])} for k, q in enumerate(queries)}
    r2 = {q: {d: float(n) for n, d in enumerate(ids[(k * 5) % 24 :][:6])} for k, q in enumerate(queries)}
    with store.write() as s:
        save_run(s, "toy", "r1", r1)
        save_run(s, "toy", "r2", r2)
    return {"r1": r1, "r2": r2}


def depth_pool_docs(runs, depth: int) -> dict[str, list[str]]:
    pool: dict[str, list[str]] = {}
    for run in runs.values():
        for q, docs in run.items():
            for d in trec_ranking(docs)[:depth]:
                if d not in pool.setdefault(q, []):
                    pool[q].append(d)
    return pool


@pytest.mark.slow
def test_pool_select_model_keeps_the_top_n_by_the_cross_encoder(toy, models, capsys):
    url, store = toy
    a, _ = models
    runs = save_runs(store)
    assert run_cli(url, "pool -c toy --name p --run r1 --run r2 --depth 4 --select 3 --select-model", a) == 0
    assert "48 selected for annotation" in capsys.readouterr().out
    queries, passages = texts(store)
    expected = scores_of(a, queries, passages, depth_pool_docs(runs, 4))
    from db.pools import load_pool

    with store.read() as s:
        _, selection = load_pool(s, "toy", "p")
    assert {q: [d for d in docs] for q, docs in selection.items()} == {
        q: trec_ranking(sc)[:3] for q, sc in expected.items()
    }
    # not what the runs' own ensemble would have chosen: the model really decided
    from core.pooling import depth_pool, select_top

    by_runs = select_top(depth_pool(runs, 4), runs, 3)
    assert any(selection[q] != by_runs[q] for q in expected)


def test_pool_select_models_as_an_ensemble(toy, models):
    url, store = toy
    a, b = models
    runs = save_runs(store)
    assert (
        run_cli(
            url, "pool -c toy --name p --run r1 --run r2 --depth 4 --select 2 --select-model", a, "--select-model", b
        )
        == 0
    )
    queries, passages = texts(store)
    pool = depth_pool_docs(runs, 4)
    sa, sb = scores_of(a, queries, passages, pool), scores_of(b, queries, passages, pool)
    expected = {}
    for q in pool:
        na, nb = min_max(sa[q]), min_max(sb[q])
        expected[q] = trec_ranking({d: (na[d] + nb[d]) / 2 for d in pool[q]})[:2]
    from db.pools import load_pool

    with store.read() as s:
        _, selection = load_pool(s, "toy", "p")
    assert selection == expected
    assert any(expected[q] != trec_ranking(sa[q])[:2] for q in pool)  # the second model changed some choice


def test_active_selection_keeps_the_unsure_pairs_and_reports_what_it_saved(toy, models, capsys):
    url, store = toy
    a, _ = models
    from core.training.cross_encoder import CrossEncoder

    runs = save_runs(store)
    queries, passages = texts(store)
    pool = depth_pool_docs(runs, 4)
    pairs = [(q, d) for q, docs in pool.items() for d in docs]
    probs = CrossEncoder(a).probabilities([(queries[q], passages[d]) for q, d in pairs])
    ordered = np.sort(probs)
    low, high = float(ordered[len(ordered) // 4]), float(ordered[3 * len(ordered) // 4])
    keep = {(q, d) for (q, d), p in zip(pairs, probs) if low <= p <= high}
    above = sum(p > high for p in probs)
    below = sum(p < low for p in probs)
    assert above and below and keep  # the band really splits the pool three ways
    assert (
        run_cli(
            url,
            "pool -c toy --name act --run r1 --run r2 --depth 4 --select-method active --active-model",
            a,
            "--active-band",
            f"{low!r},{high!r}",
        )
        == 0
    )
    out = capsys.readouterr().out
    assert f"active selection: kept {len(keep)} of {len(pairs)} pairs, saved {above + below}" in out
    from db.jobs import list_jobs
    from db.pools import load_pool

    with store.read() as s:
        job = list_jobs(s, kind="pool")[0]
        _, selection = load_pool(s, "toy", "act")
    assert job.result["active"] == {
        "kept": len(keep),
        "confident_relevant": int(above),
        "confident_irrelevant": int(below),
        "saved": int(above + below),
        "pairs": len(pairs),
        "band": [low, high],
    }
    assert {(q, d) for q, docs in selection.items() for d in docs} == keep


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--select-model", "{a}"], "select_by .* needs select"),
        (["--select", "2", "--select-model", "/no/such/model"], "/no/such/model"),
        (["--select-method", "active"], "needs active_model"),
        (["--select-method", "active", "--active-model", "{a}", "--active-band", "0.9,0.1"], "0 <= low < high <= 1"),
        (["--select-method", "active", "--active-model", "{a}", "--active-band", "0.1,1.5"], "0 <= low < high <= 1"),
        (
            ["--select-method", "active", "--active-model", "{a}", "--active-band", "x"],
            "--active-band must be LOW,HIGH",
        ),
        (["--select-method", "active", "--active-model", "{a}", "--select", "3"], "drop select"),
        (["--active-model", "{a}"], "go with --select-method active"),
        (["--select-method", "active", "--active-model", "unregistered"], "unregistered"),
    ],
)
def test_bad_selection_options_are_refused_before_a_job(toy, models, extra, message, capsys):
    import re

    url, store = toy
    a, _ = models
    save_runs(store)
    assert run_cli(url, "pool -c toy --name p --run r1 --depth 2", *[e.format(a=a) for e in extra]) == 1
    assert re.search(message, capsys.readouterr().err)
    from db.jobs import list_jobs

    with store.read() as s:
        assert list_jobs(s, kind="pool") == []


def test_the_active_pool_job_on_sqlite_and_postgresql(store, models):
    """The job itself (as the app's worker runs it): result, stored selection and selection scores."""
    from core.training.cross_encoder import CrossEncoder
    from db.importer import import_collection
    from db.jobs import create_job
    from db.pools import load_pool
    from db.queries import collection_id
    from pooljudge.jobs import run_job

    a, _ = models
    with store.write() as s:
        import_collection(s, toy_source(), name="toy", format="test", location="mem")
    runs = save_runs(store)
    queries, passages = texts(store)
    pool = depth_pool_docs(runs, 3)
    pairs = [(q, d) for q, docs in pool.items() for d in docs]
    probs = dict(zip(pairs, CrossEncoder(a).probabilities([(queries[q], passages[d]) for q, d in pairs]).tolist()))
    low, high = float(np.quantile(list(probs.values()), 0.3)), float(np.quantile(list(probs.values()), 0.7))
    params = {
        "collection": "toy",
        "name": "act",
        "runs": ["r1", "r2"],
        "depth": 3,
        "select_method": "active",
        "active_model": str(a),
        "active_band": [low, high],
    }
    with store.write() as s:
        job_id = create_job(s, "pool", params, collection_id=collection_id(s, "toy"))
    result = run_job(store, job_id)
    kept = {k for k, p in probs.items() if low <= p <= high}
    assert result.active == ActiveCounts(
        kept=len(kept),
        confident_relevant=sum(p > high for p in probs.values()),
        confident_irrelevant=sum(p < low for p in probs.values()),
        saved=len(probs) - len(kept),
        pairs=len(probs),
        band=(low, high),
    )
    assert result.selected == len(kept)
    with store.read() as s:
        _, selection = load_pool(s, "toy", "act")
    assert {(q, d) for q, docs in selection.items() for d in docs} == kept
    for q, docs in selection.items():  # most probable first
        assert docs == sorted(docs, key=lambda d: (probs[q, d], d), reverse=True)
