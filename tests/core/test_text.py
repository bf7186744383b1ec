"""Text analysis: exact terms for English, Chinese (jieba, bigrams) and mixed text, offsets, highlighting."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from core.text import (
    Analyzer,
    analyzer_for,
    common_cjk_runs,
    highlight_spans,
    merge_spans,
)

REPO = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO.parent / "shared" / "data"

EN = analyzer_for("en")
ZH = analyzer_for("zh")
BIGRAM = analyzer_for("zh", chinese="bigram")
SEARCH = analyzer_for("zh", chinese="jieba_search")

CLAUSE = "印控克什米尔地区寺庙踩踏事故死亡人数"  # RGB zh query 0
SENTENCE = "北京大学的学生使用BERT模型进行检索，效果很好。"


# --------------------------------------------------------------------------- English


def test_english_stemming_and_stopwords() -> None:
    text = "The quick brown foxes are running over the lazy dogs' houses"
    # "the", "are" are stopwords; Snowball: foxes->fox, running->run, lazy->lazi, houses->hous
    assert EN.tokenize(text) == ["quick", "brown", "fox", "run", "over", "lazi", "dog", "hous"]


def test_english_apostrophes_hyphens_and_accents() -> None:
    text = "It's John's café; don't stop—retrieval-augmented generation (RAG) in 2024!"
    # "it's" -> "it" (stopword), possessive 's dropped, "don't" -> "dont", hyphens split words
    assert EN.tokenize(text) == ["john", "café", "dont", "stop", "retriev", "augment", "generat", "rag", "2024"]
    assert EN.tokenize("John\u2019s") == ["john"]  # typographic apostrophe too


def test_english_options() -> None:
    text = "The runners were running in the races"
    assert Analyzer(stem=False).tokenize(text) == ["runners", "were", "running", "races"]
    assert Analyzer(stopwords="none").tokenize(text) == ["the", "runner", "were", "run", "in", "the", "race"]
    assert Analyzer(stopwords="en_plus").tokenize(text) == ["runner", "run", "race"]


def test_full_width_forms_are_normalised() -> None:
    text = "ＢＥＲＴ模型２０２３年"
    assert EN.tokenize(text) == ["bert", "模", "型", "2023", "年"]  # CJK as unigrams in the English analyzer
    assert ZH.tokenize(text) == ["bert", "模型", "2023", "年"]
    assert BIGRAM.tokenize(text) == ["bert", "模型", "2023", "年"]  # "年" alone: a unigram


def test_other_scripts_are_words() -> None:
    text = "한국어 검색 עִבְרִית हिन्दी"  # Hangul, Hebrew with points, Devanagari with vowel signs
    assert EN.tokenize(text) == ["한국어", "검색", "עִבְרִית", "हिन्दी"]


# --------------------------------------------------------------------------- Chinese


def test_jieba_precise_mode() -> None:
    assert ZH.tokenize(CLAUSE) == ["印控", "克什米尔地区", "寺庙", "踩踏", "事故", "死亡", "人数"]
    assert ZH.tokenize(SENTENCE) == [
        "北京大学",
        "的",
        "学生",
        "使用",
        "bert",
        "模型",
        "进行",
        "检索",
        "效果",
        "很",
        "好",
    ]


def test_jieba_search_mode_adds_subwords() -> None:
    assert SEARCH.tokenize(CLAUSE) == [
        "印控",
        "克什",
        "米尔",
        "地区",
        "克什米尔地区",
        "寺庙",
        "踩踏",
        "事故",
        "死亡",
        "人数",
    ]


def test_cjk_bigrams() -> None:
    assert BIGRAM.tokenize("北京大学，好") == ["北京", "京大", "大学", "好"]
    assert BIGRAM.tokenize(SENTENCE) == [
        "北京", "京大", "大学", "学的", "的学", "学生", "生使", "使用",
        "bert",
        "模型", "型进", "进行", "行检", "检索",
        "效果", "果很", "很好",
    ]  # fmt: skip


def test_mixed_chinese_latin_digits() -> None:
    text = "我在Python 3.11里用jieba分词"
    assert ZH.tokenize(text) == ["我", "在", "python", "3", "11", "里", "用", "jieba", "分词"]
    assert BIGRAM.tokenize(text) == ["我在", "python", "3", "11", "里用", "jieba", "分词"]
    # Latin words inside Chinese follow the English rules: lowercase, stopwords, stemming
    assert ZH.tokenize("检索模型The Running Models") == ["检索", "模型", "run", "model"]


def test_mixed_analyzer_equals_english_on_english_text() -> None:
    text = "It's John's café; don't stop—retrieval-augmented generation (RAG) in 2024!"
    assert analyzer_for("mixed") == ZH
    for analyzer in (ZH, BIGRAM, SEARCH):
        assert analyzer.tokenize(text) == EN.tokenize(text)


def test_regex_word_tokenizer_pitfall() -> None:
    # \w matches CJK ideographs: a whole clause becomes one "word"...
    assert re.findall(r"\w+", CLAUSE) == [CLAUSE]
    assert re.findall(r"\w+", SENTENCE) == ["北京大学的学生使用BERT模型进行检索", "效果很好"]
    # ...which shares nothing with a query about the same event worded differently.
    query = "克什米尔寺庙踩踏事故"
    assert not set(re.findall(r"\w+", query)) & set(re.findall(r"\w+", CLAUSE))
    # Segmented, the clause has many terms and the query matches most of them.
    assert len(ZH.tokenize(CLAUSE)) == 7 and len(BIGRAM.tokenize(CLAUSE)) == 17
    assert set(ZH.tokenize(query)) & set(ZH.tokenize(CLAUSE)) == {"寺庙", "踩踏", "事故"}
    assert set(BIGRAM.tokenize(query)) & set(BIGRAM.tokenize(CLAUSE)) == {
        "克什", "什米", "米尔", "寺庙", "庙踩", "踩踏", "踏事", "事故",
    }  # fmt: skip


# --------------------------------------------------------------------------- offsets


def test_offsets_english() -> None:
    text = "The runners' models were running"
    assert [(t, text[s:e]) for t, s, e in EN.tokenize_with_offsets(text)] == [
        ("runner", "runners"),
        ("model", "models"),
        ("were", "were"),
        ("run", "running"),
    ]


def test_offsets_point_into_the_original_text() -> None:
    # full-width letters, a ligature that expands (ﬁ -> fi), a circled digit,
    # decomposed accents (e + U+0301), a full-width letter with a combining accent
    text = "Ｔｈｅ ﬁrst ① cafe\u0301 Straße e\u0301te\u0301 Ａ\u0301 ＢＥＲＴ模型"
    pairs = [(t, text[s:e]) for t, s, e in Analyzer(stem=False, stopwords="none").tokenize_with_offsets(text)]
    assert pairs == [
        ("the", "Ｔｈｅ"),
        ("first", "ﬁrst"),
        ("1", "①"),
        ("café", "cafe\u0301"),
        ("straße", "Straße"),
        ("été", "e\u0301te\u0301"),
        ("á", "Ａ\u0301"),
        ("bert", "ＢＥＲＴ"),
        ("模", "模"),
        ("型", "型"),
    ]


@pytest.mark.parametrize("analyzer", [ZH, BIGRAM, SEARCH], ids=["jieba", "bigram", "jieba_search"])
def test_offsets_chinese(analyzer: Analyzer) -> None:
    text = "ＢＥＲＴ模型，北京大学的学生。"
    for term, s, e in analyzer.tokenize_with_offsets(text):
        original = text[s:e]
        assert unicodedata.normalize("NFKC", original).lower() == term or original == term


def test_offsets_of_sentence_with_jieba() -> None:
    got = [(t, s, e) for t, s, e in ZH.tokenize_with_offsets(SENTENCE)]
    assert got[:4] == [("北京大学", 0, 4), ("的", 4, 5), ("学生", 5, 7), ("使用", 7, 9)]
    assert ("bert", 9, 13) in got
    assert all(SENTENCE[s:e].lower() == t for t, s, e in got)


TRICKY = [
    "",
    "   ",
    "，。！",
    "a",
    "Ｔｈｅ ﬁrst ① cafe\u0301",
    "don't O'Neil's rock'n'roll '' 'quoted'",
    "ＢＥＲＴ模型２０２３年",
    "我在Python 3.11里用jieba分词",
    "한국어 검색 עִבְרִית हिन्दी ひらがなカタカナ漢字",
    "İstanbul ΟΔΟΣ Straße",
    CLAUSE,
    SENTENCE,
]


@pytest.mark.parametrize("analyzer", [EN, ZH, BIGRAM, SEARCH, Analyzer(stem=False, stopwords="none")])
def test_tokenize_equals_tokenize_with_offsets(analyzer: Analyzer) -> None:
    for text in TRICKY:
        assert analyzer.tokenize(text) == [t for t, _, _ in analyzer.tokenize_with_offsets(text)], text


@pytest.mark.slow
@pytest.mark.shared_data
def test_tokenize_equals_tokenize_with_offsets_on_real_text() -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    texts = []
    with open(SHARED_DATA / "agentset-dbpedia-subset" / "corpus.jsonl", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i == 1500:
                break
            record = json.loads(line)
            texts.append(record["title"] + "\n" + record["text"])
    with open(SHARED_DATA / "rgb-zh" / "zh_refine.json", encoding="utf-8") as f:
        for i, line in enumerate(f):
            if i == 8:
                break
            record = json.loads(line)
            texts.extend(record["positive"] + record["negative"])
    for analyzer in (EN, BIGRAM, ZH):
        for text in texts:
            offsets = analyzer.tokenize_with_offsets(text)
            assert analyzer.tokenize(text) == [t for t, _, _ in offsets]
            assert all(0 <= s < e <= len(text) for _, s, e in offsets)


def test_tokenize_builds_no_map_back_to_the_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexing needs the terms only: the character map of the normalisation is for highlighting."""
    import core.text

    # "…" and "①" change length under NFKC, so the text takes the cluster-by-cluster path
    text = "ＢＥＲＴ模型…第①章 cafe\u0301"
    expected = {a: a.tokenize(text) for a in (ZH, BIGRAM, SEARCH)}

    def refused(_text: str) -> None:
        raise AssertionError("tokenize built the map back to the original text")

    monkeypatch.setattr(core.text, "_normalize", refused)
    assert {a: a.tokenize(text) for a in expected} == expected
    assert expected[ZH] == ["bert", "模型", "第", "1", "章", "café"]


# --------------------------------------------------------------------------- highlighting


def test_highlight_english_uses_stems() -> None:
    text = "The quick brown foxes are running over the lazy dogs' houses"
    spans = highlight_spans("run dog", text, EN)
    assert spans == [(26, 33), (48, 52)]
    assert [text[s:e] for s, e in spans] == ["running", "dogs"]
    assert highlight_spans("the", text, EN) == []  # stopwords highlight nothing


def test_highlight_chinese() -> None:
    query = "北京大学学生"
    for analyzer in (ZH, BIGRAM):
        spans = highlight_spans(query, SENTENCE, analyzer)
        assert [SENTENCE[s:e] for s, e in spans] == ["北京大学", "学生"]
    # overlapping bigrams merge into one span; full-width source text maps back
    text = "他在北京大学读ＢＥＲＴ论文"
    assert highlight_spans("北京大学 bert", text, BIGRAM) == [(2, 6), (7, 11)]
    assert [text[s:e] for s, e in highlight_spans("北京大学 bert", text, BIGRAM)] == ["北京大学", "ＢＥＲＴ"]


def test_highlight_ignores_given_terms() -> None:
    text = "故宫是明朝开始修建的"
    assert [text[s:e] for s, e in highlight_spans("故宫是哪一年开始修建的", text, ZH)] == ["故宫是", "开始修建的"]
    spans = highlight_spans("故宫是哪一年开始修建的", text, ZH, ignore={"是", "的"})
    assert [text[s:e] for s, e in spans] == ["故宫", "开始修建"]


JIAOZI_QUERY = "除夕为什么要吃饺子"  # demo query zh-q09
JIAOZI_EVE = "春节前一天晚上，北方人家家户户包饺子吃，寓意更岁交子。"  # jieba: ... 包 / 饺子 / 吃 ...
CHUNJIE = (
    "在中国北方，除夕夜吃饺子是重要的习俗，因为饺子形似元宝，寓意招财进宝。"  # demo passage zh-chunjie-2
    "有的人家会把一枚硬币包进饺子里，吃到的人被认为来年会有好运。"
)


def test_chinese_words_segmented_differently_still_match() -> None:
    # jieba reads the query as 除夕 / 为什么 / 要 / 吃饺子: no query word is a word of either passage
    assert "饺子" not in ZH.tokenize(JIAOZI_QUERY) and "除夕" not in ZH.tokenize(CHUNJIE)
    assert common_cjk_runs(JIAOZI_QUERY, JIAOZI_EVE) == [(16, 18)]
    assert highlight_spans(JIAOZI_QUERY, JIAOZI_EVE, ZH) == [(16, 18)]
    spans = highlight_spans(JIAOZI_QUERY, CHUNJIE, ZH)
    assert spans == [(6, 8), (9, 12), (21, 23), (47, 49)]
    assert [CHUNJIE[s:e] for s, e in spans] == ["除夕", "吃饺子", "饺子", "饺子"]


def test_common_runs_trim_function_words_of_the_passage_only() -> None:
    stop = {"是", "的", "开始"}
    text = "故宫是明朝永乐年间开始修建的宫殿"
    assert [text[s:e] for s, e in common_cjk_runs("故宫是哪一年开始修建的", text)] == ["故宫是", "开始修建的"]
    spans = highlight_spans("故宫是哪一年开始修建的", text, ZH, ignore=stop)
    assert [text[s:e] for s, e in spans] == ["故宫", "修建"]
    # 除 is a function word on its own, not as the first character of 除夕夜
    assert [CHUNJIE[s:e] for s, e in highlight_spans(JIAOZI_QUERY, CHUNJIE, ZH, ignore={"除", "要", "为什么"})] == [
        "除夕",
        "吃饺子",
        "饺子",
        "饺子",
    ]


def test_common_runs_need_two_characters_within_one_query_run() -> None:
    assert common_cjk_runs("吃饭", "我吃面") == []  # one shared character means nothing
    assert common_cjk_runs("饺子，除夕", "子除") == []  # not across the query's punctuation
    assert common_cjk_runs("饺子 除夕", "饺子除夕") == [(0, 4)]  # two runs, touching: one span
    assert common_cjk_runs("饺子", "饺子", min_length=3) == []
    with pytest.raises(ValueError, match="min_length must be at least 1, got 0"):
        common_cjk_runs("饺子", "饺子", min_length=0)


def test_common_runs_map_normalised_characters_back() -> None:
    text = "真是\uf900有此理"  # U+F900, a compatibility ideograph: NFKC gives 豈 (U+8C48)
    assert common_cjk_runs("豈有此理", text) == [(2, 6)]


def test_english_highlighting_is_unchanged_by_cjk_runs() -> None:
    text = "The quick brown foxes are running over the lazy dogs' houses"
    assert common_cjk_runs("run dog", text) == []
    assert highlight_spans("the quick", "the quick", EN) == [(4, 9)]
    mixed = "BERT在北京大学"
    assert [mixed[s:e] for s, e in highlight_spans("bert 大学生", mixed, ZH)] == ["BERT", "大学"]


def test_merge_spans() -> None:
    assert merge_spans([(5, 7), (0, 2), (1, 3), (3, 4), (9, 10)]) == [(0, 4), (5, 7), (9, 10)]
    assert merge_spans([]) == []


# --------------------------------------------------------------------------- analyzers


def test_analyzer_for() -> None:
    assert EN == Analyzer(cjk="unigram") and EN.language == "en"
    assert ZH == Analyzer(cjk="jieba") and ZH.language == "zh"
    assert BIGRAM == Analyzer(cjk="bigram")
    assert analyzer_for("en", stem=False) == Analyzer(stem=False)
    with pytest.raises(ValueError, match="language"):
        analyzer_for("fr")
    with pytest.raises(ValueError, match="chinese"):
        analyzer_for("zh", chinese="whitespace")
    with pytest.raises(ValueError, match="cjk"):
        Analyzer(cjk="words")
    with pytest.raises(ValueError, match="stopwords"):
        Analyzer(stopwords="french")
    with pytest.raises(TypeError):
        EN.tokenize(None)  # type: ignore[arg-type]


def test_params_identify_the_analysis() -> None:
    params = [a.params for a in (EN, ZH, BIGRAM, SEARCH, Analyzer(stem=False), Analyzer(stopwords="none"))]
    assert len({json.dumps(p, sort_keys=True) for p in params}) == len(params)
    assert ZH.params["cjk"] == "jieba" and "jieba" in ZH.params and "jieba" not in EN.params
    for analyzer in (EN, ZH, BIGRAM, SEARCH, Analyzer(stem=False, hmm=False, cjk="jieba")):
        assert Analyzer.from_params(json.loads(json.dumps(analyzer.params))) == analyzer
    assert hash(EN) == hash(Analyzer())  # frozen: usable as a cache key


@pytest.mark.slow
def test_jieba_is_quiet_and_initialised_once() -> None:
    code = (
        "from core.text import analyzer_for, _jieba\n"
        "a = analyzer_for('zh')\n"
        "assert a.tokenize('北京大学的学生') == ['北京大学', '的', '学生']\n"
        "assert _jieba() is _jieba()\n"
        "print('ok')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert done.stderr == ""  # jieba's "Building prefix dict ..." / "Loading model ..." silenced


def test_cjk_runs_use_core_lang_ranges() -> None:
    # one definition of the ideograph blocks (core.lang.CJK_RANGES): every block, Extension A
    # included, is a CJK run for the analyzers
    from core.lang import CJK_RANGES

    for low, high in CJK_RANGES:
        for code in (low, high):
            char = unicodedata.normalize("NFKC", chr(code))  # compatibility ideographs fold to unified ones
            assert BIGRAM.tokenize(chr(code) * 2 + "x") == [char * 2, "x"]
    assert BIGRAM.tokenize("刘䶮㐀") == ["刘䶮", "䶮㐀"]


def test_a_repeated_chinese_run_is_segmented_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import core.text

    jieba = core.text._jieba()
    calls: list[str] = []

    class Counting:
        def cut(self, run: str, HMM: bool = True) -> object:  # noqa: N803 (jieba's keyword)
            calls.append(run)
            return jieba.cut(run, HMM=HMM)

    monkeypatch.setattr(core.text, "_jieba", Counting)
    run = "量子纠缠隐形传态实验室"
    assert ZH.tokenize(f"{run}。{run}！{run}") == ZH.tokenize(run) * 3 == ["量子", "纠缠", "隐形", "传态", "实验室"] * 3
    assert calls == [run]
