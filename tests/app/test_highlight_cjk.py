"""Chinese-aware highlighting on the pages: shared character runs are marked, not only shared jieba words."""

from pooljudge.ui.highlight import highlighted_html, verbatim_html

SPAN = '<span style="white-space: pre-wrap; overflow-wrap: anywhere">'


def hl(query, text, language="zh"):
    out = highlighted_html(query, text, language)
    assert out.startswith(SPAN) and out.endswith("</span>")
    return out[len(SPAN) : -len("</span>")]


def test_jiaozi_is_marked_though_jieba_segments_it_differently():
    # demo query zh-q09; jieba: 除夕 / 为什么 / 要 / 吃饺子 against the passage's 包 / 饺子 / 吃
    assert hl("除夕为什么要吃饺子", "春节前一天晚上，北方人家家户户包饺子吃，寓意更岁交子。") == (
        "春节前一天晚上，北方人家家户户包<mark>饺子</mark>吃，寓意更岁交子。"
    )


def test_demo_passage_marks_every_shared_run_and_no_function_word():
    text = (
        "在中国北方，除夕夜吃饺子是重要的习俗，因为饺子形似元宝，寓意招财进宝。"
        "有的人家会把一枚硬币包进饺子里，吃到的人被认为来年会有好运。"
    )  # demo passage zh-chunjie-2
    assert hl("除夕为什么要吃饺子", text) == (
        "在中国北方，<mark>除夕</mark>夜<mark>吃饺子</mark>是重要的习俗，因为<mark>饺子</mark>形似元宝，寓意招财进宝。"
        "有的人家会把一枚硬币包进<mark>饺子</mark>里，吃到的人被认为来年会有好运。"
    )
    assert hl("故宫是哪一年开始修建的", "故宫是明朝永乐年间开始修建的宫殿") == (
        "<mark>故宫</mark>是明朝永乐年间开始<mark>修建</mark>的宫殿"
    )  # 是, 的, 开始: function words


def test_escaping_and_english_are_unchanged():
    assert (
        hl("饺子 <b>", "<b>饺子</b> & 包子", "mixed")
        == "&lt;<mark>b</mark>&gt;<mark>饺子</mark>&lt;/<mark>b</mark>&gt; &amp; 包子"
    )
    assert hl("bake bread", "Baking bread at home", "en") == "<mark>Baking</mark> <mark>bread</mark> at home"
    assert verbatim_html("吃饺子", query="饺子", language="zh").endswith(">吃<mark>饺子</mark></div>")
