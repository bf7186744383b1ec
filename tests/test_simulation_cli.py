"""`pooljudge simulate-labelling`: the labelling simulation on a stored toy collection, and on LeCaRD.

The toy is core's hand-computed one (tests/core/test_simulation.py) imported
as a BEIR folder with three stored runs; the CSV rows are checked against the
values worked out there.
"""

from __future__ import annotations

import csv
import json
import math

import pytest

from core.simulation import CSV_COLUMNS, simulate_labelling
from db.engine import Store, sqlite_url
from pooljudge.cli import main
from tests.sqlite_template import copy_store, seed_template

TEXTS = {
    "d1": "bread of the river",
    "d2": "a small market",
    "d3": "the old bread",
    "d4": "bread and fish",
    "d5": "music in the market",
    "d6": "a good dog",
}
QUERY_TEXTS = {"q1": "what about bread ?", "q2": "tell me of the dog"}
ORACLE = {"q1": {"d1": 2, "d3": 1, "d4": 1}, "q2": {"d4": 1, "d6": 2, "d5": 0}}
RUNS = {
    "A": {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d4": 3.0, "d5": 2.0}},
    "B": {"q1": {"d2": 3.0, "d5": 2.0, "d1": 1.0}, "q2": {"d5": 3.0, "d4": 2.0, "d6": 1.0}},
    "C": {"q1": {"d3": 3.0, "d4": 2.0}, "q2": {"d6": 2.0, "d4": 2.0}},
}


def write_toy(root, runs=RUNS):
    """The toy collection as a BEIR folder with ``runs/<name>.trec``; returns the folder."""
    (root / "qrels").mkdir(parents=True)
    (root / "runs").mkdir()
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in TEXTS.items()), encoding="utf-8"
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERY_TEXTS.items()), encoding="utf-8"
    )
    (root / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n"
        + "".join(f"{q}\t{d}\t{g}\n" for q, docs in ORACLE.items() for d, g in docs.items()),
        encoding="utf-8",
    )
    for name, run in runs.items():
        (root / "runs" / f"{name}.trec").write_text(
            "".join(f"{q} Q0 {d} {i} {s} tag\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items(), 1)),
            encoding="utf-8",
        )
    return root


def tiny_cross_encoder(folder):
    """A randomly initialised 2-layer, 32-dim BERT cross-encoder (1 logit) over the toy's words, saved to ``folder``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    words = sorted({w for t in [*TEXTS.values(), *QUERY_TEXTS.values()] for w in t.split()})
    folder.mkdir(parents=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n", encoding="utf-8")
    config = BertConfig(
        vocab_size=len(words) + 5,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        num_labels=1,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).eval().save_pretrained(folder)
    BertTokenizerFast(vocab=str(vocab)).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def toy_template(tmp_path_factory, sqlite_template):
    """A store file holding the toy collection, imported once for the module through the CLI."""
    folder = tmp_path_factory.mktemp("toy")
    source = write_toy(folder / "toy")

    def seed(url):
        assert main(["--db", url, "-q", "import", "-f", "beir", str(source), "-c", "toy", "--level", "1"]) == 0

    return seed_template(sqlite_template, folder, seed)


@pytest.fixture
def toy_db(toy_template, tmp_path):
    """The URL of a store of the test's own holding the toy collection."""
    return sqlite_url(copy_store(toy_template, tmp_path / "s.db"))


def _simulate(db, collection, *args):
    """``pooljudge --db DB -q simulate-labelling -c COLLECTION ARGS...``: its exit code."""
    return main(["--db", db, "-q", "simulate-labelling", "-c", collection, *args])


def _rows(path):
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_csv_rows_and_table(toy_db, tmp_path, capsys):
    out = tmp_path / "sim.csv"
    args = ["--depth", "2", "--batch", "3", "--measure", "P@2"]
    assert _simulate(toy_db, "toy", *args, "--strategies", "depth,top-n,random", "--output", str(out)) == 0
    rows = _rows(out)
    assert tuple(rows[0]) == CSV_COLUMNS
    assert len(rows) == 3 * 3 * 3  # strategies x batches x runs
    depth = [r for r in rows if r["strategy"] == "depth"]
    # batch 1 (q1 d1, d2, d3): A .25, B 0, C .25; tau-b against (.5, .25, 1) = 2 / sqrt(6)
    assert [(r["batch"], r["labelled_pairs"], r["run"], r["metric"], r["full"]) for r in depth[:3]] == [
        ("1", "3", "A", "0.250000", "0.500000"),
        ("1", "3", "B", "0.000000", "0.250000"),
        ("1", "3", "C", "0.250000", "1.000000"),
    ]
    assert float(depth[0]["tau"]) == pytest.approx(2 / math.sqrt(6), abs=1e-6)
    assert [r["metric"] for r in depth[3:6]] == ["0.500000", "0.250000", "0.750000"] and depth[3]["tau"] == "1.000000"
    assert [(r["labelled_pairs"], r["metric"], r["tau"]) for r in depth[6:]] == [
        ("8", "0.500000", "1.000000"),
        ("8", "0.250000", "1.000000"),
        ("8", "1.000000", "1.000000"),
    ]
    top_n = [r for r in rows if r["strategy"] == "top-n" and r["batch"] == "1"]
    assert [r["metric"] for r in top_n] == ["0.250000", "0.250000", "0.500000"]
    for r in rows:
        assert float(r["lo"]) <= float(r["metric"]) <= float(r["hi"])
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == (
        "toy: 2 judged queries, 8 pooled pairs (depth 2), 3 runs, P@2, batches of 3; Kendall tau against all labels:"
    )
    assert printed[1:5] == [
        "batch\tpairs\tdepth\ttop-n\trandom",
        "1\t3\t0.8165\t0.8165\t0.8165",
        "2\t6\t1.0000\t1.0000\t1.0000",
        "3\t8\t1.0000\t1.0000\t1.0000",
    ]
    assert printed[5] == "pairs to reach tau >= 0.9: depth 6, top-n 6, random 6"


def test_runs_subset_and_stdout_csv(toy_db, capsys):
    args = ["--runs", "C,A", "--depth", "2", "--batch", "8"]
    assert _simulate(toy_db, "toy", *args, "--measure", "P@2", "--strategies", "random", "-o", "-") == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ",".join(CSV_COLUMNS)
    assert [line.split(",")[7] for line in lines[1:3]] == ["C", "A"]
    # C and A pool 7 pairs, 5 of them relevant: one batch finds them all (recall 1)
    assert lines[1] == "random,1,7,0,5,1.000000,1.000000,C,1.000000,1.000000,1.000000,1.000000"


def test_simulate_collection_on_both_backends(store, tmp_path):
    """The store's qrels and runs come back in no defined order (PostgreSQL): the rows must equal core's."""
    from pooljudge.simulation import simulate_collection

    assert (
        main(
            [
                "--db",
                store.url,
                "-q",
                "import",
                "-f",
                "beir",
                str(write_toy(tmp_path / "toy")),
                "-c",
                "toy",
                "--level",
                "1",
            ]
        )
        == 0
    )
    got = simulate_collection(store, "toy", depth=2, batch_size=3, strategies=["depth", "top-n", "random"], seed=4)
    want = simulate_labelling(ORACLE, RUNS, depth=2, batch_size=3, strategies=["depth", "top-n", "random"], seed=4)
    assert got.runs == ["A", "B", "C"] and got.level == 1
    assert got.records() == want.records()
    with pytest.raises(ValueError, match="model: the active strategy needs a cross-encoder"):
        simulate_collection(store, "toy", strategies=["active"])
    with pytest.raises(ValueError, match="model: the active-retrain strategy needs a cross-encoder"):
        simulate_collection(store, "toy", strategies=["depth", "active-retrain"])
    with pytest.raises(ValueError, match="band: only the active strategies use a confidence band"):
        simulate_collection(store, "toy", band=(0.1, 0.9))
    with pytest.raises(ValueError, match="rule: unknown 'sure'; known: uncertain, relevant"):
        simulate_collection(store, "toy", rule="sure")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--strategies", "depth,deep"], "--strategies: unknown 'deep'"),
        (["--strategies", "active"], "--model: the active strategy needs a cross-encoder"),
        (["--strategies", "random,active-retrain"], "--model: the active-retrain strategy needs a cross-encoder"),
        (["--retrain-steps", "0"], "--retrain-steps must be a positive integer, got 0"),
        (["--retrain-lr", "0"], "--retrain-lr must be a positive number, got 0.0"),
        (["--strategies", "active", "--model", "/nonexistent", "--band", "0.1"], "--band must be two probabilities"),
        (["--runs", "A"], "runs: the simulation ranks systems and needs at least two runs, got 1 ('A')"),
        (["--runs", "A,nope"], "no run named 'nope' in collection 'toy' (runs: A, B, C)"),
        (["--qrels", "v9"], "no qrels version named 'v9'"),
        (["--depth", "0"], "--depth must be a positive integer, got 0"),
        (["--batch", "0"], "--batch must be a positive integer, got 0"),
        (["--measure", "nDCG@x"], "nDCG: the cutoff must be a positive integer"),
    ],
)
def test_errors_name_the_argument(toy_db, capsys, argv, message):
    assert main(["--db", toy_db, "-q", "simulate-labelling", "-c", "toy", *argv]) == 1
    assert message in capsys.readouterr().err


@pytest.mark.slow
def test_active_with_a_tiny_cross_encoder(toy_db, tmp_path, capsys):
    ce = pytest.importorskip("core.training.cross_encoder")
    model = tiny_cross_encoder(tmp_path / "model")
    pairs = [
        ("q1", "d1"),
        ("q1", "d2"),
        ("q1", "d3"),
        ("q2", "d4"),
        ("q2", "d5"),
        ("q2", "d6"),
        ("q1", "d5"),
        ("q1", "d4"),
    ]
    probs = ce.CrossEncoder(model).probabilities([(QUERY_TEXTS[q], TEXTS[d]) for q, d in pairs])
    # the band just inside the extremes: the most and the least probable pair go to the model
    low, high = (float(p) for p in sorted(probs)[1 :: len(probs) - 3])
    from pooljudge.simulation import model_probabilities

    store = Store(toy_db)
    stored = model_probabilities(store, "toy", pairs, model)
    store.dispose()
    assert [stored[q][d] for q, d in pairs] == [float(p) for p in probs]  # the same texts reach the model
    out = tmp_path / "active.csv"
    args = ["--depth", "2", "--batch", "2", "--strategies", "depth,active"]
    assert _simulate(toy_db, "toy", *args, "--model", str(model), "--band", f"{low!r},{high!r}", "-o", str(out)) == 0
    rows = [r for r in _rows(out) if r["strategy"] == "active"]
    assert [r["labelled_pairs"] for r in rows[::3]] == ["2", "4", "6"]
    assert {r["model_labelled"] for r in rows} == {"2"}
    assert "active: 2 pairs labelled by the model instead of annotators" in capsys.readouterr().out
    want = simulate_labelling(
        ORACLE,
        RUNS,
        depth=2,
        batch_size=2,
        strategies=["depth", "active"],
        level=1,
        probabilities=stored,
        band=(low, high),
    )
    assert out.read_text(encoding="utf-8") == want.to_csv()


@pytest.mark.slow
def test_active_retrain_with_a_tiny_cross_encoder(toy_db, tmp_path, capsys):
    """The CLI's active-retrain is core's simulation with a RetrainingSelector over the stored texts."""
    active = pytest.importorskip("core.training.active")
    model = tiny_cross_encoder(tmp_path / "model")
    out = tmp_path / "retrain.csv"
    args = ["--depth", "2", "--batch", "3", "--strategies", "active,active-retrain", "--rule", "relevant"]
    settings = ["--retrain-steps", "3", "--retrain-batch", "4", "--retrain-lr", "0.01", "--max-length", "32"]
    assert _simulate(toy_db, "toy", *args, *settings, "--model", str(model), "--seed", "2", "-o", str(out)) == 0
    printed = capsys.readouterr().out
    assert "active-retrain: the model was fine-tuned 2 times (after every batch but the last; rule relevant)" in printed
    assert "recall of the 5 relevant pooled pairs (found / relevant):" in printed
    assert "batch\tpairs\tactive\tactive-retrain" in printed
    selector = active.RetrainingSelector(  # the toy's titles are empty: a passage's text is what is scored
        model, QUERY_TEXTS, TEXTS, steps=3, batch_size=4, learning_rate=0.01, max_length=32, seed=2
    )
    want = simulate_labelling(
        ORACLE,
        RUNS,
        depth=2,
        batch_size=3,
        strategies=["active", "active-retrain"],
        level=1,
        selector=selector,
        rule="relevant",
        seed=2,
    )
    assert out.read_text(encoding="utf-8") == want.to_csv()
    assert want.training_rounds == {"active-retrain": 2} and selector.rounds == 2
    rows = [r for r in _rows(out) if r["strategy"] == "active-retrain"]
    assert [r["labelled_pairs"] for r in rows[::3]] == ["3", "6", "8"] and rows[-1]["recall"] == "1.000000"


@pytest.mark.shared_data
@pytest.mark.slow  # 30 s measured
def test_lecard_taus_per_batch(shared_data, tmp_path, capsys, sqlite_template):
    """LeCaRD's labels (107 queries, top-30 candidates graded 0-3) as the oracle, its stored runs as the systems."""
    db = sqlite_url(copy_store(sqlite_template, tmp_path / "lecard.db"))
    assert main(["--db", db, "-q", "import", "--format", "lecard", str(shared_data / "lecard"), "-c", "lecard"]) == 0
    store = Store(db)
    from db.queries import list_runs

    with store.read() as session:
        runs = [r.name for r in list_runs(session, "lecard")]
    store.dispose()
    assert len(runs) == 8
    out = tmp_path / "lecard.csv"
    # depth 100 pools every run's whole list: every judged pair is in the pool, so the last batch is all labels
    assert (
        _simulate(
            db, "lecard", "--depth", "100", "--batch", "1000", "--strategies", "depth,top-n,random", "-o", str(out)
        )
        == 0
    )
    printed = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + printed)
    rows = _rows(out)
    for strategy in ("depth", "top-n", "random"):
        taus = [(int(r["batch"]), float(r["tau"])) for r in rows if r["strategy"] == strategy and r["run"] == runs[0]]
        assert [b for b, _ in taus] == list(range(1, len(taus) + 1))
        assert taus[-1][1] == 1.0
    pool = int(rows[-1]["labelled_pairs"])
    assert pool == 29345 and len(taus) == math.ceil(pool / 1000) == 30
    # the stop hint (seed 0): depth pooling's first 2,000 pairs already rank the 8 runs as all labels do
    assert "pairs to reach tau >= 0.9: depth 2000, top-n 3000, random 27000" in printed
