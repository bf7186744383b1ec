"""The trained-model registry (db.trained_models), on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime

import pytest
from sqlalchemy.exc import IntegrityError

from db.models import Collection, TrainedModel
from db.queries import NotFound
from db.trained_models import check_new_model_name, get_model, list_models, register_model

HISTORY = [
    {"step": 10, "epoch": 1, "loss": 0.7, "eval": {"nDCG@10": 0.41, "MRR@10": 0.35}},
    {"step": 20, "epoch": 2, "loss": 0.5, "eval": {"nDCG@10": 0.52, "MRR@10": 0.47}},
]


def _collections(store, *names: str) -> None:
    with store.write() as session:
        for name in names:
            session.add(Collection(name=name, language="en"))


def _register(session, collection: str, name: str, kind: str = "cross-encoder", **extra) -> int:
    values = dict(
        name=name,
        kind=kind,
        path=f"/models/{name}",
        base_model="/bases/minilm",
        params={"config": {"epochs": 2}, "loss": "listwise"},
        history=HISTORY,
        best=HISTORY[1],
    )
    values.update(extra)
    return register_model(session, collection, **values)


def test_register_then_get_and_list_give_back_every_field(store):
    _collections(store, "beta", "alpha")
    with store.write() as session:
        first = _register(session, "beta", "rr-1", created_by="ann", job_id=7)
        _register(session, "beta", "dense", kind="dual-encoder", base_model=None)
        _register(session, "alpha", "rq", kind="rocketqav2")
    with store.read() as session:
        info = get_model(session, "beta", "rr-1")
        everything = list_models(session)
        beta = list_models(session, "beta")
    assert info.id == first and info.collection == "beta" and info.name == "rr-1" and info.kind == "cross-encoder"
    assert info.path == "/models/rr-1" and info.base_model == "/bases/minilm"
    assert info.params == {"config": {"epochs": 2}, "loss": "listwise"}
    assert info.history == HISTORY and info.best == HISTORY[1]
    assert info.best_eval == {"nDCG@10": 0.52, "MRR@10": 0.47}
    assert info.created_by == "ann" and info.job_id == 7 and isinstance(info.created_at, datetime)
    # by collection, then name
    assert [(m.collection, m.name, m.kind) for m in everything] == [
        ("alpha", "rq", "rocketqav2"),
        ("beta", "dense", "dual-encoder"),
        ("beta", "rr-1", "cross-encoder"),
    ]
    assert [m.name for m in beta] == ["dense", "rr-1"]
    assert beta[0].base_model is None and beta[0].created_by is None and beta[0].job_id is None


def test_a_taken_name_is_refused_naming_the_collection_but_free_in_another(store):
    _collections(store, "c1", "c2")
    with store.write() as session:
        _register(session, "c1", "m")
    with pytest.raises(ValueError, match="a model named 'm' already exists in collection 'c1'"):
        with store.write() as session:
            _register(session, "c1", "m", kind="dual-encoder")
    with store.write() as session:
        _register(session, "c2", "m")
    with store.read() as session:
        assert [(m.collection, m.name) for m in list_models(session)] == [("c1", "m"), ("c2", "m")]


def test_the_database_itself_refuses_a_duplicate_and_an_unknown_kind(store):
    """The UNIQUE and CHECK constraints of migration 0008 hold even when the checks are skipped."""
    _collections(store, "c")
    with store.write() as session:
        cid = session.query(Collection.id).scalar()
        session.add(TrainedModel(collection_id=cid, name="m", kind="cross-encoder", path="/x"))
    for kind, name in (("cross-encoder", "m"), ("colbert", "other")):
        with pytest.raises(IntegrityError):
            with store.write() as session:
                session.add(TrainedModel(collection_id=cid, name=name, kind=kind, path="/x"))


@pytest.mark.parametrize(
    "name, message",
    [
        ("", "model name must not be empty"),
        (" m", "leading or trailing whitespace"),
        ("a\nb", "control character"),
        ("x" * 201, "201 characters long; the limit is 200"),
    ],
)
def test_bad_names_are_refused(store, name, message):
    _collections(store, "c")
    with pytest.raises(ValueError, match=message):
        with store.write() as session:
            _register(session, "c", name)
    with store.read() as session:
        assert list_models(session) == []


def test_bad_kind_and_unknown_collection_and_model_are_named(store):
    _collections(store, "c")
    with store.write() as session:
        _register(session, "c", "known-1")
        _register(session, "c", "known-2")
    with pytest.raises(
        ValueError, match="model kind must be one of cross-encoder, dual-encoder, rocketqav2, got 'bm25'"
    ):
        with store.write() as session:
            _register(session, "c", "x", kind="bm25")
    with store.read() as session:
        with pytest.raises(NotFound, match=r"no model named 'nope' in collection 'c' \(models: known-1, known-2\)"):
            get_model(session, "c", "nope")
        with pytest.raises(NotFound, match="no collection named 'missing'"):
            list_models(session, "missing")
        with pytest.raises(NotFound, match="no collection named 'missing'"):
            check_new_model_name(session, "missing", "m")


def test_archived_models_are_hidden_from_the_list_but_keep_their_name(store):
    _collections(store, "c")
    with store.write() as session:
        _register(session, "c", "old")
        _register(session, "c", "new")
        session.query(TrainedModel).filter_by(name="old").update(
            {"archived_at": datetime(2026, 1, 1), "archived_by": "ann"}
        )
    with store.read() as session:
        assert [m.name for m in list_models(session, "c")] == ["new"]
        assert [m.name for m in list_models(session, "c", include_archived=True)] == ["new", "old"]
        assert get_model(session, "c", "old").archived_at is not None
        with pytest.raises(ValueError, match=r"'old' already exists in collection 'c' \(archived\)"):
            check_new_model_name(session, "c", "old")


def test_deleting_a_collection_deletes_its_models(store):
    _collections(store, "c", "d")
    with store.write() as session:
        _register(session, "c", "m")
        _register(session, "d", "m")
    with store.write() as session:
        session.delete(session.query(Collection).filter_by(name="c").one())
    with store.read() as session:
        assert [(m.collection, m.name) for m in list_models(session)] == [("d", "m")]
        assert session.query(TrainedModel).count() == 1
