"""Chinese names jieba misses (issue 22): a curated name list with kinds, and a per-collection lexicon."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.detectors import detect_entity_mismatch, suggest
from core.detectors.names import load_lexicon, name_kinds

DIFFERENT = [
    ("茅台酒多少钱一瓶", "五粮液52度500ml的价格是1099元一瓶。", "茅台", "五粮液", "liquor"),
    ("小米手机怎么截图", "华为手机截图方法：同时按住电源键和音量下键。", "小米", "华为", "phone"),
    ("三星堆遗址在哪里", "殷墟遗址位于河南省安阳市。", "三星堆", "殷墟", "site"),
    ("泸州老窖是什么香型", "剑南春属于浓香型白酒。", "泸州老窖", "剑南春", "liquor"),
    ("vivo手机怎么样", "OPPO手机的拍照效果很好。", "vivo", "OPPO", "phone"),
]


@pytest.mark.parametrize("query, passage, q_name, p_name, kind", DIFFERENT)
def test_names_of_the_same_kind_that_differ(query, passage, q_name, p_name, kind) -> None:
    [s] = detect_entity_mismatch(query, passage)
    assert s.evidence["query"] == [q_name] and s.evidence["passage"] == [p_name]
    assert s.evidence["method"] == "name_list" and s.evidence["kind"] == kind
    assert [passage[a:b] for a, b in s.spans] == [p_name]
    assert [x.category for x in suggest(query, passage)].count("entity_mismatch") == 1


@pytest.mark.parametrize(
    "query, passage",
    [
        ("茅台酒多少钱一瓶", "飞天茅台53度500ml的价格是2969元一瓶。"),  # the same name
        ("小米手机怎么截图", "小米手机截图方法：同时按住电源键和音量下键。"),
        ("三星堆遗址在哪里", "三星堆遗址位于四川省广汉市。"),
        ("茅台酒多少钱一瓶", "华为手机的价格是5999元。"),  # another kind: not the same slot
        ("小米粥怎么煮", "大米粥的做法"),  # neither is a listed name of the same kind
    ],
)
def test_same_names_and_other_kinds_are_clean(query, passage) -> None:
    assert detect_entity_mismatch(query, passage) == []


def test_the_name_list_is_a_packaged_data_file() -> None:
    kinds = name_kinds()
    assert kinds["茅台"] == kinds["五粮液"] == "liquor"
    assert kinds["华为"] == kinds["小米"] == "phone"
    assert kinds["三星堆"] == kinds["殷墟"] == "site"
    assert len(kinds) >= 150
    pyproject = (Path(__file__).resolve().parents[3] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"data/*.tsv"' in pyproject


def test_a_collection_lexicon_adds_names() -> None:
    query, passage = "青花郎多少钱", "红花郎十五年的价格是多少？"
    assert detect_entity_mismatch(query, passage) == []
    lexicon = {"青花郎": "liquor", "红花郎": "liquor"}
    [s] = detect_entity_mismatch(query, passage, lexicon=lexicon)
    assert (s.evidence["query"], s.evidence["passage"], s.evidence["kind"]) == (["青花郎"], ["红花郎"], "liquor")
    assert s.evidence["method"] == "lexicon"
    [s] = [x for x in suggest(query, passage, lexicon=lexicon) if x.category == "entity_mismatch"]
    assert s.evidence["passage"] == ["红花郎"]
    # a lexicon name of a listed kind meets the listed names of that kind
    [s] = detect_entity_mismatch("青花郎多少钱", "茅台多少钱", lexicon={"青花郎": "liquor"})
    assert s.evidence["passage"] == ["茅台"]


def test_load_lexicon(tmp_path) -> None:
    path = tmp_path / "names.tsv"
    path.write_text("# an admin's names\n青花郎\tliquor\n红花郎\tliquor\n\nAcme Phone\tphone\n", encoding="utf-8")
    assert load_lexicon(path) == {"青花郎": "liquor", "红花郎": "liquor", "Acme Phone": "phone"}
    path.write_text("青花郎\tliquor\n红花郎\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"names.tsv line 2: .*name<TAB>kind") as err:
        load_lexicon(path)
    assert str(tmp_path) not in str(err.value)
