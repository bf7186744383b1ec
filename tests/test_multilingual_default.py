"""The dense default follows the collection language, and every run description names its model.

The bundled models are stood in for by tiny random BERT folders named as the cache names them
(``models/multilingual-e5-small-<key>`` with E5's sentence-transformers prompts,
``models/all-MiniLM-L6-v2-<key>``), so no real weights load here; the real conversion is tested in
``tests/core/retrieval/test_multilingual.py``.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from dataclasses import replace  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

import core.retrieval.encoder  # noqa: E402
import core.retrieval.multilingual  # noqa: E402
from db.engine import Store, sqlite_url  # noqa: E402
from pooljudge import encoders  # noqa: E402
from pooljudge.encoders import default_model_name, described_models, models_text  # noqa: E402
from pooljudge.retrievers import RetrieverSpec, build_retriever  # noqa: E402
from tests.clirun import run_cli  # noqa: E402
from tests.sqlite_template import copy_store
from tests.st_folders import write_st_files  # noqa: E402
from tests.test_rerank_pipeline import VOCAB, toy_source  # noqa: E402
from tests.tiny_models import write_tiny_bert  # noqa: E402

E5_PROMPTS = {"query": "query: ", "passage": "passage: "}


@pytest.fixture
def bundled(tmp_path, monkeypatch) -> dict[str, Path]:
    """Tiny stand-ins for the two bundled models, returned by their path functions; a fresh encoder cache."""
    root = tmp_path / "cache" / "models"
    e5 = write_tiny_bert(root / "multilingual-e5-small-0123456789ab", VOCAB, seed=1, max_position_embeddings=512)
    write_st_files(e5, prompts=E5_PROMPTS, max_seq_length=512)
    minilm = write_tiny_bert(root / "all-MiniLM-L6-v2-ba9876543210", VOCAB, seed=2)
    monkeypatch.setattr(core.retrieval.multilingual, "multilingual_model_path", lambda: e5)
    monkeypatch.setattr(core.retrieval.encoder, "default_model_path", lambda: minilm)
    monkeypatch.setattr(encoders, "_ENCODERS", {})
    return {"e5": e5, "minilm": minilm}


@pytest.fixture
def collections(tmp_path, monkeypatch, sqlite_template):
    """``(url, store)`` with the toy collection twice: ``en`` (detected) and ``zh`` (declared Chinese)."""
    from db.importer import import_collection

    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))
    url = sqlite_url(copy_store(sqlite_template, tmp_path / "s.db"))
    store = Store(url)
    with store.write() as s:
        import_collection(s, toy_source(), name="en", format="test", location="mem")
        import_collection(s, replace(toy_source(), language="zh"), name="zh", format="test", location="mem")
        import_collection(s, replace(toy_source(), language="mixed"), name="mixed", format="test", location="mem")
    yield url, store
    store.dispose()


def stored_config(store, collection: str, run: str) -> dict:
    from db.queries import list_runs

    with store.read() as s:
        return next(r.params for r in list_runs(s, collection) if r.name == run)["config"]


def test_english_keeps_minilm_and_every_other_language_gets_multilingual_e5():
    assert [default_model_name(x) for x in ("en", "EN", "en-GB", "en_US", None)] == ["all-MiniLM-L6-v2"] * 5
    assert {default_model_name(x) for x in ("zh", "mixed", "de", "ja", "zh-Hans")} == {"multilingual-e5-small"}


@pytest.mark.parametrize(("collection", "model"), [("zh", "e5"), ("mixed", "e5"), ("en", "minilm")])
def test_dense_without_a_model_uses_the_languages_default_and_says_so(bundled, collections, capsys, collection, model):
    url, store = collections
    assert run_cli(url, f"retrieve -c {collection} -r dense --hits 3") == 0
    name = "multilingual-e5-small" if model == "e5" else "all-MiniLM-L6-v2"
    assert capsys.readouterr().err.endswith(f"stored in '{collection}'; model: {name}\n")
    encoder = stored_config(store, collection, "dense")["encoder"]
    assert (encoder["model"], encoder["model_path"]) == (name, str(bundled[model]))
    # E5's prefixes come from the converted folder's sentence-transformers files
    prefixes = ("query: ", "passage: ") if model == "e5" else ("", "")
    assert (encoder["query_prefix"], encoder["passage_prefix"]) == prefixes


def test_hybrid_and_hierarchical_members_take_the_default_too(bundled):
    for spec in ("hybrid", "hierarchical"):
        retriever = build_retriever(RetrieverSpec.parse(spec), "zh")
        assert described_models(retriever.describe()) == ["multilingual-e5-small"], spec
    assert described_models(build_retriever(RetrieverSpec.parse("hybrid"), "en").describe()) == ["all-MiniLM-L6-v2"]
    assert described_models(build_retriever(RetrieverSpec.parse("bm25"), "zh").describe()) == []


def test_a_model_named_in_the_spec_wins_over_the_language_default(bundled, collections, tmp_path, capsys):
    url, store = collections
    own = write_tiny_bert(tmp_path / "my-encoder", VOCAB, seed=5)
    assert run_cli(url, "retrieve -c zh -r", f"dense:model={own},name=mine", "--hits", "3") == 0
    assert capsys.readouterr().err.endswith("; model: my-encoder\n")
    assert stored_config(store, "zh", "mine")["encoder"]["model_path"] == str(own)


def test_described_models_lists_first_stage_encoders_then_rerankers():
    config = {
        "class": "RerankRetriever",
        "first": {"class": "HybridRetriever", "members": {"dense": {"encoder": {"model": "multilingual-e5-small"}}}},
        "models": [{"path": "/models/ce-zh", "fingerprint": "x"}, {"path": "/models/ce-en", "fingerprint": "y"}],
    }
    assert described_models(config) == ["multilingual-e5-small", "ce-zh", "ce-en"]
    assert models_text(config) == "models: multilingual-e5-small, ce-zh, ce-en"
    assert models_text({"class": "BM25Retriever"}) == ""


def test_cli_index_names_the_model(bundled, collections, capsys):
    url, _ = collections
    assert run_cli(url, "index -c zh -r dense") == 0
    assert "with dense (model: multilingual-e5-small) (cached for reuse)" in capsys.readouterr().out


def test_a_bundled_model_can_be_named_instead_of_a_folder(bundled, collections, capsys):
    url, store = collections
    assert run_cli(url, "retrieve -c en -r dense:model=multilingual-e5-small,name=e5 --hits 3") == 0
    assert capsys.readouterr().err.endswith("; model: multilingual-e5-small\n")
    encoder = stored_config(store, "en", "e5")["encoder"]
    assert (encoder["model_path"], encoder["query_prefix"]) == (str(bundled["e5"]), "query: ")
