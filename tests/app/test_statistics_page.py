"""The Dataset statistics page on the demo collection, against the core functions it shows."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from core.analysis import intra_list_similarity, label_distribution, length_stats, relevant_positions
from db.queries import iter_passages, iter_queries, relevance_level, split_statistics, stored_qrels
from pooljudge.encoders import encoder_for, query_vectors
from pooljudge.seed import DEMO_NAME, ensure_demo
from tests.app.apptest import VIEWS, open_as_admin, run_launches_inline


@pytest.fixture
def page(db, monkeypatch):
    ensure_demo(db)
    run_launches_inline(monkeypatch)  # the page's query-vectors job runs before the launch returns
    at = open_as_admin(db, VIEWS / "dataset_statistics.py", default_timeout=120)
    assert not at.exception
    return at


def _frame(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_split_and_length_tables_equal_the_store(page, db):
    with db.read() as s:
        queries = list(iter_queries(s, DEMO_NAME))
        qrels = stored_qrels(s, DEMO_NAME)
        splits = {row.split: row for row in split_statistics(s, DEMO_NAME, level=1)}
    per_split = _frame(page, "judged pairs").set_index("split")
    assert list(per_split.index) == ["train", "dev", "test"]
    assert per_split.loc["train", "queries"] == 7 and per_split.loc["test", "queries"] == 37
    judged_test = sum(len(qrels[q.id]) for q in queries if q.split == "test")
    assert per_split.loc["test", "judged pairs"] == judged_test == splits["test"].judged_pairs
    assert per_split.loc["test", "judged per query"] == round(judged_test / 37, 2)

    lengths = _frame(page, "texts")
    test_queries = [q.text for q in queries if q.split == "test"]
    row = lengths[lengths["texts"] == "queries (test)"].iloc[0]
    assert row["count"] == len(test_queries) and row["mean"] == length_stats(test_queries).mean
    with db.read() as s:
        passages = list(iter_passages(s, DEMO_NAME))
    row = lengths[lengths["texts"] == "passages"].iloc[0]
    assert row["count"] == 311 and row["mean"] == length_stats(p.text for p in passages).mean

    charts = [json.loads(c.proto.spec) for c in page.get("plotly_chart")]
    assert len(charts) == 3  # lengths, labels, relevant positions
    histogram = {trace["name"]: sum(_values(trace["y"])) for trace in charts[0]["data"]}
    assert histogram == {"query": 54, "passage": 311}  # binned, every text counted once
    assert sum(label_distribution(qrels).values()) == 399
    # the positions chart equals relevant_positions over the whole corpus (the page reads only the relevant documents)
    with db.read() as s:
        level = relevance_level(s, DEMO_NAME)  # the page starts at the collection's level
    expected = relevant_positions(qrels, passages, level=level)
    bars = charts[2]["data"][0]
    assert [str(x) for x in _values(bars["x"])] == [str(p) for p in expected.counts]
    assert [int(y) for y in _values(bars["y"])] == list(expected.counts.values())


def _values(field):
    """Plotly's JSON holds arrays either as lists or as {"dtype", "bdata"} (base64 numpy buffers)."""
    if isinstance(field, dict) and "bdata" in field:
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=np.dtype(field["dtype"])).tolist()
    return list(field)


@pytest.mark.slow
def test_query_diversity_and_leakage(page, db):
    with db.read() as s:
        queries = list(iter_queries(s, DEMO_NAME))
    vectors = query_vectors(queries, encoder_for({}))

    ils = _frame(page, "ILS").set_index("split")
    test_rows = [i for i, q in enumerate(queries) if q.split == "test"]
    assert ils.loc["test", "queries"] == 37
    assert ils.loc["test", "ILS"] == round(intra_list_similarity(vectors[test_rows]), 4)
    assert ils.loc["all", "ILS"] == round(intra_list_similarity(vectors), 4)
    # the same value by the definition: mean cosine over distinct pairs
    unit = vectors[test_rows] / np.linalg.norm(vectors[test_rows], axis=1, keepdims=True)
    sims = unit @ unit.T
    assert ils.loc["test", "ILS"] == pytest.approx(sims[np.triu_indices(37, 1)].mean(), abs=1e-4)

    leaks = _frame(page, "train_query")
    top = leaks.iloc[0]
    assert (top["train_id"], top["eval_id"], top["eval_split"]) == ("en-q27", "en-q01", "test")
    assert top["similarity"] > 0.95
    assert (leaks["similarity"] >= 0.5).all()
    assert any("English model" in w.value for w in page.warning)  # the demo has Chinese queries

    page.slider(key="stats_threshold").set_value(0.9).run()
    leaks = _frame(page, "train_query")
    assert list(zip(leaks["train_id"], leaks["eval_id"])) == [("en-q27", "en-q01")]
    assert page.metric[0].value == "1 of 7"
