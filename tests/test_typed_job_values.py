"""A job's parameters and result cross layers as dataclasses; only the jobs table holds their JSON.

The pooling job reads :class:`PoolJobParams` (with a :class:`Dedupe`) and returns a :class:`PoolResult`;
the import job returns an :class:`ImportSummary`.  A round trip through the jobs table gives an equal
value, a row written with the stored JSON shape reads back typed, and the CLI prints what it printed
when it indexed the JSON by string (the texts below are that output, copied).
"""

from __future__ import annotations

import dataclasses

import pytest

from db.importer import ImportSummary
from db.jobs import create_job, finish_job, get_job
from db.json_codec import from_json, to_json
from pooljudge.cli import main
from pooljudge.jobs import run_job
from pooljudge.pool_job import ActiveCounts, PoolResult, PoolStatisticsSummary
from pooljudge.pool_params import Dedupe, PoolJobParams
from pooljudge.seed import DEMO_NAME

# a pooling job's params and result as the jobs table stores them (written by the code that indexed them by string)
STORED_PARAMS = {
    "collection": "demo-bilingual",
    "name": "p2",
    "retrievers": [],
    "runs": ["bm25", "e5"],
    "k": 100,
    "method": "take",
    "depth": 50,
    "size": 3,
    "select": None,
    "dedupe": {"method": "similarity", "threshold": 0.9},
    "prelabel": True,
    "split": None,
}
STORED_RESULT = {
    "pool": "p2",
    "runs": ["bm25", "e5"],
    "queries": 54,
    "pairs": 162,
    "selected": 158,
    "duplicates": 4,
    "missing_documents": 0,
    "prelabels": 26,
    "statistics": {
        "runs": ["bm25", "e5"],
        "contributed": {"bm25": 129, "e5": 116},
        "unique": {"bm25": 46, "e5": 33},
        "overlap": [[1.0, 0.5123456790123456], [0.5123456790123456, 1.0]],
    },
}


def _result(**changes) -> PoolResult:
    stats = PoolStatisticsSummary(["bm25", "e5"], {"bm25": 129, "e5": 116}, {"bm25": 46, "e5": 33}, [[1.0, None]])
    base = PoolResult("p2", ["bm25", "e5"], 54, 162, 158, 4, 0, 26, stats)
    return dataclasses.replace(base, **changes)


def test_a_stored_pool_job_row_reads_back_as_typed_values(store):
    with store.write() as s:
        job = create_job(s, "pool", STORED_PARAMS)
        finish_job(s, job, STORED_RESULT)
    with store.read() as s:
        info = get_job(s, job)
    params, result = info.params_as(PoolJobParams), info.result_as(PoolResult)
    assert params == PoolJobParams(
        collection="demo-bilingual",
        name="p2",
        runs=["bm25", "e5"],
        method="take",
        size=3,
        dedupe=Dedupe("similarity", 0.9),
        prelabel=True,
    )
    assert params.to_json() == STORED_PARAMS  # the same JSON shape is written back
    assert (result.pool, result.pairs, result.selected, result.duplicates, result.prelabels) == ("p2", 162, 158, 4, 26)
    assert result.statistics.contributed == {"bm25": 129, "e5": 116} and result.active is None
    assert result.statistics.overlap[0] == [1.0, 0.5123456790123456]


def test_typed_values_round_trip_through_the_jobs_table(store):
    active = ActiveCounts(kept=7, confident_relevant=2, confident_irrelevant=3, saved=5, pairs=12, band=(0.2, 0.7))
    pool = _result(active=active)
    params = PoolJobParams("c", "p", runs=["r"], dedupe=Dedupe("ward", 0.3), extra={"rbp_p": 0.5})
    summary = ImportSummary("c", passages_added=3, runs={"bm25": 9}, notes=["a note"], relevance_level=2)
    with store.write() as s:
        pool_job = create_job(s, "pool", params)
        finish_job(s, pool_job, pool)
        import_job = create_job(s, "import", {"format": "msmarco", "path": "x", "collection": "c"})
        finish_job(s, import_job, summary)
    with store.read() as s:
        pool_info, import_info = get_job(s, pool_job), get_job(s, import_job)
    assert pool_info.params["dedupe"] == {"method": "ward", "distance_threshold": 0.3}
    assert pool_info.params["rbp_p"] == 0.5 and "extra" not in pool_info.params
    assert pool_info.params_as(PoolJobParams) == params
    assert pool_info.result_as(PoolResult) == pool and pool_info.result["active"]["band"] == [0.2, 0.7]
    assert import_info.result_as(ImportSummary) == summary
    assert import_info.result == summary.as_dict() == to_json(summary)


def test_the_codec_refuses_a_value_that_does_not_fit_its_type():
    with pytest.raises(ValueError, match="stored PoolResult does not fit its type") as raised:
        from_json(PoolResult, {**STORED_RESULT, "pairs": "many"})
    assert "pairs" in str(raised.value)


@pytest.mark.parametrize(
    ("text", "expected", "options"),
    [
        ("similarity:0.95", Dedupe("similarity", 0.95), {"method": "similarity", "threshold": 0.95}),
        ("ward:0.3", Dedupe("ward", 0.3), {"method": "ward", "distance_threshold": 0.3}),
    ],
)
def test_dedupe_is_parsed_once_and_gives_dedupe_pools_keywords(text, expected, options):
    assert Dedupe.parse(text) == expected and expected.options() == options
    assert Dedupe.from_json(options) == expected


@pytest.mark.parametrize("text", ["similarity", "cosine:0.9", "ward:far", "similarity:-1"])
def test_a_bad_dedupe_is_refused_with_the_clis_advice(text):
    with pytest.raises(ValueError, match="^--dedupe must be similarity:THRESHOLD or ward:DISTANCE"):
        Dedupe.parse(text)


def test_params_are_frozen():
    params = PoolJobParams("c", "p")
    with pytest.raises(dataclasses.FrozenInstanceError):
        params.select_by = ["m"]  # type: ignore[misc]


@pytest.mark.slow
def test_the_pool_job_returns_a_pool_result_and_the_cli_prints_it_as_before(demo, capsys):
    url, store = demo
    capsys.readouterr()
    pool = ["--db", url, "-q", "pool", "-c", DEMO_NAME]
    assert main([*pool, "--name", "p1", "--run", "bm25", "--depth", "5", "--select", "2"]) == 0
    assert capsys.readouterr().out == (
        "pool 'p1' (job 1): 248 pairs over 54 queries from bm25; 107 selected for annotation, "
        "0 near-duplicates removed, 0 pre-labels\n"
    )
    args = ["--name", "p2", "--run", "bm25", "--run", "e5", "--method", "take", "--size", "3", "--prelabel"]
    assert main([*pool, *args, "--dedupe", "similarity:0.9"]) == 0
    assert capsys.readouterr().out == (
        "pool 'p2' (job 2): 162 pairs over 54 queries from bm25, e5; 158 selected for annotation, "
        "4 near-duplicates removed, 26 pre-labels\n"
    )
    with store.read() as s:
        info = get_job(s, 2)
    assert info.params == STORED_PARAMS  # what the CLI queues: today's JSON shape
    assert info.result_as(PoolResult) == from_json(PoolResult, STORED_RESULT)
    with store.write() as s:
        again = create_job(s, "pool", info.params_as(PoolJobParams).to_json() | {"name": "p3"})
    result = run_job(store, again)
    assert isinstance(result, PoolResult) and isinstance(result.statistics, PoolStatisticsSummary)
    assert (result.pool, result.pairs, result.duplicates, result.prelabels) == ("p3", 162, 4, 26)


def test_the_import_cli_prints_the_typed_summary_as_before(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 's.db'}"
    qa = tmp_path / "qa.json"
    qa.write_text(
        '{"id": 0, "query": "who?", "answer": ["a"], "positive": ["p a"], "negative": ["n"], "answer1": "x"}\n',
        encoding="utf-8",
    )
    run = tmp_path / "r.trec"
    run.write_text("q1 Q0 0-pos-0 1 2.0 t\nq9 Q0 zz 1 1.0 t\n", encoding="utf-8")
    assert main(["--db", url, "-q", "import", "-f", "qa-jsonl", str(qa), "-c", "rgb"]) == 0
    assert (
        main(["--db", url, "-q", "import", "-f", "trec-run", str(run), "-c", "rgb", "--merge", "--allow-unknown-ids"])
        == 0
    )
    assert capsys.readouterr().out == (
        "collection 'rgb': 2 passages, 1 queries, 2 qrels entries added; runs: none; relevance level 1\n"
        f"note: ignored key 'answer1' on 1 line (first: {qa}:1)\n"
        "collection 'rgb': 0 passages, 0 queries, 0 qrels entries added (0 passages, 0 queries, 0 qrels already "
        "present); runs: 'r' (2 entries); relevance level 1; kept unknown 2 query ids and 2 passage ids\n"
        "note: kept unknown ids (allowed) in the qrels and runs: 2 query ids ('q1', 'q9'); 2 passage ids "
        "('0-pos-0', 'zz')\n"
    )


def test_the_import_job_returns_an_import_summary(store, tmp_path):
    corpus = tmp_path / "collection.tsv"
    corpus.write_text("1\tone\n2\ttwo\n", encoding="utf-8")
    with store.write() as s:
        job = create_job(s, "import", {"format": "msmarco", "path": str(corpus), "collection": "c"})
    result = run_job(store, job)
    assert isinstance(result, ImportSummary) and (result.collection, result.passages_added) == ("c", 2)
    with store.read() as s:
        assert get_job(s, job).result_as(ImportSummary) == result


def test_a_train_result_is_json_ready_with_every_field():
    from pathlib import Path

    from core.training.data import TrainResult

    history = [{"step": 10, "epoch": 1, "loss": 0.5, "eval": {"ndcg_cut_10": 0.4}}]
    result = TrainResult(Path("/m/rr"), history, history[0], 12.5, 80.0, params={"lr": 2e-5})
    assert result.as_dict() == {
        "path": "/m/rr",
        "history": history,
        "best": history[0],
        "seconds": 12.5,
        "pairs_per_second": 80.0,
        "params": {"lr": 2e-5},
    }


# a train job's results as the jobs table stores them (a re-ranker; the default kind's choice)
STORED_TRAIN = {
    "model": "rr",
    "id": 3,
    "path": "/m/1/rr",
    "kind": "cross-encoder",
    "best": {"step": 4, "epoch": 1, "loss": 0.5, "eval": {"ndcg_cut_10": 0.5}},
    "seconds": 8.25,
    "pairs_per_second": 31.5,
    "labels": "final",
    "train_queries": 7,
    "held_out_queries": 3,
    "interpolate": 0.3,
    "teacher_prior": None,
    "total_seconds": 9.5,
}
STORED_DEFAULT = {
    **{k: v for k, v in STORED_TRAIN.items() if k not in ("interpolate", "teacher_prior")},
    "kind": "default",
    "system": "bm25",
    "system_label": "BM25",
    "spec": "bm25",
    "improved": False,
    "reason": "training did not help on the dev split: keeping BM25 (0.5000)",
    "dev_nDCG@10": {"bm25": 0.5, "tuned-dense": 0.25},
}


@pytest.mark.parametrize("stored", [STORED_TRAIN, STORED_DEFAULT], ids=["reranker", "default"])
def test_a_stored_train_job_result_reads_back_typed_and_writes_the_same_json(store, stored):
    from pooljudge.train_result import TrainJobResult

    with store.write() as s:
        job = create_job(s, "train", {"collection": "c", "name": "rr", "kind": stored["kind"]})
        finish_job(s, job, stored)
    with store.read() as s:
        result = get_job(s, job).result_as(TrainJobResult)
    assert (result.model, result.id, result.held_out_queries, result.best["step"]) == ("rr", 3, 3, 4)
    if stored is STORED_DEFAULT:
        assert (result.spec, result.improved, result.interpolate) == ("bm25", False, None)
        assert result.dev_ndcg10 == {"bm25": 0.5, "tuned-dense": 0.25}
    else:
        assert (result.interpolate, result.spec, result.dev_ndcg10) == (0.3, None, {})
    assert to_json(result) == stored
