"""Highlighting renders untrusted text inert, marks query terms, and works on Chinese."""

from pooljudge.ui.highlight import highlighted_html


def test_html_and_markdown_are_neutralised():
    out = highlighted_html("script", "<script>alert(1)</script> <img src=x onerror=alert(2)> *bold* [x](javascript:y)", "en")
    assert "<script>" not in out and "<img" not in out
    assert "&lt;<mark>script</mark>&gt;" in out
    assert "*" not in out and "[" not in out and "(" not in out  # markdown syntax turned into entities


def test_english_stems_and_chinese_words_are_marked():
    assert highlighted_html("bake bread", "Baking bread at home", "en") == "<mark>Baking</mark> <mark>bread</mark> at home"
    out = highlighted_html("台北怎么去瑞芳", "从瑞芳回台北可以坐火车", "zh")
    assert "<mark>瑞芳</mark>" in out and "<mark>台北</mark>" in out and "<mark>火车</mark>" not in out


def test_quotes_render_as_themselves():
    # html.escape's default turns ' into &#x27;, whose "#" the markdown rule would then break into "&#x27;" on screen
    out = highlighted_html("fair", 'The "World\'s Fair" of 1889', "en")
    assert out == 'The "World\'s <mark>Fair</mark>" of 1889'


def test_chinese_function_words_are_not_marked():
    out = highlighted_html("故宫是哪一年开始修建的", "故宫是明朝永乐年间开始修建的宫殿", "zh")
    assert "<mark>故宫</mark>" in out and "<mark>修建</mark>" in out
    assert "<mark>是</mark>" not in out and "<mark>的</mark>" not in out
