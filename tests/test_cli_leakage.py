"""`pooljudge leakage`: training queries that near-duplicate dev/test queries, exportable for removal."""

from __future__ import annotations

import pytest

from core.analysis import find_leakage
from db.engine import Store, sqlite_url
from db.queries import iter_queries
from pooljudge.cli import main
from pooljudge.pipeline import encoder_for, query_vectors
from pooljudge.seed import DEMO_NAME, ensure_demo


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("leak") / "demo.db"
    store = Store(sqlite_url(path))
    ensure_demo(store)
    with store.read() as s:
        queries = list(iter_queries(s, DEMO_NAME))
    store.dispose()
    return str(path), queries


def test_ids_only_lists_the_paraphrased_training_query(demo_db, tmp_path, capsys):
    db, _ = demo_db
    out = tmp_path / "remove.txt"
    assert main(["--db", db, "-q", "leakage", "-c", DEMO_NAME, "--threshold", "0.9", "--ids-only", "-o", str(out)]) == 0
    assert out.read_text() == "en-q27\n"
    assert "1 of 7 train queries" in capsys.readouterr().err


def test_tsv_equals_find_leakage_on_the_query_vectors(demo_db, capsys):
    db, queries = demo_db
    assert main(["--db", db, "-q", "leakage", "-c", DEMO_NAME, "--eval-split", "test"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split("\t") == ["train_id", "eval_id", "eval_split", "similarity", "train_query", "eval_query"]
    rows = [line.split("\t") for line in lines[1:]]

    vectors = query_vectors(queries, encoder_for({}))
    train = [i for i, q in enumerate(queries) if q.split == "train"]
    test = [i for i, q in enumerate(queries) if q.split == "test"]
    expected = find_leakage([queries[i].id for i in train], vectors[train], [queries[i].id for i in test], vectors[test], 0.5)
    assert [(r[0], r[1], r[3]) for r in rows] == [(p.train_id, p.eval_id, f"{p.similarity:.4f}") for p in expected]
    assert rows[0][:3] == ["en-q27", "en-q01", "test"]
    assert rows[0][4:] == ["What year was the Eiffel Tower built?", "When was the Eiffel Tower built?"]
    assert {r[2] for r in rows} == {"test"}


def test_a_threshold_outside_the_cosine_range_is_refused(demo_db, capsys):
    db, _ = demo_db
    assert main(["--db", db, "-q", "leakage", "-c", DEMO_NAME, "--threshold", "1.5"]) == 1
    assert "threshold must be a number in [-1, 1]" in capsys.readouterr().err
