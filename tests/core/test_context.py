"""Contextualised passages (core.context): titles, TF-IDF keyphrases, document grouping.

Expected keyphrases are worked out by hand in the comments.  With N = 3
documents, scikit-learn's smoothed idf is ``ln(4 / (1 + df)) + 1``:
df 1 -> 1.693, df 2 -> 1.288, df 3 -> 1.0, and a term scores ``tf * idf``.
"""

from __future__ import annotations

import pytest

from core.context import (
    CONTEXT_MODES,
    contextualise,
    default_keyphrase_analyzer,
    document_keyphrases,
    group_by_document,
    with_title,
)
from core.text import Analyzer
from core.types import Passage

# Document A (two passages, given out of position order), B (one), and a
# passage without doc_id, which is a document of its own ("c0").
A1 = Passage("a1", "Apple Pie is served warm with cream and apples.", title="Apple Pie", doc_id="A", position=1)
A0 = Passage("a0", "Bake the apples slowly; baking apples takes patience.", title="Apple Pie", doc_id="A", position=0)
B0 = Passage("b0", "Pear tart with cream and honey.", title=" Pear Tart\r\n", doc_id="B", position=0)
C0 = Passage("c0", "Honey bees make honey in 2024.")
ENGLISH = [A1, A0, B0, C0]


def test_modes() -> None:
    assert CONTEXT_MODES == ("title", "keyphrases", "title+keyphrases", "none")


def test_english_keyphrases_by_hand() -> None:
    # Stems (en_plus stopwords gone): A = a0 + a1 in position order:
    #   bake appl slowli bake appl take patienc | appl pie serv warm cream appl
    #   appl tf 4 (df 1) 6.77; bake tf 2 ("Bake", "baking") 3.39; then six terms at 1.693,
    #   ties broken by first occurrence: slowli first.
    # B: pear 1.693, tart 1.693, cream 1.288 (df 2: A, B), honey 1.288 (df 2: B, c0): cream first.
    # c0: honey tf 2 * 1.288 = 2.58, bee 1.693, make 1.693; "2024" has no letter.
    # Shown forms: appl -> "apples" (3 times) over "Apple" (once); bake -> "Bake" and
    # "baking" once each, the first seen wins.
    assert document_keyphrases(ENGLISH, 3) == {
        "A": ["apples", "Bake", "slowly"],
        "B": ["Pear", "tart", "cream"],
        "c0": ["Honey", "bees", "make"],
    }
    # n larger than the candidates: all of them, best first.
    assert document_keyphrases(ENGLISH, 10)["B"] == ["Pear", "tart", "cream", "honey"]
    assert document_keyphrases(ENGLISH, 0) == {"A": [], "B": [], "c0": []}


def test_contextualised_texts_exactly() -> None:
    assert contextualise(ENGLISH, "none") == [p.text for p in ENGLISH]
    # a1 already starts with its title: not prepended again; the title is stripped.
    assert contextualise(ENGLISH, "title") == [
        "Apple Pie is served warm with cream and apples.",
        "Apple Pie Bake the apples slowly; baking apples takes patience.",
        "Pear Tart Pear tart with cream and honey.",
        "Honey bees make honey in 2024.",
    ]
    assert contextualise(ENGLISH, "keyphrases", n_keyphrases=3) == [
        "apples, Bake, slowly Apple Pie is served warm with cream and apples.",
        "apples, Bake, slowly Bake the apples slowly; baking apples takes patience.",
        "Pear, tart, cream Pear tart with cream and honey.",
        "Honey, bees, make Honey bees make honey in 2024.",
    ]
    assert contextualise(ENGLISH, "title+keyphrases", n_keyphrases=3) == [
        "apples, Bake, slowly Apple Pie is served warm with cream and apples.",
        "Apple Pie apples, Bake, slowly Bake the apples slowly; baking apples takes patience.",
        "Pear Tart Pear, tart, cream Pear tart with cream and honey.",
        "Honey, bees, make Honey bees make honey in 2024.",
    ]


def test_title_mode_is_the_legacy_corpus_text() -> None:
    # pooljudge.pipeline.load_corpus always built f"{title} {text}" unless the text starts with the title.
    for p in ENGLISH:
        title = p.title.strip()
        legacy = f"{title} {p.text}" if title and not p.text.startswith(title) else p.text
        assert with_title(p.text, p.title) == legacy
    assert contextualise(ENGLISH) == [with_title(p.text, p.title) for p in ENGLISH]


def test_document_without_candidates_adds_nothing() -> None:
    passages = [Passage("n", "It is 42.", title="Numbers", doc_id="N", position=0), A0]
    # a0 alone: bake and appl both tf 2, df 1; bake occurs first.
    assert contextualise(passages, "keyphrases", n_keyphrases=2) == [
        "It is 42.",
        "Bake, apples Bake the apples slowly; baking apples takes patience.",
    ]
    assert contextualise(passages, "title+keyphrases", n_keyphrases=2)[0] == "Numbers It is 42."


def test_chinese_keyphrases_with_jieba() -> None:
    passages = [
        Passage("x0", "熊猫是中国的国宝，熊猫喜欢吃竹子。", title="大熊猫", doc_id="X", position=0),
        Passage("x1", "我们看到成年熊猫吃很多竹子，我们很开心。", title="大熊猫", doc_id="X", position=1),
        Passage("y0", "长城是中国古代的军事工程。长城很长。", title="长城", doc_id="Y", position=0),
        Passage("z0", "北京是中国的首都，北京有很多大学。", title="北京", doc_id="Z", position=0),
    ]
    analyzer = default_keyphrase_analyzer()
    assert analyzer.tokenize(passages[1].text) == [
        "我们",
        "看到",
        "成年",
        "熊猫",
        "吃",
        "很多",
        "竹子",
        "我们",
        "很",
        "开心",
    ]
    # Single characters (是 的 吃 有 很) are never candidates; 我们 is a bm25s Chinese stopword.
    # X: 熊猫 tf 3 (5.08), 竹子 tf 2 (3.39), then 国宝 喜欢 看到 成年 开心 at 1.693:
    #    国宝 comes first;
    #    很多 (df 2) 1.288, 中国 (df 3) 1.0.
    # Y: 长城 tf 2, then 古代 军事 工程 很长 at 1.693.  Z: 北京 tf 2, then 首都 大学; 很多 is df 2.
    assert document_keyphrases(passages, 3) == {
        "X": ["熊猫", "竹子", "国宝"],
        "Y": ["长城", "古代", "军事"],
        "Z": ["北京", "首都", "大学"],
    }
    # y0 and z0 start with their titles.
    assert contextualise(passages, "title+keyphrases", n_keyphrases=3) == [
        "大熊猫 熊猫, 竹子, 国宝 熊猫是中国的国宝，熊猫喜欢吃竹子。",
        "大熊猫 熊猫, 竹子, 国宝 我们看到成年熊猫吃很多竹子，我们很开心。",
        "长城, 古代, 军事 长城是中国古代的军事工程。长城很长。",
        "北京, 首都, 大学 北京是中国的首都，北京有很多大学。",
    ]
    # A whitespace tokenizer would see one "word" per clause; the bigram analyzer is accepted too.
    bigram = document_keyphrases(passages, 1, analyzer=Analyzer(cjk="bigram", stopwords="en_plus"))
    assert bigram == {"X": ["熊猫"], "Y": ["长城"], "Z": ["北京"]}


def test_group_by_document() -> None:
    assert group_by_document(ENGLISH) == {"A": [1, 0], "B": [2], "c0": [3]}
    no_positions = [Passage("p2", "x", doc_id="D"), Passage("p1", "y", doc_id="D")]
    assert group_by_document(no_positions) == {"D": [0, 1]}  # input order
    with pytest.raises(ValueError, match="mixes passages with and without a position"):
        group_by_document([Passage("p1", "x", doc_id="D", position=0), Passage("p2", "y", doc_id="D")])
    with pytest.raises(ValueError, match="two passages at position 0"):
        group_by_document([Passage("p1", "x", doc_id="D", position=0), Passage("p2", "y", doc_id="D", position=0)])
    with pytest.raises(ValueError, match="passage 'A' has no doc_id and its id is also a document id"):
        group_by_document([A0, Passage("A", "stray")])
    with pytest.raises(TypeError, match="core.types.Passage"):
        group_by_document(["text"])  # type: ignore[list-item]


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="context must be one of title, keyphrases, title\\+keyphrases, none"):
        contextualise(ENGLISH, "summary")
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        document_keyphrases(ENGLISH, -1)
    with pytest.raises(TypeError, match="core.text.Analyzer"):
        document_keyphrases(ENGLISH, analyzer=str.split)  # type: ignore[arg-type]
    assert contextualise([], "title+keyphrases") == []
