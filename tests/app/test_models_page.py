"""The Models page (issue 12): the trained models' table, curves and usage, the training form, the jobs list."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from core.types import CollectionSource, Passage, QrelEntry, Query
from db.importer import import_collection, save_run
from db.jobs import create_job, fail_job, finish_job, list_jobs, report_progress, start_job
from db.queries import collection_id
from db.trained_models import register_model
from pooljudge.ui.common import md_escape
from tests.app.apptest import VIEWS, open_as_admin

pytestmark = pytest.mark.slow  # whole pages run under AppTest: over 2 s a test

PAGE = VIEWS / "models.py"
# a stored name that is Markdown and HTML: it must be shown as written everywhere
ODD = "ce<b>x</b>*v1*"
CE_HISTORY = [
    {"step": 2, "epoch": 0, "loss": 0.69, "eval": {"nDCG@10": 0.40, "MRR@10": 0.35}},
    {"step": 4, "epoch": 1, "loss": 0.52, "eval": {"nDCG@10": 0.55, "MRR@10": 0.50}},
    {"step": 6, "epoch": 1, "loss": 0.41, "eval": {"nDCG@10": 0.50, "MRR@10": 0.45}},
]
RQ_HISTORY = [
    {"step": 5, "epoch": 0, "loss": 1.5, "kl": 0.9, "sup": 0.6, "eval": {"nDCG@10": 0.30, "MRR@10": 0.25}},
    {"step": 10, "epoch": 1, "loss": 1.1, "kl": 0.7, "sup": 0.4, "eval": {"nDCG@10": 0.38, "MRR@10": 0.33}},
]


def _collection(db, *, splits=("train", "dev")) -> None:
    queries = [Query(f"q{i}", f"query {i}", split=splits[i % len(splits)]) for i in range(6)]
    with db.write() as s:
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter([Passage(f"d{i}", f"passage {i}") for i in range(10)]),
                queries=lambda: iter(queries),
                qrels=lambda: iter([QrelEntry(f"q{i}", f"d{i}", 2) for i in range(6)]),
            ),
            name="c",
            format="test",
            location="mem",
            qrels_name="gold",
        )
        save_run(s, "c", "bm25-run", {"q0": {"d0": 2.0, "d1": 1.0}})


def _register(db, tmp_path) -> None:
    with db.write() as s:
        register_model(
            s,
            "c",
            name=ODD,
            kind="cross-encoder",
            path=str(tmp_path / "m<1>"),
            base_model=None,
            params={"config": {"epochs": 2, "seed": 0}, "loss": "listwise"},
            history=CE_HISTORY,
            best=CE_HISTORY[1],
            created_by="admin",
        )
        register_model(
            s,
            "c",
            name="rq",
            kind="rocketqav2",
            path=str(tmp_path / "rq"),
            base_model="/models/bert",
            params={"config": {"epochs": 1}},
            history=RQ_HISTORY,
            best=RQ_HISTORY[1],
            created_by="admin",
        )
    # the trainers' record next to the weights gives the training time and speed
    (tmp_path / "m<1>").mkdir()
    (tmp_path / "m<1>" / "pooljudge_training.json").write_text(
        json.dumps({"seconds": 12.5, "pairs_per_second": 40.25}), encoding="utf-8"
    )


def _bare_model(session, collection: str, name: str, kind: str, path, params: dict | None = None) -> None:
    """A model registered without a training history (what a page shows for a model trained elsewhere)."""
    register_model(
        session,
        collection,
        name=name,
        kind=kind,
        path=str(path),
        base_model=None,
        params=params or {},
        history=[],
        best={},
    )


def _values(array) -> list:
    """A trace's x or y: plotly writes number arrays as typed base64 (``{"dtype", "bdata"}``)."""
    if isinstance(array, dict):
        return np.frombuffer(base64.b64decode(array["bdata"]), dtype=array["dtype"]).tolist()
    return list(array)


def _traces(spec: dict) -> dict:
    return {t["name"]: (_values(t["x"]), _values(t["y"])) for t in spec["data"]}


def _spec(at, title: str) -> dict:
    [spec] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if title in c.proto.spec]
    return spec


def test_the_table_lists_the_models_with_their_held_out_metrics_and_timing(db, tmp_path):
    _collection(db)
    _register(db, tmp_path)
    at = open_as_admin(db, PAGE)
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["name"]) == ["ce<b>x</b>*v1*", "rq"]  # st.dataframe shows plain text
    assert list(table["kind"]) == ["cross-encoder", "rocketqav2"]
    assert list(table["base model"]) == ["packaged all-MiniLM-L6-v2", "/models/bert"]
    assert list(table["by"]) == ["admin", "admin"]
    assert list(table["held-out nDCG@10"]) == [0.55, 0.38]
    assert list(table["held-out MRR@10"]) == [0.50, 0.33]
    # only the first has a training record: the other's cells show the dash, as text
    assert list(table["training s"]) == ["12.5", "\u2013"] and list(table["pairs/s"]) == ["40.2", "\u2013"]


def test_a_cross_encoder_shows_its_curves_folder_and_rerank_spec(db, tmp_path):
    _collection(db)
    _register(db, tmp_path)
    at = open_as_admin(db, PAGE)
    assert at.selectbox(key="models_chosen").value == ODD
    assert f"**{md_escape(ODD)}** · Cross-encoder re-ranker" in [m.value for m in at.markdown]
    codes = [c.value for c in at.code]
    assert str(tmp_path / "m<1>") in codes
    assert f"rerank:model={ODD},first=bm25,depth=100" in codes
    loss = _spec(at, "Training loss")
    assert loss["layout"]["title"]["text"] == "Training loss: ce&lt;b&gt;x&lt;/b&gt;*v1*"  # chart_text
    assert _traces(loss) == {"loss": ([2, 4, 6], [0.69, 0.52, 0.41])}
    assert _traces(_spec(at, "Held-out metrics")) == {
        "nDCG@10": ([2, 4, 6], [0.40, 0.55, 0.50]),
        "MRR@10": ([2, 4, 6], [0.35, 0.50, 0.45]),
    }
    assert at.json[0].value and json.loads(at.json[0].value)["params"]["loss"] == "listwise"


def test_rocketqav2_shows_its_kl_and_supervised_terms_and_both_uses(db, tmp_path):
    _collection(db)
    _register(db, tmp_path)
    at = open_as_admin(db, PAGE)
    at.selectbox(key="models_chosen").set_value("rq").run()
    assert not at.exception
    assert _traces(_spec(at, "Training loss")) == {
        "loss": ([5, 10], [1.5, 1.1]),
        "kl": ([5, 10], [0.9, 0.7]),
        "sup": ([5, 10], [0.6, 0.4]),
    }
    usage = [c.value for c in at.code if "model=" in c.value]
    # the dual encoder by its folder, the co-trained cross-encoder by the model's name (resolved to cross-encoder/)
    assert usage == [f"dense:model={tmp_path / 'rq'}\nrerank:model=rq,first=bm25,depth=100"]


def test_a_dual_encoder_is_used_by_its_folder(db, tmp_path):
    _collection(db)
    with db.write() as s:
        _bare_model(s, "c", "de", "dual-encoder", tmp_path / "de")
    at = open_as_admin(db, PAGE)
    assert not at.exception
    assert [c.value for c in at.code if "model=" in c.value] == [f"dense:model={tmp_path / 'de'}"]
    assert "No training history was recorded for this model." in [c.value for c in at.caption]
    assert list(at.dataframe[0].value["held-out nDCG@10"]) == ["\u2013"]


def test_no_models_yet_opens_the_training_form(db):
    _collection(db)
    at = open_as_admin(db, PAGE)
    assert not at.exception
    assert "No trained models yet." in [c.value for c in at.caption]
    assert at.expander[0].proto.expanded
    assert at.selectbox(key="models_split").options == ["train", "dev"]
    assert at.selectbox(key="models_eval_split").value == "dev"
    labels = at.selectbox(key="models_labels")  # nobody labelled yet: the newest qrels version, as the job would
    assert labels.options == ["live final labels", "qrels version gold"] and labels.value == "gold"
    assert at.selectbox(key="models_candidates").options == ["bm25", "bm25-run"]


def test_one_split_evaluates_on_a_held_out_share(db):
    _collection(db, splits=("test",))
    at = open_as_admin(db, PAGE)
    assert at.selectbox(key="models_eval_split").options == ["a held-out share of the training split"]


def test_the_jobs_list_shows_progress_errors_escaped_and_results(db):
    _collection(db)
    with db.write() as s:
        cid = collection_id(s, "c")
        running = create_job(
            s, "train", {"collection": "c", "name": "run*ning", "kind": "cross-encoder"}, collection_id=cid
        )
        failed = create_job(s, "train", {"collection": "c", "name": "bad", "kind": "dual-encoder"}, collection_id=cid)
        done = create_job(s, "train", {"collection": "c", "name": "ok", "kind": "cross-encoder"}, collection_id=cid)
        for job in (running, failed, done):
            start_job(s, job)
        report_progress(s, running, 3, 12, "Training")
        fail_job(s, failed, "base model: no folder [x](http://e.org)")
        finish_job(
            s,
            done,
            {
                "model": "ok",
                "path": "/m/ok",
                "kind": "cross-encoder",
                "seconds": 8.25,
                "pairs_per_second": 31.5,
                "best": {"step": 4, "eval": {"nDCG@10": 0.5, "MRR@10": 0.25}},
            },
        )
    at = open_as_admin(db, PAGE)
    assert not at.exception
    [bar] = at.get("progress")
    assert bar.proto.text == f"Job {running} · cross\\-encoder run\\*ning: Training (step 3/12)"
    assert bar.proto.value == 25
    assert [e.value for e in at.error] == [
        f"Job {failed} · dual\\-encoder bad failed: {md_escape('base model: no folder [x](http://e.org)')}"
    ]
    assert [s.value for s in at.success] == [
        f"Job {done} · cross\\-encoder ok: model ok trained; held-out nDCG@10 0.5000, MRR@10 0.2500; "
        "8.2 s, 31.5 pairs/s"
    ]


def test_a_taken_name_is_refused_and_no_job_starts(db, tmp_path, monkeypatch):
    import pooljudge.jobs

    pytest.importorskip("pooljudge.training")
    launched = []
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: launched.append(job_id))
    _collection(db)
    _register(db, tmp_path)
    at = open_as_admin(db, PAGE)
    at.text_input(key="models_name").set_value("rq")
    at.button[0].click().run()
    assert not at.exception
    assert [e.value for e in at.error] == [
        md_escape("a model named 'rq' already exists in collection 'c'; choose another name")
    ]
    with db.read() as s:
        assert list_jobs(s, kind="train") == []
    assert launched == []


def test_the_form_queues_a_train_job_with_the_contract_params(db, tmp_path, monkeypatch):
    import pooljudge.jobs

    pytest.importorskip("pooljudge.training")
    launched = []
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: launched.append(job_id))
    _collection(db)
    base = tmp_path / "base"
    base.mkdir()
    at = open_as_admin(db, PAGE)
    at.selectbox(key="models_kind").set_value("cross-encoder").run()
    at.text_input(key="models_name").set_value("ce-1")
    at.selectbox(key="models_labels").set_value("gold")
    at.selectbox(key="models_candidates").set_value("bm25-run")
    at.selectbox(key="models_base").set_value("a local model folder (path below)")
    at.text_input(key="models_base_path").set_value(str(base))
    at.radio(key="models_loss").set_value("pointwise")
    at.number_input(key="models_epochs").set_value(3)
    at.number_input(key="models_seed").set_value(7)
    at.number_input(key="models_patience").set_value(50)
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert not at.error
    with db.read() as s:
        [job] = list_jobs(s, kind="train")
    assert launched == [job.id]
    p = job.params
    assert (
        p["collection"],
        p["name"],
        p["kind"],
        p["split"],
        p["eval_split"],
        p["labels"],
        p["candidates"],
        p["base_model"],
        p["loss"],
    ) == ("c", "ce-1", "cross-encoder", "train", "dev", "gold", "bm25-run", str(base), "pointwise")
    assert p["config"]["epochs"] == 3 and p["config"]["seed"] == 7 and p["config"]["batch_size"] == 8
    assert p["config"]["patience"] == 50 and p["created_by"] == "admin"


def test_a_rocketqav2_job_gets_its_cross_encoder_denoising_depth_and_step_cap(db, tmp_path, monkeypatch):
    import pooljudge.jobs

    pytest.importorskip("pooljudge.training")
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: None)
    _collection(db)
    _register(db, tmp_path)
    at = open_as_admin(db, PAGE)
    assert not any(w.key == "models_cross_base" for w in at.selectbox)  # a RocketQAv2 setting only
    at.selectbox(key="models_kind").set_value("rocketqav2").run()
    at.text_input(key="models_name").set_value("rq-2")
    at.selectbox(key="models_cross_base").set_value(ODD)
    at.checkbox(key="models_denoise").check()
    at.number_input(key="models_denoise_low").set_value(0.2)
    at.number_input(key="models_denoise_high").set_value(0.85)
    at.number_input(key="models_depth").set_value(30)
    at.number_input(key="models_max_steps").set_value(40)
    at.button[0].click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    with db.read() as s:
        [job] = list_jobs(s, kind="train")
    p = job.params
    assert (p["kind"], p["cross_base"], p["denoise"], p["depth"]) == ("rocketqav2", ODD, [0.2, 0.85], 30)
    assert p["config"]["max_steps"] == 40
    assert p["teacher_prior"] is None  # the paper's teacher unless asked
    # unticked, the thresholds are not sent; no step cap is None
    at.text_input(key="models_name").set_value("rq-3")
    at.checkbox(key="models_denoise").uncheck()
    at.number_input(key="models_max_steps").set_value(0)
    at.button[0].click().run()
    with db.read() as s:
        newest = list_jobs(s, kind="train")[0]
    assert newest.params["name"] == "rq-3" and newest.params.get("denoise") is None
    assert newest.params["config"].get("max_steps") is None

    auto, fixed = "chosen on held-out queries", "the weight at the right"
    for choice, (label, weight, sent) in enumerate(((auto, 8.0, "auto"), (fixed, 2.5, 2.5))):
        at.text_input(key="models_name").set_value(f"rq-prior-{choice}")
        at.selectbox(key="models_teacher_prior").set_value(label)
        at.number_input(key="models_teacher_prior_weight").set_value(weight)
        at.button[0].click().run()
        with db.read() as s:
            newest = list_jobs(s, kind="train")[0]
        assert (newest.params["name"], newest.params["teacher_prior"]) == (f"rq-prior-{choice}", sent)


def test_a_rocketqav2_model_names_its_teachers_prior(db, tmp_path):
    _collection(db)
    with db.write() as s:
        prior = {"weight": 4.0, "held_out_nDCG@10": {"0": 0.4, "4": 0.5}}
        _bare_model(s, "c", "rq-prior", "rocketqav2", tmp_path / "rq", params={"teacher_prior_weight": prior})
    at = open_as_admin(db, PAGE)
    captions = [c.value for c in at.caption]
    assert (
        "Its teacher: the cross-encoder's logits + 4 × the first-stage score (chosen on the held-out queries)."
        in captions
    )


def test_a_re_ranker_with_a_chosen_interpolation_weight_shows_it_in_its_spec(db, tmp_path):
    _collection(db)
    with db.write() as s:
        _bare_model(
            s,
            "c",
            "ce-blend",
            "cross-encoder",
            tmp_path / "blend",
            params={"interpolation": {"weight": 0.7, "held_out_nDCG@10": {"0": 0.41, "0.7": 0.52}}},
        )
    at = open_as_admin(db, PAGE)
    assert "rerank:model=ce-blend,first=bm25,depth=100,interpolate=0.7" in [c.value for c in at.code]


def test_the_page_is_for_admins_only(db, tmp_path):
    from streamlit.testing.v1 import AppTest

    from db.users import add_user

    _collection(db)
    _register(db, tmp_path)
    with db.write() as s:
        reviewer = add_user(s, "rev", "correct horse", "reviewer").id
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.session_state["pooljudge_user_id"] = reviewer
    at.run()
    assert [e.value for e in at.error] == ["You do not have access to this page."]
    assert not at.dataframe and not at.button and not at.code


def test_a_local_folder_needs_its_path_and_one_split_trains_on_a_held_out_share(db, monkeypatch):
    import pooljudge.jobs

    launched = []
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: launched.append(job_id))
    _collection(db, splits=("test",))
    at = open_as_admin(db, PAGE)
    at.selectbox(key="models_kind").set_value("dual-encoder").run()
    assert not at.radio  # the loss is a cross-encoder's choice
    at.text_input(key="models_name").set_value("de-1")
    at.selectbox(key="models_base").set_value("a local model folder (path below)")
    at.button[0].click().run()
    assert [e.value for e in at.error] == [md_escape("base model: give the path of a local model folder")]
    at.selectbox(key="models_base").set_value("packaged all-MiniLM-L6-v2 (default)")
    at.number_input(key="models_held_out").set_value(0.25)
    at.button[0].click().run()
    assert not at.error
    with db.read() as s:
        [job] = list_jobs(s, kind="train")
    assert launched == [job.id]
    p = job.params
    assert (p["kind"], p["split"], p["eval_split"], p["held_out"], p["base_model"], p["loss"], p["labels"]) == (
        "dual-encoder",
        "test",
        None,
        0.25,
        None,
        "listwise",
        "gold",
    )


def test_switching_collections_shows_the_other_collections_models(db, tmp_path):
    _collection(db)
    _register(db, tmp_path)
    with db.write() as s:
        import_collection(
            s,
            CollectionSource(
                passages=lambda: iter([Passage("x", "x")]),
                queries=lambda: iter([Query("q", "q", split="train")]),
                qrels=lambda: iter(()),
            ),
            name="d",
            format="test",
            location="mem",
        )
        _bare_model(s, "d", "other", "dual-encoder", tmp_path / "other")
    at = open_as_admin(db, PAGE)
    at.selectbox(key="models_chosen").set_value("rq").run()
    at.selectbox(key="models_collection").set_value("d").run()
    assert not at.exception
    assert list(at.dataframe[0].value["name"]) == ["other"]
    assert at.selectbox(key="models_chosen").value == "other"
    assert [c.value for c in at.code if "model=" in c.value] == [f"dense:model={tmp_path / 'other'}"]


DEFAULT_SYSTEM = {
    "chosen": "hybrid",
    "label": "BM25 + base dense (BM25 weight 0.3)",
    "alpha": 0.3,
    "improved": False,
    "reason": "training did not help on the dev split: keeping BM25 + base dense (BM25 weight 0.3) "
    "(nDCG@10 0.6100 on 8 dev queries; the best trained system, fine-tuned dense, 0.5500)",
    "baseline": "bm25",
    "dev_queries": 8,
    "dev_nDCG@10": {"bm25": 0.5, "dense": 0.45, "hybrid": 0.61, "tuned-dense": 0.55},
    "systems": [
        {"key": "bm25", "label": "BM25", "trained": False, "dev": {"nDCG@10": 0.5}, "alpha": None, "spec": "bm25"},
        {"key": "dense", "label": "base dense", "trained": False, "dev": {"nDCG@10": 0.45}, "alpha": None},
        {"key": "hybrid", "label": "BM25 + base dense (BM25 weight 0.3)", "trained": False, "dev": {"nDCG@10": 0.61}},
        {"key": "tuned-dense", "label": "fine-tuned dense", "trained": True, "dev": {"nDCG@10": 0.55}},
    ],
    "spec": "hybrid:fusion=convex,alpha=0.3",
}


def test_the_default_kind_comes_first_and_is_queued_as_default(db, monkeypatch):
    import pooljudge.jobs

    pytest.importorskip("pooljudge.training")
    monkeypatch.setattr(pooljudge.jobs, "launch", lambda store, job_id: None)
    _collection(db)
    at = open_as_admin(db, PAGE)
    kind = at.selectbox(key="models_kind")
    assert kind.value == "default" and kind.options[0].startswith("Default: the best on the held-out queries of BM25")
    assert not any(w.key == "models_loss" for w in at.radio)  # a cross-encoder setting only
    at.text_input(key="models_name").set_value("auto-1")
    at.button[0].click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    with db.read() as s:
        [job] = list_jobs(s, kind="train")
    assert (job.params["kind"], job.params["name"], job.params["loss"]) == ("default", "auto-1", "listwise")


def test_a_default_model_shows_the_system_it_offers_why_and_every_candidate(db, tmp_path):
    _collection(db)
    with db.write() as s:
        _bare_model(s, "c", "auto", "dual-encoder", tmp_path / "auto", params={"default_system": DEFAULT_SYSTEM})
    at = open_as_admin(db, PAGE)
    assert not at.exception
    assert list(at.dataframe[0].value["kind"]) == ["default (dual-encoder)"]
    # the spec of what the dev split chose, not the fine-tuned folder it did not choose
    assert [c.value for c in at.code if "model=" in c.value or c.value.startswith("hybrid")] == [
        "hybrid:fusion=convex,alpha=0.3"
    ]
    assert f"Offered by default: {md_escape(DEFAULT_SYSTEM['label'])}. {md_escape(DEFAULT_SYSTEM['reason'])}." in [
        c.value for c in at.caption
    ]
    candidates = at.dataframe[1].value
    assert list(candidates["system"]) == [
        "BM25",
        "base dense",
        "BM25 + base dense (BM25 weight 0.3)",
        "fine-tuned dense",
    ]
    assert list(candidates["held-out nDCG@10"]) == [0.5, 0.45, 0.61, 0.55]
    assert list(candidates["chosen"]) == [False, False, True, False]
    assert list(candidates["trained"]) == [False, False, False, True]


def test_a_finished_default_job_says_what_it_chose(db):
    _collection(db)
    with db.write() as s:
        job = create_job(
            s, "train", {"collection": "c", "name": "auto", "kind": "default"}, collection_id=collection_id(s, "c")
        )
        start_job(s, job)
        finish_job(
            s,
            job,
            {
                "model": "auto",
                "kind": "default",
                "seconds": 3.0,
                "pairs_per_second": 10.0,
                "best": {"step": 2, "eval": {"nDCG@10": 0.55, "MRR@10": 0.5}},
                "reason": DEFAULT_SYSTEM["reason"],
                "spec": DEFAULT_SYSTEM["spec"],
            },
        )
    at = open_as_admin(db, PAGE)
    assert [s.value for s in at.success] == [
        f"Job {job} · default auto: model auto trained; held-out nDCG@10 0.5500, MRR@10 0.5000; 3.0 s, 10.0 pairs/s; "
        + md_escape(DEFAULT_SYSTEM["reason"])
    ]
