"""BiEncoder on model folders that carry sentence-transformers' files: used as their authors intended.

Each test saves a tiny random BERT with one kind of file set (BGE-like: CLS pooling and a query
instruction; E5-like: ``query: `` / ``passage: `` prompts and mean pooling; GTE-like: mean
pooling, no prompts, no ``Normalize``; max and last-token pooling; a Transformer in a subfolder;
``do_lower_case``; a folder saved by sentence-transformers itself) and checks the vectors twice:
against a hand computation on ``AutoModel``'s hidden states, and against
``sentence_transformers.SentenceTransformer(folder)`` on the same texts.
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import json  # noqa: E402
import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from core.cache import content_key  # noqa: E402
from core.retrieval.encoder import BiEncoder, encode_cached, model_files_digest  # noqa: E402
from tests.st_folders import write_json, write_st_files  # noqa: E402
from tests.tiny_models import write_tiny_bert  # noqa: E402

WORDS = (
    "represent this sentence for searching relevant passages : query passage "
    "the a of and is in how do i bake bread at home river bank money fish cat dog sat on mat old big"
).split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
INSTRUCTION = "represent this sentence for searching relevant passages : "
QUERIES = ["how do i bake bread", "river bank", "a cat"]
PASSAGES = ["bake bread at home", "the old river bank and the fish", "a big dog sat on the mat", "money"]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def weights(tmp_path_factory) -> Path:
    """A 2-layer, 32-dim random BERT folder without sentence-transformers' files."""
    return write_tiny_bert(tmp_path_factory.mktemp("plain"), VOCAB, max_position_embeddings=128)


def copy_model(weights: Path, folder: Path) -> Path:
    shutil.copytree(weights, folder)
    return folder


def hidden_states(model_dir: Path, texts: list[str], max_length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Last hidden states and attention mask of one right-padded batch, straight from transformers."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
    model = AutoModel.from_pretrained(model_dir, local_files_only=True).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    with torch.inference_mode():
        return model(**batch).last_hidden_state, batch["attention_mask"]


def by_hand(model_dir: Path, texts: list[str], pooling: str, normalize: bool, max_length: int = 128) -> np.ndarray:
    """The pooled (and normalised) vectors, each formula written out on the hidden states."""
    hidden, mask = hidden_states(model_dir, texts, max_length)
    lengths = mask.sum(1)
    rows = []
    for h, n in zip(hidden, lengths):
        real = h[: int(n)]  # right padding: the real tokens come first
        rows.append(
            {"mean": real.mean(0), "cls": real[0], "max": real.max(0).values, "lasttoken": real[-1]}[pooling].numpy()
        )
    vectors = np.stack(rows)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True) if normalize else vectors


def st_vectors(folder: Path, texts: list[str], prompt_name: str | None) -> np.ndarray:
    """``SentenceTransformer(folder).encode`` with a named prompt (or none), offline."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), local_files_only=True, device="cpu")
    return model.encode(texts, prompt_name=prompt_name, convert_to_numpy=True, batch_size=2)


def unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def check_both_kinds(folder: Path, enc: BiEncoder, *, st_normalised: bool = False) -> None:
    """Queries and passages equal sentence-transformers' with the ``query`` / ``passage`` prompts."""
    prompts = json.loads((folder / "config_sentence_transformers.json").read_text())["prompts"]
    for kind, texts in (("query", QUERIES), ("passage", PASSAGES)):
        expected = st_vectors(folder, texts, kind if prompts.get(kind) else None)
        got = enc.encode(texts, kind=kind)
        np.testing.assert_allclose(got, unit(expected) if st_normalised else expected, atol=1e-5, rtol=0)


def test_a_bge_like_folder_pools_the_cls_token_and_prefixes_queries(weights, tmp_path):
    folder = write_st_files(copy_model(weights, tmp_path / "bge"), pooling="cls", prompts={"query": INSTRUCTION})
    enc = BiEncoder(folder, batch_size=2)
    assert (enc.pooling, enc.normalize, enc.max_length) == ("cls", True, 128)  # null max_seq_length: the positions
    assert (enc.query_prefix, enc.passage_prefix) == (INSTRUCTION, "")
    np.testing.assert_allclose(
        enc.encode(QUERIES, kind="query"), by_hand(folder, [INSTRUCTION + q for q in QUERIES], "cls", True), atol=1e-5
    )
    np.testing.assert_allclose(enc.encode(PASSAGES), by_hand(folder, PASSAGES, "cls", True), atol=1e-5)
    check_both_kinds(folder, enc)
    # the test can tell: the folder's weights with pooljudge's defaults give other vectors
    assert np.abs(BiEncoder(weights).encode(QUERIES, kind="query") - enc.encode(QUERIES, kind="query")).max() > 1e-2


def test_an_e5_like_folder_prefixes_both_kinds_and_truncates_at_its_length(weights, tmp_path):
    prompts = {"query": "query : ", "document": "", "passage": "passage : "}
    folder = write_st_files(copy_model(weights, tmp_path / "e5"), pooling="mean", prompts=prompts, max_seq_length=6)
    enc = BiEncoder(folder, batch_size=3)
    assert (enc.pooling, enc.max_length, enc.query_prefix, enc.passage_prefix) == ("mean", 6, "query : ", "passage : ")
    expected = by_hand(folder, ["passage : " + p for p in PASSAGES], "mean", True, max_length=6)
    np.testing.assert_allclose(enc.encode(PASSAGES), expected, atol=1e-5)
    check_both_kinds(folder, enc)
    assert enc.params["conventions"] == [
        "modules.json",
        "1_Pooling/config.json",
        "config_sentence_transformers.json",
        "sentence_bert_config.json",
    ]


def test_a_gte_like_folder_without_normalize_is_compared_by_cosine(weights, tmp_path):
    folder = write_st_files(copy_model(weights, tmp_path / "gte"), pooling="mean", normalize=False)
    enc = BiEncoder(folder)
    assert (enc.pooling, enc.normalize, enc.query_prefix) == ("mean", True, "")  # cosine: the inner product of units
    np.testing.assert_allclose(enc.encode(PASSAGES), by_hand(folder, PASSAGES, "mean", True), atol=1e-5)
    check_both_kinds(folder, enc, st_normalised=True)


def test_no_normalize_module_and_a_dot_product_gives_raw_vectors(weights, tmp_path):
    folder = write_st_files(copy_model(weights, tmp_path / "dot"), pooling="mean", normalize=False, similarity="dot")
    enc = BiEncoder(folder)
    assert enc.normalize is False
    got = enc.encode(PASSAGES)
    np.testing.assert_allclose(got, by_hand(folder, PASSAGES, "mean", False), atol=1e-5)
    assert np.abs(np.linalg.norm(got, axis=1) - 1).max() > 0.1  # really not unit vectors
    check_both_kinds(folder, enc)


@pytest.mark.parametrize("mode", ["max", "lasttoken"])
def test_max_and_last_token_pooling(weights, tmp_path, mode):
    folder = write_st_files(copy_model(weights, tmp_path / mode), pooling=mode, prompts={"query": "query : "})
    enc = BiEncoder(folder, batch_size=2)
    assert enc.pooling == mode
    np.testing.assert_allclose(enc.encode(PASSAGES), by_hand(folder, PASSAGES, mode, True), atol=1e-5)
    check_both_kinds(folder, enc)


def test_a_transformer_in_a_subfolder(weights, tmp_path):
    folder = tmp_path / "old-layout"
    copy_model(weights, folder / "0_Transformer")
    write_st_files(folder, pooling="cls", prompts={"query": "query : "}, transformer_path="0_Transformer")
    enc = BiEncoder(folder)
    assert enc.conventions.model_dir == folder / "0_Transformer" and not (folder / "config.json").exists()
    np.testing.assert_allclose(
        enc.encode(PASSAGES), by_hand(folder / "0_Transformer", PASSAGES, "cls", True), atol=1e-5
    )
    check_both_kinds(folder, enc)
    # the weights in the subfolder are part of the fingerprint
    other = tmp_path / "other"
    shutil.copytree(folder, other)
    write_tiny_bert(other / "0_Transformer", VOCAB, seed=1, max_position_embeddings=128)
    assert BiEncoder(other).fingerprint != enc.fingerprint


def test_do_lower_case_lowers_the_text_and_the_prompt(weights, tmp_path):
    from transformers import BertTokenizerFast

    cased = copy_model(weights, tmp_path / "cased")
    BertTokenizerFast.from_pretrained(cased, do_lower_case=False).save_pretrained(cased)  # a tokenizer that keeps case
    folder = write_st_files(copy_model(cased, tmp_path / "lowered"), prompts={"query": "QUERY : "}, do_lower_case=True)
    enc = BiEncoder(folder)
    assert enc.lowercase is True and enc.params["lowercase"] is True
    shouting = ["BAKE Bread AT HOME", "The River"]
    np.testing.assert_allclose(
        enc.encode(shouting, kind="query"), enc.encode(["bake bread at home", "the river"], kind="query"), atol=1e-6
    )
    np.testing.assert_allclose(
        enc.encode(shouting, kind="query"),
        by_hand(weights, ["query : bake bread at home", "query : the river"], "mean", True),
        atol=1e-5,
    )
    np.testing.assert_allclose(enc.encode(shouting, kind="query"), st_vectors(folder, shouting, "query"), atol=1e-5)
    # the test can tell: without do_lower_case the same tokenizer reads the capitals as unknown words
    kept = BiEncoder(cased, query_prefix="QUERY : ").encode(shouting, kind="query")
    assert np.abs(kept - enc.encode(shouting, kind="query")).max() > 1e-2


def test_a_folder_saved_by_sentence_transformers_itself(weights, tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.models import Normalize, Pooling, Transformer

    transformer = Transformer(str(weights), max_seq_length=7)
    modules = [transformer, Pooling(transformer.get_embedding_dimension(), "cls"), Normalize()]
    prompts = {"query": INSTRUCTION, "passage": "passage : "}
    SentenceTransformer(modules=modules, prompts=prompts, device="cpu").save(str(tmp_path / "saved"))
    folder = tmp_path / "saved"
    enc = BiEncoder(folder)
    assert (enc.pooling, enc.max_length, enc.query_prefix, enc.passage_prefix) == ("cls", 7, INSTRUCTION, "passage : ")
    assert json.loads((folder / "config_sentence_transformers.json").read_text())["prompts"]["document"] == ""
    check_both_kinds(folder, enc)


def test_explicit_options_win_over_the_folders_files(weights, tmp_path):
    folder = write_st_files(
        copy_model(weights, tmp_path / "bge"), pooling="cls", prompts={"query": INSTRUCTION}, max_seq_length=64
    )
    options = {
        "pooling": "mean",
        "normalize": False,
        "max_length": 5,
        "query_prefix": "",
        "passage_prefix": "passage : ",
    }
    enc = BiEncoder(folder, **options)
    plain = BiEncoder(weights, **options)
    assert (enc.pooling, enc.normalize, enc.max_length, enc.query_prefix, enc.passage_prefix) == tuple(options.values())
    for kind in ("query", "passage"):
        np.testing.assert_allclose(enc.encode(QUERIES, kind=kind), plain.encode(QUERIES, kind=kind), atol=1e-6)
    expected = by_hand(weights, ["passage : " + q for q in QUERIES], "mean", False, max_length=5)
    np.testing.assert_allclose(enc.encode(QUERIES), expected, atol=1e-5)


def test_a_plain_folder_keeps_its_behaviour_and_its_cached_vectors(weights):
    enc = BiEncoder(weights)
    assert enc.conventions.files == () and enc.params["conventions"] == []
    assert (enc.pooling, enc.normalize, enc.max_length, enc.query_prefix, enc.passage_prefix, enc.lowercase) == (
        "mean",
        True,
        128,  # 256 capped by the 128 positions
        "",
        "",
        False,
    )
    # the fingerprint is computed from exactly the keys it had before folders were read: old caches stay valid
    old = content_key(
        [],
        params={
            "files": model_files_digest(weights),
            "pooling": "mean",
            "normalize": True,
            "max_length": 128,
            "query_prefix": "",
            "passage_prefix": "",
        },
    )
    assert enc.model_fingerprint == old
    np.testing.assert_allclose(enc.encode(PASSAGES), by_hand(weights, PASSAGES, "mean", True), atol=1e-5)


def test_the_folders_conventions_key_the_cached_vectors(weights, tmp_path):
    folder = write_st_files(
        copy_model(weights, tmp_path / "e5"), prompts={"query": "query : ", "passage": "passage : "}
    )
    enc = BiEncoder(folder)
    first = encode_cached(enc, PASSAGES)
    np.testing.assert_allclose(first, BiEncoder(weights, passage_prefix="passage : ").encode(PASSAGES), atol=1e-6)
    config = json.loads((folder / "config_sentence_transformers.json").read_text())
    write_json(folder / "config_sentence_transformers.json", config | {"prompts": {"passage": "the passage : "}})
    changed = BiEncoder(folder)
    assert changed.passage_prefix == "the passage : " and changed.fingerprint != enc.fingerprint
    again = encode_cached(changed, PASSAGES)  # not the first prompt's vectors from the cache
    np.testing.assert_allclose(again, BiEncoder(weights, passage_prefix="the passage : ").encode(PASSAGES), atol=1e-6)
    assert np.abs(again - first).max() > 1e-3
    pooling = folder / "1_Pooling" / "config.json"
    write_json(
        pooling, json.loads(pooling.read_text()) | {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}
    )
    assert BiEncoder(folder).fingerprint != changed.fingerprint  # 1_Pooling/config.json is read, not hashed


def test_bad_folders_are_refused_before_loading(weights, tmp_path):
    folder = write_st_files(copy_model(weights, tmp_path / "dense"))
    modules = json.loads((folder / "modules.json").read_text())
    write_json(
        folder / "modules.json",
        [*modules, {"idx": 3, "name": "3", "path": "3_Dense", "type": "sentence_transformers.models.Dense"}],
    )
    with pytest.raises(ValueError, match=r"modules\.json: modules Dense are not supported"):
        BiEncoder(folder)
    write_json(folder / "modules.json", modules)
    with pytest.raises(ValueError, match="pooling must be one of"):
        BiEncoder(folder, pooling="weightedmean")
    assert BiEncoder(folder, pooling="cls").pooling == "cls"
