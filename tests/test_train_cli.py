"""`pooljudge train` and `pooljudge models` end to end: a tiny random BERT trained on a toy collection in seconds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from db.engine import Store, sqlite_url
from pooljudge.cli import main
from tests.core.training.conftest import tiny_encoder_folder  # noqa: F401  (the shared tiny BERT fixture)
from tests.sqlite_template import copy_store, seed_template
from tests.training_store import toy_training_folder

FAST = [
    "--epochs",
    "2",
    "--batch-size",
    "4",
    "--negatives",
    "3",
    "--max-length",
    "32",
    "--lr",
    "5e-4",
    "--seed",
    "0",
    "--device",
    "cpu",
]


@pytest.fixture(scope="module")
def toy_template(tmp_path_factory, sqlite_template):
    """A store file holding H1's toy collection, imported once for the module through the CLI."""
    folder = tmp_path_factory.mktemp("toy")
    source = toy_training_folder(folder / "toy")

    def seed(url):
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("POOLJUDGE_CACHE", str(folder / "cache"))
            assert main(["--db", url, "-q", "import", "-f", "beir", "-c", "toy", str(source)]) == 0

    return seed_template(sqlite_template, folder, seed)


@pytest.fixture
def toy(toy_template, tmp_path, monkeypatch):
    """``(url, store, models folder)``: H1's toy collection 'toy' (24 train, 8 dev queries, run 'shuffled')."""
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POOLJUDGE_MODELS", str(tmp_path / "models"))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    url = sqlite_url(copy_store(toy_template, tmp_path / "s.db"))
    store = Store(url)
    yield url, store, tmp_path / "models"
    store.dispose()


def _models(store):
    from db.trained_models import list_models

    with store.read() as session:
        return list_models(session)


def _jobs(store):
    from db.jobs import list_jobs

    with store.read() as session:
        return list_jobs(session, kind="train")


def job_result_weight(store):
    """The newest train job's ``interpolate`` (its chosen first-stage weight)."""
    return _jobs(store)[0].result["interpolate"]


def _train(url, kind, name, *args, quiet=True):
    """``pooljudge --db URL [-q] train KIND -c toy --name NAME ARGS...``: its exit code."""
    return main(["--db", url, *(["-q"] if quiet else []), "train", kind, "-c", "toy", "--name", name, *args])


@pytest.mark.slow
def test_train_cross_encoder_registers_a_model_transformers_loads(toy, tiny_encoder_folder, capsys):  # noqa: F811
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from core.training.cross_encoder import CrossEncoder

    url, store, models = toy
    capsys.readouterr()
    assert _train(url, "cross-encoder", "rr", "--base", str(tiny_encoder_folder), *FAST, quiet=False) == 0
    out, err = capsys.readouterr()
    for stage in ("loading labels", "retrieving candidates: indexing bm25", "training", "registering"):
        assert stage in err.splitlines()
    [model] = _models(store)
    assert (model.collection, model.name, model.kind) == ("toy", "rr", "cross-encoder")
    assert model.path == str(models / "1" / "rr") and Path(model.path).is_dir()
    assert model.base_model == str(tiny_encoder_folder.resolve())
    assert (
        model.params["labels"] == "imported"
        and model.params["split"] == "train"
        and model.params["eval_split"] == "dev"
    )
    assert model.params["train_queries"] == 24 and model.params["held_out_queries"] == 8
    assert model.params["config"]["epochs"] == 2 and model.params["config"]["learning_rate"] == 5e-4
    assert model.params["candidates_source"]["retriever"] == "bm25"
    assert [h["step"] for h in model.history] == [
        6,
        12,
    ]  # 24 queries x 1 positive (grade 2, level 2) / 4 per step; an evaluation per epoch
    best = max(model.history, key=lambda h: h["eval"]["nDCG@10"])
    assert model.best["eval"] == best["eval"] and 0.0 < best["eval"]["nDCG@10"] <= 1.0
    [job] = _jobs(store)
    assert job.status == "done" and model.job_id == job.id and job.result["model"] == "rr"
    assert job.result["path"] == model.path and job.result["best"] == model.best
    assert re.search(rf"best held-out nDCG@10 {best['eval']['nDCG@10']:.4f}, MRR@10 {best['eval']['MRR@10']:.4f}", out)
    assert f"saved to {model.path}" in out
    # the first-stage weight for `rerank:...,interpolate=W`, chosen on the held-out queries from 0, 0.1, ..., 1
    interpolation = model.params["interpolation"]
    by_weight = interpolation["held_out_nDCG@10"]
    assert list(by_weight) == [f"{i / 10:g}" for i in range(11)]
    best_weight = min((w for w, v in by_weight.items() if v == max(by_weight.values())), key=float)
    assert f"{interpolation['weight']:g}" == best_weight and job_result_weight(store) == interpolation["weight"]
    if interpolation["weight"]:
        assert f"rerank:model=rr,interpolate={interpolation['weight']:g}" in out
    assert not [p for p in (models / "1").iterdir() if p.name != "rr"]  # no training leftovers beside it

    # the folder is a standard Hugging Face model: transformers' logits are CrossEncoder's scores
    pairs = [("what about bread ?", "the bread is good ."), ("what about bread ?", "a big river .")]
    tokenizer = AutoTokenizer.from_pretrained(model.path, local_files_only=True)
    hf = AutoModelForSequenceClassification.from_pretrained(model.path, local_files_only=True).eval()
    with torch.inference_mode():
        logits = hf(**tokenizer([q for q, _ in pairs], [p for _, p in pairs], padding=True, return_tensors="pt")).logits
    np.testing.assert_allclose(CrossEncoder(model.path, device="cpu").score(pairs), logits[:, 0].numpy(), atol=1e-5)

    assert main(["--db", url, "models"]) == 0
    assert capsys.readouterr().out == f"rr\tcross-encoder\ttoy\tnDCG@10 {best['eval']['nDCG@10']:.4f}\t{model.path}\n"
    assert main(["--db", url, "models", "-c", "toy"]) == 0 and "rr\t" in capsys.readouterr().out

    # the same name again: refused before any job is queued, nothing trained
    assert _train(url, "cross-encoder", "rr", "--base", str(tiny_encoder_folder), *FAST, quiet=False) == 1
    assert "a model named 'rr' already exists in collection 'toy'" in capsys.readouterr().err
    assert len(_jobs(store)) == 1 and len(_models(store)) == 1


@pytest.mark.slow
def test_candidates_from_a_stored_run_pointwise_and_a_held_out_share(toy, tiny_encoder_folder, capsys):  # noqa: F811
    url, store, _models_dir = toy
    base = ["--base", str(tiny_encoder_folder), "--candidates", "shuffled"]
    how = ["--loss", "pointwise", "--held-out", "0.25", "--labels", "imported"]
    assert _train(url, "cross-encoder", "pw", *base, *how, *FAST) == 0
    [model] = _models(store)
    assert model.params["candidates_source"] == {"run": "shuffled", "depth": 100}
    assert model.params["loss"] == "pointwise" and model.params["held_out"] == 0.25
    # a quarter of the 24 training-split queries is held out; the dev split is not used
    assert model.params["train_queries"] == 18 and model.params["held_out_queries"] == 6


@pytest.mark.slow
def test_a_failed_training_leaves_no_folder_and_the_name_stays_free(toy, tiny_encoder_folder, monkeypatch):  # noqa: F811
    import core.training.cross_encoder as ce

    url, store, models = toy

    def broken(train, held_out, config, *, output, **_kw):
        Path(output).mkdir(parents=True, exist_ok=True)
        (Path(output) / "half.bin").write_bytes(b"x")
        raise RuntimeError("out of memory")

    monkeypatch.setattr(ce, "train_cross_encoder", broken)
    with pytest.raises(RuntimeError, match="out of memory"):
        _train(url, "cross-encoder", "rr", "--base", str(tiny_encoder_folder))
    [job] = _jobs(store)
    assert job.status == "failed" and "out of memory" in job.error
    assert list((models / "1").iterdir()) == [] and _models(store) == []
    monkeypatch.undo()
    monkeypatch.setenv("POOLJUDGE_MODELS", str(models))
    monkeypatch.setenv("POOLJUDGE_CACHE", str(models.parent / "cache"))
    assert (
        _train(url, "cross-encoder", "rr", "--base", str(tiny_encoder_folder), "--candidates", "shuffled", *FAST) == 0
    )
    assert [m.name for m in _models(store)] == ["rr"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "args, message",
    [
        (["--labels", "v9"], "labels: no qrels version named 'v9' in collection 'toy'"),
        (["--labels", "final"], "labels: collection 'toy' has no final labels yet"),
        (["--held-out", "1.5"], "--held-out must be a fraction in (0, 1), got 1.5"),
        (["--held-out", "0"], "--held-out must be a fraction in (0, 1), got 0.0"),
        (["--denoise", "0.1,0.9"], "--denoise applies to rocketqav2 only, not cross-encoder"),
        (["--teacher-prior", "2"], "--teacher-prior applies to rocketqav2 only, not cross-encoder"),
        (
            ["--candidates", "nope:x=1"],
            "--candidates: no run named 'nope:x=1' in collection 'toy', and not a retriever spec",
        ),
        (
            ["--base", "no-such-model"],
            "no model named 'no-such-model' in collection 'toy' (models: none), and 'no-such-model' is not a folder",
        ),
        (["--epochs", "0"], "--epochs must be positive, got 0"),
        (["--lr", "-1"], "--learning-rate must be positive, got -1.0"),
        (["--split", "test"], "--split: no query of split 'test' has a relevant label (splits: 'dev', 'train')"),
        (["--eval-split", "test"], "--eval-split: no query of split 'test' has a relevant label"),
        (["--eval-split", "train"], "--eval-split must differ from --split (both 'train')"),
        (
            ["--split", "test", "--held-out", "0.2"],
            "--held-out needs at least 2 queries with a relevant label in split "
            "'test' (splits: 'dev', 'train'), found 0",
        ),
        (["--name", " x"], "model name (--name) ' x' has leading or trailing whitespace"),
        (["-c", "nope"], "no collection named 'nope' (collections: toy)"),
    ],
)
def test_bad_arguments_are_named(toy, capsys, args, message):
    url, store, models = toy
    argv = ["--db", url, "-q", "train", "cross-encoder", "-c", "toy", "--name", "m", "--candidates", "shuffled", *args]
    assert main(argv) == 1
    assert message in capsys.readouterr().err
    assert _models(store) == [] and not models.exists()


def test_unknown_kind_and_bad_numbers_are_usage_errors(toy, capsys):
    url, _store, _models_dir = toy
    for argv, message in (
        (["train", "colbert", "-c", "toy", "--name", "m"], "argument kind: invalid choice: 'colbert'"),
        (
            ["train", "cross-encoder", "-c", "toy", "--name", "m", "--held-out", "x"],
            "argument --held-out: invalid float value: 'x'",
        ),
        (
            ["train", "cross-encoder", "-c", "toy", "--name", "m", "--held-out", "0.2", "--eval-split", "dev"],
            "argument --eval-split: not allowed with argument --held-out",
        ),
    ):
        with pytest.raises(SystemExit) as exit_:
            main(["--db", url, *argv])
        assert exit_.value.code == 2 and message in capsys.readouterr().err


def test_models_lists_nothing_yet_and_escapes_names(toy, capsys):
    from db.models import TrainedModel

    url, store, _models_dir = toy
    assert main(["--db", url, "models"]) == 0
    assert capsys.readouterr().out == "no trained models (train one with `pooljudge train`)\n"
    with store.write() as session:  # a name stored before names were checked
        session.add(
            TrainedModel(
                collection_id=1,
                name="bad\nname\x1b[31m",
                kind="dual-encoder",
                path="/m",
                best={"eval": {"nDCG@10": 0.5}},
            )
        )
    assert main(["--db", url, "models"]) == 0
    assert capsys.readouterr().out == "bad\\nname\\x1b[31m\tdual-encoder\ttoy\tnDCG@10 0.5000\t/m\n"


def test_the_train_job_is_a_registered_handler():
    from pooljudge.jobs import handlers
    from pooljudge.training import run_train_job

    assert handlers()["train"] is run_train_job


def test_params_round_trip_and_reach_the_trainer_config():
    from pooljudge.training import TrainParams

    params = TrainParams.from_params(
        {
            "collection": "c",
            "name": "m",
            "kind": "rocketqav2",
            "denoise": [0.1, 0.9],
            "config": {"epochs": 3, "learning_rate": 1e-4, "device": "cpu"},
        }
    )
    assert params.denoise == (0.1, 0.9) and params.config.epochs == 3 and params.config.learning_rate == 1e-4
    assert params.eval_split == "dev" and params.candidates == "bm25" and params.depth == 100
    again = TrainParams.from_params(json.loads(json.dumps(params.as_params())))
    assert again == params
    with pytest.raises(ValueError, match="unknown training setting.s. lr; known: batch_size"):
        TrainParams.from_params({"collection": "c", "name": "m", "kind": "dual-encoder", "config": {"lr": 1}})
    with pytest.raises(ValueError, match="--eval-split and --held-out exclude each other"):
        TrainParams.from_params(
            {"collection": "c", "name": "m", "kind": "dual-encoder", "eval_split": "dev", "held_out": 0.2}
        )
    with pytest.raises(ValueError, match="--denoise must satisfy 0 <= LOW < HIGH <= 1, got 0.9,0.1"):
        TrainParams.from_params({"collection": "c", "name": "m", "kind": "rocketqav2", "denoise": [0.9, 0.1]})


@pytest.mark.slow
def test_train_dual_encoder_gives_a_dense_retriever(toy, tiny_encoder_folder, capsys):  # noqa: F811
    from core.retrieval.encoder import BiEncoder
    from pooljudge.models_lookup import registered_model_folder

    url, store, models = toy
    assert _train(url, "dual-encoder", "de", "--base", str(tiny_encoder_folder), "--candidates", "shuffled", *FAST) == 0
    [model] = _models(store)
    assert (model.kind, model.path) == ("dual-encoder", str(models / "1" / "de"))
    assert registered_model_folder(store, "toy", "de") == Path(model.path)
    vectors = BiEncoder(model.path).encode(["what about bread ?"])
    assert vectors.shape == (1, 32) and abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-5
    capsys.readouterr()
    retrieve = ["-c", "toy", "-r", f"dense:model={model.path}", "--hits", "5", "--no-store", "-o", "-"]
    assert main(["--db", url, "-q", "retrieve", *retrieve]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 32 * 5 and lines[0].split()[:2] == ["q-bread-0", "Q0"]


@pytest.mark.slow
def test_train_rocketqav2_from_a_registered_cross_encoder_with_denoising(toy, tiny_encoder_folder):  # noqa: F811
    from core.retrieval.encoder import BiEncoder
    from core.training.cross_encoder import CrossEncoder
    from pooljudge.models_lookup import registered_model_folder

    url, store, models = toy
    base = ["--base", str(tiny_encoder_folder), "--candidates", "shuffled", *FAST]
    assert _train(url, "cross-encoder", "rr", *base) == 0
    assert _train(url, "rocketqav2", "rq", "--cross-base", "rr", "--denoise", "0.1,0.9", *base) == 0
    rq = {m.name: m for m in _models(store)}["rq"]
    assert rq.kind == "rocketqav2" and rq.params["denoise"] == [0.1, 0.9]
    assert rq.params["cross_base_path"] == str(models / "1" / "rr")
    assert "denoise" in rq.params["trainer"]  # the trainer's counts of kept, dropped and added candidates
    assert registered_model_folder(store, "toy", "rq") == models / "1" / "rq"
    assert registered_model_folder(store, "toy", "rq", role="cross-encoder") == models / "1" / "rq" / "cross-encoder"
    assert BiEncoder(rq.path).encode(["bread"]).shape == (1, 32)
    assert CrossEncoder(models / "1" / "rq" / "cross-encoder", device="cpu").score([("bread", "bread .")]).shape == (1,)


def test_one_split_holds_out_a_seeded_fifth_and_several_splits_use_split_and_eval_split():
    from core.training.data import split_queries
    from pooljudge.training import TrainParams, _split
    from tests.core.training.conftest import toy_collection

    data = toy_collection()
    params = TrainParams.from_params({"collection": "c", "name": "m", "kind": "cross-encoder", "config": {"seed": 3}})
    train, held, how = _split(data, {q: "test" for q in data.queries}, params)
    assert (train, held) == split_queries(sorted(data.queries), 0.2, seed=3) and (len(train), len(held)) == (26, 6)
    assert how == {"held_out": 0.2, "split": None}
    splits = {q: "dev" if q.endswith("-3") else "train" for q in data.queries}
    train, held, how = _split(data, splits, params)
    assert held == sorted(q for q in data.queries if q.endswith("-3")) and len(train) == 24
    assert how == {"split": "train", "eval_split": "dev"}


@pytest.mark.parametrize(
    "args, message",
    [
        (["--teacher-prior", "auto"], "--teacher-prior auto chooses the weight with a trained cross-encoder's scores"),
        (["--teacher-prior", "-1"], "--teacher-prior must be a weight >= 0 or auto, got -1.0"),
        (["--teacher-prior", "nan"], "--teacher-prior must be a weight >= 0 or auto, got nan"),
        (["--teacher-prior", "much"], "--teacher-prior must be a weight >= 0 or auto, got 'much'"),
    ],
)
def test_bad_teacher_priors_are_named(toy, capsys, args, message):
    url, store, models = toy
    assert _train(url, "rocketqav2", "rq", "--candidates", "shuffled", *args) == 1
    assert message in capsys.readouterr().err
    assert _models(store) == [] and not models.exists()


@pytest.mark.slow
def test_rocketqav2_teacher_prior_given_or_chosen_on_the_held_out_queries(toy, tiny_encoder_folder, capsys):  # noqa: F811
    from core.retrieval.rerank import PRIOR_GRID

    url, store, _models_dir = toy
    base = ["--base", str(tiny_encoder_folder), "--candidates", "shuffled", *FAST]
    assert _train(url, "cross-encoder", "rr", *base) == 0
    assert _train(url, "rocketqav2", "fixed", "--cross-base", "rr", "--teacher-prior", "2", *base) == 0
    capsys.readouterr()
    assert _train(url, "rocketqav2", "auto", "--cross-base", "rr", "--teacher-prior", "auto", *base, quiet=False) == 0
    out = capsys.readouterr()
    models = {m.name: m for m in _models(store)}
    fixed, auto = models["fixed"].params, models["auto"].params
    assert fixed["teacher_prior"] == 2.0 and fixed["teacher_prior_weight"] == {"weight": 2.0}
    # the trainer added the prior for every training query (24, less the ones without a relevant label)
    assert fixed["trainer"]["teacher_prior"] == {"weight": 2.0, "queries": fixed["train_queries"]}
    chosen = auto["teacher_prior_weight"]
    scores = chosen["held_out_nDCG@10"]
    assert list(scores) == [f"{w:g}" for w in PRIOR_GRID]
    best = max(scores.values())
    assert f"{chosen['weight']:g}" == min((k for k, v in scores.items() if v == best), key=float)  # ties: smaller
    expected = {"weight": chosen["weight"], "queries": auto["train_queries"]} if chosen["weight"] else None
    assert auto["trainer"]["teacher_prior"] == expected
    assert _jobs(store)[0].result["teacher_prior"] == chosen["weight"]
    assert f"the teacher's first-stage weight: {chosen['weight']:g}" in out.out
    assert "choosing the teacher's prior weight" in out.err


@pytest.mark.slow
def test_the_default_kind_keeps_an_untrained_system_when_training_does_not_help_and_says_why(
    toy,
    tiny_encoder_folder,  # noqa: F811
    capsys,
    tmp_path,
):
    from core.formats.trec import load_run
    from core.training.common import ranking_metrics
    from tests.core.training.conftest import toy_collection

    url, store, models = toy
    capsys.readouterr()
    # no kind: the default; one step at a learning rate that changes nothing a ranking can see
    args = ["train", "-c", "toy", "--name", "auto", "--base", str(tiny_encoder_folder), *FAST]
    assert main(["--db", url, "-q", *args, "--max-steps", "1", "--lr", "1e-9"]) == 0
    out = capsys.readouterr().out
    [model] = _models(store)
    assert (model.name, model.kind, model.path) == ("auto", "dual-encoder", str(models / "1" / "auto"))
    system = model.params["default_system"]
    [job] = _jobs(store)
    result = job.result
    assert result["kind"] == "default" and job.params["kind"] == "default"
    assert (result["system"], result["spec"], result["reason"]) == (system["chosen"], system["spec"], system["reason"])
    dev = result["dev_nDCG@10"]
    assert list(dev) == ["bm25", "dense", "hybrid", "tuned-dense", "tuned-hybrid"] and dev == system["dev_nDCG@10"]
    # the fine-tuned encoder ranks as the base does: never strictly better, so an untrained system is kept
    assert dev["tuned-dense"] == dev["dense"] and result["improved"] is False
    assert system["chosen"] in ("bm25", "dense", "hybrid")
    assert dev[system["chosen"]] == max(dev.values()) >= max(dev["bm25"], dev["dense"])
    assert result["reason"].startswith(f"training did not help on the dev split: keeping {result['system_label']} (")
    assert result["reason"] in out and f"retrieve or pool with -r '{result['spec']}'" in out
    assert f"held-out (dev) nDCG@10 of the candidates: bm25 {dev['bm25']:.4f}, dense {dev['dense']:.4f}" in out
    assert system["base_spec"] == f"dense:model={tiny_encoder_folder.resolve()}"
    assert system["dev_queries"] == model.params["held_out_queries"] == 8
    # every candidate's spec retrieves exactly what the choice scored: its dev nDCG@10 comes back
    qrels = {q: j for q, j in toy_collection().qrels.items() if q.endswith("-3")}
    for candidate in system["systems"]:
        trec = tmp_path / f"{candidate['key']}.trec"
        retrieve = ["-c", "toy", "-r", candidate["spec"], "--hits", "100", "--no-store", "-o", str(trec)]
        assert main(["--db", url, "-q", "retrieve", *retrieve]) == 0, candidate["spec"]
        run = load_run(trec)
        assert ranking_metrics(run, qrels, level=2)["nDCG@10"] == pytest.approx(dev[candidate["key"]], abs=1e-6)
    spec_of = {c["key"]: c["spec"] for c in system["systems"]}
    assert spec_of["bm25"] == "bm25" and spec_of["tuned-dense"] == f"dense:model={model.path}"
    assert spec_of["hybrid"].startswith("hybrid:fusion=convex,alpha=")
    assert spec_of["tuned-hybrid"].endswith(f",dense_model={model.path}")
