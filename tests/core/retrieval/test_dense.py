"""Bi-encoder, embedding cache and dense retrieval (core.retrieval.encoder / core.retrieval.dense).

Most tests use a tiny randomly initialised BERT written to a temporary folder
(fast on any CPU); retrieval-exactness tests use a stub encoder whose vectors
have coordinates in multiples of 1/4, so every inner product is exact in
float32 and ties are real ties.  One test loads the bundled all-MiniLM-L6-v2.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from core.retrieval.base import Hit, Retriever  # noqa: E402
from core.retrieval.dense import (  # noqa: E402
    BiEncoder,
    DenseRetriever,
    default_model_path,
    encode_cached,
)

WORDS = (
    "the a of and is in at to on how do i query passage : ? . , bread bake baking recipe home stock market "
    "fell today cat dog sat mat river bank money water fish green red blue fast slow big small old new"
).split()
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]

TEXTS = [
    "the cat sat on the mat",
    "bread",
    "how do i bake bread at home ?",
    "the stock market fell today and the old bank is slow",
    "a dog",
    "green river , blue water , red fish , big small old new fast slow cat dog",
    "money",
    "the recipe of baking",
    "fish in the river",
    "a",
    "the big old dog sat in the green river at home today",
]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POOLJUDGE_CACHE", str(tmp_path / "cache"))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    """A 2-layer, 32-dim random BERT with a WordPiece vocab of a few dozen words, saved to disk."""
    from tests.tiny_models import write_tiny_bert

    return write_tiny_bert(tmp_path_factory.mktemp("tiny-bert"), VOCAB, intermediate_size=64)


def reference_hidden(folder: Path, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    """Last hidden states and attention mask of one padded batch, straight from transformers."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True).eval()
    batch = tokenizer(texts, padding=True, truncation=True, max_length=64, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**batch).last_hidden_state
    return hidden, batch["attention_mask"]


class ForwardCounter:
    """Counts the encoder model's forward calls and records each batch's input shape."""

    def __init__(self, encoder: BiEncoder) -> None:
        self.calls = 0
        self.shapes: list[tuple[int, int]] = []
        encoder.model.register_forward_hook(self._hook, with_kwargs=True)

    def _hook(self, module, args, kwargs, output):
        self.calls += 1
        self.shapes.append(tuple(kwargs["input_ids"].shape))


# --------------------------------------------------------------------------- the encoder


def test_mean_pooling_equals_masked_mean(tiny_model):
    enc = BiEncoder(tiny_model, normalize=False, batch_size=4)
    got = enc.encode(TEXTS)
    hidden, mask = reference_hidden(tiny_model, TEXTS)
    m = mask.unsqueeze(-1).float()
    expected = ((hidden * m).sum(1) / m.sum(1)).numpy()
    assert got.dtype == np.float32 and got.shape == (len(TEXTS), 32)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    # the test can tell: a mean that ignores the mask differs on the padded texts
    unmasked = hidden.mean(1).numpy()
    assert np.abs(got[1] - unmasked[1]).max() > 1e-3


def test_cls_pooling_is_first_token(tiny_model):
    enc = BiEncoder(tiny_model, pooling="cls", normalize=False)
    got = enc.encode(TEXTS)
    hidden, _ = reference_hidden(tiny_model, TEXTS)
    np.testing.assert_allclose(got, hidden[:, 0].numpy(), atol=1e-5, rtol=0)
    mean = BiEncoder(tiny_model, normalize=False).encode(TEXTS)
    assert np.abs(got - mean).max() > 1e-3


def test_normalisation_gives_unit_vectors(tiny_model):
    raw = BiEncoder(tiny_model, normalize=False).encode(TEXTS)
    unit = BiEncoder(tiny_model).encode(TEXTS)
    np.testing.assert_allclose(np.linalg.norm(unit, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(unit, raw / np.linalg.norm(raw, axis=1, keepdims=True), atol=1e-5)
    assert np.abs(np.linalg.norm(raw, axis=1) - 1.0).max() > 1e-2  # raw vectors really are not unit


def test_length_sorted_batches_return_input_order(tiny_model):
    sorted_enc = BiEncoder(tiny_model, batch_size=3)
    one_by_one = BiEncoder(tiny_model, batch_size=1)
    one_by_one.max_tokens = 1  # every text alone: a text longer than the budget travels by itself
    counter = ForwardCounter(sorted_enc)
    lengths = sorted((len(sorted_enc.tokenizer(t)["input_ids"]) for t in TEXTS), reverse=True)
    # a budget of 3 longest texts: (3 x 19), then shorter texts more to a batch
    sorted_enc.max_tokens = 3 * lengths[0]
    got = sorted_enc.encode(TEXTS)
    sorted_shapes = list(counter.shapes)
    expected = one_by_one.encode(TEXTS)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)
    unsorted = sorted_enc.encode(TEXTS, sort_by_length=False)
    np.testing.assert_allclose(unsorted, expected, atol=1e-5, rtol=0)
    # batches went longest first, each padded only to its own longest text, within the token budget
    assert [w for _, w in sorted_shapes] == [lengths[i] for i in np.cumsum([0] + [r for r, _ in sorted_shapes])[:-1]]
    assert all(rows * width <= 3 * lengths[0] for rows, width in sorted_shapes)
    # greedy: no batch could have taken the next text without passing the budget
    starts = np.cumsum([0] + [r for r, _ in sorted_shapes])
    for (rows, width), start in zip(sorted_shapes[:-1], starts[:-1]):
        assert (rows + 1) * width > 3 * lengths[0]
        assert width == lengths[start]
    assert sorted_shapes[0] == (3, lengths[0])
    assert len(sorted_shapes) < len(TEXTS) // 3 + 1  # fewer batches than a fixed count of 3 would make


def test_default_token_budget_follows_batch_size_and_device(tiny_model):
    enc = BiEncoder(tiny_model, batch_size=5, max_length=16, device="cpu")
    assert enc.token_budget() == 5 * 16
    assert BiEncoder(tiny_model, batch_size=5, max_length=128, device="cpu").token_budget() == 5 * 64
    enc.max_tokens = 1000
    assert enc.token_budget() == 1000
    enc.max_tokens = 0
    with pytest.raises(ValueError, match="max_tokens"):
        enc.token_budget()


def test_prefixes_are_applied_per_kind(tiny_model):
    plain = BiEncoder(tiny_model)
    prefixed = BiEncoder(tiny_model, query_prefix="query : ", passage_prefix="passage : ")
    texts = ["bake bread", "the stock market"]
    np.testing.assert_allclose(
        prefixed.encode(texts, kind="query"), plain.encode(["query : " + t for t in texts]), atol=1e-5
    )
    np.testing.assert_allclose(
        prefixed.encode(texts, kind="passage"), plain.encode(["passage : " + t for t in texts]), atol=1e-5
    )
    assert np.abs(prefixed.encode(texts, kind="query") - plain.encode(texts, kind="query")).max() > 1e-3
    assert prefixed.fingerprint != plain.fingerprint
    with pytest.raises(ValueError, match="kind"):
        plain.encode(texts, kind="document")


def test_truncation_to_max_length(tiny_model):
    enc = BiEncoder(tiny_model, max_length=5)  # [CLS] + 3 words + [SEP]
    np.testing.assert_allclose(enc.encode(["the big old dog sat in the river"]), enc.encode(["the big old"]), atol=1e-6)
    assert BiEncoder(tiny_model, max_length=10_000).max_length == 64  # capped by the position embeddings


def test_progress_and_empty_input(tiny_model):
    enc = BiEncoder(tiny_model, batch_size=4)
    enc.max_tokens = 1  # one text a batch
    calls: list[tuple[int, int]] = []
    enc.encode(TEXTS, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(i, 11) for i in range(1, 12)]
    empty = enc.encode([])
    assert empty.shape == (0, 32) and empty.dtype == np.float32
    with pytest.raises(TypeError):
        enc.encode("a single string")


def test_fingerprint_is_stable_and_tracks_the_files(tiny_model, tmp_path):
    a = BiEncoder(tiny_model)
    b = BiEncoder(tiny_model)
    assert a.fingerprint == b.fingerprint
    assert BiEncoder(tiny_model, pooling="cls").fingerprint != a.fingerprint
    assert BiEncoder(tiny_model, max_length=32).fingerprint != a.fingerprint
    assert BiEncoder(tiny_model, fp16=True, device="cpu").model_fingerprint == a.model_fingerprint
    # a copy of the model with one weight changed is another model
    import shutil

    from transformers import AutoModel

    other = tmp_path / "other"
    shutil.copytree(tiny_model, other)
    model = AutoModel.from_pretrained(other, local_files_only=True)
    with torch.no_grad():
        model.embeddings.word_embeddings.weight[5, 0] += 1.0
    model.save_pretrained(other)
    assert BiEncoder(other).fingerprint != a.fingerprint


# --------------------------------------------------------------------------- the embedding cache


def test_cache_hit_and_misses(tiny_model, tmp_path):
    enc = BiEncoder(tiny_model, batch_size=4)
    enc.max_tokens = 1  # one forward call per text: the counts below count texts encoded
    counter = ForwardCounter(enc)
    first = encode_cached(enc, TEXTS, kind="passage")
    assert counter.calls == 11
    progress: list[tuple[int, int]] = []
    second = encode_cached(enc, TEXTS, kind="passage", progress=lambda d, t: progress.append((d, t)))
    assert counter.calls == 11  # nothing encoded
    assert progress == [(11, 11)]
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, enc.encode(TEXTS), atol=1e-6)
    counter.calls = 0

    encode_cached(enc, TEXTS[:-1] + ["a changed text"], kind="passage")  # other texts
    assert counter.calls == 11
    encode_cached(enc, list(reversed(TEXTS)), kind="passage")  # order matters
    assert counter.calls == 22
    encode_cached(enc, TEXTS, kind="query")  # other kind
    assert counter.calls == 33
    encode_cached(enc, TEXTS, kind="passage", cache=False)  # cache off
    assert counter.calls == 44

    cls_enc = BiEncoder(tiny_model, pooling="cls", batch_size=4)  # other params
    cls_enc.max_tokens = 1
    cls_counter = ForwardCounter(cls_enc)
    encode_cached(cls_enc, TEXTS)
    assert cls_counter.calls == 11
    prefixed = BiEncoder(tiny_model, passage_prefix="passage : ", batch_size=4)
    prefixed.max_tokens = 1
    pre_counter = ForwardCounter(prefixed)
    encode_cached(prefixed, TEXTS)
    assert pre_counter.calls == 11

    files = sorted(p.name for p in (tmp_path / "cache" / "embeddings").iterdir())
    assert len(files) == 6 and all(f.endswith(".npy") and not f.startswith(".") for f in files)


def test_corrupt_cache_file_is_replaced(tiny_model, tmp_path):
    enc = BiEncoder(tiny_model)
    good = encode_cached(enc, TEXTS)
    (path,) = (tmp_path / "cache" / "embeddings").iterdir()
    path.write_bytes(b"not an npy file")
    counter = ForwardCounter(enc)
    again = encode_cached(enc, TEXTS)
    assert counter.calls == 1
    np.testing.assert_allclose(again, good, atol=1e-6)
    assert np.load(path).shape == (len(TEXTS), 32)


# --------------------------------------------------------------------------- retrieval


class StubEncoder:
    """Looks texts up in a table of vectors (queries and passages alike)."""

    def __init__(self, table: dict[str, np.ndarray], fingerprint: str = "stub") -> None:
        self.table = table
        self.dim = len(next(iter(table.values())))
        self.fingerprint = fingerprint
        self.calls = 0

    def encode(self, texts, *, kind="passage", progress=None):
        self.calls += 1
        out = np.stack([self.table[t] for t in texts]).astype(np.float32) if texts else np.zeros((0, self.dim))
        if progress is not None:
            progress(len(texts), len(texts))
        return out


def quarter_grid_collection(n_docs=200, n_queries=30, dim=8, seed=3):
    """Vectors with coordinates in {-0.5, ..., 0.5} step 0.25: exact inner products, many ties."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i}" for i in range(1000)] + ["d<10>", "d:9", "dé", "d文", "D1", "d 2", "z", "a"]
    doc_ids = list(rng.choice(pool, size=n_docs, replace=False))
    docs = rng.integers(-2, 3, size=(n_docs, dim)) * 0.25
    queries = rng.integers(-2, 3, size=(n_queries, dim)) * 0.25
    table = {f"text of {d}": v for d, v in zip(doc_ids, docs)}
    table.update({f"q{i}": v for i, v in enumerate(queries)})
    return doc_ids, [f"text of {d}" for d in doc_ids], {f"q{i}": f"q{i}" for i in range(n_queries)}, table


def brute_force(doc_ids, doc_vecs, query_vec, k):
    scores = doc_vecs.astype(np.float64) @ query_vec.astype(np.float64)
    ranked = sorted(zip(doc_ids, scores.tolist()), key=lambda x: (x[1], x[0]), reverse=True)
    return ranked[:k]


@pytest.mark.parametrize("backend", ["faiss", "torch"])
def test_flat_search_is_exact_brute_force_with_trec_ties(backend):
    doc_ids, texts, queries, table = quarter_grid_collection()
    enc = StubEncoder(table)
    retriever = DenseRetriever(enc, backend=backend, cache=False).index(doc_ids, texts)
    assert isinstance(retriever, Retriever)
    doc_vecs = np.stack([table[t] for t in texts])
    tied_at_cut = 0
    for k in (1, 5, 10, 37, 200, 500):
        run = retriever.batch_search(queries, k=k)
        assert list(run) == list(queries)
        for qid, text in queries.items():
            expected = brute_force(doc_ids, doc_vecs, table[text], k)
            assert list(run[qid].items()) == expected, (k, qid)
            full = brute_force(doc_ids, doc_vecs, table[text], len(doc_ids))
            if k < len(full) and full[k - 1][1] == full[k][1]:
                tied_at_cut += 1
    assert tied_at_cut > 20  # the collection really tests ties at the cut
    # search() agrees with batch_search()
    hits = retriever.search("q3", k=10)
    assert all(isinstance(h, Hit) for h in hits)
    assert [(h.doc_id, h.score) for h in hits] == list(retriever.batch_search({"x": "q3"}, k=10)["x"].items())


def test_flat_search_with_the_tiny_bert(tiny_model):
    enc = BiEncoder(tiny_model)
    ids = [f"p{i}" for i in range(len(TEXTS))]
    retriever = DenseRetriever(enc).index(ids, TEXTS)
    doc_vecs = enc.encode(TEXTS)
    q = "how do i bake bread ?"
    qv = enc.encode([q], kind="query")[0]
    expected = brute_force(ids, doc_vecs, qv, 5)
    hits = retriever.search(q, k=5)
    assert [h.doc_id for h in hits] == [d for d, _ in expected]
    np.testing.assert_allclose([h.score for h in hits], [s for _, s in expected], atol=1e-5)


def gaussian_collection(n_docs=400, n_queries=40, dim=32, seed=11):
    rng = np.random.default_rng(seed)
    docs = rng.standard_normal((n_docs, dim)).astype(np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    queries = rng.standard_normal((n_queries, dim)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    doc_ids = [f"doc-{i:04d}" for i in range(n_docs)]
    table = {f"t{i}": v for i, v in enumerate(docs)}
    table.update({f"q{i}": v for i, v in enumerate(queries)})
    return doc_ids, [f"t{i}" for i in range(n_docs)], {f"q{i}": f"q{i}" for i in range(n_queries)}, table


@pytest.mark.parametrize(
    "kind, options", [("hnsw", {"hnsw_m": 16, "ef_search": 64}), ("ivf", {"nlist": 8, "nprobe": 6})]
)
def test_approximate_indexes_have_high_recall(kind, options):
    doc_ids, texts, queries, table = gaussian_collection()
    enc = StubEncoder(table)
    flat = DenseRetriever(enc, cache=False).index(doc_ids, texts).batch_search(queries, k=10)
    approx = DenseRetriever(enc, index=kind, cache=False, **options).index(doc_ids, texts)
    run = approx.batch_search(queries, k=10)
    valid = set(doc_ids)
    recalls = []
    for qid in queries:
        hits = list(run[qid].items())
        assert len(hits) == 10 and set(run[qid]) <= valid
        assert hits == sorted(hits, key=lambda x: (x[1], x[0]), reverse=True)
        recalls.append(len(set(run[qid]) & set(flat[qid])) / 10)
    assert np.mean(recalls) >= 0.9, np.mean(recalls)


def test_ivf_padding_is_dropped():
    doc_ids, texts, queries, table = gaussian_collection()
    enc = StubEncoder(table)
    retriever = DenseRetriever(enc, index="ivf", nlist=10, nprobe=1, cache=False).index(doc_ids, texts)
    run = retriever.batch_search(queries, k=100)
    lengths = [len(docs) for docs in run.values()]
    assert max(lengths) <= 100 and min(lengths) < 100  # one cell holds fewer than 100 vectors
    vec = dict(zip(doc_ids, (table[t] for t in texts)))
    for qid, docs in run.items():
        assert set(docs) <= set(doc_ids)
        true_scores = [float(vec[d] @ table[queries[qid]]) for d in docs]
        np.testing.assert_allclose(list(docs.values()), true_scores, atol=1e-5)  # no padding row crept in


@pytest.mark.parametrize("kind", ["flat", "hnsw", "ivf"])
def test_save_load_round_trip(kind, tmp_path):
    doc_ids, texts, queries, table = gaussian_collection(n_docs=300)
    enc = StubEncoder(table)
    retriever = DenseRetriever(enc, index=kind, name=f"stub-{kind}", cache=False).index(doc_ids, texts)
    before = retriever.batch_search(queries, k=20)
    retriever.save(tmp_path / "idx")
    assert sorted(p.name for p in (tmp_path / "idx").iterdir()) == ["doc_ids.json", "index.faiss", "meta.json"]
    loaded = DenseRetriever.load(tmp_path / "idx", enc)
    assert loaded.name == f"stub-{kind}" and loaded.index_type == kind and loaded.doc_ids == doc_ids
    assert loaded.batch_search(queries, k=20) == before
    with pytest.raises(ValueError, match="another encoder"):
        DenseRetriever.load(tmp_path / "idx", StubEncoder(table, fingerprint="other"))


def test_save_load_with_the_torch_backend(tmp_path):
    doc_ids, texts, queries, table = quarter_grid_collection()
    enc = StubEncoder(table)
    torch_r = DenseRetriever(enc, backend="torch", cache=False).index(doc_ids, texts)
    torch_r.save(tmp_path / "idx")
    loaded = DenseRetriever.load(tmp_path / "idx", enc, backend="faiss")
    assert loaded.batch_search(queries, k=15) == torch_r.batch_search(queries, k=15)
    back = DenseRetriever.load(tmp_path / "idx", enc, backend="torch")
    assert back.batch_search(queries, k=15) == torch_r.batch_search(queries, k=15)


def test_retrievers_coexist_and_index_uses_the_cache(tiny_model):
    mean_enc = BiEncoder(tiny_model)
    cls_enc = BiEncoder(tiny_model, pooling="cls")
    ids = [f"p{i}" for i in range(len(TEXTS))]
    mean_r = DenseRetriever(mean_enc, name="mean").index(ids, TEXTS)
    cls_r = DenseRetriever(cls_enc, index="hnsw", name="cls").index(ids, TEXTS)
    q = {"q": "the dog sat in the river"}
    run_mean, run_cls = mean_r.batch_search(q, k=11)["q"], cls_r.batch_search(q, k=11)["q"]
    assert run_mean != run_cls
    for enc, run in ((mean_enc, run_mean), (cls_enc, run_cls)):
        scores = enc.encode(TEXTS) @ enc.encode(list(q.values()), kind="query")[0]
        np.testing.assert_allclose([run[i] for i in ids], scores, atol=1e-5)
    counter = ForwardCounter(mean_enc)
    again = DenseRetriever(mean_enc).index(ids, TEXTS)  # passages come from the cache
    assert counter.calls == 0
    assert again.batch_search(q, k=11)["q"] == run_mean
    assert counter.calls == 1  # the query only


def test_bad_input_is_rejected():
    doc_ids, texts, queries, table = gaussian_collection(n_docs=50)
    enc = StubEncoder(table)
    r = DenseRetriever(enc, cache=False)
    with pytest.raises(RuntimeError, match="index"):
        r.search("q0")
    with pytest.raises(ValueError, match="duplicate"):
        r.index(["a", "a"], texts[:2])
    with pytest.raises(ValueError, match="doc ids"):
        r.index(doc_ids[:3], texts[:2])
    r.index(doc_ids, texts)
    with pytest.raises(ValueError, match="k"):
        r.search("q0", k=0)
    assert len(r.search("q0", k=1000)) == 50
    with pytest.raises(ValueError, match="index"):
        DenseRetriever(enc, index="lsh")


# --------------------------------------------------------------------------- the real default model


@pytest.mark.slow
def test_default_minilm_model(tmp_path):
    path = default_model_path()
    assert path == default_model_path()
    assert path.parent == tmp_path / "cache" / "models"
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary folders left behind
    enc = BiEncoder(path)
    assert enc.dim == 384
    q, bread, stocks = enc.encode(
        ["How do I bake bread?", "A recipe for baking bread at home", "The stock market fell today"]
    )
    assert q.shape == (384,)
    assert float(q @ bread) > float(q @ stocks) + 0.3
    np.testing.assert_allclose(np.linalg.norm([q, bread, stocks], axis=1), 1.0, atol=1e-5)


def test_texts_are_tokenised_in_chunks_sorted_within_each(tiny_model, monkeypatch):
    import core.retrieval.encoder as encoder_module

    monkeypatch.setattr(encoder_module, "_TOKENIZE_CHUNK", 4)
    enc = BiEncoder(tiny_model)
    enc.max_tokens = 10_000  # the budget never cuts: one batch per chunk
    counter = ForwardCounter(enc)
    got = enc.encode(TEXTS)
    lengths = [len(enc.tokenizer(t)["input_ids"]) for t in TEXTS]
    # chunks of 4, 4 and 3 texts in input order, each padded to its own longest text
    assert counter.shapes == [(4, max(lengths[0:4])), (4, max(lengths[4:8])), (3, max(lengths[8:11]))]
    one_by_one = BiEncoder(tiny_model)
    one_by_one.max_tokens = 1
    np.testing.assert_allclose(got, one_by_one.encode(TEXTS), atol=1e-5, rtol=0)


def test_a_folder_stored_in_fp16_encodes_in_float32_on_the_cpu(tiny_model, tmp_path):
    """transformers 5 loads a checkpoint in its stored dtype; the CPU path must still compute in float32."""
    import shutil

    from transformers import AutoModel

    half = tmp_path / "half"
    shutil.copytree(tiny_model, half)
    AutoModel.from_pretrained(tiny_model, local_files_only=True).half().save_pretrained(half)
    enc = BiEncoder(half, device="cpu")
    assert {p.dtype for p in enc.model.parameters()} == {torch.float32}
    # the same weights rounded to fp16, computed in float32
    rounded = tmp_path / "rounded"
    shutil.copytree(tiny_model, rounded)
    AutoModel.from_pretrained(tiny_model, local_files_only=True).half().float().save_pretrained(rounded)
    np.testing.assert_allclose(enc.encode(TEXTS), BiEncoder(rounded, device="cpu").encode(TEXTS), atol=1e-6, rtol=0)
