"""Tests for core.prelabel: span-level F1 distant supervision (DuReader-retrieval, Algorithm 1)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from core.prelabel import PreLabel, answer_strings, max_span_f1, prelabel, units
from core.types import Passage


def brute_force(passage: list[str], answer: list[str]) -> float:
    """Every contiguous span, plain multiset F1: the O(n^2) definition."""
    best = 0.0
    need = Counter(answer)
    for i in range(len(passage)):
        for j in range(i + 1, len(passage) + 1):
            overlap = sum((Counter(passage[i:j]) & need).values())
            best = max(best, 2 * overlap / (j - i + len(answer)))
    return best


def spans_reaching(passage: list[str], answer: list[str], level: float) -> list[tuple[int, int]]:
    need = Counter(answer)
    found = []
    for i in range(len(passage)):
        for j in range(i + 1, len(passage) + 1):
            overlap = sum((Counter(passage[i:j]) & need).values())
            if 2 * overlap / (j - i + len(answer)) >= level:
                found.append((i, j))
    return found


def test_units() -> None:
    assert units("北京， 2023年 A!", "char") == ["北", "京", "2", "0", "2", "3", "年", "a"]
    assert units("The EIFFEL-tower, in_Paris.", "token") == ["the", "eiffel", "tower", "in", "paris"]
    with pytest.raises(ValueError, match="level must be"):
        units("x", "word")  # type: ignore[arg-type]


def test_chinese_char_level() -> None:
    assert max_span_f1("据报道，事故造成12人死亡。", "12人") == 1.0
    # "北京市" (3 chars) against "我在北方": only 北 overlaps, span "北": 2*1 / (1 + 3) = 0.5
    assert max_span_f1("我在北方", "北京市") == 0.5
    # span "北京": 2*2 / (2 + 3) = 0.8
    assert max_span_f1("我在北京", "北京市") == pytest.approx(0.8)
    assert max_span_f1("完全无关", "北京市") == 0.0


def test_english_token_level() -> None:
    assert max_span_f1("the EIFFEL-tower, in Paris", "Eiffel Tower", level="token") == 1.0
    # answer "the eiffel tower": span "tower": 2*1 / (1 + 3) = 0.5
    assert max_span_f1("Tower Bridge is in London", "the Eiffel Tower", level="token") == 0.5
    # tokens are whole words: "ab" does not match inside "abc" (but characters do)
    assert max_span_f1("abc", "ab", level="token") == 0.0
    assert max_span_f1("abc", "ab", level="char") == 1.0  # span "ab"


def test_exactly_half_is_a_candidate_just_below_is_not() -> None:
    # answer 中国科学院 (5 chars) spread over exactly 3 * 5 = 15 chars, gaps 2, 3, 3, 2:
    # the full span has F1 2*5 / (15 + 5) = 0.5 and it is the *only* span reaching 0.5
    # (e.g. 中..学: 2*4 / (12 + 5) = 0.47), so a bound that dropped length 3|A| would miss it.
    exact = "中甲乙国丙丁戊科己庚辛学壬癸院"
    assert len(exact) == 15
    assert max_span_f1(exact, "中国科学院") == 0.5
    assert brute_force(list(exact), list("中国科学院")) == 0.5
    assert spans_reaching(list(exact), list("中国科学院"), 0.5) == [(0, 15)]
    # one more filler: the full span gives 10 / 21 = 0.476 and nothing reaches 0.5
    below = "中甲乙国丙丁戊科己庚辛子学壬癸院"
    assert max_span_f1(below, "中国科学院") == pytest.approx(10 / 21)
    assert prelabel(["中国科学院"], {"exact": exact, "below": below}) == [PreLabel("exact", 0.5, "中国科学院")]
    # 北京市 (3 chars) against a passage holding only 北: 2*1 / (1 + 3) = 0.5
    assert prelabel("北京市", {"n": "我在北方", "none": "我在南方"}) == [PreLabel("n", 0.5, "北京市")]
    # English: "tower" against a 3-word answer is exactly 0.5, against 4 words 0.4
    passages = {"p1": "Tower Bridge is in London", "p2": "a new building"}
    assert prelabel("the Eiffel Tower", passages) == [PreLabel("p1", 0.5, "the Eiffel Tower")]
    assert prelabel("new york city hall", passages) == []
    # a threshold just above 0.5 drops the boundary cases
    assert prelabel(["中国科学院"], {"exact": exact}, threshold=0.51) == []


def test_length_bound_three_times_the_answer() -> None:
    # Answer of 10 distinct chars, spread 4 fillers apart: a span holding k of them
    # has length 5k - 4 and F1 2k / (5k + 6), best at k = 10: 20 / 56, length 46 > 3 * 10.
    answer = "abcdefghij"
    passage = "a" + "".join("xxxx" + c for c in answer[1:])
    assert len(passage) == 46
    assert max_span_f1(passage, answer) == pytest.approx(20 / 56)  # exact by default
    assert brute_force(list(passage), list(answer)) == pytest.approx(20 / 56)
    # With min_f1 = 0.5 only spans of length <= 3 * 10 = 30 are tried (longer ones cannot
    # reach 0.5: F1 <= 2|A| / (L + |A|)); the best of those is k = 6, length 26: 12 / 36.
    # Still below 0.5, so the threshold decision is unchanged.
    assert max_span_f1(passage, answer, min_f1=0.5) == pytest.approx(1 / 3)
    # min_f1 never changes a value that reaches it
    assert max_span_f1("中甲乙国丙丁戊科己庚辛学壬癸院", "中国科学院", min_f1=0.5) == 0.5


def test_matches_brute_force_on_random_strings() -> None:
    rng = random.Random(20240611)
    for _ in range(400):
        passage = [rng.choice("abcxy") for _ in range(rng.randint(0, 25))]
        answer = [rng.choice("abcz") for _ in range(rng.randint(1, 6))]
        expected = brute_force(passage, answer)
        text, ans = "".join(passage), "".join(answer)
        assert max_span_f1(text, ans) == pytest.approx(expected, abs=1e-12), (text, ans)
        bounded = max_span_f1(text, ans, min_f1=0.5)
        assert (bounded >= 0.5) == (expected >= 0.5), (text, ans)
        if expected >= 0.5:
            assert bounded == pytest.approx(expected, abs=1e-12)


def test_alternative_answers_as_in_rgb() -> None:
    answers = [["1313851", "131万"], "上海"]
    assert answer_strings(answers) == ["1313851", "131万", "上海"]
    passages = {"a": "总人口约131万。", "b": "上海市政府发布", "c": "无关的文字内容"}
    # a: "131万" matches exactly (1.0) and beats "1313851" (span 131: 2*3 / (3 + 7) = 0.6)
    assert max_span_f1(passages["a"], "1313851") == pytest.approx(0.6)
    assert prelabel(answers, passages) == [PreLabel("b", 1.0, "上海"), PreLabel("a", 1.0, "131万")]


def test_passage_forms_and_order() -> None:
    pairs = [("p1", "他在北京工作"), ("p2", "北京")]
    assert prelabel(["北京市"], pairs) == [
        PreLabel("p2", pytest.approx(0.8), "北京市"),
        PreLabel("p1", pytest.approx(0.8), "北京市"),
    ]
    objects = [Passage(id="x", text="12人死亡"), Passage(id="y", text="12 people")]
    # x is Chinese (char level): 1.0; y is English (token level): "12" vs ["12人"] -> 0
    assert prelabel("12人", objects) == [PreLabel("x", 1.0, "12人")]
    # forcing char level on y: 1, 2 overlap -> 2*2 / (2 + 3) = 0.8
    assert prelabel("12人", objects, level="char") == [
        PreLabel("x", 1.0, "12人"),
        PreLabel("y", pytest.approx(0.8), "12人"),
    ]


@pytest.mark.parametrize("answers", [None, [], "", [""], ["   "], [[]], [["", " "]]])
def test_empty_answers_give_nothing(answers: object) -> None:
    assert prelabel(answers, {"p": "任何文字 any text"}) == []


def test_empty_passage_and_bad_input() -> None:
    assert max_span_f1("", "北京") == 0.0
    assert max_span_f1("北京", "。，") == 0.0  # answer with no units
    assert prelabel("北京", {"empty": "", "punct": "。。。"}) == []
    with pytest.raises(TypeError, match="answer must be a string or a list"):
        prelabel([1, 2], {"p": "x"})
    with pytest.raises(ValueError, match="threshold"):
        prelabel("x", {"p": "x"}, threshold=0)
    with pytest.raises(ValueError, match="min_f1"):
        max_span_f1("x", "x", min_f1=2)


@pytest.mark.shared_data
def test_rgb_zh_positives_get_prelabels(shared_data) -> None:  # noqa: ANN001
    """On real RGB data most positive passages contain an answer; few negatives do."""
    import json

    path = shared_data / "rgb-zh" / "zh_refine.json"
    pos_hit = pos_total = neg_hit = neg_total = 0
    with path.open(encoding="utf-8") as fh:
        for line in list(fh)[:60]:
            rec = json.loads(line)
            positives = {f"p{i}": t for i, t in enumerate(rec["positive"])}
            negatives = {f"n{i}": t for i, t in enumerate(rec["negative"])}
            found = {p.doc_id for p in prelabel(rec["answer"], {**positives, **negatives})}
            pos_hit += len(found & positives.keys())
            neg_hit += len(found & negatives.keys())
            pos_total += len(positives)
            neg_total += len(negatives)
    assert pos_hit / pos_total > 0.9
    assert pos_hit / pos_total > neg_hit / neg_total
