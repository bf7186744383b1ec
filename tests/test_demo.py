"""The bundled demo collection: its data files are the only source; well-formed, big enough, as its README says."""

from __future__ import annotations

import re
from collections import Counter

from core.formats.beir import read_beir
from pooljudge.seed import DEMO_DIR
from tools.build_demo import load, render_run, summary, verify


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
