"""Model folders as users bring them, through the CLI: sentence-transformers bi-encoders and cross-encoders.

* A folder saved by ``sentence_transformers.CrossEncoder.save`` (one logit, its own
  ``config_sentence_transformers.json`` with a Sigmoid activation) re-ranks as it is; its scores
  are the model's logits (sentence-transformers' ``predict`` is their sigmoid).
* A classifier with two labels, or a plain encoder, is refused as a re-ranker (it would get a
  random head) with a message naming its ``config.json``.
* A bi-encoder folder with E5-like sentence-transformers files retrieves with its prefixes, and
  the run's description says which files chose them; spec options still win.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import shutil  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from core.ranking import trec_ranking  # noqa: E402
from pooljudge.cli import main  # noqa: E402
from pooljudge.pipeline import retrieve  # noqa: E402
from pooljudge.retrievers import RetrieverSpec  # noqa: E402
from tests.clirun import run_cli  # noqa: E402
from tests.st_folders import write_st_files  # noqa: E402
from tests.test_rerank_pipeline import VOCAB, scores_of, texts, toy  # noqa: E402, F401
from tests.tiny_models import write_tiny_bert  # noqa: E402


@pytest.fixture(scope="module")
def st_cross_encoder(tmp_path_factory) -> Path:
    """A tiny random one-logit BERT, loaded and saved again by sentence-transformers' CrossEncoder."""
    from sentence_transformers import CrossEncoder

    root = tmp_path_factory.mktemp("st-cross-encoder")
    # initializer_range 0.5: scores spread enough to tell pairs apart (0.02 gives near-equal logits)
    base = write_tiny_bert(root / "base", VOCAB, seed=3, head=True, max_position_embeddings=512, initializer_range=0.5)
    CrossEncoder(str(base), local_files_only=True, device="cpu").save(str(root / "saved"))
    return root / "saved"


def stored_run(store, name: str) -> dict[str, dict[str, float]]:
    from db import queries

    with store.read() as s:
        return queries.stored_run(s, "toy", name)


@pytest.mark.slow
def test_a_sentence_transformers_cross_encoder_folder_reranks_as_it_is(toy, st_cross_encoder, capsys):
    from sentence_transformers import CrossEncoder

    url, store = toy
    assert (st_cross_encoder / "config_sentence_transformers.json").is_file()  # the folder as ST writes it
    spec = f"rerank:model={st_cross_encoder},depth=5,name=st"
    assert main(["--db", url, "-q", "retrieve", "-c", "toy", "-r", spec, "--hits", "4"]) == 0
    _, first, _ = retrieve(store, "toy", RetrieverSpec.parse("bm25"), k=5)
    queries, passages = texts(store)
    expected = scores_of(st_cross_encoder, queries, passages, {q: list(docs) for q, docs in first.items()})
    stored = stored_run(store, "st")
    assert set(stored) == set(first) and len(stored) == 16
    for q, docs in stored.items():
        assert trec_ranking(docs) == trec_ranking(expected[q])[:4]
    # the scores are the model's logits, as sentence-transformers computes them (its predict adds a sigmoid)
    model = CrossEncoder(str(st_cross_encoder), local_files_only=True, device="cpu")
    assert isinstance(model.activation_fn, torch.nn.Sigmoid)
    pairs = [(queries[q], passages[d]) for q in sorted(stored) for d in stored[q]]
    logits = np.array([stored[q][d] for q in sorted(stored) for d in stored[q]])
    np.testing.assert_allclose(logits, model.predict(pairs, activation_fn=torch.nn.Identity()), atol=1e-5, rtol=0)
    np.testing.assert_allclose(1 / (1 + np.exp(-logits)), model.predict(pairs), atol=1e-5, rtol=0)
    assert np.ptp(logits) > 0.1  # the pairs really scored differently
    # and it selects a pool's passages
    assert run_cli(url, f"pool -c toy --name p -r bm25 --depth 3 --select 2 --select-model {st_cross_encoder}") == 0
    assert "32 selected for annotation" in capsys.readouterr().out


def two_label_classifier(folder: Path, like: Path) -> Path:
    """The cross-encoder's architecture and tokenizer with a 2-label head (a classifier, not a re-ranker)."""
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig.from_pretrained(like)
    config.num_labels = 2
    BertForSequenceClassification(config).save_pretrained(folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(like / name, folder / name)
    return folder


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("two-labels", r"config\.json: a classifier with 2 labels \(LABEL_0, LABEL_1\); a re-ranker needs exactly one"),
        ("plain", r"config\.json: architectures \['BertModel'\] hold no sequence-classification head"),
    ],
)
def test_a_folder_that_is_not_a_one_logit_classifier_is_refused(toy, st_cross_encoder, tmp_path, capsys, kind, message):
    import re

    url, store = toy
    if kind == "plain":
        folder = write_tiny_bert(tmp_path / kind, VOCAB, max_position_embeddings=512)
    else:
        folder = two_label_classifier(tmp_path / kind, st_cross_encoder)
    assert main(["--db", url, "-q", "retrieve", "-c", "toy", "-r", f"rerank:model={folder},name=bad"]) == 1
    err = capsys.readouterr().err
    assert re.search(message, err) and str(folder) in err
    assert run_cli(url, f"pool -c toy --name p -r bm25 --select 2 --select-model {folder}") == 1
    assert re.search(message, capsys.readouterr().err)
    from db.pools import list_pools
    from db.queries import list_collections

    with store.read() as s:  # nothing was stored
        assert next(c for c in list_collections(s) if c.name == "toy").runs == []
        assert list_pools(s, "toy") == []


@pytest.mark.slow
def test_a_bi_encoder_folder_retrieves_with_its_own_prefixes(toy, tmp_path):
    from core.retrieval.encoder import BiEncoder

    url, store = toy
    # initializer_range 0.5: vectors far enough apart that no two passages nearly tie
    folder = write_tiny_bert(tmp_path / "e5", VOCAB, seed=5, max_position_embeddings=512, initializer_range=0.5)
    write_st_files(folder, prompts={"query": "tell me : ", "passage": "about : "}, max_seq_length=24)
    assert main(["--db", url, "-q", "retrieve", "-c", "toy", "-r", f"dense:model={folder},name=e5", "--hits", "3"]) == 0
    _, run, config = retrieve(store, "toy", RetrieverSpec.parse(f"dense:model={folder}"), k=3)
    encoder = config["encoder"]
    assert (encoder["query_prefix"], encoder["passage_prefix"], encoder["max_length"]) == ("tell me : ", "about : ", 24)
    assert encoder["conventions"] == [
        "modules.json",
        "1_Pooling/config.json",
        "config_sentence_transformers.json",
        "sentence_bert_config.json",
    ]
    # the stored run is the folder's: the same vectors as the prefixes given by hand
    queries, passages = texts(store)
    by_hand = BiEncoder(folder, query_prefix="tell me : ", passage_prefix="about : ", max_length=24)
    doc_ids = sorted(passages)
    scores = by_hand.encode(list(queries.values()), kind="query") @ by_hand.encode([passages[d] for d in doc_ids]).T
    stored = stored_run(store, "e5")
    for row, q in enumerate(queries):
        ranked = trec_ranking(dict(zip(doc_ids, scores[row].tolist())))
        assert trec_ranking(stored[q]) == ranked[:3]
        expected = [float(scores[row][doc_ids.index(d)]) for d in ranked[:3]]
        np.testing.assert_allclose([stored[q][d] for d in ranked[:3]], expected, atol=1e-5)
    # the test can tell: without the folder's prefixes the ranking is another
    bare = BiEncoder(folder, query_prefix="", passage_prefix="", max_length=24)
    bare_scores = bare.encode(list(queries.values()), kind="query") @ bare.encode([passages[d] for d in doc_ids]).T
    assert np.abs(bare_scores - scores).max() > 1e-2
    # spec options win over the folder's
    _, _, plain = retrieve(
        store, "toy", RetrieverSpec.parse(f"dense:model={folder},query_prefix=,normalize=false,pooling=cls"), k=3
    )
    assert (plain["encoder"]["query_prefix"], plain["encoder"]["passage_prefix"]) == ("", "about : ")
    assert (plain["encoder"]["normalize"], plain["encoder"]["pooling"]) == (False, "cls")
    assert plain["encoder"]["fingerprint"] != encoder["fingerprint"]
