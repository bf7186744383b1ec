"""benchmarks/bench_training.py on toy collections written in the real formats, with a tiny random BERT.

The collections go through the project's own readers (a SMART folder like
Cranfield's, an RGB JSON-lines file), BM25 builds the candidates, and every
system the benchmark prints is trained and scored for real, only small:
a 2-layer, 32-dim BERT over the toy vocabulary stands in for MiniLM.  No
timing is asserted.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402

from core.formats.qa_jsonl import text_passage_id  # noqa: E402
from core.training.common import ranking_metrics  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

TOPICS = ("bread", "river", "market", "music", "wing", "engine")
FILLER = ("the", "a", "of", "and", "is", "in", "on", "old", "new", "big", "small", "good", "very", "with")
ZH_TOPICS = ("面包", "河流", "市场", "音乐")
ZH_FILLER = ("的", "是", "在", "和", "有", "很", "大", "小", "新", "老")
WORDS = sorted({*TOPICS, *FILLER, "what", "about", "tell", "me", "."})
CHARS = sorted({c for w in (*ZH_TOPICS, *ZH_FILLER, "什么", "关于") for c in w} | {"？", "。"})
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, *CHARS]


@pytest.fixture(scope="module")
def bench():
    """The benchmark script as a module."""
    spec = importlib.util.spec_from_file_location("bench_training", REPO / "benchmarks" / "bench_training.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_training"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))


def make_tiny_model(folder: Path) -> Path:
    """A 2-layer, 32-dim random BERT over :data:`VOCAB` (English words, Chinese characters), saved in ``folder``."""
    from tests.tiny_models import write_tiny_bert

    return write_tiny_bert(folder, VOCAB)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    return make_tiny_model(tmp_path_factory.mktemp("tiny-bert"))


def write_cranfield(folder: Path) -> None:
    """A SMART folder like Cranfield's: 18 documents (3 per topic, plus one empty placeholder), 12 queries.

    Query ``i`` (``.I`` numbered 1, 3, 5... as Cranfield skips numbers; the
    qrels number queries by position) asks about topic ``i % 6``; its topic's
    documents carry Cleverdon codes 1, 2 and 4.
    """
    rng = random.Random(1)
    folder.mkdir(parents=True)
    docs, n = [], 0
    for topic in TOPICS:
        for _ in range(3):
            n += 1
            words = [rng.choice(FILLER) for _ in range(rng.randint(4, 8))]
            words.insert(rng.randint(0, len(words)), topic)
            docs.append(f".I {n}\n.T\n{topic} study\n.A\nsmith,j.\n.B\nj. ae. 1958\n.W\n{' '.join(words)} .\n")
    docs.append(".I 19\n.T\n.A\n.B\n.W\n")  # Cranfield 471/995-style empty placeholder
    (folder / "cran.all.1400").write_text("".join(docs) + ".I\n", encoding="utf-8")
    queries, qrels = [], []
    for i in range(12):
        topic = TOPICS[i % len(TOPICS)]
        text = ("what about the " if i < 6 else "tell me of a ") + topic + " ."
        queries.append(f".I {2 * i + 1:03d}\n.W\n{text}\n")
        first = 3 * (i % len(TOPICS)) + 1
        qrels += [f"{i + 1} {first} 1", f"{i + 1} {first + 1} 2", f"{i + 1} {first + 2} 4"]
    (folder / "cran.qry").write_text("".join(queries) + ".I\n", encoding="utf-8")
    (folder / "cranqrel").write_text("\n".join(qrels) + "\n", encoding="utf-8")


def write_rgb(path: Path) -> list[dict]:
    """An RGB-style JSON-lines file: 8 queries, each with 2 positive and 2 negative passages."""
    rng = random.Random(2)
    path.parent.mkdir(parents=True)
    records = []
    for i in range(8):
        topic = ZH_TOPICS[i % len(ZH_TOPICS)]
        other = ZH_TOPICS[(i + 1) % len(ZH_TOPICS)]

        def text(word: str, j: int) -> str:
            return "".join(rng.choice(ZH_FILLER) for _ in range(3)) + word + ZH_FILLER[j] + "。"

        records.append(
            {
                "id": i,
                "query": f"关于{topic}的什么？",
                "answer": [topic],
                "positive": [text(topic, i % 5), text(topic, 5 + i % 5)],
                "negative": [text(other, i % 5), text(other, 5 + i % 5)],
            }
        )
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n", encoding="utf-8")
    return records


@pytest.fixture()
def data_root(tmp_path) -> Path:
    root = tmp_path / "data"
    write_cranfield(root / "cranfield")
    write_rgb(root / "rgb-zh" / "zh_refine.json")
    return root


def test_collections_come_from_the_real_readers(bench, data_root) -> None:
    cran = bench.load_collection("cranfield", data_root)
    assert cran.language == "en"
    assert len(cran.data.passages) == 18 and "19" not in cran.data.passages  # the empty placeholder is left out
    assert sorted(cran.data.queries, key=int) == [str(i) for i in range(1, 13)]  # by position, not by .I
    assert cran.data.queries["2"] == "what about the river ."
    assert cran.data.qrels["1"] == {"1": 3, "2": 2, "3": 1}  # Cleverdon 1 -> 3, 2 -> 2, 4 -> 1
    assert cran.data.level == 1 and cran.data.positives("1") == ["1", "2", "3"]

    records = write_rgb(data_root.parent / "copy" / "zh_refine.json")  # the same seeded records
    rgb = bench.load_collection("rgb-zh", data_root)
    assert rgb.language == "zh" and len(rgb.data.queries) == 8
    first = records[0]
    assert rgb.data.qrels["0"] == {
        **{text_passage_id(t): 1 for t in first["positive"]},
        **{text_passage_id(t): 0 for t in first["negative"]},
    }
    capped = bench.load_collection("rgb-zh", data_root, max_queries=3, seed=0)
    assert len(capped.data.queries) == 3
    judged = {d for q in capped.data.queries for d in capped.data.qrels[q]}
    assert set(capped.data.passages) == judged  # only the sampled queries' passages


@pytest.mark.slow
def test_missing_collections_are_skipped(bench, tmp_path, capsys) -> None:
    assert bench.load_collection("cranfield", tmp_path) is None
    assert bench.load_collection("rgb-zh", tmp_path) is None
    assert bench.main(["--data", str(tmp_path)]) == {}
    out = capsys.readouterr().out
    assert "cranfield: skipped" in out and "rgb-zh: skipped" in out and "nothing to benchmark" in out
    with pytest.raises(SystemExit, match="unknown collection 'cisi'"):
        bench.load_collection("cisi", tmp_path)


def test_bm25_candidates_and_split(bench, data_root) -> None:
    cran = bench.with_bm25_candidates(bench.load_collection("cranfield", data_root), depth=5)
    for qid, cands in cran.data.candidates.items():
        scores = cran.bm25_run[qid]
        assert cands == list(scores)[:5] and len(cands) <= 5
        assert [scores[d] for d in cands] == sorted((scores[d] for d in cands), reverse=True)
    assert cran.data.candidates["2"][0] in {"4", "5", "6"}  # "river" documents first for the river query
    train, held = bench.split(cran.data, seed=0)
    assert len(held.queries) == 4 and len(train.queries) == 8  # round(12 * 0.3)
    assert not set(train.queries) & set(held.queries)
    capped, held2 = bench.split(cran.data, seed=0, max_train_queries=3)
    assert len(capped.queries) == 3 and set(capped.queries) <= set(train.queries)
    assert held2.queries == held.queries  # capping the training side leaves the held-out side alone
    train3, held3 = bench.split(cran.data, seed=0, max_held_out=2)
    assert train3.queries == train.queries and len(held3.queries) == 2 and set(held3.queries) <= set(held.queries)
    assert bench.held_out_metrics(cran.bm25_run, held) == ranking_metrics(
        {q: cran.bm25_run[q] for q in held.queries}, held.qrels, 1
    )


def test_plain_training_loop_trains_on_the_same_lists(bench, data_root, tiny_model) -> None:
    from core.training.cross_encoder import _groups

    cran = bench.with_bm25_candidates(bench.load_collection("cranfield", data_root))
    train, _ = bench.split(cran.data, seed=0)
    lists = len(_groups(train, 2, random.Random(0)))
    assert lists == 24  # 8 training queries x 3 relevant documents
    settings = {"epochs": 4, "batch_size": 8, "negatives": 2, "learning_rate": 1e-3, "weight_decay": 0.0}
    out = bench.plain_training_loop(tiny_model, train, max_length=32, seed=0, **settings)
    assert out["steps"] == 4 * math.ceil(lists / 8)
    assert out["pairs"] == 4 * lists * 3  # each list: the positive and 2 negatives
    assert out["pairs_per_second"] == pytest.approx(out["pairs"] / out["seconds"])
    # softmax over 3 near-equal logits of a fresh head: the first loss is about ln 3
    assert out["losses"][0] == pytest.approx(math.log(3), abs=0.1)
    again = bench.plain_training_loop(tiny_model, train, max_length=32, seed=0, **settings)
    assert again["losses"] == out["losses"]  # seeded: the same lists, batches and initial head


def test_plain_batches_are_a_seeded_partition(bench) -> None:
    batches = bench.plain_batches(10, 4, seed=3)
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(i for b in batches for i in b) == list(range(10))
    assert batches == bench.plain_batches(10, 4, seed=3) != bench.plain_batches(10, 4, seed=4)


def test_format_table(bench) -> None:
    m = lambda n, r: {"nDCG@10": n, "MRR@10": r}  # noqa: E731
    results = {
        "cranfield": {
            "metrics": {
                "bm25": m(0.5, 0.7),
                "cross-encoder": m(0.45, 0.65),
                "interpolated": m(0.55, 0.75),
                "dual-encoder": m(0.3, 0.4),
                "rocketqav2": m(0.35, 0.45),
            },
            "rocketqav2_teacher_prior": {"weight": 16.0, "queries": 133},
            "cross_encoder_training": {"seconds": 100.0, "pairs_per_second": 6.0},
            "speed": {
                "queries": 8,
                "pairs": 500,
                "rounds": 2,
                "pooljudge_seconds": 10.0,
                "pooljudge_pairs_per_second": 50.0,
                "plain_seconds": 20.0,
                "plain_pairs_per_second": 25.0,
                "ratio": 2.0,
            },
        },
        "rgb-zh": {
            "metrics": {
                "bm25": m(0.8, 0.9),
                "cross-encoder": m(0.7, 0.8),
                "dual-encoder": m(0.6, 0.7),
                "rocketqav2": m(0.6, 0.7),
            }
        },
    }
    lines = bench.format_table(results).splitlines()
    assert lines[1] == "cranfield   BM25                                   0.5000   0.7000"
    assert lines[2] == "cranfield   cross-encoder re-ranking BM25@100      0.4500   0.6500"
    assert lines[3] == "cranfield   the same + BM25 (weight from dev)      0.5500   0.7500"
    assert lines[6] == "rgb-zh      BM25                                   0.8000   0.9000"
    assert "cranfield: cross-encoder training 100 s (6.0 pairs/s in its steps)" in lines
    assert (
        "cranfield: training speed, 8 queries, 500 pairs, best of 2 interleaved: train_cross_encoder 10.0 s "
        "(50.0 pairs/s), plain transformers loop 20.0 s (25.0 pairs/s): ratio 2.00x"
    ) in lines
    assert "target 1, re-ranker (alone) beats BM25 (nDCG@10) on at least one collection: MISSED" in lines
    assert (
        "target 1, re-ranker (interpolated with BM25) beats BM25 (nDCG@10) on at least one collection: met on cranfield"
    ) in lines
    assert "target 2, cranfield: RocketQAv2 - dual alone = +0.0500 nDCG@10 (met)" in lines
    assert "target 2, rgb-zh: RocketQAv2 - dual alone = +0.0000 nDCG@10 (MISSED)" in lines
    assert "cranfield: RocketQAv2's teacher: the cross-encoder's logits + 16 x BM25 (dev)" in lines
    assert "rgb-zh: RocketQAv2's teacher: the cross-encoder's logits alone" in lines


TOY_RUN = (
    "--epochs 2 --batch-size 4 --negatives 2 --max-length 32 --max-train-queries 6 --max-queries 0 "
    "--speed-queries 2 --threads 1 --device cpu --systems minilm,cross-encoder,dual-encoder,rocketqav2"
).split()


def check_collection(bench, name: str, res: dict, table: list[str]) -> None:
    """One collection's splits, interpolation weight, teacher and table rows."""
    # the dev split (round(n * 0.15) of the training side) comes first, then the cap: 8 -> 1 + 7 -> 6 on
    # cranfield (12 queries, 4 held out), 6 -> 1 + 5 on rgb-zh (8 queries, 2 held out)
    assert res["dev_queries"] == 1
    assert res["train_queries"] == (6 if name == "cranfield" else 5)
    assert res["held_out_queries"] == (4 if name == "cranfield" else 2)  # round(12 * 0.3), round(8 * 0.3)
    assert set(res["metrics"]) == {"bm25", "minilm", "cross-encoder", "interpolated", "dual-encoder", "rocketqav2"}
    interpolation = res["interpolation"]
    assert interpolation["dev_queries"] == 1 and len(interpolation["dev_nDCG@10"]) == 11
    best = max(interpolation["dev_nDCG@10"].values())
    assert interpolation["dev_nDCG@10"][interpolation["weight"]] == best  # the weight is the dev's best
    assert res["rocketqav2_teacher"] == "trained cross-encoder"  # the re-ranker trained before it
    prior = res["teacher_prior"]  # the teacher's BM25 weight: the dev's best of the 8 tried
    assert len(prior["dev_nDCG@10"]) == 8 and prior["dev_nDCG@10"][prior["weight"]] == max(
        prior["dev_nDCG@10"].values()
    )
    used = {"weight": prior["weight"], "queries": res["train_queries"]} if prior["weight"] else None
    assert res["rocketqav2_teacher_prior"] == used
    for key, label in bench.SYSTEMS:
        value = res["metrics"][key]
        assert 0.0 <= value["nDCG@10"] <= 1.0 and 0.0 <= value["MRR@10"] <= 1.0
        assert f"{name:<11} {label:<36} {value['nDCG@10']:>8.4f} {value['MRR@10']:>8.4f}" in table
    assert any(line.startswith(f"target 2, {name}: RocketQAv2 - dual alone = ") for line in table)


def check_speed(speed: dict, table: list[str]) -> None:
    """2 sampled training queries x 3 relevant documents = 6 lists of 1 + 2 passages, 2 epochs, best of 2."""
    assert speed["queries"] == 2 and speed["pairs"] == 2 * 6 * 3 and speed["rounds"] == 2
    assert len(speed["all_pooljudge_seconds"]) == len(speed["all_plain_seconds"]) == 2
    assert speed["pooljudge_seconds"] == min(speed["all_pooljudge_seconds"])
    assert speed["plain_seconds"] == min(speed["all_plain_seconds"])
    assert speed["ratio"] == pytest.approx(speed["plain_seconds"] / speed["pooljudge_seconds"])
    assert speed["pooljudge_pairs_per_second"] == pytest.approx(speed["pairs"] / speed["pooljudge_seconds"])
    line = "cranfield: training speed, 2 queries, 36 pairs, best of 2 interleaved: train_cross_encoder "
    assert sum(row.startswith(line) for row in table) == 1


@pytest.mark.slow  # 11 s measured
def test_main_runs_every_system_on_both_collections(bench, data_root, tiny_model, tmp_path, capsys) -> None:
    output = tmp_path / "out.json"
    report = bench.main(["--data", str(data_root), "--base-model", str(tiny_model), "--output", str(output), *TOY_RUN])
    out = capsys.readouterr().out
    assert json.loads(output.read_text(encoding="utf-8")) == json.loads(json.dumps(report, default=str))
    assert report["settings"]["negatives"] == 2 and report["settings"]["max_queries"] is None
    table = out[out.index("collection  system") :].splitlines()
    for name in ("cranfield", "rgb-zh"):
        check_collection(bench, name, report["results"][name], table)
    # the speed comparison runs on the first collection only (without --plain-all)
    assert "speed" not in report["results"]["rgb-zh"]
    check_speed(report["results"]["cranfield"]["speed"], table)
    assert report["results"]["cranfield"]["metrics"]["bm25"]["nDCG@10"] > 0.5  # the toy queries name their topic
    for how in ("alone", "interpolated with BM25"):
        assert any(line.startswith(f"target 1, re-ranker ({how}) beats BM25") for line in table)


def test_systems_can_be_left_out(bench, data_root, tiny_model, capsys) -> None:
    report = bench.main(
        [
            "--data",
            str(data_root),
            "--collections",
            "cranfield",
            "--base-model",
            str(tiny_model),
            "--systems",
            "dual-encoder",
            "--epochs",
            "1",
            "--max-length",
            "32",
            "--device",
            "cpu",
        ]
    )
    assert set(report["results"]["cranfield"]["metrics"]) == {"bm25", "dual-encoder"}
    out = capsys.readouterr().out
    assert "target 1" not in out and "target 2" not in out and "training speed" not in out
    with pytest.raises(SystemExit):
        bench.main(["--systems", "bm25x"])
