"""The Labelling simulation page under AppTest: the table's values, the active strategy, errors, escaping."""

from __future__ import annotations

import pytest

from core.simulation import simulate_labelling
from pooljudge.cli import main
from tests.app.apptest import VIEWS, open_as_admin
from tests.test_simulation_cli import ORACLE, QUERY_TEXTS, RUNS, TEXTS, tiny_cross_encoder, write_toy

PAGE = VIEWS / "labelling_simulation.py"
ODD = "C *x* [y](e.org)"  # Markdown in a stored run name: shown literally
TOY_RUNS = {"A": RUNS["A"], "B": RUNS["B"], ODD: RUNS["C"]}


@pytest.fixture
def toy(db, tmp_path):
    assert (
        main(
            [
                "--db",
                db.url,
                "-q",
                "import",
                "-f",
                "beir",
                str(write_toy(tmp_path / "toy", TOY_RUNS)),
                "-c",
                "toy",
                "--level",
                "1",
            ]
        )
        == 0
    )
    return db


def _configure(at, *, depth=2, batch=3, strategies=None):
    at.number_input(key="simulation_depth").set_value(depth)
    at.number_input(key="simulation_batch").set_value(batch)
    if strategies is not None:
        at.multiselect(key="simulation_strategies").set_value(strategies)
    return at.run()


def _table(at) -> dict[str, list[str]]:
    frame = at.table[0].value
    return {strategy: list(map(str, row)) for strategy, row in zip(frame.index, frame.values.tolist())}


def test_runs_and_shows_the_stop_hint(toy):
    at = _configure(open_as_admin(toy, PAGE, default_timeout=60))
    assert not at.table  # nothing shown before the run
    at.button(key="simulation_run").click().run()
    assert not at.exception and not at.error
    want = simulate_labelling(ORACLE, TOY_RUNS, depth=2, batch_size=3)
    # 5 of the 8 pooled pairs are relevant: every order finds the fifth with its third batch
    assert _table(at) == {
        "depth": ["6", "75.0%", "1.0000", "8", "0", "0"],
        "top-n": ["3", "37.5%", "1.0000", "8", "0", "0"],
        "random": ["3", "37.5%", "1.0000", "8", "0", "0"],
    }
    assert [m.value for m in at.metric] == ["2", "8", "3"]
    caption = next(c.value for c in at.caption if "under all labels" in c.value)
    assert r"C \*x\* \[y\]\(e" in caption  # Markdown escaped
    assert f"{want.full[ODD]:.4f}" in caption
    # a rerun with the same parameters redraws the stored result; other parameters show nothing until run
    at.run()
    assert at.table and not at.exception
    _configure(at, batch=4)
    assert not at.table


@pytest.mark.slow  # builds a tiny cross-encoder and simulates the active strategy with it: 6 s in a full run
def test_active_with_confident_band(toy, tmp_path):
    pytest.importorskip("core.training.cross_encoder")
    model = tiny_cross_encoder(tmp_path / "model")
    at = _configure(open_as_admin(toy, PAGE, default_timeout=60), strategies=["depth", "active"])
    assert at.button(key="simulation_run").disabled  # no model yet
    at.text_input(key="simulation_model_folder").input(str(model))
    at.checkbox(key="simulation_confident").check().run()
    at.slider(key="simulation_band").set_value((0.0, 1.0)).run()
    at.button(key="simulation_run").click().run()
    assert not at.exception and not at.error
    table = _table(at)
    assert table["depth"] == ["6", "75.0%", "1.0000", "8", "0", "0"]
    assert table["active"][-2:] == ["0", "0"]  # the whole [0, 1] band: every pair goes to humans
    assert table["active"][2] == "1.0000"  # all human labels in the end: the full labels


@pytest.mark.slow
def test_active_retrain_with_the_relevant_rule(toy, tmp_path):
    active = pytest.importorskip("core.training.active")
    model = tiny_cross_encoder(tmp_path / "model")
    at = _configure(open_as_admin(toy, PAGE, default_timeout=120), strategies=["active", "active-retrain"])
    at.text_input(key="simulation_model_folder").input(str(model))
    at.radio(key="simulation_rule").set_value("relevant")
    at.number_input(key="simulation_retrain_steps").set_value(2).run()
    at.button(key="simulation_run").click().run()
    assert not at.exception and not at.error
    table = _table(at)
    assert set(table) == {"active", "active-retrain"} and table["active-retrain"][2] == "1.0000"
    caption = next(c.value for c in at.caption if "fine-tuned" in c.value)
    assert caption == "active-retrain: fine-tuned 2 times (after every batch but the last); active order: relevant."
    # the page's result is core's with the same model, texts and settings (seed 0, 256 tokens, 2 steps of 16)
    selector = active.RetrainingSelector(model, QUERY_TEXTS, TEXTS, steps=2)
    want = simulate_labelling(
        ORACLE,
        TOY_RUNS,
        depth=2,
        batch_size=3,
        strategies=["active", "active-retrain"],
        selector=selector,
        rule="relevant",
    )
    reached = want.pairs_to_reach(0.9)
    assert [table[s][0] for s in ("active", "active-retrain")] == [
        str(reached[s]) for s in ("active", "active-retrain")
    ]


def test_missing_model_is_named(toy):
    at = _configure(open_as_admin(toy, PAGE, default_timeout=60), strategies=["active"])
    at.text_input(key="simulation_model_folder").input("/no/such/model").run()
    at.button(key="simulation_run").click().run()
    assert not at.exception
    assert "/no/such/model" in at.error[0].value.replace("\\", "")


def test_registered_cross_encoder_is_offered(toy, tmp_path):
    pytest.importorskip("core.training.cross_encoder")
    from db.trained_models import register_model

    model = tiny_cross_encoder(tmp_path / "model")
    with toy.write() as session:
        register_model(
            session,
            "toy",
            name="ce <1>",
            kind="cross-encoder",
            path=str(model),
            base_model=None,
            params={},
            history=[],
            best={},
        )
        register_model(
            session,
            "toy",
            name="dense",
            kind="dual-encoder",
            path=str(tmp_path),
            base_model=None,
            params={},
            history=[],
            best={},
        )
    at = _configure(open_as_admin(toy, PAGE, default_timeout=60), strategies=["active"])
    box = at.selectbox(key="simulation_model::toy")
    assert box.options == ["ce <1>", "a folder on the server..."]  # the dual encoder is not offered
    at.button(key="simulation_run").click().run()
    assert not at.exception and not at.error
    assert _table(at)["active"][2] == "1.0000"
