"""Error-category detectors (core.detectors).

Positive cases are DuReader-retrieval's published examples (Qiu et al., EMNLP
2022, Table 10) and English document-context cases in the spirit of DAPR's
NQ-hard analysis (Wang et al., 2024); every detector also gets a clean pair on
which it must stay silent.
"""

from __future__ import annotations

import pytest

from core.detectors import (
    TAXONOMY,
    Category,
    FalseNegativeCandidate,
    Suggestion,
    category_ids,
    detect_acronym,
    detect_coreference,
    detect_entity_mismatch,
    detect_false_negative,
    detect_main_topic,
    detect_numeral_mismatch,
    detect_syntactic_mismatch,
    detect_term_overlap,
    detect_typos,
    false_negative_candidates,
    levenshtein,
    merge_categories,
    suggest,
)

SONGS_2017 = "2017年最好听的歌曲排行榜：第1名是《演员》，第2名是《告白气球》。"
ALIPAY = "支付宝实名认证怎么修改？登录支付宝，进入账户设置，点击实名认证即可修改。"
RUIFANG = "从瑞芳回台北可以坐火车，大约一小时就到。"
WOW_LOGIN = "WOW登录不了怎么办？先检查账号密码是否正确，再检查网络。"
IPHONE = "iPhone截图方法：同时按下电源键和音量键即可截图。"
TF = {"iphone": 50, "截图": 20, "方法": 30, "phone": 3}

EIFFEL_TITLE = "Eiffel Tower"
EIFFEL_Q = "when was the eiffel tower completed"
EIFFEL_P = "It was completed in 1889 as the entrance arch to the 1889 World's Fair."
EIFFEL_CHUNKS = ["The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris."]
EIFFEL_CLEAN = "The Eiffel Tower was completed in 1889."

ISS_Q = "when was the ISS launched"
ISS_CHUNKS = ["The International Space Station (ISS) is a large space station in low Earth orbit."]
ISS_P = "The ISS was launched in 1998 and has been continuously occupied since 2000."


# --------------------------------------------------------------------------- taxonomy


def test_taxonomy_has_both_sources() -> None:
    ids = category_ids()
    for cid in (
        "entity_mismatch",
        "numeral_mismatch",
        "modifier_mismatch",
        "syntactic_mismatch",
        "term_overlap",
        "typo",
        "false_negative",
        "other",
        "self_contained",
        "coreference",
        "main_topic",
        "multi_hop",
        "acronym",
    ):
        assert cid in ids
    assert len(ids) == len(set(ids)) == 13
    groups = {c.id: c.group for c in TAXONOMY}
    assert groups["numeral_mismatch"] == "dureader_retrieval" and groups["acronym"] == "dapr"
    assert {c.id for c in TAXONOMY if c.parent == "salient_phrase_mismatch"} == {
        "entity_mismatch",
        "numeral_mismatch",
        "modifier_mismatch",
    }


def test_merge_categories() -> None:
    merged = merge_categories([{"id": "unit_mismatch", "name": "Unit mismatch"}, Category("x", "X", "lab")])
    assert category_ids(merged)[-2:] == ["unit_mismatch", "x"]
    assert merged[-2].group == "user"
    assert len(merged) == len(TAXONOMY) + 2
    with pytest.raises(ValueError, match="already"):
        merge_categories([{"id": "typo"}])
    replaced = merge_categories([{"id": "typo", "name": "Spelling"}], replace=True)
    assert [c.name for c in replaced if c.id == "typo"] == ["Spelling"]
    assert category_ids(replaced) == category_ids()
    with pytest.raises(ValueError, match="duplicate"):
        merge_categories([{"id": "a"}, {"id": "a"}])
    with pytest.raises(ValueError, match="unknown"):
        merge_categories([{"id": "a", "colour": "red"}])
    with pytest.raises(TypeError):
        merge_categories(["a"])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        Category("", "n", "g")


# --------------------------------------------------------------------------- numerals


def test_numeral_mismatch_dureader_case() -> None:
    [s] = detect_numeral_mismatch("最近有什么好听的歌2016", SONGS_2017)
    assert s.category == "numeral_mismatch"
    assert s.evidence == {"query": ["2016"], "passage": ["2017"]}
    assert s.spans == [(0, 4)]
    assert SONGS_2017[0:4] == "2017"


def test_numeral_forms() -> None:
    # Chinese year numerals and full-width digits are the same numbers.
    assert detect_numeral_mismatch("二〇一六年的歌", "２０１６年最好听的歌") == []
    [s] = detect_numeral_mismatch("二〇一六年的歌", "２０１７年最好听的歌")
    assert s.evidence == {"query": ["2016"], "passage": ["2017"]}
    assert s.spans == [(0, 4)]
    [s] = detect_numeral_mismatch("iphone 7 price", "The iPhone 8 costs 1,000 dollars")
    # 7 is iPhone's number: compared with iPhone 8 only, not with the price (issue 22, name numbers)
    assert s.evidence == {"query": ["7"], "passage": ["8"]}
    # a year is not compared with a count
    assert detect_numeral_mismatch("best songs of 2016", "the 10 best songs") == []
    [s] = detect_numeral_mismatch("二十三岁", "他今年二十五岁")
    # 岁 is a measure word: the evidence keeps the numbers as written too
    assert s.evidence == {"query": ["23"], "passage": ["25"], "query_text": ["二十三岁"], "passage_text": ["二十五岁"]}


def test_numeral_silent_on_clean_pair() -> None:
    assert detect_numeral_mismatch("最近有什么好听的歌2017", SONGS_2017) == []
    assert detect_numeral_mismatch("好听的歌", SONGS_2017) == []


# --------------------------------------------------------------------------- entities


def test_entity_mismatch_dureader_case() -> None:
    [s] = detect_entity_mismatch("淘宝修改实名认证", ALIPAY)
    assert s.evidence["query"] == ["淘宝"]
    assert s.evidence["passage"] == ["支付宝"]
    # both are on the packaged name list (core.detectors.names), as apps: the kinded rule fires first
    assert (s.evidence["method"], s.evidence["kind"]) == ("name_list", "app")
    assert all(ALIPAY[a:b] == "支付宝" for a, b in s.spans) and len(s.spans) == 2


def test_entity_mismatch_english() -> None:
    [s] = detect_entity_mismatch("who founded Microsoft", "Steve Jobs founded Apple in a garage.")
    assert s.evidence["query"] == ["Microsoft"]
    assert s.evidence["passage"] == ["Steve Jobs", "Apple"]


def test_entity_silent_on_clean_pair() -> None:
    assert detect_entity_mismatch("支付宝修改实名认证", ALIPAY) == []
    assert detect_entity_mismatch("who founded Apple", "Steve Jobs founded Apple in a garage.") == []
    assert detect_entity_mismatch(EIFFEL_Q, EIFFEL_P) == []  # lower-case query: nothing to miss


# --------------------------------------------------------------------------- syntactic


def test_syntactic_mismatch_dureader_case() -> None:
    [s] = detect_syntactic_mismatch("台北怎么去瑞芳", RUIFANG)
    assert s.evidence == {"query": ["台北", "瑞芳"], "passage": ["瑞芳", "台北"], "relation": "from-to"}
    assert [RUIFANG[a:b] for a, b in s.spans] == ["瑞芳", "台北"]


def test_syntactic_mismatch_english() -> None:
    p = "Cheap flights from London to Paris on Friday."
    [s] = detect_syntactic_mismatch("flights from Paris to London", p)
    assert s.evidence["query"] == ["Paris", "London"]
    assert [p[a:b] for a, b in s.spans] == ["London", "Paris"]


def test_syntactic_silent_on_clean_pair() -> None:
    assert detect_syntactic_mismatch("台北怎么去瑞芳", "从台北去瑞芳可以坐火车，大约一小时。") == []
    assert detect_syntactic_mismatch("flights from Paris to London", "Flights from Paris to London, daily.") == []
    # both directions stated: not a mismatch
    both = "Flights from Paris to London and from London to Paris."
    assert detect_syntactic_mismatch("flights from Paris to London", both) == []


# --------------------------------------------------------------------------- term overlap


def test_term_overlap_dureader_case() -> None:
    [s] = detect_term_overlap("wow邮件发错了怎么办", WOW_LOGIN, label=0)
    assert s.evidence["shared"] == ["wow", "怎么办"]
    assert s.evidence["overlap"] == 0.5
    assert s.evidence["label"] == 0
    assert [WOW_LOGIN[a:b] for a, b in s.spans] == ["WOW", "怎么办"]


def test_term_overlap_silent() -> None:
    assert detect_term_overlap("wow邮件发错了怎么办", WOW_LOGIN, label=3) == []  # relevant: fine
    assert detect_term_overlap("wow邮件发错了怎么办", WOW_LOGIN, label=None) == []
    assert detect_term_overlap("wow邮件发错了怎么办", WOW_LOGIN, label=0, threshold=0.75) == []
    assert detect_term_overlap("台北天气", WOW_LOGIN, label=0) == []  # no overlap
    with pytest.raises(ValueError):
        detect_term_overlap("a", "b", label=0, threshold=0)


# --------------------------------------------------------------------------- typos


def test_levenshtein() -> None:
    assert levenshtein("ipone", "iphone") == 1
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("abc", "abc") == 0
    assert levenshtein("abcdef", "a", max_distance=1) == 2


def test_typo_dureader_case() -> None:
    [s] = detect_typos("iponeiPhone怎么截图", IPHONE, TF)
    assert s.evidence == {
        "query_term": "ipone",
        "correction": "iphone",
        "distance": 1,
        "frequency": 50,
        "word": "iponeiPhone",
    }
    assert [IPHONE[a:b] for a, b in s.spans] == ["iPhone"]
    [s] = detect_typos("ipone截图", IPHONE, TF)
    assert s.evidence["query_term"] == "ipone"


def test_typo_silent_on_clean_pair() -> None:
    assert detect_typos("iphone怎么截图", IPHONE, TF) == []
    # a correction must be frequent
    assert detect_typos("ipone截图", IPHONE, {"iphone": 2}) == []
    # two frequent spellings are both words
    assert detect_typos("ipone截图", IPHONE, {"iphone": 50, "ipone": 40}) == []


class _KeepWords:
    """A segmenter that keeps each whitespace-separated word whole (jieba itself splits off
    characters outside its own U+4E00-U+9FD5 class, so it cannot show which words count as CJK)."""

    def cut(self, text: str) -> list[str]:
        return text.split()


def test_typo_cjk_word_with_extension_a(monkeypatch: pytest.MonkeyPatch) -> None:
    # 䶮 (U+4DAE) and 㐀 (U+3400) are CJK Extension A: a word made of them is a CJK word like
    # 皇帝, by the one definition in core.lang (the detectors once checked only U+4E00-U+9FFF)
    monkeypatch.setattr("core.detectors.typos.jieba_tokenizer", lambda: _KeepWords())
    [s] = detect_typos("刘䶮皇帝", "南汉刘䶮皇后", {"刘䶮皇后": 50})
    assert s.evidence == {
        "query_term": "刘䶮皇帝",
        "correction": "刘䶮皇后",
        "distance": 1,
        "frequency": 50,
        "word": "刘䶮皇帝",
    }
    assert s.spans == [(2, 6)]
    # a query of Extension A characters only is Chinese too
    [s] = detect_typos("㐀㐁㐂㐃", "㐀㐁㐂㐄", {"㐀㐁㐂㐄": 50})
    assert (s.evidence["query_term"], s.evidence["correction"]) == ("㐀㐁㐂㐃", "㐀㐁㐂㐄")


# --------------------------------------------------------------------------- false negatives


def test_false_negative_candidates() -> None:
    run = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 2.0, "d4": 1.0}, "q2": {"x": 1.0}}
    qrels = {"q1": {"d1": 2, "d2": 0, "d4": 0}}
    got = false_negative_candidates(run, qrels, depth=3)
    # ties by doc id descending: d3 (rank 2) before d2 (rank 3); d4 is below depth
    assert got == [
        FalseNegativeCandidate("q1", "d3", 2, 2.0, None),
        FalseNegativeCandidate("q1", "d2", 3, 2.0, 0),
        FalseNegativeCandidate("q2", "x", 1, 1.0, None),
    ]
    with pytest.raises(ValueError):
        false_negative_candidates(run, qrels, depth=0)


def test_false_negative_needs_an_answer_when_the_query_has_answers() -> None:
    passage = "上海人口约2487万，简称ＳＨ。"
    [s] = detect_false_negative(label=None, rank=2, score=3.0, answers=[["24870895", "2487万"], "沪"], passage=passage)
    assert s.evidence == {"rank": 2, "score": 3.0, "label": None, "answer": "2487万"}
    assert [passage[a:b] for a, b in s.spans] == ["2487万"]
    # full-width text and case: NFKC and casefolding on both sides, spans on the original text
    [s] = detect_false_negative(label=0, rank=1, answers="sh", passage=passage)
    assert [passage[a:b] for a, b in s.spans] == ["ＳＨ"]
    # answers known but none in the passage: not a candidate; no answers: any unjudged top passage is
    assert detect_false_negative(label=None, rank=1, answers=["北京"], passage=passage) == []
    assert detect_false_negative(label=None, rank=1, answers=[], passage=passage)[0].spans == []
    assert "false_negative" not in [x.category for x in suggest("上海有多少人口", passage, rank=1, answers=["北京"])]
    assert "false_negative" in [x.category for x in suggest("上海有多少人口", passage, rank=1, answers=["2487万"])]


def test_false_negative_pair() -> None:
    [s] = detect_false_negative(label=0, rank=1, score=9.5)
    assert s.evidence == {"rank": 1, "score": 9.5, "label": 0}
    assert detect_false_negative(label=2, rank=1) == []
    assert detect_false_negative(label=0, rank=11) == []
    assert detect_false_negative(label=None, rank=None) == []


# --------------------------------------------------------------------------- document context


def test_main_topic() -> None:
    [s] = detect_main_topic(EIFFEL_Q, EIFFEL_P, EIFFEL_TITLE)
    assert s.evidence == {"title": "Eiffel Tower", "terms": ["eiffel", "tower"]}
    assert detect_main_topic(EIFFEL_Q, EIFFEL_CLEAN, EIFFEL_TITLE) == []
    assert detect_main_topic(EIFFEL_Q, EIFFEL_P, "") == []


def test_coreference() -> None:
    [s] = detect_coreference(
        EIFFEL_Q, EIFFEL_P, title=EIFFEL_TITLE, earlier_chunks=["Unrelated intro.", *EIFFEL_CHUNKS]
    )
    assert s.evidence["reference"] == "It"
    assert s.evidence["antecedent_chunk"] == 1
    assert s.evidence["antecedent"] == EIFFEL_CHUNKS[0]
    assert "Eiffel Tower" in s.evidence["matched"]
    assert s.spans == [(0, 2)]
    # without earlier chunks the title is the antecedent
    [s] = detect_coreference(EIFFEL_Q, EIFFEL_P, title=EIFFEL_TITLE)
    assert s.evidence["antecedent_chunk"] is None and s.evidence["antecedent"] == EIFFEL_TITLE
    # definite description and Chinese pronoun
    [s] = detect_coreference("apple founded", "The company was founded in 1976.", earlier_chunks=["Apple Inc. is big."])
    assert s.evidence["reference"] == "The company"
    [s] = detect_coreference("周杰伦 出生", "他出生于台湾新北市。", earlier_chunks=["周杰伦是华语流行歌手。"])
    assert s.evidence["reference"] == "他" and s.evidence["antecedent_chunk"] == 0


def test_coreference_silent() -> None:
    assert detect_coreference(EIFFEL_Q, EIFFEL_CLEAN, title=EIFFEL_TITLE, earlier_chunks=EIFFEL_CHUNKS) == []
    assert detect_coreference("其他问题", "其他问题请联系客服。", earlier_chunks=["其他问题"]) == []
    # a pronoun with no antecedent anywhere
    assert detect_coreference(EIFFEL_Q, EIFFEL_P, title="Paris", earlier_chunks=["Nothing here."]) == []


def test_acronym() -> None:
    [s] = detect_acronym(ISS_Q, ISS_P, title="Space station", earlier_chunks=ISS_CHUNKS)
    assert s.evidence == {
        "acronym": "ISS",
        "expansion": "International Space Station",
        "defined_in": "earlier_chunk",
        "chunk_index": 0,
        "in_query": True,
        "in_passage": True,
    }
    assert [ISS_P[a:b] for a, b in s.spans] == ["ISS"]
    # a lower-case query acronym, the passage using the expansion
    p = "The International Space Station was launched in 1998."
    [s] = detect_acronym("when was the iss launched", p, earlier_chunks=ISS_CHUNKS)
    assert s.evidence["in_query"] and not s.evidence["in_passage"]
    assert [p[a:b] for a, b in s.spans] == ["International Space Station"]
    # reversed definition form
    [s] = detect_acronym(ISS_Q, ISS_P, earlier_chunks=["ISS (International Space Station) facts."])
    assert s.evidence["expansion"] == "International Space Station"


def test_acronym_silent() -> None:
    defined_here = "The International Space Station (ISS) was launched in 1998."
    assert detect_acronym(ISS_Q, defined_here, earlier_chunks=ISS_CHUNKS) == []
    assert detect_acronym(ISS_Q, ISS_P) == []  # never expanded
    assert detect_acronym("when was it launched", "It was launched in 1998.", earlier_chunks=ISS_CHUNKS) == []


# --------------------------------------------------------------------------- suggest


def test_suggest_document_context() -> None:
    got = suggest(EIFFEL_Q, EIFFEL_P, title=EIFFEL_TITLE, earlier_chunks=EIFFEL_CHUNKS)
    assert [s.category for s in got] == ["coreference", "main_topic"]
    got = suggest(ISS_Q, ISS_P, title="Space station", earlier_chunks=ISS_CHUNKS)
    assert [s.category for s in got] == ["acronym"]


def test_suggest_dureader_pairs_sorted() -> None:
    got = suggest("最近有什么好听的歌2016", SONGS_2017, label=0, rank=1, score=12.0)
    cats = [s.category for s in got]
    assert cats == sorted(cats)
    assert "numeral_mismatch" in cats and "false_negative" in cats
    assert [s.category for s in suggest("淘宝修改实名认证", ALIPAY)] == ["entity_mismatch"]
    assert [s.category for s in suggest("台北怎么去瑞芳", RUIFANG)] == ["syntactic_mismatch"]
    assert "term_overlap" in [s.category for s in suggest("wow邮件发错了怎么办", WOW_LOGIN, label=0)]
    assert [s.category for s in suggest("iponeiPhone怎么截图", IPHONE, term_frequencies=TF)] == ["typo"]


def test_suggest_clean_pairs_silent() -> None:
    assert suggest("支付宝修改实名认证", ALIPAY, label=3, rank=1, term_frequencies=TF) == []
    assert suggest(EIFFEL_Q, EIFFEL_CLEAN, label=3, title=EIFFEL_TITLE, earlier_chunks=EIFFEL_CHUNKS) == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "\x00\x01",
        "😀🎉",
        "()",
        "(A)",
        "ＡＢＣ（ＤＥ）",
        "ﬁ" * 50,
        "从从从到到到",
        "from to from to",
        "十万万",
        "零零",
        "1." * 200,
        "é\u0301\u0301",
    ],
)
def test_odd_text_never_raises(text: str) -> None:
    for q, p in ((text, text), (text, "正常的文本 normal text"), ("normal query 2016", text)):
        got = suggest(q, p, label=0, rank=1, title=text, earlier_chunks=[text], term_frequencies=TF)
        assert all(isinstance(s, Suggestion) for s in got)
        for s in got:
            assert all(0 <= a <= b <= len(p) for a, b in s.spans)


def test_type_errors() -> None:
    with pytest.raises(TypeError):
        suggest(None, "p")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        detect_coreference("q", "It", earlier_chunks="a chunk")
    with pytest.raises(ValueError):
        suggest("q", "p", language="fr")
    with pytest.raises(TypeError):
        detect_typos("q", "p", ["iphone"])  # type: ignore[arg-type]


# --------------------------------------------------------------------------- typed evidence and the registry


def test_evidence_is_typed_and_reads_as_the_stored_dict() -> None:
    from core.detectors import FalseNegativeEvidence, NumeralEvidence, TypoEvidence, read_evidence

    [s] = detect_numeral_mismatch("最近有什么好听的歌2016", SONGS_2017)
    assert isinstance(s.evidence, NumeralEvidence) and s.evidence.query == ("2016",)
    assert s.evidence.as_dict() == {"query": ["2016"], "passage": ["2017"]} == s.to_dict()["evidence"]
    assert dict(s.evidence) == s.evidence.as_dict() and len(s.evidence) == 2
    assert s.evidence.summary() == "query has 2016; passage has 2017"
    # stored evidence (a dict from the db) reads back as the same typed evidence
    assert NumeralEvidence.from_dict(s.to_dict()["evidence"]) == s.evidence
    assert read_evidence("numeral_mismatch", {"query": ["2016"], "passage": ["2017"]}).passage == ("2017",)
    # the optional answer is left out when absent, as in the old dicts; unknown keys are ignored
    assert FalseNegativeEvidence(1, 2.0, None).as_dict() == {"rank": 1, "score": 2.0, "label": None}
    old = {"query_term": "ipone", "correction": "iphone", "distance": 1, "frequency": 50, "word": "ipone", "extra": 1}
    assert TypoEvidence.from_dict(old) == TypoEvidence("ipone", "iphone", 1, 50, "ipone")
    # an analyst's note or a user category has no detector: its dict comes back as it is
    assert read_evidence("mine", {"note": "x"}) == {"note": "x"}


def test_registry_lists_every_detector_once() -> None:
    from core.detectors import DETECTORS

    assert [(d.name, d.category) for d in DETECTORS] == [
        ("numerals", "numeral_mismatch"),
        ("entities", "entity_mismatch"),
        ("syntax", "syntactic_mismatch"),
        ("terms", "term_overlap"),
        ("typos", "typo"),
        ("false_negatives", "false_negative"),
        ("main_topic", "main_topic"),
        ("coreference", "coreference"),
        ("acronyms", "acronym"),
        ("alignment", "entity_mismatch"),  # the fallback: entity or numeral mismatch, with an encoder
    ]
    assert [d.name for d in DETECTORS if d.fallback] == ["alignment"]
    assert {d.name: d.requires for d in DETECTORS if d.requires} == {
        "terms": ("label",),
        "typos": ("term_frequencies",),
        "false_negatives": ("rank",),
        "main_topic": ("title",),
        "alignment": ("encoder",),
    }
    assert all(set(d.requires) <= set(d.inputs) for d in DETECTORS)
    assert set(category_ids()) >= {d.category for d in DETECTORS}


def test_typo_term_frequencies_counts_what_detect_typos_reads() -> None:
    from core.detectors import typo_term_frequencies, typo_words

    assert typo_words("iPhone 15 won't boot, 苹果") == ["iphone", "won't", "boot"]
    counts = typo_term_frequencies(iter(["iPhone screenshot", "iphone", "IPHONE ipone 截图"] + ["iphone"] * 12))
    assert counts == {"iphone": 15, "screenshot": 1, "ipone": 1}
    [s] = detect_typos("ipone", "", counts)
    assert (s.evidence["query_term"], s.evidence["correction"], s.evidence["frequency"]) == ("ipone", "iphone", 15)
