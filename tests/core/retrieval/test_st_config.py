"""Reading sentence-transformers' files from a model folder (core.retrieval.st_config), and pooling.

The reader is checked on hand-written folders (no weights needed: it reads JSON only);
:func:`pool_hidden` against hand-computed values and against sentence-transformers' own
``Pooling`` module.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from core.retrieval.st_config import Conventions, EncoderSettings, pool_hidden, read_conventions
from tests.st_folders import write_json, write_st_files

BGE_INSTRUCTION = "Represent this sentence for searching relevant passages: "


def test_a_folder_without_the_files_keeps_pooljudges_defaults(tmp_path):
    write_json(tmp_path / "config.json", {"model_type": "bert"})
    write_json(tmp_path / "tokenizer_config.json", {"model_max_length": 512})  # read only beside modules.json
    conventions = read_conventions(tmp_path)
    assert conventions == Conventions(folder=tmp_path, model_dir=tmp_path)
    assert conventions.settings() == EncoderSettings("mean", True, 256, "", "", False)


def test_a_bge_like_folder_gives_cls_pooling_and_the_query_instruction(tmp_path):
    write_st_files(tmp_path, pooling="cls", prompts={"query": BGE_INSTRUCTION, "document": ""}, max_seq_length=512)
    c = read_conventions(tmp_path)
    assert (c.pooling, c.normalize, c.max_length, c.query_prefix, c.passage_prefix) == (
        "cls",
        True,
        512,
        BGE_INSTRUCTION,
        "",
    )
    assert c.files == (
        "modules.json",
        "1_Pooling/config.json",
        "config_sentence_transformers.json",
        "sentence_bert_config.json",
    )
    assert c.settings() == EncoderSettings("cls", True, 512, BGE_INSTRUCTION, "", False)


def test_an_e5_like_folder_gives_both_prefixes_even_beside_an_empty_document_prompt(tmp_path):
    # sentence-transformers 5+ writes "document": "" by default; it must not hide the passage prompt
    prompts = {"query": "query: ", "document": "", "passage": "passage: "}
    write_st_files(tmp_path, pooling="mean", prompts=prompts, max_seq_length=512)
    s = read_conventions(tmp_path).settings()
    assert (s.pooling, s.query_prefix, s.passage_prefix, s.normalize, s.max_length) == (
        "mean",
        "query: ",
        "passage: ",
        True,
        512,
    )
    write_st_files(tmp_path, prompts={"query": "q: ", "corpus": "c: "})
    assert read_conventions(tmp_path).passage_prefix == "c: "
    write_st_files(tmp_path, prompts={"query": "q: ", "document": "d: ", "passage": "p: "})
    assert read_conventions(tmp_path).passage_prefix == "d: "  # encode_document's order


def test_the_default_prompt_fills_a_kind_without_its_own(tmp_path):
    write_st_files(tmp_path, prompts={"retrieval": "r: "}, default_prompt_name="retrieval")
    c = read_conventions(tmp_path)
    assert (c.query_prefix, c.passage_prefix) == ("r: ", "r: ")
    write_st_files(tmp_path, prompts={"query": "q: ", "retrieval": "r: "}, default_prompt_name="retrieval")
    c = read_conventions(tmp_path)
    assert (c.query_prefix, c.passage_prefix) == ("q: ", "r: ")


@pytest.mark.parametrize(
    ("normalize", "similarity", "expected"),
    [(True, None, True), (True, "dot", True), (False, None, True), (False, "cosine", True), (False, "dot", False)],
)
def test_normalisation_follows_the_normalize_module_and_the_similarity(tmp_path, normalize, similarity, expected):
    write_st_files(tmp_path, normalize=normalize, similarity=similarity)
    assert read_conventions(tmp_path).normalize is expected


@pytest.mark.parametrize(
    ("config", "mode"),
    [
        ({"embedding_dimension": 32, "pooling_mode": "max", "include_prompt": True}, "max"),
        ({"embedding_dimension": 32, "pooling_mode": ["lasttoken"]}, "lasttoken"),
        ({"word_embedding_dimension": 32, "pooling_mode_cls_token": False}, "mean"),  # none set: the mean
        ({"word_embedding_dimension": 32, "pooling_mode_max_tokens": True}, "max"),
    ],
)
def test_both_spellings_of_the_pooling_mode(tmp_path, config, mode):
    write_st_files(tmp_path)
    write_json(tmp_path / "1_Pooling" / "config.json", config)
    assert read_conventions(tmp_path).pooling == mode


def test_a_transformer_in_a_subfolder(tmp_path):
    write_st_files(tmp_path, transformer_path="0_Transformer", max_seq_length=128, do_lower_case=True)
    c = read_conventions(tmp_path)
    assert c.model_dir == tmp_path / "0_Transformer"
    assert (c.max_length, c.lowercase) == (128, True)
    assert c.files[-1] == "0_Transformer/sentence_bert_config.json"


def test_the_length_of_a_folder_saved_by_recent_sentence_transformers(tmp_path):
    write_st_files(tmp_path)  # max_seq_length null: the tokenizer's model_max_length decides
    write_json(tmp_path / "tokenizer_config.json", {"model_max_length": 384})
    c = read_conventions(tmp_path)
    assert c.max_length == 384 and c.settings().max_length == 384
    write_json(tmp_path / "tokenizer_config.json", {"model_max_length": 1000000000000000019884624838656})
    assert read_conventions(tmp_path).settings().max_length is None  # no limit stated: the model's positions
    sbert = json.loads((tmp_path / "sentence_bert_config.json").read_text())
    write_json(tmp_path / "sentence_bert_config.json", sbert | {"processor_kwargs": {"model_max_length": 64}})
    assert read_conventions(tmp_path).max_length == 64


def test_explicit_options_win_over_the_folder(tmp_path):
    write_st_files(tmp_path, pooling="cls", prompts={"query": "q: ", "passage": "p: "}, max_seq_length=512)
    s = read_conventions(tmp_path).settings(
        pooling="max", normalize=False, max_length=16, query_prefix="", passage_prefix="doc: "
    )
    assert s == EncoderSettings("max", False, 16, "", "doc: ", False)


def test_a_pooling_without_the_prompt_is_refused_only_with_a_prefix(tmp_path):
    write_st_files(tmp_path, prompts={"query": "q: "})
    config = json.loads((tmp_path / "1_Pooling" / "config.json").read_text())
    write_json(tmp_path / "1_Pooling" / "config.json", config | {"include_prompt": False})
    conventions = read_conventions(tmp_path)
    with pytest.raises(ValueError, match=r"1_Pooling/config\.json: include_prompt=false"):
        conventions.settings()
    assert conventions.settings(query_prefix="").query_prefix == ""


def _replace(path: str, text: str):
    return lambda folder: (folder / path).write_text(text, encoding="utf-8")


def _edit(path: str, change):
    def edit(folder: Path) -> None:
        data = json.loads((folder / path).read_text())
        write_json(folder / path, change(data))

    return edit


def _add_module(kind: str, path: str = "2_Dense"):
    return _edit("modules.json", lambda m: [*m, {"idx": len(m), "name": str(len(m)), "path": path, "type": kind}])


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (_replace("modules.json", '[{"idx": 0,}]'), r"modules\.json:1:12: not valid JSON \(Expecting property name"),
        (_replace("modules.json", "{}"), r"modules\.json: expected a non-empty JSON list"),
        (_replace("1_Pooling/config.json", "[1]"), r"1_Pooling/config\.json: expected a JSON object, got list"),
        (_add_module("sentence_transformers.models.Dense"), r"modules\.json: modules Dense are not supported"),
        (_add_module("my_code.Pooling"), r"modules\.json: module 3 is 'my_code\.Pooling', code of the model's own"),
        (
            _edit("modules.json", lambda m: [dict(m[0], path="../elsewhere"), *m[1:]]),
            r"modules\.json: module '0' has path '\.\./elsewhere', which leaves the model folder",
        ),
        (
            _edit("modules.json", lambda m: m[::-1]),
            r"modules\.json: the first module is 'Normalize'; pooljudge needs a Transformer first",
        ),
        (
            _edit("1_Pooling/config.json", lambda c: c | {"pooling_mode_max_tokens": True}),
            r"1_Pooling/config\.json: pooling modes max \+ mean would be concatenated",
        ),
        (
            _edit("1_Pooling/config.json", lambda c: {"pooling_mode": "weightedmean"}),
            r"1_Pooling/config\.json: pooling mode 'weightedmean' is not supported",
        ),
        (
            lambda folder: (folder / "1_Pooling" / "config.json").unlink(),
            r"1_Pooling/config\.json: no such file",
        ),
        (
            _edit("config_sentence_transformers.json", lambda c: c | {"prompts": ["query: "]}),
            r"config_sentence_transformers\.json: 'prompts' must map prompt names to strings",
        ),
        (
            _edit("config_sentence_transformers.json", lambda c: c | {"default_prompt_name": "classify"}),
            r"config_sentence_transformers\.json: default_prompt_name 'classify' is not one of its prompts \(query\)",
        ),
        (
            _edit("config_sentence_transformers.json", lambda c: c | {"model_type": "CrossEncoder"}),
            r"config_sentence_transformers\.json: model_type 'CrossEncoder': not a sentence embedding model "
            r"\(use it as a re-ranker: rerank:model=",
        ),
        (
            _edit("sentence_bert_config.json", lambda c: c | {"max_seq_length": "long"}),
            r"sentence_bert_config\.json: 'max_seq_length' must be a positive integer, got 'long'",
        ),
        (
            _edit("sentence_bert_config.json", lambda c: c | {"max_seq_length": 0}),
            r"sentence_bert_config\.json: the maximum length must be a positive integer, got 0",
        ),
        (
            _edit("sentence_bert_config.json", lambda c: c | {"do_lower_case": "yes"}),
            r"sentence_bert_config\.json: 'do_lower_case' must be true or false",
        ),
    ],
)
def test_malformed_files_are_refused_naming_the_file(tmp_path, damage, message):
    write_st_files(tmp_path, prompts={"query": "q: "})
    damage(tmp_path)
    with pytest.raises(ValueError, match=message) as info:
        read_conventions(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_a_similarity_pooljudge_cannot_rank_by_is_refused(tmp_path):
    write_st_files(tmp_path, normalize=False, similarity="euclidean")
    with pytest.raises(ValueError, match=r"config_sentence_transformers\.json: similarity_fn_name 'euclidean'"):
        read_conventions(tmp_path)
    write_st_files(tmp_path, normalize=True, similarity="euclidean")  # on unit vectors: the cosine's order
    assert read_conventions(tmp_path).normalize is True


def test_modules_without_pooling_are_token_vectors(tmp_path):
    write_json(
        tmp_path / "modules.json", [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.x.Transformer"}]
    )
    with pytest.raises(ValueError, match=r"modules\.json: no Pooling module"):
        read_conventions(tmp_path)


# --------------------------------------------------------------------------- pooling


def test_pool_hidden_by_hand():
    hidden = torch.tensor([[[1.0, 8.0], [3.0, -2.0], [5.0, 0.0]], [[2.0, 2.0], [4.0, 6.0], [9.0, 9.0]]])
    mask = torch.tensor([[1, 1, 1], [1, 1, 0]])  # the second text's last token is padding
    assert pool_hidden(hidden, mask, "mean").tolist() == [[3.0, 2.0], [3.0, 4.0]]
    assert pool_hidden(hidden, mask, "cls").tolist() == [[1.0, 8.0], [2.0, 2.0]]
    assert pool_hidden(hidden, mask, "max").tolist() == [[5.0, 8.0], [4.0, 6.0]]
    assert pool_hidden(hidden, mask, "lasttoken").tolist() == [[5.0, 0.0], [4.0, 6.0]]
    left = torch.tensor([[1, 1, 1], [0, 1, 1]])  # left padding: the first real token is the second
    assert pool_hidden(hidden, left, "cls").tolist() == [[1.0, 8.0], [4.0, 6.0]]
    assert pool_hidden(hidden, left, "lasttoken").tolist() == [[5.0, 0.0], [9.0, 9.0]]
    assert pool_hidden(hidden.half(), mask, "mean").dtype == torch.float32
    with pytest.raises(ValueError, match="pooling mode must be one of"):
        pool_hidden(hidden, mask, "weightedmean")


@pytest.mark.parametrize("mode", ["mean", "cls", "max", "lasttoken"])
def test_pool_hidden_equals_sentence_transformers_pooling(mode):
    from sentence_transformers.models import Pooling

    generator = torch.Generator().manual_seed(0)
    hidden = torch.randn(4, 7, 6, generator=generator)
    lengths = torch.tensor([7, 3, 1, 5])
    mask = (torch.arange(7)[None, :] < lengths[:, None]).long()
    expected = Pooling(6, mode)({"token_embeddings": hidden, "attention_mask": mask})["sentence_embedding"]
    torch.testing.assert_close(pool_hidden(hidden, mask, mode), expected, rtol=0, atol=1e-6)
