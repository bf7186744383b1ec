"""The bundled demo collection: well-formed, big enough, and what the built files say."""

from __future__ import annotations

from collections import Counter

from core.formats.beir import read_beir
from pooljudge.demo.build_demo import build_corpus, build_qrels, build_queries, render, read_files, verify
from pooljudge.seed import DEMO_DIR


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
    assert sorted(source.runs) == ["bm25", "bm25-bigram", "minilm"]
    assert any("<script>" in p.text for p in passages)  # the UI must show it as text


def test_committed_files_equal_what_the_content_modules_render():
    """The data files are generated from content_en/content_zh; they must not drift apart."""
    corpus, queries, qrels, runs = read_files(DEMO_DIR)
    assert corpus == build_corpus()
    assert queries == build_queries()
    assert qrels == build_qrels()
    ranked = {name: {q: [(d, v["score"]) for d, v in docs.items()] for q, docs in run.items()} for name, run in runs.items()}
    files = render(corpus, queries, qrels, ranked)
    for relative, text in files.items():
        assert (DEMO_DIR / relative).read_text(encoding="utf-8") == text, relative
